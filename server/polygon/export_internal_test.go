package polygon

import (
	"encoding/json"
	"testing"
)

// Each type a plot is recorded with, as WKT with 6 decimals, rounded; an
// altitude is left out.
func TestWKT(t *testing.T) {
	for _, tc := range []struct{ geometry, want string }{
		{`{"type":"Point","coordinates":[5.0000006,-6.12345649,120]}`, "POINT (5.000001 -6.123456)"},
		{`{"type":"MultiPoint","coordinates":[[5,6],[5.1,6.1]]}`, "MULTIPOINT ((5.000000 6.000000), (5.100000 6.100000))"},
		{`{"type":"Polygon","coordinates":[[[0,0],[1,0],[1,1],[0,0]],[[0.2,0.2],[0.3,0.2],[0.3,0.3],[0.2,0.2]]]}`,
			"POLYGON ((0.000000 0.000000, 1.000000 0.000000, 1.000000 1.000000, 0.000000 0.000000), " +
				"(0.200000 0.200000, 0.300000 0.200000, 0.300000 0.300000, 0.200000 0.200000))"},
		{`{"type":"MultiPolygon","coordinates":[[[[0,0],[1,0],[1,1],[0,0]]],[[[2,2],[3,2],[3,3],[2,2]]]]}`,
			"MULTIPOLYGON (((0.000000 0.000000, 1.000000 0.000000, 1.000000 1.000000, 0.000000 0.000000)), " +
				"((2.000000 2.000000, 3.000000 2.000000, 3.000000 3.000000, 2.000000 2.000000)))"},
	} {
		g, err := geometryOfFeature(json.RawMessage(`{"type":"Feature","geometry":` + tc.geometry + `}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.geometry, err)
		}
		if got := g.wkt(); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.geometry, got, tc.want)
		}
	}
	if _, err := geometryOfFeature(json.RawMessage(`{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[1,1]]}}`)); err == nil {
		t.Error("LineString: no error")
	}
}
