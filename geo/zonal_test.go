package geo_test

import (
	"bytes"
	"context"
	"math"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// Hansen's grid: 0.00025 degree pixels (about 28 m at the equator).
const px = 0.00025

// lossTile is a 100 x 100 pixel tile with its upper-left corner at lon
// west, lat 1: value 21 (loss in 2021) in columns and rows 10-19, nodata
// (255) in column 50, 0 elsewhere.
func lossTile(t *testing.T, west float64, comp geotiff.Compression) *geotiff.File {
	t.Helper()
	pix := func(col, row int) uint8 {
		switch {
		case col == 50:
			return 255
		case col >= 10 && col < 20 && row >= 10 && row < 20:
			return 21
		}
		return 0
	}
	b := geotifftest.MustEncode(t, 100, 100, pix, geotifftest.Options{Compression: comp, TileWidth: 32, TileHeight: 32,
		West: west, North: 1, DX: px, DY: px, NoData: "255"})
	f, err := geotiff.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// rect is a polygon plot from (col0, row0) to (col1, row1) in pixel edges
// of a tile whose upper-left corner is (west, 1).
func rect(west float64, col0, row0, col1, row1 float64) geo.Geometry {
	x0, x1 := west+col0*px, west+col1*px
	y0, y1 := 1-row1*px, 1-row0*px
	return geo.Geometry{Type: geo.TypePolygon, Polygons: []geo.Polygon{{geo.Ring{{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}}}}}
}

func stats(t *testing.T, g geo.Geometry, pointHa float64, f *geotiff.File) geo.PixelStats {
	t.Helper()
	s, err := geo.ZonalStats(context.Background(), g, pointHa, tileOf(f))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tileOf is the raster tile of an open file.
func tileOf(f *geotiff.File) geo.RasterTile {
	info := f.Info()
	return geo.RasterTile{Name: "tile", Grid: f.Georef(), NoData: info.NoData, HasNoData: info.HasNoData, Reader: f}
}

func TestZonalStats(t *testing.T) {
	for _, comp := range []geotiff.Compression{geotiff.CompressionNone, geotiff.CompressionLZW, geotiff.CompressionDeflate} {
		f := lossTile(t, 10, comp)

		// Exactly the loss block: 100 pixels of 21, and their area is the
		// plot's geodesic area.
		g := rect(10, 10, 10, 20, 20)
		s := stats(t, g, 0, f)
		area := geo.PolygonArea([][][2]float64{g.Polygons[0][0]})
		if s.Pixels[21] != 100 || s.Pixels[0] != 0 || math.Abs(s.Ha[21]-area)/area > 1e-6 {
			t.Errorf("%v: loss block: %d px of 21 (%.6f ha, plot %.6f ha), %d of 0", comp, s.Pixels[21], s.Ha[21], area, s.Pixels[0])
		}

		// Half over the block, half beside it; and over the nodata column.
		s = stats(t, rect(10, 15, 10, 25, 20), 0, f)
		if s.Pixels[21] != 50 || s.Pixels[0] != 50 {
			t.Errorf("%v: half over: %d of 21, %d of 0", comp, s.Pixels[21], s.Pixels[0])
		}
		s = stats(t, rect(10, 48, 0, 53, 2), 0, f)
		if n, _ := s.Total(); s.NoDataPixels != 2 || s.Pixels[0] != 8 || n != 10 || s.NoDataHa <= 0 {
			t.Errorf("%v: nodata: %+v", comp, s.NoDataPixels)
		}

		// A plot boundary through pixel centres: those pixels count (on
		// the boundary is inside).
		s = stats(t, rect(10, 10.5, 10.5, 12.5, 12.5), 0, f)
		if s.Pixels[21] != 9 {
			t.Errorf("%v: boundary through centres: %d px, want 9", comp, s.Pixels[21])
		}

		// A point: the pixel it falls in, with the declared area.
		pt := geo.Geometry{Type: geo.TypePoint, Points: []geo.Position{{10 + 15.2*px, 1 - 12.7*px}}}
		s = stats(t, pt, 2.5, f)
		if s.Pixels[21] != 1 || s.Ha[21] != 2.5 {
			t.Errorf("%v: point: %d px, %v ha", comp, s.Pixels[21], s.Ha[21])
		}

		// Outside the tile: nothing counted.
		if s := stats(t, rect(20, 10, 10, 20, 20), 0, f); func() int { n, _ := s.Total(); return n }() != 0 {
			t.Errorf("%v: outside: %+v", comp, s)
		}
	}
}

// TestZonalStats_AcrossTiles: a plot across the edge of two tiles is the
// sum of its parts in each, every pixel counted once.
func TestZonalStats_AcrossTiles(t *testing.T) {
	west := lossTile(t, 10, geotiff.CompressionLZW)
	east := lossTile(t, 10+100*px, geotiff.CompressionLZW)
	// Columns 95-104 of the pair: 5 in each tile, rows 10-19.
	g := rect(10, 95, 10, 105, 20)
	s, err := geo.ZonalStats(context.Background(), g, 0, tileOf(west), tileOf(east))
	if err != nil {
		t.Fatal(err)
	}
	area := geo.PolygonArea([][][2]float64{g.Polygons[0][0]})
	// In the east tile these are its columns 0-4, rows 10-19: value 0.
	if n, ha := s.Total(); n != 100 || s.Pixels[0] != 100 || math.Abs(ha-area)/area > 1e-6 {
		t.Errorf("across tiles: %d px, %.6f ha (plot %.6f ha)", n, ha, area)
	}
}
