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
		x, y := g.Pos(c.lon, c.lat)
		if math.Abs(x-c.x) > 1e-6 || math.Abs(y-c.y) > 1e-6 {
			t.Errorf("Pos(%g, %g) = %g, %g, want %g, %g", c.lon, c.lat, x, y, c.x, c.y)
		}
	}
	lon, lat := g.Center(39999, 0)
	if math.Abs(lon - -70.000125) > 1e-9 || math.Abs(lat-9.999875) > 1e-9 {
		t.Errorf("Center(39999, 0) = %g, %g", lon, lat)
	}
}

func TestGeoref_Pixel(t *testing.T) {
	for _, c := range []struct {
		lon, lat float64
		col, row int
		ok       bool
	}{
		{-80, 10, 0, 0, true},            // the corner belongs to pixel (0, 0)
		{-79.9999, 9.9999, 0, 0, true},   //
		{-79.99975, 10, 1, 0, true},      // on the edge between columns 0 and 1: the east one
		{-79.99975, 9.99975, 1, 1, true}, //
		{-70.0000001, 0.0000001, 39999, 39999, true},
		{-70, 5, 0, 0, false}, // the east edge is outside
		{-75, 0, 0, 0, false}, // the south edge too
		{-80.0000001, 5, 0, 0, false},
		{-75, 10.0000001, 0, 0, false},
		{math.NaN(), 5, 0, 0, false},
		{-74.123456, 3.654321, 23506, 25382, true}, // (5.876544/0.00025, 6.345679/0.00025)
	} {
		col, row, ok := hansen.Pixel(c.lon, c.lat)
		if ok != c.ok || ok && (col != c.col || row != c.row) {
			t.Errorf("Pixel(%v, %v) = %d, %d, %v, want %d, %d, %v", c.lon, c.lat, col, row, ok, c.col, c.row, c.ok)
		}
	}
}

func TestGeoref_Window(t *testing.T) {
	for _, c := range []struct {
		name string
		b    geotiff.Bounds
		want geotiff.Window
	}{
		{"on pixel edges", geotiff.Bounds{West: -79.99, South: 9.98, East: -79.98, North: 9.99}, win(40, 40, 40, 40)},
		{"inside one pixel", geotiff.Bounds{West: -79.9999, South: 9.9998, East: -79.9998, North: 9.9999}, win(0, 0, 1, 1)},
		{"straddling", geotiff.Bounds{West: -79.99001, South: 9.98999, East: -79.98999, North: 9.99001}, win(39, 39, 2, 2)},
		{"clipped", geotiff.Bounds{West: -81, South: 9.999, East: -79.999, North: 11}, win(0, 0, 4, 4)},
		{"whole", geotiff.Bounds{West: -90, South: -10, East: -60, North: 20}, win(0, 0, 40000, 40000)},
		{"disjoint", geotiff.Bounds{West: -60, South: 0, East: -59, North: 1}, geotiff.Window{}},
		{"touching the east edge", geotiff.Bounds{West: -70, South: 0, East: -69, North: 1}, geotiff.Window{}},
		{"empty", geotiff.Bounds{West: -75, South: 5, East: -75, North: 5}, geotiff.Window{}},
	} {
		if got := hansen.Window(c.b); got != c.want {
			t.Errorf("%s: Window(%+v) = %+v, want %+v", c.name, c.b, got, c.want)
		}
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
