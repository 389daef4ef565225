package geo

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Valid reports whether k is one of the known layer kinds.
func (k LayerKind) Valid() bool {
	return k == DeforestationAfterCutoff || k == ProtectedArea || k == ForestCover2020
}

// ParseLayer decodes a reference layer to import: body is a GeoJSON
// FeatureCollection of Polygon and MultiPolygon features. It is
// ParseLayerWithCoverage without a coverage collection, so a deforestation
// layer is refused: its coverage must be declared.
func ParseLayer(name string, kind LayerKind, version, source string, body []byte) (*Layer, error) {
	return ParseLayerWithCoverage(name, kind, version, source, body, nil)
}

// ParseLayerWithCoverage decodes a reference layer to import. body is a
// GeoJSON FeatureCollection of Polygon and MultiPolygon features; a
// feature's ID is its "id" member, else properties.id, else its index.
// coverage, when not nil, is a FeatureCollection of the areas the layer has
// data for (Polygon and MultiPolygon features whose union is the area the layer has data for). Without it a protected-area or forest layer
// covers the bounding box of its features, and a deforestation layer is
// refused (REQUIRED at "coverage"): no deforestation found where the layer
// has no data must not read as no deforestation. The layer's SHA256 is that
// of body as given; its ID is left to the caller. Problems are returned as
// Problems, with paths into body ("coverage." and paths into coverage for
// the coverage collection).
func ParseLayerWithCoverage(name string, kind LayerKind, version, source string, body, coverage []byte) (*Layer, error) {
	probs := layerMeta(name, version, source)
	switch {
	case kind == "":
		probs = append(probs, Problem{Code: CodeRequired, Path: "kind", Issue: "is required: " + layerKinds})
	case kind.IsRaster():
		probs = append(probs, Problem{Code: CodeInvalidValue, Path: "kind",
			Issue: quote(string(kind)) + " is a raster kind: import a folder of GeoTIFF tiles, not GeoJSON features"})
	case !kind.Valid():
		probs = append(probs, Problem{Code: CodeInvalidValue, Path: "kind", Issue: "must be " + layerKinds + ", not " + quote(string(kind))})
	}
	feats, fp := parseLayerCollection(body, "", true)
	probs = append(probs, fp...)
	var cov []Polygon
	if coverage != nil {
		cfs, cp := parseLayerCollection(coverage, "coverage.", true)
		probs = append(probs, cp...)
		for _, f := range cfs {
			cov = append(cov, f.Polygons...)
		}
	} else if kind == DeforestationAfterCutoff {
		probs = append(probs, Problem{Code: CodeRequired, Path: "coverage",
			Issue: "is required for a deforestation layer: the areas it has data for (absence of data is not absence of deforestation)"})
	}
	if len(probs) > 0 {
		return nil, probs
	}
	if coverage == nil {
		cov = extent(feats)
	}
	sum := sha256.Sum256(body)
	return &Layer{Name: name, Kind: kind, Version: version, Source: source,
		SHA256: hex.EncodeToString(sum[:]), Coverage: cov, Features: feats}, nil
}

// layerKinds lists the layer kinds for messages.
const layerKinds = "deforestation, protected_area or forest_cover_2020 (GeoJSON features), or forest-2020, loss-year or alerts (GeoTIFF tiles)"

// layerMeta checks the description every layer needs.
func layerMeta(name, version, source string) Problems {
	var probs Problems
	for _, m := range []struct{ path, v string }{{"name", name}, {"version", version}, {"source", source}} {
		if m.v == "" {
			probs = append(probs, Problem{Code: CodeRequired, Path: m.path, Issue: "is required"})
		}
	}
	return probs
}

// CheckRasterLayer checks the description of a raster layer to import:
// name, version and source are required and kind must be a raster kind.
// Problems are returned as Problems.
func CheckRasterLayer(name string, kind LayerKind, version, source string) error {
	probs := layerMeta(name, version, source)
	switch {
	case kind == "":
		probs = append(probs, Problem{Code: CodeRequired, Path: "kind", Issue: "is required: forest-2020, loss-year or alerts"})
	case !kind.IsRaster():
		probs = append(probs, Problem{Code: CodeInvalidValue, Path: "kind",
			Issue: "must be forest-2020, loss-year or alerts for GeoTIFF tiles, not " + quote(string(kind))})
	}
	if len(probs) > 0 {
		return probs
	}
	return nil
}

// ParseLayerFeatures decodes the features of a layer's FeatureCollection as
// ParseLayer does, without the rest, to rebuild an index from a stored
// layer: the ring shapes and the antimeridian, checked when the layer was
// imported (or not, by an older version), are not checked again, so that
// a stored layer always loads.
func ParseLayerFeatures(body []byte) ([]LayerFeature, error) {
	feats, probs := parseLayerCollection(body, "", false)
	if len(probs) > 0 {
		return nil, probs
	}
	return feats, nil
}

// extent returns the bounding box of the features' exterior rings as one
// polygon, or nil when there are none.
func extent(feats []LayerFeature) []Polygon {
	b := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, f := range feats {
		for _, p := range f.Polygons {
			for _, c := range p[0] {
				b[0], b[1] = min(b[0], c[0]), min(b[1], c[1])
				b[2], b[3] = max(b[2], c[0]), max(b[3], c[1])
			}
		}
	}
	if math.IsInf(b[0], 1) {
		return nil
	}
	return []Polygon{rect(b)}
}

// parseLayerCollection decodes a FeatureCollection of polygon features,
// prefixing problem paths with prefix; checkShape checks each ring's shape
// as plots are checked, and that it does not cross the antimeridian.
func parseLayerCollection(body []byte, prefix string, checkShape bool) ([]LayerFeature, Problems) {
	var w *workspace
	if checkShape {
		w = new(workspace) // reused from ring to ring
	}
	at := func(path string) string {
		if path == "" {
			if prefix == "" {
				return "body"
			}
			return prefix[:len(prefix)-1]
		}
		return prefix + path
	}
	var fc struct {
		Type     string            `json:"type"`
		Features []json.RawMessage `json:"features"`
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, Problems{{Code: CodeRequired, Path: at(""), Issue: "a GeoJSON FeatureCollection is required"}}
	}
	if err := json.Unmarshal(body, &fc); err != nil {
		var typ *json.UnmarshalTypeError
		if errors.As(err, &typ) {
			return nil, Problems{{Code: CodeInvalidValue, Path: at(""), Issue: "must be a GeoJSON FeatureCollection object"}}
		}
		return nil, Problems{{Code: CodeMalformedJSON, Path: at(""), Issue: "must be well-formed JSON: a GeoJSON FeatureCollection object"}}
	}
	var probs Problems
	if fc.Type != "FeatureCollection" {
		probs = append(probs, Problem{Code: CodeInvalidValue, Path: at("type"), Issue: `must be "FeatureCollection"`})
	}
	if len(fc.Features) == 0 {
		probs = append(probs, Problem{Code: CodeRequired, Path: at("features"), Issue: "must hold at least one Feature"})
	}
	feats := make([]LayerFeature, 0, len(fc.Features))
	for i, raw := range fc.Features {
		fpath := fmt.Sprintf("features[%d]", i)
		var f struct {
			ID         json.RawMessage `json:"id"`
			Properties struct {
				ID json.RawMessage `json:"id"`
			} `json:"properties"`
			Geometry *struct {
				Type        string          `json:"type"`
				Coordinates json.RawMessage `json:"coordinates"`
			} `json:"geometry"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			probs = append(probs, Problem{Code: CodeInvalidValue, Path: at(fpath), Issue: "must be a GeoJSON Feature object"})
			continue
		}
		id, ok := featureID(f.ID)
		if !ok {
			probs = append(probs, Problem{Code: CodeInvalidValue, Path: at(fpath + ".id"), Issue: "must be a string or a number"})
		}
		if id == "" {
			if id, ok = featureID(f.Properties.ID); !ok {
				probs = append(probs, Problem{Code: CodeInvalidValue, Path: at(fpath + ".properties.id"), Issue: "must be a string or a number"})
			}
		}
		if id == "" {
			id = strconv.Itoa(i)
		}
		gpath := fpath + ".geometry"
		if f.Geometry == nil {
			probs = append(probs, Problem{Code: CodeRequired, Path: at(gpath), Issue: "is required: a Polygon or MultiPolygon"})
			continue
		}
		cpath := gpath + ".coordinates"
		var polys []Polygon
		switch f.Geometry.Type {
		case TypePolygon:
			var c [][][]float64
			if json.Unmarshal(f.Geometry.Coordinates, &c) != nil {
				probs = append(probs, Problem{Code: CodeInvalidValue, Path: at(cpath), Issue: "must be an array of linear rings of [longitude, latitude] positions"})
				continue
			}
			p, pp := layerPolygon(c, cpath, w)
			polys, probs = append(polys, p), append(probs, at2(pp, at)...)
		case TypeMultiPolygon:
			var c [][][][]float64
			if json.Unmarshal(f.Geometry.Coordinates, &c) != nil {
				probs = append(probs, Problem{Code: CodeInvalidValue, Path: at(cpath), Issue: "must be an array of polygons of [longitude, latitude] positions"})
				continue
			}
			for j, pc := range c {
				p, pp := layerPolygon(pc, fmt.Sprintf("%s[%d]", cpath, j), w)
				polys, probs = append(polys, p), append(probs, at2(pp, at)...)
			}
		default:
			probs = append(probs, Problem{Code: CodeInvalidGeometryType, Path: at(gpath + ".type"),
				Issue: "must be Polygon or MultiPolygon, not " + quote(f.Geometry.Type)})
			continue
		}
		if len(polys) == 0 {
			probs = append(probs, Problem{Code: CodeRequired, Path: at(cpath), Issue: "must hold at least one polygon"})
		}
		feats = append(feats, LayerFeature{ID: id, Polygons: polys})
	}
	return feats, probs
}

func at2(ps Problems, at func(string) string) Problems {
	for i := range ps {
		ps[i].Path = at(ps[i].Path)
	}
	return ps
}

// featureID reads a string or number id; ok is false for any other value
// (absent or null is "", true).
func featureID(raw json.RawMessage) (id string, ok bool) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, true
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false
}

// layerPolygon checks a polygon's rings: at least 4 positions, closed, in
// range, and with w (nil: not checked) not across the antimeridian and a
// valid shape. Paths are built only
// for problems: layers run to millions of positions.
func layerPolygon(c [][][]float64, path string, w *workspace) (Polygon, Problems) {
	var probs Problems
	if len(c) == 0 {
		return nil, Problems{{Code: CodeInvalidRing, Path: path, Issue: "must hold an exterior ring"}}
	}
	p := make(Polygon, 0, len(c))
	for j, rc := range c {
		rpath := path + "[" + strconv.Itoa(j) + "]"
		if len(rc) < 4 {
			probs = append(probs, Problem{Code: CodeInvalidRing, Path: rpath, Issue: fmt.Sprintf("must hold at least 4 positions, not %d", len(rc))})
			continue
		}
		r := make(Ring, len(rc))
		ok := true
		for k, pos := range rc {
			ppath := func() string { return rpath + "[" + strconv.Itoa(k) + "]" }
			if len(pos) < 2 {
				probs = append(probs, Problem{Code: CodeInvalidValue, Path: ppath(), Issue: "must be [longitude, latitude]"})
				ok = false
				continue
			}
			if pos[0] < -180 || pos[0] > 180 || pos[1] < -90 || pos[1] > 90 {
				probs = append(probs, Problem{Code: CodeInvalidCoordinateRange, Path: ppath(),
					Issue: "longitude must be within -180..180 and latitude within -90..90"})
				ok = false
				continue
			}
			r[k] = Position{pos[0], pos[1]}
		}
		switch {
		case ok && r[0] != r[len(r)-1]:
			probs = append(probs, Problem{Code: CodeInvalidCoordinateClosure, Path: rpath, Issue: "the last position must equal the first"})
		case ok && w != nil:
			// Checked on import only: a layer stored before a check was
			// added must still load.
			//
			// Screening reads plain longitude, where such a side runs
			// round the globe: the feature would cover a whole band.
			if k := antimeridianSide(r); k >= 0 {
				probs = append(probs, Problem{Code: CodeCrossesAntimeridian, Path: rpath,
					Issue: antimeridianIssue(k, r[k], r[k+1], layerReader, layerAdvice)})
				break
			}
			// An invalid ring (crossing sides, a line) would be measured
			// wrongly by every screening: the same check as plots get.
			w.load(r, asWritten)
			if reason, detail := w.shape(rpath); reason != "" {
				probs = append(probs, Problem{Code: CodeInvalidValue, Path: rpath, Issue: detail})
			}
		}
		p = append(p, r)
	}
	return p, probs
}
