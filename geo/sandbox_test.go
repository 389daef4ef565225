package geo_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"testing"

	"github.com/eudr/eudr/geo"
)

// parseOne decodes a FeatureCollection of one feature with geometry (JSON)
// and properties commodity, producerCountry and extra (JSON members, each
// starting with a comma), through the real decoder.
func parseOne(t *testing.T, geometry, extra string) geo.Feature {
	t.Helper()
	body := `{"type":"FeatureCollection","features":[{"type":"Feature","geometry":` + geometry +
		`,"properties":{"commodity":"cocoa","producerCountry":"BR"` + extra + `}}]}`
	fs, err := geo.ParseFeatureCollection([]byte(body), geo.ParseOptions{})
	if err != nil {
		t.Fatalf("ParseFeatureCollection(%s): %v", body, err)
	}
	if len(fs) != 1 {
		t.Fatalf("ParseFeatureCollection: %d features, want 1", len(fs))
	}
	return fs[0]
}

// rectJSON is the Polygon [lon0, lon1] × [lat0, lat1] with 6 decimals.
func rectJSON(lon0, lat0, lon1, lat1 float64) string {
	return `{"type":"Polygon","coordinates":[` + ringJSON(lon0, lat0, lon1, lat1) + `]}`
}

func ringJSON(lon0, lat0, lon1, lat1 float64) string {
	return fmt.Sprintf("[[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f],[%.6f,%.6f]]",
		lon0, lat0, lon1, lat0, lon1, lat1, lon0, lat1, lon0, lat0)
}

func pointJSON(lon, lat float64) string {
	return fmt.Sprintf(`{"type":"Point","coordinates":[%.6f,%.6f]}`, lon, lat)
}

func sandboxIndex() *geo.Index { return geo.NewIndex(geo.SandboxLayers()...) }

// The sandbox fixture table (docs/sandbox.md), through Assess with
// DefaultRules.
func TestAssess_SandboxFixtures(t *testing.T) {
	ix := sandboxIndex()
	const area = `,"area":2`
	tests := []struct {
		name, geometry, extra string
		status, reason        string
		defoPct, protPct      float64 // want, ±0.5
		defoHa, protHa        float64 // want for points; -1: don't check
		score                 int     // want; -1: don't check
	}{
		// Deforestation box -62, -11, -61, -10.
		{"inside deforestation box", rectJSON(-61.6, -10.6, -61.4, -10.4), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100, 0, -1, -1, 100},
		{"partly over deforestation box", rectJSON(-61.1, -10.6, -60.9, -10.4), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 50, 0, -1, -1, 100},
		{"corner of deforestation box", rectJSON(-62.1, -11.1, -61.9, -10.9), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 25, 0, -1, -1, 100},
		{"holds deforestation box", rectJSON(-62.5, -11.5, -60.5, -9.5), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 25, 0, -1, -1, 100},
		{"point in deforestation box", pointJSON(-61.5, -10.5), area, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100, 0, 2, 0, 100},
		{"point on deforestation box edge", pointJSON(-61, -10.5), area, geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 100, 0, 2, 0, 100},
		{"edge of deforestation box only", rectJSON(-61, -10.6, -60.8, -10.4), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 0.005, 0, -1, -1, 100},
		{"corner of deforestation box only", rectJSON(-61, -10, -60.8, -9.8), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 0, 0, -1, -1, 100},
		{"beside the deforestation box", rectJSON(-60.99998, -10.6, -60.8, -10.4), "", geo.StatusCompliant, "", 0, 0, 0, 0, 0},

		// Protected box -55, -5, -54, -4.
		{"inside protected box", rectJSON(-54.6, -4.6, -54.4, -4.4), "", geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 0, 100, -1, -1, 100},
		{"partly over protected box", rectJSON(-54.1, -4.6, -53.9, -4.4), "", geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 0, 50, -1, -1, -1},
		{"point in protected box", pointJSON(-54.5, -4.5), area, geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 0, 100, 0, 2, 100},
		{"edge of protected box only", rectJSON(-55.2, -4.6, -55, -4.4), "", geo.StatusHighRisk, geo.ReasonProtectedAreaOverlap, 0, 0.005, -1, -1, -1},

		// No coverage box 10, 10, 11, 11.
		{"inside no-coverage box", rectJSON(10.4, 10.4, 10.6, 10.6), "", geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"partly over no-coverage box", rectJSON(10.9, 10.4, 11.1, 10.6), "", geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"holds no-coverage box", rectJSON(9.5, 9.5, 11.5, 11.5), "", geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"point in no-coverage box", pointJSON(10.5, 10.5), area, geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"edge of no-coverage box only", rectJSON(11, 10.4, 11.2, 10.6), "", geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"point on no-coverage box edge", pointJSON(11, 10.5), area, geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"beside the no-coverage box", rectJSON(11.00002, 10.4, 11.2, 10.6), "", geo.StatusCompliant, "", 0, 0, 0, 0, 0},

		// Anywhere else.
		{"elsewhere", rectJSON(30, 5, 30.2, 5.2), "", geo.StatusCompliant, "", 0, 0, 0, 0, 0},
		{"across coverage tiles", rectJSON(9.9, 20, 10.1, 20.2), "", geo.StatusCompliant, "", 0, 0, 0, 0, 0},
		{"across all four tiles' corner", rectJSON(9.9, 10.9, 11.1, 11.1), "", geo.StatusFailed, geo.ReasonNoReferenceCoverage, 0, 0, 0, 0, 0},
		{"point elsewhere", pointJSON(30.1, 5.1), area, geo.StatusCompliant, "", 0, 0, 0, 0, 0},
		{"between the boxes", rectJSON(-58, -8, -57.8, -7.8), "", geo.StatusCompliant, "", 0, 0, 0, 0, 0},

		// Both boxes: deforestation comes first.
		{"over both boxes", rectJSON(-61.5, -10.5, -54.5, -4.5), "", geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, -1, -1, -1, -1, 100},
		{"multipolygon, one part in deforestation box",
			`{"type":"MultiPolygon","coordinates":[[` + ringJSON(30, 5, 30.2, 5.2) + `],[` + ringJSON(-61.6, -10.6, -61.4, -10.4) + `]]}`, "",
			geo.StatusHighRisk, geo.ReasonDeforestationAfterCutoff, 50, 0, -1, -1, 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := parseOne(t, tt.geometry, tt.extra)
			got, err := geo.Assess(context.Background(), f, ix, geo.DefaultRules())
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.Reason != tt.reason {
				t.Fatalf("Assess = %s %s (%s), want %s %s", got.Status, got.Reason, got.Detail, tt.status, tt.reason)
			}
			if (got.Reason == "") != (got.Detail == "") {
				t.Errorf("Reason %q with Detail %q", got.Reason, got.Detail)
			}
			if got.AreaHa <= 0 {
				t.Errorf("AreaHa = %v, want > 0", got.AreaHa)
			}
			if len(got.Layers) != 2 {
				t.Errorf("Layers = %d, want 2 (screened)", len(got.Layers))
			}
			if got.Status == geo.StatusFailed {
				if got.Risk != (geo.Risk{}) {
					t.Errorf("FAILED with Risk %+v, want zero", got.Risk)
				}
				return
			}
			r := got.Risk
			if tt.defoPct >= 0 && !near(r.DeforestedPct, tt.defoPct, 0.5) {
				t.Errorf("DeforestedPct = %v, want %v", r.DeforestedPct, tt.defoPct)
			}
			if tt.protPct >= 0 && !near(r.ProtectedPct, tt.protPct, 0.5) {
				t.Errorf("ProtectedPct = %v, want %v", r.ProtectedPct, tt.protPct)
			}
			if tt.defoHa >= 0 && !near(r.DeforestedHa, tt.defoHa, 1e-9) {
				t.Errorf("DeforestedHa = %v, want %v", r.DeforestedHa, tt.defoHa)
			}
			if tt.protHa >= 0 && !near(r.ProtectedHa, tt.protHa, 1e-9) {
				t.Errorf("ProtectedHa = %v, want %v", r.ProtectedHa, tt.protHa)
			}
			if !near(r.DeforestedHa, r.DeforestedPct/100*got.AreaHa, 1e-6*got.AreaHa) && !f.Geometry.IsPoint() {
				t.Errorf("DeforestedHa %v is not DeforestedPct %v of AreaHa %v", r.DeforestedHa, r.DeforestedPct, got.AreaHa)
			}
			if tt.score >= 0 && r.RiskScore != tt.score {
				t.Errorf("RiskScore = %d, want %d", r.RiskScore, tt.score)
			}
			if r.RiskScore < 0 || r.RiskScore > 100 {
				t.Errorf("RiskScore = %d, not in 0-100", r.RiskScore)
			}
			// Under DefaultRules a HIGH_RISK overlap scores above
			// MaxRiskScore and a COMPLIANT plot not.
			if high := r.RiskScore > geo.DefaultRules().MaxRiskScore; high != (got.Status == geo.StatusHighRisk) {
				t.Errorf("RiskScore %d with status %s", r.RiskScore, got.Status)
			}
		})
	}
}

func TestSandboxLayers(t *testing.T) {
	ls := geo.SandboxLayers()
	if len(ls) != 2 {
		t.Fatalf("%d layers, want 2", len(ls))
	}
	kinds := []geo.LayerKind{geo.DeforestationAfterCutoff, geo.ProtectedArea}
	for i, l := range ls {
		if l.Kind != kinds[i] || l.ID == "" || l.Name == "" || l.Version == "" || l.Source != "eudr sandbox fixtures" {
			t.Errorf("layer %d: %+v", i, l)
		}
		if len(l.Features) != 1 || len(l.Coverage) == 0 {
			t.Errorf("layer %s: %d features, %d coverage polygons", l.ID, len(l.Features), len(l.Coverage))
		}
		if b, err := hex.DecodeString(l.SHA256); err != nil || len(b) != 32 {
			t.Errorf("layer %s: SHA256 %q is not 64 hex digits", l.ID, l.SHA256)
		}
		if sum, err := geo.LayerSHA256(l); err != nil || sum != l.SHA256 {
			t.Errorf("layer %s: LayerSHA256 = %q, %v; SHA256 field %q", l.ID, sum, err, l.SHA256)
		}
	}
	if ls[0].SHA256 == ls[1].SHA256 {
		t.Error("both layers have the same SHA256")
	}

	// Fresh on each call, and stable.
	again := geo.SandboxLayers()
	again[0].Features[0].Polygons[0][0][1][0] = -61.5
	if geo.SandboxLayers()[0].Features[0].Polygons[0][0][1][0] != -61+1e-5 {
		t.Error("SandboxLayers shares its polygons between calls")
	}
	if ls[0].SHA256 != geo.SandboxLayers()[0].SHA256 {
		t.Error("SHA256 differs between calls")
	}
	// Any change to the layer changes the digest.
	if sum, _ := geo.LayerSHA256(again[0]); sum == ls[0].SHA256 {
		t.Error("moving a corner left the SHA256 unchanged")
	}
	renamed := *ls[1]
	renamed.Version = "2"
	if sum, _ := geo.LayerSHA256(&renamed); sum == ls[1].SHA256 {
		t.Error("changing the version left the SHA256 unchanged")
	}
}

func TestLayerSHA256_Canonical(t *testing.T) {
	// The documented encoding, by hand.
	l := &geo.Layer{ID: "a", Name: "n", Kind: geo.ProtectedArea, Version: "v", Source: "s", SHA256: "ignored",
		Features: []geo.LayerFeature{{ID: "f", Polygons: []geo.Polygon{{{{0, 0}, {1.5, 0}, {0, 1e-7}, {0, 0}}}}}}}
	enc := `{"id":"a","name":"n","kind":"protected_area","version":"v","source":"s","coverage":[],` +
		`"features":[{"id":"f","polygons":[[[[0,0],[1.5,0],[0,1e-7],[0,0]]]]}]}`
	got, err := geo.LayerSHA256(l)
	if err != nil {
		t.Fatal(err)
	}
	if got != sha256Hex(enc) {
		t.Errorf("LayerSHA256 = %s, want SHA-256 of %s = %s", got, enc, sha256Hex(enc))
	}
	bad := &geo.Layer{ID: "nan", Coverage: []geo.Polygon{{{{nan(), 0}, {1, 0}, {0, 1}, {nan(), 0}}}}}
	if _, err := geo.LayerSHA256(bad); err == nil {
		t.Error("LayerSHA256 of a NaN coordinate: no error")
	}
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func nan() float64 { return math.NaN() }
