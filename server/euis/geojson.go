package euis

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
)

// PlotProperties are what the information system reads of a plot besides
// its geometry, in the GeoJSON file profile (GeoJSON File Description 1.3,
// §9.2-9.3).
type PlotProperties struct {
	// ProducerName and ProducerCountry group plots into producers;
	// ProducerCountry is ISO 3166-1 alpha-2.
	ProducerName    string
	ProducerCountry string
	// ProductionPlace is optional, recommended by the EU.
	ProductionPlace string
	// AreaHa is the declared area in hectares, written for a Point or
	// MultiPoint only (the system takes a polygon's area from its shape).
	AreaHa *float64
	// Commodity, when set, is written as the appliance's own "commodity"
	// property, so that the file can be posted back to the appliance,
	// which requires it. The system reads its names case-sensitively and
	// ignores the rest.
	Commodity string
}

// PlotFeature is a plot as the information system reads it: the geometry
// of feature (a GeoJSON Feature, as stored) with every coordinate written
// with exactly 6 decimals, rounded (the system keeps 6), and the
// properties ProducerCountry, ProducerName and ProductionPlace when set,
// and Area for a point. A statement's geolocation and the GeoJSON export
// of plots are both made of it.
func PlotFeature(feature json.RawMessage, p PlotProperties) (json.RawMessage, error) {
	var f struct {
		Geometry struct {
			Type        string `json:"type"`
			Coordinates any    `json:"coordinates"`
		} `json:"geometry"`
	}
	if err := json.Unmarshal(feature, &f); err != nil {
		return nil, fmt.Errorf("stored feature: %w", err)
	}
	g := f.Geometry
	props := map[string]any{"ProducerCountry": p.ProducerCountry}
	if p.ProducerName != "" {
		props["ProducerName"] = p.ProducerName
	}
	if p.ProductionPlace != "" {
		props["ProductionPlace"] = p.ProductionPlace
	}
	if p.AreaHa != nil && (g.Type == "Point" || g.Type == "MultiPoint") {
		props["Area"] = *p.AreaHa
	}
	if p.Commodity != "" {
		props["commodity"] = p.Commodity
	}
	return marshalNoEscape(map[string]any{
		"type":       "Feature",
		"geometry":   map[string]any{"type": g.Type, "coordinates": round6(g.Coordinates)},
		"properties": props,
	})
}

// round6 writes every number of decoded coordinates with exactly 6
// decimals, rounded: what the EU system keeps, and shows as precise.
func round6(v any) any {
	switch x := v.(type) {
	case float64:
		return json.Number(strconv.FormatFloat(x, 'f', 6, 64))
	case []any:
		for i := range x {
			x[i] = round6(x[i])
		}
		return x
	}
	return v
}

// marshalNoEscape is JSON with <, > and & as they are: names are text, not
// HTML.
func marshalNoEscape(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}
