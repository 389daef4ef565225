package geo

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Sandbox fixture boxes (the sandbox fixture table, docs/sandbox.md): lon
// min, lat min, lon max, lat max.
var (
	// sandboxDeforestationBox is deforestation after the cutoff: a plot
	// overlapping it is HIGH_RISK DEFORESTATION_AFTER_CUTOFF.
	sandboxDeforestationBox = [4]float64{-62, -11, -61, -10}
	// sandboxProtectedBox is a protected area: a plot overlapping it is
	// HIGH_RISK PROTECTED_AREA_OVERLAP.
	sandboxProtectedBox = [4]float64{-55, -5, -54, -4}
	// sandboxNoCoverageBox has no reference data: a plot overlapping it is
	// FAILED NO_REFERENCE_COVERAGE.
	sandboxNoCoverageBox = [4]float64{10, 10, 11, 11}
)

// sandboxMargin, in degrees (about 1.1 m), grows each box in the layers: a
// plot touching a box only along an edge or at a corner overlaps the grown
// box by a sliver of positive area, so it gets the box's outcome, as the
// sandbox fixture table (docs/sandbox.md) says of any plot "overlapping or
// touching these boxes". Screening itself keeps the rule that only an
// overlap of positive area counts.
const sandboxMargin = 1e-5

// SandboxSource is the Source of the sandbox fixture layers.
const SandboxSource = "eudr sandbox fixtures"

// SandboxLayers returns the sandbox's reference layers, built anew on each
// call (callers may keep or change them): a deforestation layer with one
// feature over sandboxDeforestationBox and a protected-area layer with one
// feature over sandboxProtectedBox, both covering the whole world but
// sandboxNoCoverageBox, each box grown by sandboxMargin. Assessed with
// DefaultRules, a plot overlapping or touching a box gets the outcome the
// sandbox fixture table gives it.
func SandboxLayers() []*Layer {
	layers := []*Layer{{
		ID:       "sandbox-deforestation",
		Name:     "Sandbox deforestation after 2020-12-31",
		Kind:     DeforestationAfterCutoff,
		Version:  "1",
		Source:   SandboxSource,
		Coverage: sandboxCoverage(),
		Features: []LayerFeature{{ID: "sandbox-deforestation-1", Polygons: []Polygon{rect(grow(sandboxDeforestationBox))}}},
	}, {
		ID:       "sandbox-protected-areas",
		Name:     "Sandbox protected areas",
		Kind:     ProtectedArea,
		Version:  "1",
		Source:   SandboxSource,
		Coverage: sandboxCoverage(),
		Features: []LayerFeature{{ID: "sandbox-protected-area-1", Polygons: []Polygon{rect(grow(sandboxProtectedBox))}}},
	}}
	for _, l := range layers {
		sum, err := LayerSHA256(l)
		if err != nil {
			panic(err) // fixed, finite coordinates: cannot happen
		}
		l.SHA256 = sum
	}
	return layers
}

// sandboxCoverage tiles the world around sandboxNoCoverageBox with four
// rectangles: west and east of it pole to pole, south and north of it in
// its band of longitude.
func sandboxCoverage() []Polygon {
	b := grow(sandboxNoCoverageBox)
	return []Polygon{
		rect([4]float64{-180, -90, b[0], 90}),
		rect([4]float64{b[2], -90, 180, 90}),
		rect([4]float64{b[0], -90, b[2], b[1]}),
		rect([4]float64{b[0], b[3], b[2], 90}),
	}
}

// grow returns box b grown by sandboxMargin on every side.
func grow(b [4]float64) [4]float64 {
	return [4]float64{b[0] - sandboxMargin, b[1] - sandboxMargin, b[2] + sandboxMargin, b[3] + sandboxMargin}
}

// rect returns the box lon min, lat min, lon max, lat max as a polygon
// whose ring runs counter-clockwise from the south-west corner.
func rect(b [4]float64) Polygon {
	return Polygon{Ring{{b[0], b[1]}, {b[2], b[1]}, {b[2], b[3]}, {b[0], b[3]}, {b[0], b[1]}}}
}

// LayerSHA256 returns the hex SHA-256 of the canonical encoding of l: the
// JSON object
//
//	{"id":…,"name":…,"kind":…,"version":…,"source":…,
//	 "coverage":[polygon…],"features":[{"id":…,"polygons":[polygon…]}…]}
//
// with members in that order, no whitespace, a polygon as GeoJSON rings of
// [lon, lat] arrays, numbers as encoding/json writes a float64 (the shortest
// decimal that reads back to it), strings as encoding/json escapes them, and
// empty lists as []. l.SHA256 itself is not part of it. Layers imported from
// a file carry the SHA-256 of the file instead. The error is non-nil only
// for a NaN or infinite coordinate, which has no canonical form.
func LayerSHA256(l *Layer) (string, error) {
	type feature struct {
		ID       string    `json:"id"`
		Polygons []Polygon `json:"polygons"`
	}
	type layer struct {
		ID       string    `json:"id"`
		Name     string    `json:"name"`
		Kind     LayerKind `json:"kind"`
		Version  string    `json:"version"`
		Source   string    `json:"source"`
		Coverage []Polygon `json:"coverage"`
		Features []feature `json:"features"`
	}
	c := layer{
		ID: l.ID, Name: l.Name, Kind: l.Kind, Version: l.Version, Source: l.Source,
		Coverage: nonNil(l.Coverage), Features: make([]feature, len(l.Features)),
	}
	for i, f := range l.Features {
		c.Features[i] = feature{ID: f.ID, Polygons: nonNil(f.Polygons)}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return "", fmt.Errorf("geo: canonical encoding of layer %q: %w", l.ID, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

func nonNil(ps []Polygon) []Polygon {
	if ps == nil {
		return []Polygon{}
	}
	return ps
}
