package geo_test

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/eudr/eudr/geo"
)

func assess(t *testing.T, f geo.Feature, ix *geo.Index, r geo.Rules) geo.Outcome {
	t.Helper()
	o, err := geo.Assess(context.Background(), f, ix, r)
	if err != nil {
		t.Fatalf("Assess: %v", err)
	}
	return o
}

func wantOutcome(t *testing.T, o geo.Outcome, status, reason string) {
	t.Helper()
	if o.Status != status || o.Reason != reason {
		t.Errorf("Assess = %s %s (%s), want %s %s", o.Status, o.Reason, o.Detail, status, reason)
	}
}

// Geometry reasons come before area, coverage and overlaps.
func TestAssess_FailureOrder(t *testing.T) {
	ix := sandboxIndex()
	bowtie := func(lon, lat float64) string { // a figure 8 around (lon, lat)
		return `{"type":"Polygon","coordinates":[[` +
			pos(lon-0.1, lat-0.1) + "," + pos(lon+0.1, lat+0.1) + "," + pos(lon+0.1, lat-0.1) + "," +
			pos(lon-0.1, lat+0.1) + "," + pos(lon-0.1, lat-0.1) + `]]}`
	}
	tests := []struct {
		name, geometry, extra, reason string
	}{
		{"self-intersecting in deforestation box", bowtie(-61.5, -10.5), "", geo.ReasonSelfIntersection},
		{"self-intersecting in no-coverage box", bowtie(10.5, 10.5), "", geo.ReasonSelfIntersection},
		{"self-intersecting with a wrong area", bowtie(-61.5, -10.5), `,"area":1`, geo.ReasonSelfIntersection},
		{"5 decimals in deforestation box", `{"type":"Polygon","coordinates":[[[-61.6,-10.6],[-61.4,-10.6],[-61.4,-10.4],[-61.6,-10.4],[-61.6,-10.6]]]}`, "", geo.ReasonInsufficientPrecision},
		{"hole in protected box", `{"type":"Polygon","coordinates":[` + ringJSON(-54.6, -4.6, -54.4, -4.4) + "," + ringJSON(-54.55, -4.55, -54.45, -4.45) + `]}`, "", geo.ReasonHolesNotSupported},
		{"wrong area in deforestation box", rectJSON(-61.6, -10.6, -61.4, -10.4), `,"area":1`, geo.ReasonAreaMismatch},
		{"wrong area in no-coverage box", rectJSON(10.4, 10.4, 10.6, 10.6), `,"area":1`, geo.ReasonAreaMismatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assess(t, parseOne(t, tt.geometry, tt.extra), ix, geo.DefaultRules())
			wantOutcome(t, o, geo.StatusFailed, tt.reason)
			if o.Detail == "" || o.Layers != nil || o.Risk != (geo.Risk{}) {
				t.Errorf("Outcome %+v: want a detail, no layers, no risk", o)
			}
			if (o.AreaHa > 0) != (tt.reason == geo.ReasonAreaMismatch) {
				t.Errorf("AreaHa = %v", o.AreaHa)
			}
		})
	}
}

func pos(lon, lat float64) string {
	return "[" + strconv.FormatFloat(lon, 'f', 6, 64) + "," + strconv.FormatFloat(lat, 'f', 6, 64) + "]"
}

// A declared area more than 10 % off the geodesic area is AREA_MISMATCH.
func TestAssess_AreaMismatch(t *testing.T) {
	ix := sandboxIndex()
	geometry := rectJSON(30, 5, 30.01, 5.01) // about 122.6 ha
	computed := assess(t, parseOne(t, geometry, ""), ix, geo.DefaultRules()).AreaHa
	ring := [][][2]float64{{{30, 5}, {30.01, 5}, {30.01, 5.01}, {30, 5.01}, {30, 5}}}
	if want := geo.PolygonArea(ring); !near(computed, want, 1e-9*want) || !near(computed, 122.6, 0.5) {
		t.Fatalf("AreaHa = %v, want PolygonArea %v, about 122.6", computed, want)
	}
	for _, tt := range []struct {
		factor float64
		status string
	}{
		{1, geo.StatusCompliant},
		{1.09, geo.StatusCompliant},
		{0.91, geo.StatusCompliant},
		{1.11, geo.StatusFailed},
		{0.89, geo.StatusFailed},
		{3, geo.StatusFailed},
	} {
		declared := strconv.FormatFloat(computed*tt.factor, 'f', 4, 64)
		t.Run(declared, func(t *testing.T) {
			o := assess(t, parseOne(t, geometry, `,"area":`+declared), ix, geo.DefaultRules())
			reason := ""
			if tt.status == geo.StatusFailed {
				reason = geo.ReasonAreaMismatch
			}
			wantOutcome(t, o, tt.status, reason)
			if !near(o.AreaHa, computed, 1e-9) {
				t.Errorf("AreaHa = %v, want the computed %v", o.AreaHa, computed)
			}
		})
	}
	// The tolerance is a rule.
	r := geo.DefaultRules()
	r.AreaTolerance = 0.2
	declared := strconv.FormatFloat(computed*1.15, 'f', 4, 64)
	wantOutcome(t, assess(t, parseOne(t, geometry, `,"area":`+declared), ix, r), geo.StatusCompliant, "")

	// A MultiPolygon's area is its parts' summed.
	multi := `{"type":"MultiPolygon","coordinates":[[` + ringJSON(30, 5, 30.01, 5.01) + `],[` + ringJSON(31, 5, 31.01, 5.01) + `]]}`
	o := assess(t, parseOne(t, multi, `,"area":`+strconv.FormatFloat(2*computed, 'f', 4, 64)), ix, geo.DefaultRules())
	wantOutcome(t, o, geo.StatusCompliant, "")
	if !near(o.AreaHa, 2*computed, 1e-6*computed) {
		t.Errorf("MultiPolygon AreaHa = %v, want %v", o.AreaHa, 2*computed)
	}
	// A point's area is the declared one (times its points): never a mismatch.
	o = assess(t, parseOne(t, `{"type":"MultiPoint","coordinates":[[30.100000,5.100000],[30.200000,5.200000]]}`, `,"area":3`), ix, geo.DefaultRules())
	wantOutcome(t, o, geo.StatusCompliant, "")
	if o.AreaHa != 6 {
		t.Errorf("MultiPoint AreaHa = %v, want 6", o.AreaHa)
	}
}

// Without a deforestation layer covering the plot nothing is COMPLIANT.
func TestAssess_NoLayers(t *testing.T) {
	protectedOnly := geo.SandboxLayers()[1]
	indexes := map[string]*geo.Index{
		"empty index":    geo.NewIndex(),
		"nil index":      nil,
		"protected only": geo.NewIndex(protectedOnly),
		"no coverage": geo.NewIndex(&geo.Layer{ID: "d", Kind: geo.DeforestationAfterCutoff,
			Features: []geo.LayerFeature{{ID: "f", Polygons: []geo.Polygon{box(-62, -11, -61, -10)}}}}),
	}
	plots := map[string]string{
		"deforestation box": rectJSON(-61.6, -10.6, -61.4, -10.4),
		"protected box":     rectJSON(-54.6, -4.6, -54.4, -4.4),
		"elsewhere":         rectJSON(30, 5, 30.2, 5.2),
		"point":             pointJSON(30.1, 5.1),
	}
	for iname, ix := range indexes {
		for pname, g := range plots {
			t.Run(iname+"/"+pname, func(t *testing.T) {
				extra := ""
				if pname == "point" {
					extra = `,"area":1`
				}
				o := assess(t, parseOne(t, g, extra), ix, geo.DefaultRules())
				wantOutcome(t, o, geo.StatusFailed, geo.ReasonNoReferenceCoverage)
				if o.Risk != (geo.Risk{}) || o.AreaHa <= 0 {
					t.Errorf("Outcome %+v: want an area and no risk", o)
				}
			})
		}
	}
}

// The threshold and MaxRiskScore rules.
func TestAssess_Rules(t *testing.T) {
	ix := sandboxIndex()
	// 30 % of this plot is in the deforestation box (lon -61.03..-61).
	defo30 := parseOne(t, rectJSON(-61.03, -10.6, -60.93, -10.5), "")
	// 28 % of this one is in the protected box (lon -54.028..-54, and the
	// fixture's margin of 0.00001°): 75 + 28/4 = 82.
	prot28 := parseOne(t, rectJSON(-54.028, -4.6, -53.928, -4.5), "")
	rules := func(threshold float64, maxScore int) geo.Rules {
		r := geo.DefaultRules()
		r.OverlapThresholdPct, r.MaxRiskScore = threshold, maxScore
		return r
	}
	tests := []struct {
		name   string
		f      geo.Feature
		r      geo.Rules
		status string
		reason string
		score  int
	}{
		{"deforestation, any overlap", defo30, rules(0, 50), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"deforestation below 29 %", defo30, rules(29, 50), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100},
		{"deforestation under 31 %", defo30, rules(31, 50), geo.StatusCompliant, "", 30},
		{"deforestation under 31 %, max 30", defo30, rules(31, 30), geo.StatusCompliant, "", 30},
		{"deforestation under 31 %, max 29", defo30, rules(31, 29), geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 30},
		{"protected, any overlap", prot28, rules(0, 50), geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 82},
		{"protected, any overlap, max 100", prot28, rules(0, 100), geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 82},
		{"protected under 31 %", prot28, rules(31, 50), geo.StatusCompliant, "", 14},
		{"protected under 31 %, max 13", prot28, rules(31, 13), geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 14},
		{"elsewhere, max 0", parseOne(t, rectJSON(30, 5, 30.2, 5.2), ""), rules(0, 0), geo.StatusCompliant, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := assess(t, tt.f, ix, tt.r)
			wantOutcome(t, o, tt.status, tt.reason)
			if o.Risk.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d (deforested %v %%, protected %v %%)", o.Risk.RiskScore, tt.score, o.Risk.DeforestedPct, o.Risk.ProtectedPct)
			}
		})
	}
}

// Forest cover 2020 raises the score, up to 50, and an uncovered
// deforestation layer's evidence still counts.
func TestAssess_ForestCoverAndEvidence(t *testing.T) {
	forest := &geo.Layer{ID: "forest", Name: "forest", Kind: geo.ForestCover2020,
		Features: []geo.LayerFeature{{ID: "forest-1", Polygons: []geo.Polygon{box(30, 5, 30.1, 5.2)}}}}
	alerts := &geo.Layer{ID: "alerts", Name: "alerts", Kind: geo.DeforestationAfterCutoff,
		Features: []geo.LayerFeature{{ID: "alert-1", Polygons: []geo.Polygon{box(40, 5, 40.1, 5.1)}}}}
	ix := geo.NewIndex(append(geo.SandboxLayers(), forest, alerts)...)

	half := parseOne(t, rectJSON(30, 5, 30.2, 5.2), "") // half in forest
	o := assess(t, half, ix, geo.DefaultRules())
	wantOutcome(t, o, geo.StatusCompliant, "")
	if o.Risk.RiskScore != 25 || len(o.Layers) != 4 {
		t.Errorf("RiskScore = %d, layers %d; want 25, 4", o.Risk.RiskScore, len(o.Layers))
	}
	r := geo.DefaultRules()
	r.MaxRiskScore = 24
	wantOutcome(t, assess(t, half, ix, r), geo.StatusHighRisk, geo.ReasonRiskScoreAboveMax)

	whole := parseOne(t, rectJSON(30.02, 5.02, 30.08, 5.08), "")
	o = assess(t, whole, ix, geo.DefaultRules())
	wantOutcome(t, o, geo.StatusCompliant, "")
	if o.Risk.RiskScore != 50 {
		t.Errorf("wholly in forest: RiskScore = %d, want 50", o.Risk.RiskScore)
	}

	o = assess(t, parseOne(t, rectJSON(40.05, 5.05, 40.15, 5.15), ""), ix, geo.DefaultRules())
	wantOutcome(t, o, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff)
	if !near(o.Risk.DeforestedPct, 25, 0.5) || o.Risk.RiskScore != 100 {
		t.Errorf("Risk = %+v, want 25 %% deforested, score 100", o.Risk)
	}
}

func TestRiskScore(t *testing.T) {
	for _, tt := range []struct {
		d, p, f, threshold float64
		want               int
	}{
		{0, 0, 0, 0, 0},
		{1e-9, 0, 0, 0, 100},
		{100, 100, 100, 0, 100},
		{0, 1e-9, 0, 0, 75},
		{0, 100, 0, 0, 100},
		{0, 50, 100, 0, 88},
		{0, 0, 100, 0, 50},
		{0, 0, 37, 0, 19},
		{10, 0, 0, 10, 10},
		{10, 20, 100, 20, 50},
		{-5, math.NaN(), 300, 0, 50},
	} {
		if got := geo.RiskScore(tt.d, tt.p, tt.f, tt.threshold); got != tt.want {
			t.Errorf("RiskScore(%v, %v, %v, %v) = %d, want %d", tt.d, tt.p, tt.f, tt.threshold, got, tt.want)
		}
	}
	// Bounded and monotone in each overlap, for several thresholds.
	steps := []float64{0, 0.5, 5, 9.99, 10, 10.01, 25, 49.9, 50, 75, 99, 100}
	for _, th := range []float64{0, 10, 50, 99} {
		for _, d := range steps {
			for _, p := range steps {
				for _, f := range steps {
					s := geo.RiskScore(d, p, f, th)
					if s < 0 || s > 100 {
						t.Fatalf("RiskScore(%v, %v, %v, %v) = %d, not in 0-100", d, p, f, th, s)
					}
					for _, up := range steps {
						if up < d && geo.RiskScore(up, p, f, th) > s ||
							up < p && geo.RiskScore(d, up, f, th) > s ||
							up < f && geo.RiskScore(d, p, up, th) > s {
							t.Fatalf("RiskScore not monotone at (%v, %v, %v, %v), lower %v", d, p, f, th, up)
						}
					}
				}
			}
		}
	}
}

func TestRules(t *testing.T) {
	if r := geo.DefaultRules(); r != (geo.Rules{MaxRiskScore: 50, OverlapThresholdPct: 0, LossThresholdPct: 10, LossThresholdHa: 0.5, AreaTolerance: 0.10}) || r.Validate() != nil {
		t.Errorf("DefaultRules = %+v, %v", r, r.Validate())
	}
	f := parseOne(t, rectJSON(30, 5, 30.2, 5.2), "")
	for _, r := range []geo.Rules{
		{MaxRiskScore: -1, AreaTolerance: 0.1},
		{MaxRiskScore: 101, AreaTolerance: 0.1},
		{MaxRiskScore: 50, OverlapThresholdPct: -1, AreaTolerance: 0.1},
		{MaxRiskScore: 50, OverlapThresholdPct: 100, AreaTolerance: 0.1},
		{MaxRiskScore: 50, OverlapThresholdPct: math.NaN(), AreaTolerance: 0.1},
		{MaxRiskScore: 50, AreaTolerance: -0.1},
		{MaxRiskScore: 50, AreaTolerance: math.NaN()},
		{MaxRiskScore: 50, AreaTolerance: math.Inf(1)},
		{MaxRiskScore: 50, AreaTolerance: 0.1, LossThresholdPct: -1},
		{MaxRiskScore: 50, AreaTolerance: 0.1, LossThresholdPct: 100},
		{MaxRiskScore: 50, AreaTolerance: 0.1, LossThresholdHa: -0.5},
		{MaxRiskScore: 50, AreaTolerance: 0.1, LossThresholdHa: math.NaN()},
		{MaxRiskScore: 50, AreaTolerance: 0.1, LossThresholdHa: math.Inf(1)},
	} {
		if r.Validate() == nil {
			t.Errorf("%+v: Validate = nil", r)
		}
		if o, err := geo.Assess(context.Background(), f, sandboxIndex(), r); err == nil || o.Status != "" {
			t.Errorf("%+v: Assess = %+v, %v; want an error", r, o, err)
		}
	}
}
