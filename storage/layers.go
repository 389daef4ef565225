package storage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"
)

// Layer is an imported reference layer (docs/layers.md). It is
// appliance-wide, not a tenant's: every organisation of its environment
// screens against it. Features, the GeoJSON FeatureCollection
// as imported, is kept under its own key in layer_data, so listing layers
// does not read it; FindLayers leaves it nil and FindLayer fills it. A
// raster layer has no features: Raster lists its GeoTIFF tiles, which stay
// in their folder outside the store.
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
	Raster       *RasterTiles    `json:"raster,omitempty"`
	ImportedAt   time.Time       `json:"importedAt"`
	// Env is the environment whose screening uses the layer. Layers stored
	// before the sandbox could have any have none and read as Production.
	Env Environment `json:"environment,omitempty"`
}

// RasterTiles are a raster layer's GeoTIFF files: their folder and what
// each one's header said when the layer was imported.
type RasterTiles struct {
	Dir   string       `json:"dir"`
	Tiles []RasterTile `json:"tiles"`
}

// RasterTile is one GeoTIFF of a raster layer, as its header described it
// at import: a later change to the file is detected by its size and
// header, and the tile is then not read.
type RasterTile struct {
	Name   string `json:"name"` // the file's name in the folder
	Size   int64  `json:"size"` // bytes
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// West and North are the outer upper-left corner of the first pixel,
	// DX and DY a pixel's size, in degrees (EPSG:4326).
	West         float64 `json:"west"`
	North        float64 `json:"north"`
	DX           float64 `json:"dx"`
	DY           float64 `json:"dy"`
	PixelIsPoint bool    `json:"pixelIsPoint"`
	NoData       *int    `json:"noData"`
	Compression  string  `json:"compression"`
	Predictor    string  `json:"predictor"`
	// Layout is "tiles WxH" or "strips of N rows".
	Layout string `json:"layout"`
}

// PutLayer writes a layer and its features.
func (tx *Tx) PutLayer(l *Layer) error {
	if err := putJSON(tx.Bucket(bucketLayers), []byte(l.ID), l); err != nil {
		return fmt.Errorf("put layer %s: %w", l.ID, err)
	}
	data := l.Features
	if data == nil {
		data = []byte{} // a raster layer
	}
	if err := tx.Bucket(bucketLayerData).Put([]byte(l.ID), data); err != nil {
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
	l.defaultEnv()
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
		l.defaultEnv()
		out = append(out, &l)
	}
	return out, nil
}

// defaultEnv gives a layer stored without an environment the only one
// layers could be imported for then: production.
func (l *Layer) defaultEnv() {
	if l.Env == "" {
		l.Env = Production
	}
}

// DeleteLayer removes a layer and its features, or returns ErrNotFound.
// Evidence recorded against it keeps its name, version and SHA-256.
func (tx *Tx) DeleteLayer(id string) error {
	b := tx.Bucket(bucketLayers)
	if b.Get([]byte(id)) == nil {
		return ErrNotFound
	}
	if err := b.Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete layer %s: %w", id, err)
	}
	if err := tx.Bucket(bucketLayerData).Delete([]byte(id)); err != nil {
		return fmt.Errorf("delete layer data %s: %w", id, err)
	}
	return nil
}
