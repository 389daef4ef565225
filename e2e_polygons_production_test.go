package main_test

// End-to-end test of production screening against layers imported with
// `eudr layers import`, and the risk.overlap_threshold_pct setting.

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func TestPolygon_Production(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	live := p.createKey(t, production)
	sk := p.createKey(t, sandbox)
	props := map[string]any{"commodity": "soya", "producerCountry": "BR"}

	// No layers: never compliant without data.
	first := polFeature(polSquare(-49.3, -9.3, 0.001), props)
	job := polMustPost(t, p.ProductionURL, live, polCollection(first), 1)
	j := polWaitJob(t, p.ProductionURL, live, job, 20*time.Second)
	firstID := polIDOf(job, 0)
	if len(j.Results) != 1 || j.Results[0].EUDRStatus != "FAILED" || polStr(j.Results[0].FailureReason) != "NO_REFERENCE_COVERAGE" {
		t.Fatalf("production without layers: %+v, want FAILED NO_REFERENCE_COVERAGE", j.Results)
	}
	if s := polGetStatus(t, p.ProductionURL, live, firstID); s.EUDRStatus != "FAILED" || polStr(s.FailureReason) != "NO_REFERENCE_COVERAGE" || s.Risk != nil {
		t.Errorf("status %+v, want FAILED NO_REFERENCE_COVERAGE", s)
	}
	if ev := polGetEvidence(t, p.ProductionURL, live, firstID); len(ev.Layers) != 0 || len(ev.Overlaps) != 0 || ev.InputSHA256 != polSHA256(t, first) {
		t.Errorf("evidence without layers: %+v", ev)
	}

	// Environments: a sandbox key is refused on production, and production's
	// polygons are unknown to the sandbox.
	apitest.WantForbidden(t, polPost(t, p.ProductionURL, sk, apitest.NewIdemKey(), polCollection(first)), "WRONG_ENVIRONMENT")
	apitest.WantForbidden(t, apitest.Do(t, "GET", polItemURL(p.ProductionURL, firstID), apitest.WithKey(sk), nil), "WRONG_ENVIRONMENT")
	apitest.WantError(t, apitest.Do(t, "GET", polItemURL(p.SandboxURL, firstID), apitest.WithKey(sk), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "GET", polItemURL(p.SandboxURL, firstID)+"/evidence", apitest.WithKey(sk), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "DELETE", polItemURL(p.SandboxURL, firstID), apitest.WithKey(sk), nil), http.StatusNotFound, "NOT_FOUND")
	if l := polWalk(t, p.SandboxURL, sk, "", 100); len(l) != 0 {
		t.Errorf("the sandbox lists %d polygons, want none of production's", len(l))
	}

	// Import a deforestation layer: coverage -50,-10 to -49,-9, one
	// deforested square of 0.01 degrees at -49.5,-9.5.
	p.Stop(t)
	dir := t.TempDir()
	featuresFile, coverageFile := filepath.Join(dir, "loss.geojson"), filepath.Join(dir, "coverage.geojson")
	lossFile := []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","id":"loss-1","properties":{},"geometry":` +
		polBoxGeometry(-49.5, -9.5, -49.49, -9.49, 6) + `}]}`)
	if err := os.WriteFile(featuresFile, lossFile, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(coverageFile, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":`+
		polBoxGeometry(-50, -10, -49, -9, 1)+`}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, p.DataDir, nil, "layers", "import", "--name", "E2E loss", "--kind", "deforestation", "--version", "2024.1",
		"--source", "e2e", "--coverage", coverageFile, featuresFile)
	fields := strings.Fields(res.Stdout)
	if res.Code != 0 || len(fields) != 2 || !strings.HasPrefix(fields[0], "lyr_") || fields[1] != "1" {
		t.Fatalf("layers import: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	layerID := fields[0]
	sum := sha256.Sum256(lossFile)
	fileSHA := hex.EncodeToString(sum[:])

	p = p.Restart(t)
	layers := p.mustDo(t, "GET", p.ProductionURL+eudrAPI+"/layers", apitest.WithKey(live), nil, http.StatusOK).Array(t)
	if len(layers) != 1 || layers[0]["layerId"] != layerID || layers[0]["sha256"] != fileSHA {
		t.Errorf("production layers %v, want %s with sha256 %s", layers, layerID, fileSHA)
	}

	// Plots: inside coverage away from the loss; half over it (its east
	// half: lon -49.492 to -49.488 against the loss ending at -49.49);
	// outside coverage.
	feats := []string{
		polFeature(polSquare(-49.3, -9.3, 0.001), props),
		polFeature(polBoxGeometry(-49.492, -9.495, -49.488, -9.493, 6), props),
		polFeature(polSquare(-48.5, -9.5, 0.001), props),
	}
	job = polMustPost(t, p.ProductionURL, live, polCollection(feats...), 3)
	polWaitJob(t, p.ProductionURL, live, job, 20*time.Second)
	clean, half, outside := polIDOf(job, 0), polIDOf(job, 1), polIDOf(job, 2)
	if s := polGetStatus(t, p.ProductionURL, live, clean); s.EUDRStatus != "COMPLIANT" || s.Risk == nil || s.Risk.DeforestedPct != 0 {
		t.Errorf("plot inside coverage away from the loss: %+v, want COMPLIANT without deforestation", s)
	}
	if s := polGetStatus(t, p.ProductionURL, live, outside); s.EUDRStatus != "FAILED" || polStr(s.FailureReason) != "NO_REFERENCE_COVERAGE" {
		t.Errorf("plot outside coverage: %+v, want FAILED NO_REFERENCE_COVERAGE", s)
	}
	halfHa := polBoxHa(-49.492, -9.495, -49.488, -9.493)
	s := polGetStatus(t, p.ProductionURL, live, half)
	if s.EUDRStatus != "HIGH_RISK" || polStr(s.FailureReason) != "DEFORESTATION_AFTER_CUTOFF" || s.Risk == nil ||
		!polNear(s.Risk.DeforestedPct, 50, 0.5) || !polNear(s.Risk.DeforestedHa, halfHa/2, halfHa/100) || s.Risk.RiskScore != 100 {
		t.Errorf("plot half over the loss: %+v (risk %+v), want HIGH_RISK DEFORESTATION_AFTER_CUTOFF, deforestedPct about 50, deforestedHa about %.4f, riskScore 100",
			s, s.Risk, halfHa/2)
	}
	ev := polGetEvidence(t, p.ProductionURL, live, half)
	wantLayer := polEvidenceLayer{LayerID: layerID, Name: "E2E loss", Kind: "deforestation", Version: "2024.1", Source: "e2e", SHA256: fileSHA, Covered: true}
	if len(ev.Layers) != 1 || ev.Layers[0] != wantLayer {
		t.Errorf("evidence layers %+v, want [%+v]", ev.Layers, wantLayer)
	}
	if len(ev.Overlaps) != 1 || ev.Overlaps[0].LayerID != layerID || !slices.Equal(ev.Overlaps[0].FeatureIDs, []string{"loss-1"}) ||
		!polNear(ev.Overlaps[0].OverlapPct, 50, 0.5) {
		t.Errorf("evidence overlaps %+v, want loss-1 of %s at about 50 %%", ev.Overlaps, layerID)
	}
	if ev.InputSHA256 != polSHA256(t, feats[1]) {
		t.Errorf("evidence inputSha256 %s, want %s", ev.InputSHA256, polSHA256(t, feats[1]))
	}
	// A plot judged before the import keeps its verdict.
	if s := polGetStatus(t, p.ProductionURL, live, firstID); s.EUDRStatus != "FAILED" || polStr(s.FailureReason) != "NO_REFERENCE_COVERAGE" {
		t.Errorf("plot screened before the import: %+v, want it unchanged", s)
	}

	// An overlap threshold of 50 %: 30 % passes, 70 % does not.
	p.Stop(t)
	p = startServerIn(t, p.DataDir, "EUDR_RISK_OVERLAP_THRESHOLD_PCT=50")
	feats = []string{
		polFeature(polBoxGeometry(-49.4912, -9.495, -49.4872, -9.493, 6), props), // 0.0012 of 0.004 over the loss
		polFeature(polBoxGeometry(-49.4928, -9.495, -49.4888, -9.493, 6), props), // 0.0028 of 0.004
	}
	job = polMustPost(t, p.ProductionURL, live, polCollection(feats...), 2)
	polWaitJob(t, p.ProductionURL, live, job, 20*time.Second)
	for i, c := range []struct {
		pct            float64
		status, reason string
	}{{30, "COMPLIANT", ""}, {70, "HIGH_RISK", "DEFORESTATION_AFTER_CUTOFF"}} {
		id := polIDOf(job, i)
		s := polGetStatus(t, p.ProductionURL, live, id)
		if s.EUDRStatus != c.status || (c.reason != "" && polStr(s.FailureReason) != c.reason) || s.Risk == nil || !polNear(s.Risk.DeforestedPct, c.pct, 0.5) {
			t.Errorf("plot %.0f %% over the loss with a 50 %% threshold: %+v (risk %+v), want %s %s", c.pct, s, s.Risk, c.status, c.reason)
		}
		ev := polGetEvidence(t, p.ProductionURL, live, id)
		if ev.Rules.OverlapThresholdPct != 50 || len(ev.Overlaps) != 1 || !polNear(ev.Overlaps[0].OverlapPct, c.pct, 0.5) {
			t.Errorf("evidence of the %.0f %% plot: rules %+v overlaps %+v, want threshold 50 and the overlap", c.pct, ev.Rules, ev.Overlaps)
		}
	}
	p.Stop(t)
}
