package geo_test

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
)

var (
	problemCodes = map[string]bool{geo.CodeRequired: true, geo.CodeInvalidValue: true, geo.CodeMalformedJSON: true,
		geo.CodeInvalidGeometryType: true, geo.CodeInvalidCoordinateClosure: true, geo.CodeInvalidRing: true,
		geo.CodeInvalidCoordinateRange: true, geo.CodePointAreaTooLarge: true, geo.CodeTooManyProblems: true,
		geo.CodeCrossesAntimeridian: true}
	reasons = map[string]bool{"": true, geo.ReasonHolesNotSupported: true, geo.ReasonDegenerateRing: true,
		geo.ReasonSelfIntersection: true, geo.ReasonInsufficientPrecision: true,
		geo.ReasonDuplicateVerticesAfterRounding: true, geo.ReasonGeometryTooComplex: true,
		geo.ReasonOverlappingParts: true} // not CROSSES_ANTIMERIDIAN: such rings are refused
)

// FuzzParseFeatureCollection checks that no input panics, that what is
// malformed JSON agrees with encoding/json (and UTF-8), and that what is
// accepted is well-formed: positions in range, rings closed, Raw that
// parses back to the same feature, and a Check that answers.
func FuzzParseFeatureCollection(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/*.geojson")
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body)
	}
	for _, s := range []string{
		"", "{}", "[]", "null", `{"type":"FeatureCollection","features":[{}]}`,
		feature(geo.TypePolygon, "[[[0,0],[2,2],[2,0],[0,2],[0,0]]]"),
		feature(geo.TypePolygon, "[[[1.00000012,1.00000034],[1.00100056,1.00000078],[1.00100012,1.00100034],[1.00000012,1.00000034]]]"),
		feature(geo.TypeMultiPoint, "[[1e-7,2E+1],[-0.0,0.000000]]"),
		// Sides 180.0000000008° apart in float64, 180° at nine decimals.
		feature(geo.TypePolygon, "[[[-90.0000000004,0],[90.0000000004,0],[90.0000000004,1],[-90.0000000004,0]]]"),
		`{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"producerName":"\ud800\u00e9\"","area":4}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		feats, err := geo.ParseFeatureCollection(body, geo.ParseOptions{MaxFeatures: 64, MaxProblems: 50})
		valid := json.Valid(body) && utf8.Valid(body)
		if err != nil {
			if errors.Is(err, geo.ErrTooManyFeatures) {
				return
			}
			var probs geo.Problems
			if !errors.As(err, &probs) || len(probs) == 0 || feats != nil {
				t.Fatalf("got %d features and %v, want problems", len(feats), err)
			}
			if len(probs) > 51 {
				t.Fatalf("got %d problems, want at most 50 and TOO_MANY_PROBLEMS", len(probs))
			}
			for _, p := range probs {
				if !problemCodes[p.Code] || p.Path == "" || p.Issue == "" {
					t.Fatalf("bad problem %#v", p)
				}
			}
			malformed := probs[0].Code == geo.CodeMalformedJSON
			switch {
			case malformed && len(probs) != 1:
				t.Fatalf("MALFORMED_JSON with other problems: %v", probs)
			case malformed && valid && !strings.Contains(probs[0].Issue, "nesting deeper"):
				t.Fatalf("valid JSON refused: %v", probs)
			case !malformed && !valid:
				t.Fatalf("malformed JSON accepted: %v", probs)
			}
			return
		}
		if !valid {
			t.Fatalf("malformed JSON accepted with %d features", len(feats))
		}
		if len(feats) == 0 {
			t.Fatal("no features and no error")
		}
		for i, ft := range feats {
			if ft.Index != i || ft.MaxDecimals < 0 || !json.Valid(ft.Raw) {
				t.Fatalf("feature %d: Index %d, MaxDecimals %d, Raw %s", i, ft.Index, ft.MaxDecimals, ft.Raw)
			}
			checkGeometry(t, ft)
			again, err := geo.ParseFeature(ft.Raw, i)
			if err != nil || !reflect.DeepEqual(again, ft) {
				t.Fatalf("feature %d: Raw parses to %+v, %v; want %+v", i, again, err, ft)
			}
			reason, detail := geo.Check(ft)
			if !reasons[reason] || (reason == "") != (detail == "") {
				t.Fatalf("feature %d: Check = %q, %q", i, reason, detail)
			}
			if ft.Geometry.Object() == nil {
				t.Fatalf("feature %d: no geojson object", i)
			}
		}
	})
}

func checkGeometry(t *testing.T, f geo.Feature) {
	t.Helper()
	inRange := func(p geo.Position) bool { return p[0] >= -180 && p[0] <= 180 && p[1] >= -90 && p[1] <= 90 }
	g := f.Geometry
	switch g.Type {
	case geo.TypePoint, geo.TypeMultiPoint:
		a := f.Properties.Area
		if len(g.Points) == 0 || g.Polygons != nil || a == nil || *a < geo.MinPointArea || *a > geo.MaxPointArea && f.Properties.Commodity != "cattle" {
			t.Fatalf("feature %d: bad point geometry %+v, area %v", f.Index, g, a)
		}
		for _, p := range g.Points {
			if !inRange(p) {
				t.Fatalf("feature %d: position %v out of range", f.Index, p)
			}
		}
	case geo.TypePolygon, geo.TypeMultiPolygon:
		if len(g.Polygons) == 0 || g.Points != nil {
			t.Fatalf("feature %d: bad polygon geometry %+v", f.Index, g)
		}
		for _, poly := range g.Polygons {
			if len(poly) == 0 {
				t.Fatalf("feature %d: polygon without rings", f.Index)
			}
			for _, r := range poly {
				if len(r) < 4 || r[0] != r[len(r)-1] {
					t.Fatalf("feature %d: bad ring %v", f.Index, r)
				}
				for k, p := range r {
					if !inRange(p) {
						t.Fatalf("feature %d: position %v out of range", f.Index, p)
					}
					if k > 0 && crossesAntimeridian(r[k-1], p) {
						t.Fatalf("feature %d: side %v to %v crosses the antimeridian", f.Index, r[k-1], p)
					}
				}
			}
		}
	default:
		t.Fatalf("feature %d: geometry type %q", f.Index, g.Type)
	}
	if !geo.IsCommodity(f.Properties.Commodity) || !geo.IsCountryCode(f.Properties.ProducerCountry) {
		t.Fatalf("feature %d: properties %+v", f.Index, f.Properties)
	}
}

// crossesAntimeridian reports whether the side from a to b joins
// longitudes more than 180° apart as the parser reads them: to nine
// decimals, so that 90.0000000004 and -90.0000000004 are 180° apart, not
// the 180.0000000008° of float64.
func crossesAntimeridian(a, b geo.Position) bool {
	nano := func(v float64) int64 { return int64(math.Round(v * 1e9)) }
	d := nano(a[0]) - nano(b[0])
	return d > 180e9 || d < -180e9
}
