package geo_test

import (
	"slices"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

// TestScreeningOrder orders plots by the tile of the first raster layer
// under their north-west corner, then from north to south, keeping the
// job's order among plots level with each other; plots outside the tiles
// or without coordinates come last. Without raster layers the order is
// the job's.
func TestScreeningOrder(t *testing.T) {
	square := func(west, north float64) geo.Feature {
		return geo.Feature{Geometry: geo.Geometry{Type: "Polygon", Polygons: []geo.Polygon{{{
			{west, north - 0.01}, {west + 0.01, north - 0.01}, {west + 0.01, north}, {west, north}, {west, north - 0.01}}}}}}
	}
	point := func(lon, lat float64) geo.Feature {
		return geo.Feature{Geometry: geo.Geometry{Type: "Point", Points: []geo.Position{{lon, lat}}}}
	}
	tile := func(name string, west float64) geo.RasterTile {
		return geo.RasterTile{Name: name, Reader: funcReader(func(int, int) uint8 { return 0 }),
			Grid: geotiff.Georef{West: west, North: 10, DX: 0.01, DY: 0.01, Width: 500, Height: 1000}}
	}
	feats := []geo.Feature{
		0: square(-75.0, 5.0),  // east tile, middle
		1: square(-79.0, 2.0),  // west tile, south
		2: point(-74.5, 9.0),   // east tile, north
		3: square(-60.0, 5.0),  // outside both tiles
		4: square(-79.5, 2.0),  // west tile, level with 1
		5: square(-78.0, 8.5),  // west tile, north
		6: {},                  // no coordinates
		7: square(-71.0, 5.0),  // east tile, level with 0
		8: point(-72.0, 9.5),   // east tile, northmost
		9: square(-80.0, 10.0), // west tile, on its north-west corner
	}
	ix := geo.NewIndex().WithRasters(
		rasterLayer("loss", geo.LossYear, tile("west.tif", -80), tile("east.tif", -75)),
		rasterLayer("forest", geo.Forest2020, tile("forest.tif", -90)))
	want := []int{9, 5, 1, 4, 8, 2, 0, 7, 3, 6}
	if got := ix.ScreeningOrder(feats); !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if got := geo.NewIndex().ScreeningOrder(feats); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
		t.Errorf("without raster layers: order %v, want the job's", got)
	}
	if got := ix.ScreeningOrder(nil); len(got) != 0 {
		t.Errorf("no features: order %v", got)
	}
}
