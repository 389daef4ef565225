package geo_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
	"github.com/eudr/eudr/geo/geotiff/geotifftest"
)

func TestAssess_RasterEncodings(t *testing.T) {
	type variant struct {
		name string
		o    geotifftest.Options
	}
	var variants []variant
	layouts := []struct {
		name string
		o    geotifftest.Options
	}{
		{"tiles 32x32", geotifftest.Options{TileWidth: 32, TileHeight: 32}},
		{"tiles 64x16", geotifftest.Options{TileWidth: 64, TileHeight: 16}},
		{"strips of 1 row", geotifftest.Options{RowsPerStrip: 1}},
		{"strips of 7 rows", geotifftest.Options{RowsPerStrip: 7}},
		{"one strip", geotifftest.Options{}},
	}
	for _, c := range []geotiff.Compression{geotiff.CompressionNone, geotiff.CompressionLZW, geotiff.CompressionDeflate} {
		for _, pred := range []bool{false, true} {
			if pred && c == geotiff.CompressionNone {
				continue // readers ignore a predictor on uncompressed data
			}
			for _, l := range layouts {
				o := l.o
				o.Compression, o.Predictor = c, pred
				name := fmt.Sprintf("%v %s", c, l.name)
				if pred {
					name += " predictor"
				}
				variants = append(variants, variant{name, o})
			}
		}
	}
	variants = append(variants,
		variant{"legacy Deflate", geotifftest.Options{Compression: geotiff.CompressionDeflateLegacy, RowsPerStrip: 3}},
		variant{"big-endian BigTIFF LZW predictor", geotifftest.Options{Compression: geotiff.CompressionLZW, Predictor: true,
			TileWidth: 16, TileHeight: 16, BigEndian: true, BigTIFF: true}},
	)

	plots := []struct {
		name   string
		f      geo.Feature
		pixels int // lost after the cutoff; -1: FAILED, no loss; -2: not counted by hand
	}{
		{"A", hansenPlot(t, 10, 10, 20, 20), 100},
		{"B", hansenPlot(t, 30, 10, 40, 20), 40},
		{"C", hansenPlot(t, 45, 10, 55, 20), 0},
		{"D", hansenPlot(t, 70, 10, 90, 30), 20},
		// A, A2, and B's 2021-2024 rows 16-19 in columns 30-36.
		{"across blocks", hansenPlot(t, 5, 5, 37, 41), 100 + 100 + 7*4},
		{"triangle", hansenPolygon(t, [2]float64{8, 8}, [2]float64{40, 12}, [2]float64{12, 42}), -2},
		{"multipolygon", parseOne(t, `{"type":"MultiPolygon","coordinates":[[`+
			strings.TrimSuffix(strings.TrimPrefix(hansenRectJSON(10, 10, 20, 20), `{"type":"Polygon","coordinates":[`), `]}`)+`],[`+
			strings.TrimSuffix(strings.TrimPrefix(hansenRectJSON(50, 10, 60, 20), `{"type":"Polygon","coordinates":[`), `]}`)+`]]}`, ""), 100},
		{"nodata", hansenPlot(t, 55, 40, 65, 50), -1},
		{"partly outside", hansenPlot(t, 95, 40, 105, 50), -1},
		{"sampled", hansenPlot(t, 15.04, 15.08, 15.32, 15.36), 1},
		{"point", hansenPoints(t, 1, [2]float64{15.3, 12.7}), 1},
		{"bottom-right corner", hansenPlot(t, 90, 90, 100, 100), 0},
	}
	forest := rasterLayer("jrc-fine", geo.Forest2020, fineForestTile(t))
	var want []geo.Outcome
	for i, v := range variants {
		o := v.o
		o.West, o.North, o.DX, o.DY, o.NoData = tileWest, tileNorth, px, px, "255"
		tile := encodeTile(t, "lossyear_w.tif", 100, 100, lossYears, o)
		loss := rasterLayer("hansen", geo.LossYear, tile)
		for j, p := range plots {
			for _, withForest := range []bool{false, true} {
				layers := []*geo.RasterLayer{loss}
				if withForest {
					layers = append(layers, forest)
				}
				got := assessRasters(t, p.f, geo.DefaultRules(), layers...)
				k := 2*j + boolIndex(withForest)
				if i == 0 {
					want = append(want, got)
					continue
				}
				if !reflect.DeepEqual(got, want[k]) {
					t.Errorf("%s, plot %s, forest %v: outcome %+v\nwant (as %s) %+v", v.name, p.name, withForest, got, variants[0].name, want[k])
				}
			}
		}
	}
	// The reference outcomes, without the forest layer, by hand.
	for j, p := range plots {
		o := want[2*j]
		switch {
		case p.pixels == -1:
			if o.Status != geo.StatusFailed || o.Loss != nil {
				t.Errorf("plot %s: %s, Loss %+v; want FAILED without loss", p.name, o.Status, o.Loss)
			}
		case p.pixels == -2: // only compared between encodings
		case o.Loss == nil || o.Loss.Pixels != p.pixels:
			t.Errorf("plot %s: Loss %+v, want %d px", p.name, o.Loss, p.pixels)
		}
	}
}

func boolIndex(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestAssess_RasterAlerts: an alerts layer reports the hectares of its
// nonzero pixels on the plot; it neither covers a plot nor judges it.
func TestAssess_RasterAlerts(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	alerts := rasterLayer("radd", geo.Alerts, alertsTile(t))
	alert := func(c, r int) bool { return inBlock(c, r, 20, 20, 60, 40) }
	tests := []struct {
		name           string
		f              geo.Feature
		fine           [4]int // the plot on the fine grid
		byValue        map[uint8]int
		noData         int
		covered        bool
		status, reason string
	}{
		// Plot A is fine columns and rows 25-49: alerts in rows 25-39.
		{"over loss and alerts", hansenPlot(t, 10, 10, 20, 20), [4]int{25, 25, 50, 50},
			map[uint8]int{0: 250, 1: 125, 7: 250}, 0, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		// Fine columns 50-74: alerts in columns 50-59, rows 25-39.
		{"alerts without loss", hansenPlot(t, 20, 10, 30, 20), [4]int{50, 25, 75, 50},
			map[uint8]int{0: 475, 1: 50, 7: 100}, 0, true, geo.StatusCompliant, ""},
		// Fine rows 205-224: all nodata.
		{"alerts nodata", hansenPlot(t, 10, 82, 20, 90), [4]int{25, 205, 50, 225},
			map[uint8]int{}, 500, false, geo.StatusCompliant, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assessRasters(t, tt.f, geo.DefaultRules(), loss, alerts)
			wantOutcome(t, o, tt.status, tt.reason)
			r := rasterOf(t, o, "radd")
			if r.Kind != geo.Alerts || r.Covered != tt.covered || !slices.Equal(r.Tiles, []string{"alerts.tif"}) {
				t.Errorf("%s covered %v tiles %q; want alerts, covered %v, alerts.tif", r.Kind, r.Covered, r.Tiles, tt.covered)
			}
			checkStats(t, r, tt.byValue, tt.noData)
			f := tt.fine
			n, ha := gridCells(fineGrid, f[0], f[1], f[2], f[3], alert)
			if n != tt.byValue[1]+tt.byValue[7] || !sameHa(r.Ha, ha) || math.Abs(r.Pct-100*ha/o.AreaHa) > 1e-6 {
				t.Errorf("alerts: %v ha, %v %%; want %d px, %v ha, %v %%", r.Ha, r.Pct, n, ha, 100*ha/o.AreaHa)
			}
			// Alerts are evidence, not risk: the score is the loss's.
			if o.Status == geo.StatusCompliant && o.Risk.RiskScore != 0 {
				t.Errorf("RiskScore = %d, want 0", o.Risk.RiskScore)
			}
		})
	}
}

// failingRaster is a tile whose pixels cannot be read.
type failingRaster struct{ err error }

func (r failingRaster) ReadWindow(context.Context, geotiff.Window, []uint8) error { return r.err }

// cancellingRaster cancels a context when it is first read, then reads.
type cancellingRaster struct {
	geo.RasterReader
	cancel context.CancelFunc
}

func (r cancellingRaster) ReadWindow(ctx context.Context, w geotiff.Window, dst []uint8) error {
	r.cancel()
	return r.RasterReader.ReadWindow(ctx, w, dst)
}

// recordingReaderAt records the byte ranges read through it.
type recordingReaderAt struct {
	r     io.ReaderAt
	reads [][2]int64
}

func (r *recordingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	r.reads = append(r.reads, [2]int64{off, off + int64(len(p))})
	return r.r.ReadAt(p, off)
}

// corruptTile writes the loss-year fixture as Deflate tiles, then fills
// every byte of block data (what reading all pixels reads after Open) with
// 0xFF, which is no zlib stream.
func corruptTile(t *testing.T, name string) geo.RasterTile {
	t.Helper()
	o := hansenOptions(tileWest, tileNorth)
	o.Compression = geotiff.CompressionDeflate
	b := geotifftest.MustEncode(t, 100, 100, lossYears, o)
	rec := &recordingReaderAt{r: bytes.NewReader(b)}
	f, err := geotiff.Open(rec, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	rec.reads = nil
	if err := f.ReadWindow(context.Background(), geotiff.Window{Width: 100, Height: 100}, make([]uint8, 100*100)); err != nil {
		t.Fatal(err)
	}
	if len(rec.reads) == 0 {
		t.Fatal("reading the pixels read nothing")
	}
	bad := bytes.Clone(b)
	for _, r := range rec.reads {
		for i := r[0]; i < r[1]; i++ {
			bad[i] = 0xFF
		}
	}
	return openTile(t, name, bad)
}

// TestAssess_RasterReadErrors: a tile that cannot be read makes the plot
// FAILED SCREENING_ERROR, naming the tile.
func TestAssess_RasterReadErrors(t *testing.T) {
	grid := func(west float64) geotiff.Georef {
		return geotiff.Georef{West: west, North: tileNorth, DX: px, DY: px, Width: 100, Height: 100}
	}
	broken := geo.RasterTile{Name: "broken.tif", Grid: grid(tileWest), Reader: failingRaster{errors.New("disk on fire")}}
	brokenEast := geo.RasterTile{Name: "broken_e.tif", Grid: grid(tileWest + 100*px), Reader: failingRaster{errors.New("disk on fire")}}
	w := westLossTile(t)
	brokenForest := geo.RasterTile{Name: "broken.tif", Grid: fineGrid, Reader: failingRaster{errors.New("disk on fire")}}
	plotA := hansenPlot(t, 10, 10, 20, 20)
	tests := []struct {
		name   string
		layers []*geo.RasterLayer
		f      geo.Feature
		tile   string // named in the detail; "": not FAILED
	}{
		{"loss tile", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, broken)}, plotA, "broken.tif"},
		{"loss tile, point", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, broken)}, hansenPoints(t, 1, [2]float64{15.3, 12.7}), "broken.tif"},
		{"forest tile", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, w), rasterLayer("jrc", geo.Forest2020, brokenForest)}, plotA, "broken.tif"},
		{"alerts tile", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, w), rasterLayer("radd", geo.Alerts, brokenForest)}, plotA, "broken.tif"},
		{"corrupt block", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, corruptTile(t, "corrupt.tif"))}, plotA, "corrupt.tif"},
		{"corrupt block, point", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, corruptTile(t, "corrupt.tif"))}, hansenPoints(t, 1, [2]float64{15.3, 12.7}), "corrupt.tif"},
		{"second tile, plot in the first", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, w, brokenEast)}, plotA, ""},
		{"second tile, plot across both", []*geo.RasterLayer{rasterLayer("hansen", geo.LossYear, w, brokenEast)}, hansenPlot(t, 95, 40, 105, 50), "broken_e.tif"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assessRasters(t, tt.f, geo.DefaultRules(), tt.layers...)
			if tt.tile == "" {
				wantOutcome(t, o, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff)
				return
			}
			wantOutcome(t, o, geo.StatusFailed, geo.ReasonScreeningError)
			if !strings.Contains(o.Detail, "tile "+tt.tile) {
				t.Errorf("Detail %q does not name tile %s", o.Detail, tt.tile)
			}
			if o.AreaHa <= 0 || o.Rasters != nil || o.Loss != nil || o.Risk != (geo.Risk{}) {
				t.Errorf("Outcome %+v: want an area, no rasters, loss or risk", o)
			}
		})
	}
}

// TestAssess_RasterCancelled: a context done while tiles are read makes
// Assess return its error and no outcome.
func TestAssess_RasterCancelled(t *testing.T) {
	w := westLossTile(t)
	plotA := hansenPlot(t, 10, 10, 20, 20)
	point := hansenPoints(t, 1, [2]float64{15.3, 12.7})

	t.Run("cancelled before", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, f := range []geo.Feature{plotA, point} {
			o, err := geo.Assess(ctx, f, geo.NewIndex().WithRasters(rasterLayer("hansen", geo.LossYear, w)), geo.DefaultRules())
			if !errors.Is(err, context.Canceled) || !reflect.DeepEqual(o, geo.Outcome{}) {
				t.Errorf("%s: Assess = %+v, %v; want no outcome, context.Canceled", f.Geometry.Type, o, err)
			}
		}
	})
	t.Run("cancelled while reading", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		tile := w
		tile.Reader = cancellingRaster{RasterReader: w.Reader, cancel: cancel}
		o, err := geo.Assess(ctx, plotA, geo.NewIndex().WithRasters(rasterLayer("hansen", geo.LossYear, tile)), geo.DefaultRules())
		if !errors.Is(err, context.Canceled) || !reflect.DeepEqual(o, geo.Outcome{}) {
			t.Errorf("Assess = %+v, %v; want no outcome, context.Canceled", o, err)
		}
	})
	t.Run("deadline passed", func(t *testing.T) {
		ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
		defer cancel()
		o, err := geo.Assess(ctx, plotA, geo.NewIndex().WithRasters(rasterLayer("hansen", geo.LossYear, w)), geo.DefaultRules())
		if !errors.Is(err, context.DeadlineExceeded) || o.Status != "" {
			t.Errorf("Assess = %s, %v; want no outcome, context.DeadlineExceeded", o.Status, err)
		}
	})
	// A reader error that merely says "canceled", with ctx alive, is a
	// broken tile.
	t.Run("reader says canceled", func(t *testing.T) {
		tile := w
		tile.Reader = failingRaster{context.Canceled}
		o, err := geo.Assess(context.Background(), plotA, geo.NewIndex().WithRasters(rasterLayer("hansen", geo.LossYear, tile)), geo.DefaultRules())
		if err != nil || o.Status != geo.StatusFailed || o.Reason != geo.ReasonScreeningError {
			t.Errorf("Assess = %s %s, %v; want FAILED SCREENING_ERROR, nil", o.Status, o.Reason, err)
		}
	})
}

// TestIndex_WithRasters: WithRasters copies the index, keeps its vector
// layers, skips nil layers and keeps the order given.
func TestIndex_WithRasters(t *testing.T) {
	w := westLossTile(t)
	a := rasterLayer("a", geo.LossYear, w)
	b := rasterLayer("b", geo.Alerts, alertsTile(t))
	c := rasterLayer("c", geo.Forest2020, fineForestTile(t))
	vector := &geo.Layer{ID: "vector", Name: "vector", Kind: geo.ProtectedArea}
	base := geo.NewIndex(vector)
	ix := base.WithRasters(a, nil, b)
	if got := ix.Rasters(); !slices.Equal(got, []*geo.RasterLayer{a, b}) {
		t.Errorf("Rasters = %q, want [a b]", rasterIDs(got))
	}
	if got := base.Rasters(); len(got) != 0 {
		t.Errorf("the original index has rasters %q, want none", rasterIDs(got))
	}
	got := ix.Rasters()
	got[0] = c
	if ix.Rasters()[0] != a {
		t.Error("changing what Rasters returned changed the index")
	}
	o := assess(t, hansenPlot(t, 10, 10, 20, 20), ix, geo.DefaultRules())
	if len(o.Layers) != 1 || o.Layers[0].LayerID != "vector" || len(o.Rasters) != 2 || o.Rasters[0].LayerID != "a" || o.Rasters[1].LayerID != "b" {
		t.Errorf("Layers %+v, Rasters %+v; want vector, then a, b", o.Layers, o.Rasters)
	}
}

// TestIndex_WithRasters_Chained: WithRasters returns "a copy of ix that
// also screens against" the layers given, so the copy keeps the raster
// layers ix had.
func TestIndex_WithRasters_Chained(t *testing.T) {
	a := rasterLayer("a", geo.LossYear, westLossTile(t))
	b := rasterLayer("b", geo.Forest2020, fineForestTile(t))
	ix := geo.NewIndex().WithRasters(a)
	if got := ix.WithRasters(b).Rasters(); !slices.Equal(got, []*geo.RasterLayer{a, b}) {
		t.Errorf("NewIndex().WithRasters(a).WithRasters(b).Rasters() = %q, want [a b]", rasterIDs(got))
	}
	if got := ix.Rasters(); !slices.Equal(got, []*geo.RasterLayer{a}) {
		t.Errorf("ix.Rasters() after ix.WithRasters(b) = %q, want [a]", rasterIDs(got))
	}
}

func rasterIDs(ls []*geo.RasterLayer) []string {
	var s []string
	for _, l := range ls {
		s = append(s, l.ID)
	}
	return s
}
