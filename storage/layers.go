package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Layer is an imported reference layer (DESIGN.md, Screening). It is
// appliance-wide, not a tenant's. Features, the GeoJSON FeatureCollection
// as imported, is kept under its own key in layer_data, so listing layers
// does not read it; FindLayers leaves it nil and FindLayer fills it.
type Layer struct {
	ID           string          `json:"id"`
	Name         string          `json:"name"`
	Kind         string          `json:"kind"`
	Version      string          `json:"version"`
	Source       string          `json:"source"`
	SHA256       string          `json:"sha256"`
	FeatureCount int             `json:"featureCount"`
	Coverage     json.RawMessage `json:"coverage"` // the coverage polygons ([]geo.Polygon as JSON)
	Features     json.RawMessage `json:"-"`
	ImportedAt   time.Time       `json:"importedAt"`
}

// PutLayer writes a layer and its features.
func (tx *Tx) PutLayer(l *Layer) error {
	if err := putJSON(tx.Bucket(bucketLayers), []byte(l.ID), l); err != nil {
		return fmt.Errorf("put layer %s: %w", l.ID, err)
	}
	if err := tx.Bucket(bucketLayerData).Put([]byte(l.ID), l.Features); err != nil {
		return fmt.Errorf("put layer data %s: %w", l.ID, err)
	}
	return nil
}

// FindLayer returns a layer with its features, or ErrNotFound.
func (tx *Tx) FindLayer(id string) (*Layer, error) {
	var l Layer
	if err := getJSON(tx.Bucket(bucketLayers), []byte(id), &l); err != nil {
		return nil, err
	}
	l.Features = bytes.Clone(tx.Bucket(bucketLayerData).Get([]byte(id)))
	return &l, nil
}

// FindLayers returns every layer without its features, newest first (IDs
// are time-ordered).
func (tx *Tx) FindLayers() ([]*Layer, error) {
	var out []*Layer
	c := tx.Bucket(bucketLayers).Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		var l Layer
		if err := unmarshal(v, &l); err != nil {
			return nil, fmt.Errorf("decode layer %s: %w", k, err)
		}
		out = append(out, &l)
	}
	return out, nil
}
