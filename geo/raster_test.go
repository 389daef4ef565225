package geo_test

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/geotiff"
)

func TestAssess_RasterLossYear(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	tests := []struct {
		name           string
		plot           [4]float64    // Hansen pixel edges col0, row0, col1, row1
		byValue        map[uint8]int // want Stats.Pixels
		lost           [4]int        // the pixels lost after the cutoff: columns [0, 2), rows [1, 3)
		status, reason string
		score          int
	}{
		{"over 2021 loss", [4]float64{10, 10, 20, 20}, map[uint8]int{21: 100}, [4]int{10, 10, 20, 20},
			geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"loss by year 2015-2024", [4]float64{30, 10, 40, 20}, perValue(15, 24, 10), [4]int{30, 16, 40, 20},
			geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"no loss and loss up to 2015", [4]float64{45, 10, 55, 20}, withCount(perValue(11, 15, 10), 0, 50), [4]int{},
			geo.StatusCompliant, "", 0},
		{"loss 2011-2020", [4]float64{50, 10, 60, 20}, perValue(11, 20, 10), [4]int{},
			geo.StatusCompliant, "", 0},
		{"no loss", [4]float64{20, 20, 30, 30}, map[uint8]int{0: 100}, [4]int{},
			geo.StatusCompliant, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.plot
			o := assessRasters(t, hansenPlot(t, p[0], p[1], p[2], p[3]), geo.DefaultRules(), loss)
			wantOutcome(t, o, tt.status, tt.reason)
			if len(o.Rasters) != 1 {
				t.Fatalf("Rasters = %+v, want one", o.Rasters)
			}
			r := o.Rasters[0]
			if r.LayerID != "hansen" || r.Kind != geo.LossYear || !r.Covered || r.Sampled ||
				!slices.Equal(r.Tiles, []string{"lossyear_w.tif"}) {
				t.Errorf("RasterResult = %s %s covered %v sampled %v tiles %q; want hansen loss-year covered, not sampled, lossyear_w.tif",
					r.LayerID, r.Kind, r.Covered, r.Sampled, r.Tiles)
			}
			checkStats(t, r, tt.byValue, 0)
			n, plotHa := gridCells(hansenGrid, int(p[0]), int(p[1]), int(p[2]), int(p[3]), nil)
			if _, ha := r.Stats.Total(); n != 100 || !sameHa(ha, plotHa) || math.Abs(o.AreaHa-plotHa) > 1e-6*plotHa {
				t.Errorf("plot of %d px: Stats total %v ha, AreaHa %v; want %v", n, ha, o.AreaHa, plotHa)
			}

			pixels, ha := gridCells(hansenGrid, tt.lost[0], tt.lost[1], tt.lost[2], tt.lost[3], nil)
			checkLoss(t, o, "hansen", "", pixels, ha)
			// Without a forest layer the loss is the layer's own measure.
			if r.Ha != o.Loss.Ha || r.Pct != o.Loss.Pct {
				t.Errorf("RasterResult Ha, Pct = %v, %v; want Loss's %v, %v", r.Ha, r.Pct, o.Loss.Ha, o.Loss.Pct)
			}
			if o.Risk.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d", o.Risk.RiskScore, tt.score)
			}
			if tt.status == geo.StatusHighRisk {
				for _, s := range []string{`raster layer "layer hansen" version v1`, "no forest-2020 layer covers the plot", "0.5000 ha"} {
					if !strings.Contains(o.Detail, s) {
						t.Errorf("Detail %q does not say %q", o.Detail, s)
					}
				}
			}
		})
	}
}

// TestAssess_RasterLossThresholds: loss after the cutoff makes a plot
// HIGH_RISK when it is more than LossThresholdPct of the plot or more than
// LossThresholdHa (defaults 10 % and 0.5 ha); a Hansen pixel here is
// about 0.077 ha.
func TestAssess_RasterLossThresholds(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	// Region D: 5 lost pixels in the first 10 x 10 plot, 20 in the 20 x 20
	// one, 3 in the 4 x 4 one.
	p5 := hansenPlot(t, 70, 10, 80, 20)   // 5 %, 0.38 ha
	p400 := hansenPlot(t, 70, 10, 90, 30) // 5 %, 1.54 ha
	p19 := hansenPlot(t, 70, 12, 74, 16)  // 18.75 %, 0.23 ha
	none := hansenPlot(t, 20, 20, 30, 30)
	rules := func(pct, ha float64) geo.Rules {
		r := geo.DefaultRules()
		r.LossThresholdPct, r.LossThresholdHa = pct, ha
		return r
	}
	maxScore4 := geo.DefaultRules()
	maxScore4.MaxRiskScore = 4
	tests := []struct {
		name           string
		f              geo.Feature
		r              geo.Rules
		pixels         int
		pct            float64 // about
		status, reason string
		score          int
	}{
		{"5 % and 0.38 ha", p5, geo.DefaultRules(), 5, 5, geo.StatusCompliant, "", 5},
		{"5 % and 1.54 ha", p400, geo.DefaultRules(), 20, 5, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"18.75 % and 0.23 ha", p19, geo.DefaultRules(), 3, 18.75, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"1.54 ha under 2 ha", p400, rules(10, 2), 20, 5, geo.StatusCompliant, "", 5},
		{"1.54 ha under 1.6 ha", p400, rules(10, 1.6), 20, 5, geo.StatusCompliant, "", 5},
		{"18.75 % under 20 %", p19, rules(20, 0.5), 3, 18.75, geo.StatusCompliant, "", 19},
		{"5 % over 4 %", p5, rules(4, 0.5), 5, 5, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"0.38 ha over 0.3 ha", p5, rules(10, 0.3), 5, 5, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"any loss", p5, rules(0, 0), 5, 5, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"no loss, none allowed", none, rules(0, 0), 0, 0, geo.StatusCompliant, "", 0},
		{"5 % scores 5, above max 4", p5, maxScore4, 5, 5, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assessRasters(t, tt.f, tt.r, loss)
			wantOutcome(t, o, tt.status, tt.reason)
			if o.Loss == nil {
				t.Fatal("Loss = nil")
			}
			if o.Loss.Pixels != tt.pixels || math.Abs(o.Loss.Pct-tt.pct) > 0.01 {
				t.Errorf("Loss = %d px, %v %%; want %d px, about %v %%", o.Loss.Pixels, o.Loss.Pct, tt.pixels, tt.pct)
			}
			if o.Risk.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d", o.Risk.RiskScore, tt.score)
			}
		})
	}

	// A loss equal to the threshold is not more than it.
	o := assessRasters(t, p400, geo.DefaultRules(), loss)
	if o.Loss == nil {
		t.Fatal("Loss = nil")
	}
	wantOutcome(t, assessRasters(t, p400, rules(10, o.Loss.Ha), loss), geo.StatusCompliant, "")
	wantOutcome(t, assessRasters(t, p400, rules(10, math.Nextafter(o.Loss.Ha, 0)), loss), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff)
	wantOutcome(t, assessRasters(t, p400, rules(o.Loss.Pct, 2), loss), geo.StatusCompliant, "")
	wantOutcome(t, assessRasters(t, p400, rules(math.Nextafter(o.Loss.Pct, 0), 2), loss), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff)
}

// TestAssess_RasterForest: with a forest-2020 layer, only loss where there
// was forest counts, measured on the finer of the two grids; without one,
// loss counts wherever it is.
func TestAssess_RasterForest(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	fine := rasterLayer("jrc-fine", geo.Forest2020, fineForestTile(t))
	coarse := rasterLayer("jrc-coarse", geo.Forest2020, coarseForestTile(t))
	holes := rasterLayer("jrc-holes", geo.Forest2020, fineForestHolesTile(t))
	rect := rasterLayer("jrc-rect", geo.Forest2020, rectForestTile(t))

	// Plot A is Hansen columns and rows 10-19: fine 25-49, coarse 5-9. Its
	// forest is Hansen columns 10-15: fine 25-39, coarse 5-7.
	plotA := hansenPlot(t, 10, 10, 20, 20)
	lostFineA := func() (int, float64) {
		return gridCells(fineGrid, 25, 25, 50, 50, func(c, _ int) bool { return c < 40 })
	}
	lostHansenA := func() (int, float64) {
		return gridCells(hansenGrid, 10, 10, 20, 20, inForest)
	}
	// On rectForestGrid plot A is columns 25-49, rows 50-99.
	lostRectA := func() (int, float64) {
		return gridCells(rectForestGrid, 25, 50, 50, 100, func(c, _ int) bool { return c < 40 })
	}
	allA := func() (int, float64) { return gridCells(hansenGrid, 10, 10, 20, 20, nil) }
	nothing := func() (int, float64) { return 0, 0 }
	plotA2 := hansenPlot(t, 10, 30, 20, 40) // loss, no forest
	allA2 := func() (int, float64) { return gridCells(hansenGrid, 10, 30, 20, 40, nil) }
	woods := hansenPlot(t, 2, 2, 8, 8) // forest, no loss

	tests := []struct {
		name           string
		f              geo.Feature
		forests        []*geo.RasterLayer
		forestID       string // of Loss; "" for none
		lost           func() (int, float64)
		status, reason string
		score          int
	}{
		{"2021 loss half in forest, fine forest", plotA, []*geo.RasterLayer{fine}, "jrc-fine", lostFineA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss half in forest, coarse forest", plotA, []*geo.RasterLayer{coarse}, "jrc-coarse", lostHansenA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss half in forest, forest of pixels 2:1", plotA, []*geo.RasterLayer{rect}, "jrc-rect", lostRectA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss half in forest, no forest layer", plotA, nil, "", allA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss half in forest, forest with holes elsewhere", plotA, []*geo.RasterLayer{holes}, "jrc-holes", lostFineA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss half in forest, the last of two forests", plotA, []*geo.RasterLayer{fine, coarse}, "jrc-coarse", lostHansenA, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},

		{"2021 loss outside forest, fine forest", plotA2, []*geo.RasterLayer{fine}, "jrc-fine", nothing, geo.StatusCompliant, "", 0},
		{"2021 loss outside forest, coarse forest", plotA2, []*geo.RasterLayer{coarse}, "jrc-coarse", nothing, geo.StatusCompliant, "", 0},
		{"2021 loss outside forest, no forest layer", plotA2, nil, "", allA2, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		// The forest map has no data for the plot: it does not excuse the loss.
		{"2021 loss outside forest, forest nodata", plotA2, []*geo.RasterLayer{holes}, "", allA2, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},

		// Wholly in 2020 forest, no loss: forest cover 100 % scores 50.
		{"forest without loss, fine forest", woods, []*geo.RasterLayer{fine}, "jrc-fine", nothing, geo.StatusCompliant, "", 50},
		{"forest without loss, coarse forest", woods, []*geo.RasterLayer{coarse}, "jrc-coarse", nothing, geo.StatusCompliant, "", 50},
		{"forest without loss, no forest layer", woods, nil, "", nothing, geo.StatusCompliant, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assessRasters(t, tt.f, geo.DefaultRules(), append([]*geo.RasterLayer{loss}, tt.forests...)...)
			wantOutcome(t, o, tt.status, tt.reason)
			if len(o.Rasters) != 1+len(tt.forests) {
				t.Fatalf("%d raster results, want %d", len(o.Rasters), 1+len(tt.forests))
			}
			pixels, ha := tt.lost()
			checkLoss(t, o, "hansen", tt.forestID, pixels, ha)
			if o.Risk.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d", o.Risk.RiskScore, tt.score)
			}
		})
	}

	// The forest layers' own measure of plot A: forest on their grid.
	t.Run("forest measured on its grid", func(t *testing.T) {
		for _, tt := range []struct {
			layer  *geo.RasterLayer
			g      geotiff.Georef
			box    [4]int // plot A's columns [0, 2) and rows [1, 3) on g
			forest int    // forest columns are < forest
		}{
			{fine, fineGrid, [4]int{25, 25, 50, 50}, 40},
			{coarse, coarseGrid, [4]int{5, 5, 10, 10}, 8},
			{rect, rectForestGrid, [4]int{25, 50, 50, 100}, 40},
		} {
			o := assessRasters(t, plotA, geo.DefaultRules(), loss, tt.layer)
			r := rasterOf(t, o, tt.layer.ID)
			b := tt.box
			n, ha := gridCells(tt.g, b[0], b[1], b[2], b[3], func(c, _ int) bool { return c < tt.forest })
			all := (b[2] - b[0]) * (b[3] - b[1])
			if r.Kind != geo.Forest2020 || !r.Covered || r.Stats.Pixels[1] != n || r.Stats.Pixels[0] != all-n || !sameHa(r.Ha, ha) ||
				math.Abs(r.Pct-60) > 0.01 {
				t.Errorf("%s: %s covered %v, %d px forest, %d not, %v ha, %v %%; want %d, %d, %v ha, 60 %%",
					tt.layer.ID, r.Kind, r.Covered, r.Stats.Pixels[1], r.Stats.Pixels[0], r.Ha, r.Pct, n, all-n, ha)
			}
			if !strings.Contains(o.Detail, `of forest in 2020 (raster layer "layer `+tt.layer.ID+`" version v1)`) {
				t.Errorf("%s: Detail %q does not name the forest layer", tt.layer.ID, o.Detail)
			}
		}
	})
	// The loss layer still reports all loss after the cutoff on its grid.
	t.Run("loss layer measures all loss", func(t *testing.T) {
		o := assessRasters(t, plotA2, geo.DefaultRules(), loss, fine)
		_, ha := allA2()
		if r := rasterOf(t, o, "hansen"); r.Stats.Pixels[21] != 100 || !sameHa(r.Ha, ha) {
			t.Errorf("loss layer: %d px of 21, %v ha; want 100, %v", r.Stats.Pixels[21], r.Ha, ha)
		}
	})
}

// TestAssess_RasterAcrossTiles: a plot over several tiles of a layer is
// the sum of its parts in each.
func TestAssess_RasterAcrossTiles(t *testing.T) {
	w, e, s := westLossTile(t), eastLossTile(t), southLossTile(t)
	// The triangle in the inner corner of an L of three tiles: its pixels
	// are those whose centre (c+0.5, r+0.5) has 3(c+0.5) + 4(r+0.5) <= 690
	// (and c, r >= 90): 133 in the north tiles, of 0, and 17 in the south
	// one, of 22 (6+5+3+2+1 in rows 100-104).
	triangle := hansenPolygon(t, [2]float64{90, 90}, [2]float64{110, 90}, [2]float64{90, 105})
	inTriangle := func(c, r int) bool { return 3*c+4*r <= 686 }
	south := func(_, r int) bool { return r >= 100 }
	tests := []struct {
		name           string
		tiles          []geo.RasterTile
		f              geo.Feature
		box            [4]int                  // columns [0, 2) and rows [1, 3) of hansenGrid around the plot
		in             func(col, row int) bool // the plot's pixels in box; nil: all
		lost           func(col, row int) bool // which of them are lost after the cutoff; nil: all
		byValue        map[uint8]int
		covered        bool
		status, reason string
	}{
		{"east edge", []geo.RasterTile{w, e}, hansenPlot(t, 95, 40, 105, 50), [4]int{95, 40, 105, 50}, nil, nil,
			map[uint8]int{23: 50, 21: 50}, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{"south edge", []geo.RasterTile{w, s}, hansenPlot(t, 10, 95, 20, 105), [4]int{10, 95, 20, 105}, nil, south,
			map[uint8]int{0: 50, 22: 50}, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		// Its bounding box reaches into the missing fourth tile, the plot
		// does not.
		{"inner corner of an L", []geo.RasterTile{w, e, s}, triangle, [4]int{90, 90, 110, 105}, inTriangle, south,
			map[uint8]int{0: 133, 22: 17}, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		// A quarter of this one is in the missing tile: not counted.
		{"over the missing corner", []geo.RasterTile{w, e, s}, hansenPlot(t, 95, 95, 105, 105), [4]int{95, 95, 105, 105},
			func(c, r int) bool { return c < 100 || r < 100 }, south,
			map[uint8]int{0: 50, 22: 25}, false, geo.StatusFailed, geo.ReasonNoReferenceCoverage},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assessRasters(t, tt.f, geo.DefaultRules(), rasterLayer("hansen", geo.LossYear, tt.tiles...))
			wantOutcome(t, o, tt.status, tt.reason)
			r := rasterOf(t, o, "hansen")
			var names []string
			for _, tile := range tt.tiles {
				names = append(names, tile.Name)
			}
			slices.Sort(names)
			if r.Covered != tt.covered || !slices.Equal(r.Tiles, names) {
				t.Errorf("Covered %v, Tiles %q; want %v, %q", r.Covered, r.Tiles, tt.covered, names)
			}
			checkStats(t, r, tt.byValue, 0)
			b := tt.box
			_, plotHa := gridCells(hansenGrid, b[0], b[1], b[2], b[3], tt.in)
			if _, ha := r.Stats.Total(); !sameHa(ha, plotHa) {
				t.Errorf("Stats total %v ha, want %v", ha, plotHa)
			}
			pixels, ha := gridCells(hansenGrid, b[0], b[1], b[2], b[3], func(c, r int) bool {
				return (tt.in == nil || tt.in(c, r)) && (tt.lost == nil || tt.lost(c, r))
			})
			if !sameHa(r.Ha, ha) {
				t.Errorf("layer Ha = %v, want %v (%d px)", r.Ha, ha, pixels)
			}
			if tt.covered {
				checkLoss(t, o, "hansen", "", pixels, ha)
			} else if o.Loss != nil {
				t.Errorf("Loss = %+v, want nil for an uncovered plot", *o.Loss)
			}
		})
	}
}

// TestAssess_RasterCoverage: a plot needs a deforestation source with data
// for all of it: a loss-year layer whose tiles hold it with no nodata
// pixel (or a covering vector layer). Forest and alert layers never do.
func TestAssess_RasterCoverage(t *testing.T) {
	w, e := westLossTile(t), eastLossTile(t)
	hansen := rasterLayer("hansen", geo.LossYear, w)
	other := rasterLayer("other", geo.LossYear, zeroLossTile(t))
	forest := rasterLayer("jrc", geo.Forest2020, fineForestTile(t))
	alerts := rasterLayer("radd", geo.Alerts, alertsTile(t))
	vector := &geo.Layer{ID: "vector", Name: "vector", Kind: geo.DeforestationAfterCutoff, Coverage: []geo.Polygon{box(9, 0, 11, 2)}}

	clean := hansenPlot(t, 20, 20, 30, 30)
	overG := hansenPlot(t, 55, 40, 65, 50) // 20 nodata pixels
	tests := []struct {
		name           string
		ix             *geo.Index
		f              geo.Feature
		status, reason string
		covered        []bool // per raster layer
		lossID         string // "": Loss nil
	}{
		{"inside the tile", geo.NewIndex().WithRasters(hansen), clean, geo.StatusCompliant, "", []bool{true}, "hansen"},
		{"partly outside the tiles", geo.NewIndex().WithRasters(hansen), hansenPlot(t, 95, 40, 105, 50),
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
		{"outside the tiles", geo.NewIndex().WithRasters(hansen), hansenPlot(t, 120, 20, 130, 30),
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
		{"over nodata", geo.NewIndex().WithRasters(hansen), overG,
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
		{"over nodata, another loss layer has data", geo.NewIndex().WithRasters(hansen, other), overG,
			geo.StatusCompliant, "", []bool{false, true}, "other"},
		{"two loss layers: the larger loss", geo.NewIndex().WithRasters(other, hansen), hansenPlot(t, 10, 10, 20, 20),
			geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, []bool{true, true}, "hansen"},
		{"over nodata, a vector layer covers", geo.NewIndex(vector).WithRasters(hansen), overG,
			geo.StatusCompliant, "", []bool{false}, ""},
		{"forest only", geo.NewIndex().WithRasters(forest), clean,
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{true}, ""},
		{"alerts only", geo.NewIndex().WithRasters(alerts), clean,
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{true}, ""},
		{"forest and alerts", geo.NewIndex().WithRasters(forest, alerts), clean,
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{true, true}, ""},
		{"forest and alerts, loss over nodata", geo.NewIndex().WithRasters(hansen, forest, alerts), overG,
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false, true, true}, ""},
		{"two tiles", geo.NewIndex().WithRasters(rasterLayer("hansen", geo.LossYear, w, e)), hansenPlot(t, 95, 20, 105, 30),
			geo.StatusCompliant, "", []bool{true}, "hansen"},
		{"point outside the tiles", geo.NewIndex().WithRasters(hansen), hansenPoints(t, 1, [2]float64{150.5, 5.5}),
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
		{"point over nodata", geo.NewIndex().WithRasters(hansen), hansenPoints(t, 1, [2]float64{60.5, 45.5}),
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
		{"points, one outside the tiles", geo.NewIndex().WithRasters(hansen), hansenPoints(t, 1, [2]float64{20.5, 20.5}, [2]float64{150.5, 5.5}),
			geo.StatusFailed, geo.ReasonNoReferenceCoverage, []bool{false}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assess(t, tt.f, tt.ix, geo.DefaultRules())
			wantOutcome(t, o, tt.status, tt.reason)
			var covered []bool
			for _, r := range o.Rasters {
				covered = append(covered, r.Covered)
			}
			if !slices.Equal(covered, tt.covered) {
				t.Errorf("Covered = %v, want %v", covered, tt.covered)
			}
			switch {
			case tt.lossID == "" && o.Loss != nil:
				t.Errorf("Loss = %+v, want nil", *o.Loss)
			case tt.lossID != "" && (o.Loss == nil || o.Loss.LossLayerID != tt.lossID):
				t.Errorf("Loss = %+v, want one from %q", o.Loss, tt.lossID)
			}
			if o.Status == geo.StatusFailed && (o.Risk != geo.Risk{} || o.AreaHa <= 0 || o.Detail == "") {
				t.Errorf("FAILED outcome %+v: want an area and a detail, no risk", o)
			}
		})
	}

	// What an uncovered layer measured is still reported.
	t.Run("measures of an uncovered layer", func(t *testing.T) {
		o := assessRasters(t, overG, geo.DefaultRules(), hansen)
		r := rasterOf(t, o, "hansen")
		checkStats(t, r, map[uint8]int{0: 80}, 20)
		_, ha := gridCells(hansenGrid, 60, 40, 62, 50, nil)
		if !sameHa(r.Stats.NoDataHa, ha) || r.Ha != 0 || !slices.Equal(r.Tiles, []string{"lossyear_w.tif"}) {
			t.Errorf("nodata %v ha, layer %v ha, tiles %q; want %v ha, 0 ha, lossyear_w.tif", r.Stats.NoDataHa, r.Ha, r.Tiles, ha)
		}
		o = assessRasters(t, hansenPlot(t, 120, 20, 130, 30), geo.DefaultRules(), hansen)
		if r := rasterOf(t, o, "hansen"); len(r.Tiles) != 0 || r.Stats != (geo.PixelStats{}) {
			n, ha := r.Stats.Total()
			t.Errorf("outside the tiles: tiles %q, %d px, %v ha; want none", r.Tiles, n, ha)
		}
	})
}

// TestAssess_RasterPoints: a point plot is the pixel it falls in, with
// its declared area.
func TestAssess_RasterPoints(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	fine := rasterLayer("jrc-fine", geo.Forest2020, fineForestTile(t))
	coarse := rasterLayer("jrc-coarse", geo.Forest2020, coarseForestTile(t))
	inA := [2]float64{15.3, 12.7}  // pixel (15, 12): 2021, forest
	inA2 := [2]float64{15.3, 35.3} // pixel (15, 35): 2021, no forest
	woods := [2]float64{5.3, 5.3}  // pixel (5, 5): no loss, forest
	inC := [2]float64{55.3, 12.7}  // pixel (55, 12): loss in 2016
	tests := []struct {
		name           string
		f              geo.Feature
		forest         *geo.RasterLayer
		byValue        map[uint8]int // of the loss layer, each pixel counted with the point's area
		lostPoints     int
		status, reason string
		score          int
	}{
		{"2021 loss in fine forest", hansenPoints(t, 1, inA), fine, map[uint8]int{21: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss in coarse forest", hansenPoints(t, 1, inA), coarse, map[uint8]int{21: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss, no forest layer", hansenPoints(t, 1, inA), nil, map[uint8]int{21: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss of 0.1 ha is all the plot", hansenPoints(t, 0.1, inA), fine, map[uint8]int{21: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"2021 loss outside forest", hansenPoints(t, 1, inA2), fine, map[uint8]int{21: 1}, 0, geo.StatusCompliant, "", 0},
		{"2021 loss outside forest, no forest layer", hansenPoints(t, 1, inA2), nil, map[uint8]int{21: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"forest without loss", hansenPoints(t, 1, woods), fine, map[uint8]int{0: 1}, 0, geo.StatusCompliant, "", 50},
		{"loss in 2016", hansenPoints(t, 1, inC), coarse, map[uint8]int{16: 1}, 0, geo.StatusCompliant, "", 0},
		{"two points, one on loss", hansenPoints(t, 1, inA, woods), fine, map[uint8]int{21: 1, 0: 1}, 1, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"two points in one pixel", hansenPoints(t, 0.5, inA, [2]float64{15.7, 12.2}), nil, map[uint8]int{21: 2}, 2, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layers := []*geo.RasterLayer{loss}
			forestID := ""
			if tt.forest != nil {
				layers, forestID = append(layers, tt.forest), tt.forest.ID
			}
			o := assessRasters(t, tt.f, geo.DefaultRules(), layers...)
			wantOutcome(t, o, tt.status, tt.reason)
			pointHa := *tt.f.Properties.Area
			if n := len(tt.f.Geometry.Points); o.AreaHa != pointHa*float64(n) {
				t.Errorf("AreaHa = %v, want %v x %d", o.AreaHa, pointHa, n)
			}
			r := rasterOf(t, o, "hansen")
			checkStats(t, r, tt.byValue, 0)
			for v, n := range tt.byValue {
				if r.Stats.Ha[v] != pointHa*float64(n) {
					t.Errorf("%v ha of value %d, want %d x %v", r.Stats.Ha[v], v, n, pointHa)
				}
			}
			if !r.Covered || r.Sampled || !slices.Equal(r.Tiles, []string{"lossyear_w.tif"}) {
				t.Errorf("covered %v, sampled %v, tiles %q", r.Covered, r.Sampled, r.Tiles)
			}
			checkLoss(t, o, "hansen", forestID, tt.lostPoints, pointHa*float64(tt.lostPoints))
			if o.Risk.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d", o.Risk.RiskScore, tt.score)
			}
		})
	}
}

// TestAssess_RasterSampled: a polygon holding no pixel centre is counted
// as the pixel at the centre of its bounding box, with the plot's area.
func TestAssess_RasterSampled(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	fine := rasterLayer("jrc-fine", geo.Forest2020, fineForestTile(t))
	coarse := rasterLayer("jrc-coarse", geo.Forest2020, coarseForestTile(t))
	// 8 m x 8 m in pixel (15, 15) of A, clear of its centre (15.5, 15.5)
	// and of every fine pixel centre (fine columns 37.6-38.3, rows
	// 37.7-38.4): lon 10.003760-10.003830, lat 0.996160-0.996230.
	tiny := hansenPlot(t, 15.04, 15.08, 15.32, 15.36)
	// The same in pixel (25, 15), of 0.
	tinyClean := hansenPlot(t, 25.04, 15.08, 25.32, 15.36)
	// A sliver 9.6 pixels long between the centres of rows 15 and 16: its
	// box's centre (15, 15.76) is in pixel (15, 15).
	sliver := hansenPlot(t, 10.2, 15.6, 19.8, 15.92)
	tests := []struct {
		name           string
		f              geo.Feature
		forest         *geo.RasterLayer
		value          uint8 // of the pixel sampled
		lost           bool
		status, reason string
	}{
		{"tiny on 2021 loss", tiny, nil, 21, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{"tiny on 2021 loss in fine forest", tiny, fine, 21, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{"tiny on 2021 loss in coarse forest", tiny, coarse, 21, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
		{"tiny on no loss", tinyClean, nil, 0, false, geo.StatusCompliant, ""},
		{"sliver on 2021 loss", sliver, nil, 21, true, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			layers := []*geo.RasterLayer{loss}
			forestID := ""
			if tt.forest != nil {
				layers, forestID = append(layers, tt.forest), tt.forest.ID
			}
			o := assessRasters(t, tt.f, geo.DefaultRules(), layers...)
			wantOutcome(t, o, tt.status, tt.reason)
			r := rasterOf(t, o, "hansen")
			if !r.Sampled || !r.Covered {
				t.Errorf("Sampled %v, Covered %v; want both", r.Sampled, r.Covered)
			}
			checkStats(t, r, map[uint8]int{tt.value: 1}, 0)
			if math.Abs(r.Stats.Ha[tt.value]-o.AreaHa) > 1e-9*o.AreaHa {
				t.Errorf("sampled pixel: %v ha, want the plot's %v ha", r.Stats.Ha[tt.value], o.AreaHa)
			}
			if tt.forest != nil {
				if f := rasterOf(t, o, tt.forest.ID); !f.Sampled || f.Stats.Pixels[1] != 1 || math.Abs(f.Ha-o.AreaHa) > 1e-9*o.AreaHa {
					t.Errorf("forest: sampled %v, %d px of forest, %v ha; want sampled, 1, %v ha", f.Sampled, f.Stats.Pixels[1], f.Ha, o.AreaHa)
				}
			}
			pixels, ha := 0, 0.0
			if tt.lost {
				pixels, ha = 1, o.AreaHa
			}
			if o.Loss == nil {
				t.Fatal("Loss = nil")
			}
			if o.Loss.LossLayerID != "hansen" || o.Loss.ForestLayerID != forestID || o.Loss.Pixels != pixels ||
				math.Abs(o.Loss.Ha-ha) > 1e-9*ha || tt.lost && math.Abs(o.Loss.Pct-100) > 1e-6 {
				t.Errorf("Loss = %+v, want %d px, %v ha from hansen and %q", *o.Loss, pixels, ha, forestID)
			}
		})
	}

	// A plot holding one pixel centre is that pixel, with the cell's area.
	t.Run("one centre", func(t *testing.T) {
		o := assessRasters(t, hansenPlot(t, 15.2, 15.2, 15.8, 15.8), geo.DefaultRules(), loss)
		r := rasterOf(t, o, "hansen")
		_, ha := gridCells(hansenGrid, 15, 15, 16, 16, nil)
		if r.Sampled || r.Stats.Pixels[21] != 1 || !sameHa(r.Stats.Ha[21], ha) {
			t.Errorf("sampled %v, %d px of 21, %v ha; want not sampled, 1 px of %v ha", r.Sampled, r.Stats.Pixels[21], r.Stats.Ha[21], ha)
		}
	})
}

// TestAssess_RasterSampledOutsidePlot: a plot holding no pixel centre
// whose bounding box's centre lies outside it must still be judged by a
// pixel it lies on. Both plots here lie only on pixels of 0; the centres
// of their boxes are on 2021 loss.
func TestAssess_RasterSampledOutsidePlot(t *testing.T) {
	loss := rasterLayer("hansen", geo.LossYear, westLossTile(t))
	// An L of two slivers 0.28 pixel wide along row 9 and column 9, just
	// north and west of A: its box is columns and rows 9.12-11.88, centred
	// in pixel (10, 10), of A.
	l := hansenPolygon(t, [2]float64{9.12, 9.12}, [2]float64{11.88, 9.12}, [2]float64{11.88, 9.4},
		[2]float64{9.4, 9.4}, [2]float64{9.4, 11.88}, [2]float64{9.12, 11.88})
	// Two 8 m squares in pixels (5, 15) and (25, 15), either side of A:
	// their box is centred in pixel (15, 15).
	part := func(col, row float64) string {
		return ringJSON(tileWest+(col+0.04)*px, tileNorth-(row+0.36)*px, tileWest+(col+0.32)*px, tileNorth-(row+0.08)*px)
	}
	multi := parseOne(t, `{"type":"MultiPolygon","coordinates":[[`+part(5, 15)+`],[`+part(25, 15)+`]]}`, "")
	for name, f := range map[string]geo.Feature{"L of slivers": l, "two tiny parts": multi} {
		t.Run(name, func(t *testing.T) {
			o := assessRasters(t, f, geo.DefaultRules(), loss)
			r := rasterOf(t, o, "hansen")
			if o.Status != geo.StatusCompliant || r.Stats.Pixels[21] != 0 || o.Loss == nil || o.Loss.Pixels != 0 {
				t.Errorf("Assess = %s %s, %d px of 21 (sampled %v), Loss %+v; want COMPLIANT, no pixel of 21: the plot touches none",
					o.Status, o.Reason, r.Stats.Pixels[21], r.Sampled, o.Loss)
			}
		})
	}
}

// TestAssess_RasterEncodings: every compression, predictor and layout of
// the same pixels gives the same outcomes.
