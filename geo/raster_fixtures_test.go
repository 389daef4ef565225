package geo_test

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

// The raster fixtures lie at lon 10, lat 1. A 100 x 100 pixel loss-year
// tile on Hansen's grid (px) from there is 0.025 degree square; forest and
// alert tiles on other grids cover the same area.
const (
	tileWest, tileNorth = 10.0, 1.0
	finePx              = 0.0001 // a 10 m grid like JRC's forest map: 2.5 pixels to a Hansen pixel
	coarsePx            = 0.0005 // 2 Hansen pixels
)

// Grids for expected values. Hansen pixel (col, row) of the fixtures is
// pixel (col, row) of hansenGrid whichever tile holds it (the east tile's
// column 0 is column 100).
var (
	hansenGrid = geotiff.Georef{West: tileWest, North: tileNorth, DX: px, DY: px, Width: 300, Height: 300}
	fineGrid   = geotiff.Georef{West: tileWest, North: tileNorth, DX: finePx, DY: finePx, Width: 250, Height: 250}
	coarseGrid = geotiff.Georef{West: tileWest, North: tileNorth, DX: coarsePx, DY: coarsePx, Width: 50, Height: 50}
)

// inBlock reports whether (col, row) is in columns [c0, c1) and rows [r0, r1).
func inBlock(col, row, c0, r0, c1, r1 int) bool {
	return col >= c0 && col < c1 && row >= r0 && row < r1
}

// lossYears is the loss-year fixture: 100 x 100 Hansen pixels from
// (tileWest, tileNorth), written with nodata 255. By columns and rows:
//
//	A   cols 10-19, rows 10-19   21: loss in 2021
//	A2  cols 10-19, rows 30-39   21, south of the forest fixtures
//	B   cols 30-39, rows 10-19   15 + row-10: 15-20 up to the cutoff, 21-24 after
//	C   cols 50-59, rows 10-19   11 + col-50: 11-20, all up to the cutoff
//	D   col 70, rows 10-14 and col 85, rows 10-24   22 (for the thresholds)
//	F   cols 90-99, rows 40-49   23, against the east edge
//	G   cols 60-61, rows 40-49   255: nodata
//	elsewhere 0
func lossYears(col, row int) uint8 {
	in := func(c0, r0, c1, r1 int) bool { return inBlock(col, row, c0, r0, c1, r1) }
	switch {
	case in(10, 10, 20, 20), in(10, 30, 20, 40):
		return 21
	case in(30, 10, 40, 20):
		return uint8(15 + row - 10)
	case in(50, 10, 60, 20):
		return uint8(11 + col - 50)
	case in(70, 10, 71, 15), in(85, 10, 86, 25):
		return 22
	case in(90, 40, 100, 50):
		return 23
	case in(60, 40, 62, 50):
		return 255
	}
	return 0
}

// eastYears is the tile east of lossYears's: 21 in its columns 0-9, rows
// 40-49 (continuing F), 0 elsewhere.
func eastYears(col, row int) uint8 {
	if inBlock(col, row, 0, 40, 10, 50) {
		return 21
	}
	return 0
}

// inForest reports whether Hansen pixel (col, row) is forest in the forest
// fixtures: west of lon 10.004 and north of lat 0.9925, that is fine
// columns 0-39 and rows 0-74, coarse columns 0-7 and rows 0-14.
func inForest(col, row int) bool { return col < 16 && row < 30 }

// hansenOptions are how a fixture on Hansen's grid with its upper-left
// corner at (west, north) is written unless a test says otherwise.
func hansenOptions(west, north float64) geotifftest.Options {
	return geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 32, TileHeight: 32,
		West: west, North: north, DX: px, DY: px, NoData: "255"}
}

// openTile opens a GeoTIFF written by geotifftest as the raster tile name.
func openTile(t *testing.T, name string, b []byte) geo.RasterTile {
	t.Helper()
	f, err := geotiff.Open(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatalf("open tile %s: %v", name, err)
	}
	info := f.Info()
	return geo.RasterTile{Name: name, Grid: f.Georef(), NoData: info.NoData, HasNoData: info.HasNoData, Reader: f}
}

// encodeTile writes a w x h GeoTIFF of pix with o and opens it as name.
func encodeTile(t *testing.T, name string, w, h int, pix geotifftest.Pixels, o geotifftest.Options) geo.RasterTile {
	t.Helper()
	return openTile(t, name, geotifftest.MustEncode(t, w, h, pix, o))
}

func rasterLayer(id string, kind geo.LayerKind, tiles ...geo.RasterTile) *geo.RasterLayer {
	return &geo.RasterLayer{ID: id, Name: "layer " + id, Kind: kind, Version: "v1", Tiles: tiles}
}

// The fixture tiles.

func westLossTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "lossyear_w.tif", 100, 100, lossYears, hansenOptions(tileWest, tileNorth))
}

func eastLossTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "lossyear_e.tif", 100, 100, eastYears, hansenOptions(tileWest+100*px, tileNorth))
}

// southLossTile is the tile south of lossYears's: 22 everywhere.
func southLossTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "lossyear_s.tif", 100, 100, func(int, int) uint8 { return 22 }, hansenOptions(tileWest, tileNorth-100*px))
}

// zeroLossTile is another dataset's loss-year tile over lossYears's: no
// loss at all, and no nodata.
func zeroLossTile(t *testing.T) geo.RasterTile {
	o := hansenOptions(tileWest, tileNorth)
	o.NoData = ""
	return encodeTile(t, "other.tif", 100, 100, func(int, int) uint8 { return 0 }, o)
}

func boolPixel(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// fineForestTile is the forest fixture on the 0.0001 degree grid.
func fineForestTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "forest_fine.tif", 250, 250, func(col, row int) uint8 { return boolPixel(col < 40 && row < 75) },
		geotifftest.Options{Compression: geotiff.CompressionDeflate, TileWidth: 64, TileHeight: 64,
			West: tileWest, North: tileNorth, DX: finePx, DY: finePx})
}

// fineForestHolesTile is fineForestTile with nodata (255) instead of 0
// south of the forest, from fine row 75 (Hansen row 30) on.
func fineForestHolesTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "forest_holes.tif", 250, 250, func(col, row int) uint8 {
		if row >= 75 {
			return 255
		}
		return boolPixel(col < 40)
	}, geotifftest.Options{Compression: geotiff.CompressionLZW, RowsPerStrip: 16,
		West: tileWest, North: tileNorth, DX: finePx, DY: finePx, NoData: "255"})
}

// rectForestGrid has pixels half as tall as they are wide, so that a
// cell's area depends on both.
var rectForestGrid = geotiff.Georef{West: tileWest, North: tileNorth, DX: finePx, DY: finePx / 2, Width: 250, Height: 500}

// rectForestTile is the forest fixture on rectForestGrid: columns 0-39,
// rows 0-149.
func rectForestTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "forest_rect.tif", 250, 500, func(col, row int) uint8 { return boolPixel(col < 40 && row < 150) },
		geotifftest.Options{Compression: geotiff.CompressionLZW, TileWidth: 64, TileHeight: 64,
			West: tileWest, North: tileNorth, DX: rectForestGrid.DX, DY: rectForestGrid.DY})
}

// coarseForestTile is the forest fixture on the 0.0005 degree grid.
func coarseForestTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "forest_coarse.tif", 50, 50, func(col, row int) uint8 { return boolPixel(col < 8 && row < 15) },
		geotifftest.Options{West: tileWest, North: tileNorth, DX: coarsePx, DY: coarsePx})
}

// alertsTile is an alert fixture on the 0.0001 degree grid: 1 in fine
// columns 20-59, rows 20-29; 7 in the same columns, rows 30-39; nodata
// (255) from row 200 on; 0 elsewhere.
func alertsTile(t *testing.T) geo.RasterTile {
	return encodeTile(t, "alerts.tif", 250, 250, func(col, row int) uint8 {
		switch {
		case row >= 200:
			return 255
		case inBlock(col, row, 20, 20, 60, 30):
			return 1
		case inBlock(col, row, 20, 30, 60, 40):
			return 7
		}
		return 0
	}, geotifftest.Options{Compression: geotiff.CompressionDeflate, Predictor: true, TileWidth: 32, TileHeight: 32,
		West: tileWest, North: tileNorth, DX: finePx, DY: finePx, NoData: "255"})
}

// Plots.

// hansenRectJSON is the Polygon between Hansen pixel edges (col0, row0)
// and (col1, row1) of the fixtures, with 6 decimals.
func hansenRectJSON(col0, row0, col1, row1 float64) string {
	return rectJSON(tileWest+col0*px, tileNorth-row1*px, tileWest+col1*px, tileNorth-row0*px)
}

// hansenPlot is hansenRectJSON parsed as a feature.
func hansenPlot(t *testing.T, col0, row0, col1, row1 float64) geo.Feature {
	t.Helper()
	return parseOne(t, hansenRectJSON(col0, row0, col1, row1), "")
}

// hansenPolygon is the Polygon through Hansen positions (col, row), closed.
func hansenPolygon(t *testing.T, pts ...[2]float64) geo.Feature {
	t.Helper()
	var ring []string
	for _, p := range append(pts, pts[0]) {
		ring = append(ring, pos(tileWest+p[0]*px, tileNorth-p[1]*px))
	}
	return parseOne(t, `{"type":"Polygon","coordinates":[[`+strings.Join(ring, ",")+`]]}`, "")
}

// hansenPoints is a Point (one position) or MultiPoint plot at Hansen
// positions (x, y), in pixel (int(x), int(y)), each of ha hectares.
func hansenPoints(t *testing.T, ha float64, pts ...[2]float64) geo.Feature {
	t.Helper()
	var coords []string
	for _, p := range pts {
		coords = append(coords, pos(tileWest+p[0]*px, tileNorth-p[1]*px))
	}
	geometry := `{"type":"Point","coordinates":` + coords[0] + `}`
	if len(pts) > 1 {
		geometry = `{"type":"MultiPoint","coordinates":[` + strings.Join(coords, ",") + `]}`
	}
	return parseOne(t, geometry, `,"area":`+strconv.FormatFloat(ha, 'f', -1, 64))
}

// Expected values.

// gridCells counts the pixels of grid g in columns [col0, col1) and rows [row0,
// row1) for which in is true (nil: all), and sums their areas: each a DX by
// DY cell at its row's centre latitude, measured with geo.RingArea.
func gridCells(g geotiff.Georef, col0, row0, col1, row1 int, in func(col, row int) bool) (n int, ha float64) {
	for row := row0; row < row1; row++ {
		_, lat := g.Center(0, row)
		s, north := lat-g.DY/2, lat+g.DY/2
		cell := geo.RingArea([][2]float64{{0, s}, {g.DX, s}, {g.DX, north}, {0, north}, {0, s}})
		for col := col0; col < col1; col++ {
			if in == nil || in(col, row) {
				n++
				ha += cell
			}
		}
	}
	return n, ha
}

// sameHa reports whether two sums of the same cell areas agree but for the
// order they were added in.
func sameHa(got, want float64) bool { return math.Abs(got-want) <= 1e-9*math.Abs(want) }

// assessRasters assesses f against the raster layers alone, under rules r.
func assessRasters(t *testing.T, f geo.Feature, r geo.Rules, layers ...*geo.RasterLayer) geo.Outcome {
	t.Helper()
	return assess(t, f, geo.NewIndex().WithRasters(layers...), r)
}

// checkLoss checks o.Loss against the loss layer's ID, the forest layer's
// ID, and pixels and hectares counted by hand, and that Risk shows it.
func checkLoss(t *testing.T, o geo.Outcome, lossID, forestID string, pixels int, ha float64) {
	t.Helper()
	l := o.Loss
	if l == nil {
		t.Fatalf("Loss = nil, want %d px, %v ha from %q (%s %s)", pixels, ha, lossID, o.Status, o.Reason)
	}
	if l.LossLayerID != lossID || l.ForestLayerID != forestID {
		t.Errorf("Loss layers = %q, %q; want %q, %q", l.LossLayerID, l.ForestLayerID, lossID, forestID)
	}
	if l.Pixels != pixels || !sameHa(l.Ha, ha) {
		t.Errorf("Loss = %d px, %.9f ha; want %d px, %.9f ha", l.Pixels, l.Ha, pixels, ha)
	}
	if want := 100 * ha / o.AreaHa; math.Abs(l.Pct-want) > 1e-6*max(1, want) {
		t.Errorf("Loss.Pct = %v, want %v (%v of %v ha)", l.Pct, want, ha, o.AreaHa)
	}
	if o.Status != geo.StatusFailed && (o.Risk.DeforestedHa != l.Ha || o.Risk.DeforestedPct != l.Pct) {
		t.Errorf("Risk deforested = %v ha, %v %%; want the loss's %v ha, %v %%", o.Risk.DeforestedHa, o.Risk.DeforestedPct, l.Ha, l.Pct)
	}
}

// checkStats checks the pixel counts by value of a raster result.
func checkStats(t *testing.T, r geo.RasterResult, want map[uint8]int, noData int) {
	t.Helper()
	for v := range r.Stats.Pixels {
		if got := r.Stats.Pixels[v]; got != want[uint8(v)] {
			t.Errorf("layer %s: %d px of value %d, want %d", r.LayerID, got, v, want[uint8(v)])
		}
	}
	if r.Stats.NoDataPixels != noData {
		t.Errorf("layer %s: %d nodata px, want %d", r.LayerID, r.Stats.NoDataPixels, noData)
	}
}

// rasterOf returns the result of layer id, failing t if there is none.
func rasterOf(t *testing.T, o geo.Outcome, id string) geo.RasterResult {
	t.Helper()
	for _, r := range o.Rasters {
		if r.LayerID == id {
			return r
		}
	}
	t.Fatalf("no raster result for layer %q in %+v (%s %s: %s)", id, o.Rasters, o.Status, o.Reason, o.Detail)
	return geo.RasterResult{}
}

// perValue is a map of n pixels of each value from lo to hi.
func perValue(lo, hi uint8, n int) map[uint8]int {
	m := map[uint8]int{}
	for v := int(lo); v <= int(hi); v++ {
		m[uint8(v)] = n
	}
	return m
}

func withCount(m map[uint8]int, v uint8, n int) map[uint8]int {
	m[v] = n
	return m
}

// TestAssess_RasterLossYear: loss after 2020 on a plot makes it HIGH_RISK
// DEFORESTATION_AFTER_CUTOFF; loss up to 2020 does not count.
