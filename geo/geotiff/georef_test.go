package geotiff_test

import (
	"math"
	"testing"

	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// hansen is the georeference of Hansen_GFC-2023-v1.11_lossyear_10N_080W.tif.
var hansen = geotiff.Georef{West: -80, North: 10, DX: 0.00025, DY: 0.00025, Width: 40000, Height: 40000}

func near(a, b geotiff.Bounds) bool { return nearTol(a, b, 1e-9) }

func nearTol(a, b geotiff.Bounds, eps float64) bool {
	return math.Abs(a.West-b.West) < eps && math.Abs(a.South-b.South) < eps &&
		math.Abs(a.East-b.East) < eps && math.Abs(a.North-b.North) < eps
}

func TestGeoref_Bounds(t *testing.T) {
	if got, want := hansen.Bounds(), (geotiff.Bounds{West: -80, South: 0, East: -70, North: 10}); !near(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestGeoref_Conversions(t *testing.T) {
	g := hansen
	for _, c := range []struct {
		x, y, lon, lat float64
	}{
		{0, 0, -80, 10},                  // outer upper-left corner
		{0.5, 0.5, -79.999875, 9.999875}, // centre of pixel (0, 0)
		{40000, 40000, -70, 0},           // outer lower-right corner
		{20000, 4000, -75, 9},
	} {
		lon, lat := g.LonLat(c.x, c.y)
		if math.Abs(lon-c.lon) > 1e-9 || math.Abs(lat-c.lat) > 1e-9 {
			t.Errorf("LonLat(%g, %g) = %g, %g, want %g, %g", c.x, c.y, lon, lat, c.lon, c.lat)
		}
	}
	lon, lat := g.Center(39999, 0)
	if math.Abs(lon - -70.000125) > 1e-9 || math.Abs(lat-9.999875) > 1e-9 {
		t.Errorf("Center(39999, 0) = %g, %g", lon, lat)
	}
}

// TestOpen_Georef checks the georeference Open derives from each way of
// writing it.
func TestOpen_Georef(t *testing.T) {
	area := geotiff.Bounds{West: 20, South: -5.05, East: 20.1, North: -5}
	for _, c := range []struct {
		name  string
		opts  geotifftest.Options
		point bool
	}{
		{"pixel-is-area", geotifftest.Options{West: 20, North: -5, DX: 0.001, DY: 0.001}, false},
		{"pixel-is-point", geotifftest.Options{West: 20, North: -5, DX: 0.001, DY: 0.001, PixelIsPoint: true}, true},
		{"tiepoint-not-at-origin", geotifftest.Options{Tags: []geotifftest.Tag{
			{ID: geotifftest.TagModelPixelScale, Value: []float64{0.001, 0.001, 0}},
			{ID: geotifftest.TagModelTiepoint, Value: []float64{10, 20, 0, 20.01, -5.02, 0}},
		}}, false},
		{"transformation", geotifftest.Options{Tags: []geotifftest.Tag{
			{ID: geotifftest.TagModelPixelScale}, {ID: geotifftest.TagModelTiepoint},
			{ID: geotifftest.TagModelTransformation, Value: []float64{0.001, 0, 0, 20, 0, -0.001, 0, -5, 0, 0, 0, 0, 0, 0, 0, 1}},
		}}, false},
		{"float-scale", geotifftest.Options{Tags: []geotifftest.Tag{
			{ID: geotifftest.TagModelPixelScale, Value: []float32{0.001, 0.001, 0}},
			{ID: geotifftest.TagModelTiepoint, Value: []float64{0, 0, 0, 20, -5, 0}},
		}}, false},
		{"user-defined-wgs84", geotifftest.Options{West: 20, North: -5, DX: 0.001, DY: 0.001, Tags: []geotifftest.Tag{
			{ID: geotifftest.TagGeoKeyDirectory, Value: []uint16{1, 1, 0, 3, 1024, 0, 1, 2, 2048, 0, 1, 32767, 2050, 0, 1, 6326}},
		}}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := geotifftest.MustEncode(t, 100, 50, pattern, c.opts)
			g := mustOpen(t, b, geotiff.Options{}).Georef()
			if !nearTol(g.Bounds(), area, 1e-6) { // float32 scales are that far off
				t.Fatalf("bounds %+v, want %+v", g.Bounds(), area)
			}
			if math.Abs(g.DX-0.001) > 1e-8 || math.Abs(g.DY-0.001) > 1e-8 || g.PixelIsPoint != c.point {
				t.Fatalf("georef %+v, want pixels of 0.001 degree, PixelIsPoint %v", g, c.point)
			}
		})
	}
}
