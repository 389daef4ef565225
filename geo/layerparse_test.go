package geo_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
)

const layerBody = `{"type":"FeatureCollection","features":[
 {"type":"Feature","id":"a1","properties":{},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1],[0,0]]]}},
 {"type":"Feature","properties":{"id":7},"geometry":{"type":"MultiPolygon","coordinates":[[[[2,2],[3,2],[3,3],[2,2]]]]}},
 {"type":"Feature","properties":null,"geometry":{"type":"Polygon","coordinates":[[[4,4],[5,4],[5,5],[4,4]]]}}]}`

const coverageBody = `{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-10,-10],[10,-10],[10,10],[-10,10],[-10,-10]]]}}]}`

func TestParseLayer(t *testing.T) {
	tests := []struct {
		name     string
		kind     geo.LayerKind
		body     string
		coverage string // "" means none
		paths    []string
	}{
		{name: "protected area without coverage", kind: geo.ProtectedArea, body: layerBody},
		{name: "forest with coverage", kind: geo.ForestCover2020, body: layerBody, coverage: coverageBody},
		{name: "deforestation with coverage", kind: geo.DeforestationAfterCutoff, body: layerBody, coverage: coverageBody},
		{name: "deforestation without coverage", kind: geo.DeforestationAfterCutoff, body: layerBody, paths: []string{"coverage"}},
		{name: "bad kind", kind: "roads", body: layerBody, paths: []string{"kind"}},
		{name: "bad geometry", kind: geo.ProtectedArea,
			body:  `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,1]]]}},{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}},{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[0,0]]]]}}]}`,
			paths: []string{"features[0].geometry.coordinates[0]", "features[1].geometry.type", "features[2].geometry.coordinates[0][0]"}},
		{name: "out of range", kind: geo.ProtectedArea,
			body:  `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[200,0],[1,1],[0,0]]]}}]}`,
			paths: []string{"features[0].geometry.coordinates[0][1]"}},
		{name: "bad coverage", kind: geo.DeforestationAfterCutoff, body: layerBody, coverage: `{"type":"FeatureCollection","features":[]}`,
			paths: []string{"coverage.features"}},
		{name: "not json", kind: geo.ProtectedArea, body: `{`, paths: []string{"body"}},
		{name: "not an object", kind: geo.ProtectedArea, body: `"abc"`, paths: []string{"body"}},
		{name: "self-intersecting and collinear rings", kind: geo.ProtectedArea,
			body:  `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[2,2],[2,0],[0,2],[0,0]]]}},{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[0,0],[1,1],[2,2],[0,0]]]}}]}`,
			paths: []string{"features[0].geometry.coordinates[0]", "features[1].geometry.coordinates[0]"}},
		{name: "bad ids", kind: geo.ProtectedArea,
			body:  `{"type":"FeatureCollection","features":[{"type":"Feature","id":{"x":1},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}},{"type":"Feature","properties":{"id":[1]},"geometry":{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]]]}}]}`,
			paths: []string{"features[0].id", "features[1].properties.id"}},
		{name: "across the antimeridian", kind: geo.ProtectedArea,
			body:  `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[179.5,-17],[-179.5,-17],[-179.5,-16],[179.5,-16],[179.5,-17]]]}},{"type":"Feature","geometry":{"type":"MultiPolygon","coordinates":[[[[179.5,-17],[180,-17],[180,-16],[179.5,-16],[179.5,-17]]],[[[-180,-17],[-179.5,-17],[-179.5,-16],[-180,-16],[-180,-17]]]]}}]}`,
			paths: []string{"features[0].geometry.coordinates[0]"}},
		{name: "coverage across the antimeridian", kind: geo.DeforestationAfterCutoff, body: layerBody,
			coverage: `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[170,-20],[-170,-20],[-170,-10],[170,-10],[170,-20]]]}}]}`,
			paths:    []string{"coverage.features[0].geometry.coordinates[0]"}},
		{name: "empty", kind: geo.ProtectedArea, body: `{"type":"FeatureCollection","features":[]}`, paths: []string{"features"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cov []byte
			if tt.coverage != "" {
				cov = []byte(tt.coverage)
			}
			l, err := geo.ParseLayerWithCoverage("L", tt.kind, "1", "test", []byte(tt.body), cov)
			if tt.coverage == "" {
				l2, err2 := geo.ParseLayer("L", tt.kind, "1", "test", []byte(tt.body))
				if (err == nil) != (err2 == nil) || (l == nil) != (l2 == nil) {
					t.Fatalf("ParseLayer and ParseLayerWithCoverage(nil) disagree: %v / %v", err, err2)
				}
			}
			if len(tt.paths) > 0 {
				var probs geo.Problems
				if !errors.As(err, &probs) {
					t.Fatalf("err = %v, want Problems", err)
				}
				if len(probs) != len(tt.paths) {
					t.Fatalf("problems = %v, want paths %v", probs, tt.paths)
				}
				for i, p := range probs {
					if p.Path != tt.paths[i] {
						t.Errorf("problem %d path = %q, want %q (%v)", i, p.Path, tt.paths[i], p)
					}
					if strings.Contains(p.Issue, "json:") || strings.Contains(p.Issue, "Go value") {
						t.Errorf("problem %d issue %q leaks decoder internals", i, p.Issue)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			ids := []string{l.Features[0].ID, l.Features[1].ID, l.Features[2].ID}
			if ids[0] != "a1" || ids[1] != "7" || ids[2] != "2" {
				t.Errorf("ids = %v", ids)
			}
			sum := sha256.Sum256([]byte(tt.body))
			if l.SHA256 != hex.EncodeToString(sum[:]) {
				t.Errorf("sha256 = %s", l.SHA256)
			}
			if len(l.Coverage) != 1 {
				t.Fatalf("coverage = %v", l.Coverage)
			}
			if tt.coverage == "" && l.Coverage[0][0][2] != (geo.Position{5, 5}) {
				t.Errorf("extent coverage = %v, want box to [5 5]", l.Coverage[0])
			}
			ix := geo.NewIndex(l)
			res, err := ix.Screen(geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{{{0.2, 0.2}, {0.8, 0.2}, {0.8, 0.8}, {0.2, 0.2}}}}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Covered(tt.kind) {
				t.Errorf("plot inside the layer's coverage is not covered: %+v", res)
			}
		})
	}
}

// A stored layer is re-read at start without the checks of import: a ring
// that import would now refuse, such as one crossing the antimeridian
// stored before that check existed, must not stop the layers loading.
func TestParseLayerFeatures_StoredRingAcrossAntimeridian(t *testing.T) {
	body := `{"type":"FeatureCollection","features":[{"type":"Feature","id":"fiji","geometry":{"type":"Polygon","coordinates":[[[179.5,-17],[-179.5,-17],[-179.5,-16],[179.5,-16],[179.5,-17]]]}}]}`
	feats, err := geo.ParseLayerFeatures([]byte(body))
	if err != nil {
		t.Fatalf("stored layer refused on loading: %v", err)
	}
	if len(feats) != 1 || feats[0].ID != "fiji" || len(feats[0].Polygons) != 1 || len(feats[0].Polygons[0][0]) != 5 {
		t.Fatalf("features = %+v", feats)
	}
	_, err = geo.ParseLayer("L", geo.ProtectedArea, "1", "test", []byte(body))
	var probs geo.Problems
	if !errors.As(err, &probs) || len(probs) != 1 || probs[0].Code != geo.CodeCrossesAntimeridian {
		t.Fatalf("import: err = %v, want CROSSES_ANTIMERIDIAN", err)
	}
	if !strings.Contains(probs[0].Issue, "ogr2ogr -wrapdateline") || strings.Contains(probs[0].Issue, "plot") {
		t.Errorf("import: issue %q, want the advice for layers", probs[0].Issue)
	}
}
