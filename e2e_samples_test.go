package main_test

// End-to-end test of the sample data (examples/data) as docs/layers.md
// (Sample data) tells a newcomer to use it: the vector layer and the raster
// pair imported into the sandbox of a stopped appliance with `eudr layers
// import --env sandbox`, then the sample plots screened in the sandbox,
// each of which must get the verdict the docs' table gives, so that the
// data and the docs cannot drift apart. It also holds the two
// environments apart: the sandbox's layers never reach production's
// screening, and a layer imported for production changes nothing in the
// sandbox.

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

const (
	samplesDir  = "examples/data"
	samplesDocs = "docs/layers.md"
	// samplesJobTimeout bounds the wait for the job screening the ten
	// plots, on a slow and loaded machine.
	samplesJobTimeout = 60 * time.Second
)

// samplesCodeSpan is a `code span` of Markdown.
var samplesCodeSpan = regexp.MustCompile("`([^`]+)`")

// samplesDocVerdicts reads the verdicts the Sample data table of the docs
// gives: externalId -> "STATUS" or "STATUS REASON", from rows whose first
// cell is a plot's externalId and whose last is its verdict.
func samplesDocVerdicts(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(samplesDocs)
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## Sample data\n")
	if !ok {
		t.Fatalf("%s has no section \"## Sample data\"", samplesDocs)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	want := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), "|")
		if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[0]), "`CI-") {
			continue
		}
		id := strings.Trim(strings.TrimSpace(cells[0]), "`")
		var verdict []string
		for _, m := range samplesCodeSpan.FindAllStringSubmatch(cells[len(cells)-1], -1) {
			verdict = append(verdict, m[1])
		}
		if len(verdict) == 0 {
			t.Fatalf("%s, Sample data: the row of %s gives no verdict: %q", samplesDocs, id, line)
		}
		want[id] = strings.Join(verdict, " ")
	}
	if len(want) == 0 {
		t.Fatalf("%s, Sample data: no table of verdicts found", samplesDocs)
	}
	return want
}

// samplesPlots returns the sample plots file and its plots' externalIds,
// in order.
func samplesPlots(t *testing.T) (body string, ids []string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(samplesDir, "plots.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	var fc struct {
		Features []struct {
			Properties struct {
				ExternalID string `json:"externalId"`
			} `json:"properties"`
		} `json:"features"`
	}
	if err := json.Unmarshal(b, &fc); err != nil {
		t.Fatalf("plots.geojson: %v", err)
	}
	for _, f := range fc.Features {
		ids = append(ids, f.Properties.ExternalID)
	}
	return string(b), ids
}

// samplesScreen submits the plots to base's listener, waits for the job
// and returns each plot's verdict by externalId, as samplesDocVerdicts
// spells them.
func samplesScreen(t *testing.T, base, key, plots string, n int) map[string]string {
	t.Helper()
	job := polWaitJob(t, base, key, polMustPost(t, base, key, plots, n), samplesJobTimeout)
	got := map[string]string{}
	for _, r := range job.Results {
		v := r.EUDRStatus
		if r.FailureReason != nil {
			v += " " + *r.FailureReason
		}
		got[polStr(r.ExternalID)] = v
	}
	return got
}

// samplesCompare fails t for each plot whose verdict is not want's.
func samplesCompare(t *testing.T, where string, ids []string, got, want map[string]string) {
	t.Helper()
	for _, id := range ids {
		if got[id] != want[id] {
			t.Errorf("%s: plot %s is %q, want %q", where, id, got[id], want[id])
		}
	}
}

// samplesImport runs `eudr layers import` on the stopped dataDir and
// returns the layer ID it prints.
func samplesImport(t *testing.T, dataDir string, args ...string) string {
	t.Helper()
	res := runCLI(t, dataDir, nil, append([]string{"layers", "import"}, args...)...)
	f := strings.Fields(res.Stdout)
	if res.Code != 0 || len(f) < 2 || !strings.HasPrefix(f[0], "lyr_") {
		t.Fatalf("layers import %v: exit %d, stdout %q, stderr %q; want 0 and the layer ID", args, res.Code, res.Stdout, res.Stderr)
	}
	return f[0]
}

// samplesLayerIDs lists the layer IDs GET /layers gives on base.
func samplesLayerIDs(t *testing.T, base, key string) []string {
	t.Helper()
	var ids []string
	for _, l := range apitest.Do(t, "GET", base+eudrAPI+"/layers", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Array(t) {
		id, _ := l["layerId"].(string)
		ids = append(ids, id)
	}
	return ids
}

func TestSamples_Screening(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	want := samplesDocVerdicts(t)
	plots, ids := samplesPlots(t)
	for _, id := range ids {
		if _, ok := want[id]; !ok {
			t.Errorf("plot %s of plots.geojson has no verdict in %s", id, samplesDocs)
		}
	}
	if len(want) != len(ids) {
		t.Errorf("%s gives %d verdicts for the %d plots of plots.geojson", samplesDocs, len(want), len(ids))
	}

	// The docs' commands, on a new data dir: the appliance is not running.
	dataDir := tempDataDir(t)
	abs := func(p string) string {
		a, err := filepath.Abs(filepath.Join(samplesDir, p))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	common := []string{"--env", "sandbox", "--version", "sample-1", "--source", "eudr examples/data"}
	imported := []string{
		samplesImport(t, dataDir, append(common, "--name", "Sample deforestation (synthetic)", "--kind", "deforestation",
			"--coverage", abs("deforestation-coverage.geojson"), abs("deforestation.geojson"))...),
		samplesImport(t, dataDir, append(common, "--name", "Sample loss year (synthetic)", "--kind", "loss-year",
			"--raster", abs("rasters/loss-year"))...),
		samplesImport(t, dataDir, append(common, "--name", "Sample forest 2020 (synthetic)", "--kind", "forest-2020",
			"--raster", abs("rasters/forest-2020"))...),
	}
	res := runCLI(t, dataDir, nil, "admin", "create-key", "--env", "sandbox", "--name", "samples")
	sandboxKey := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || !sandboxKeyPattern.MatchString(sandboxKey) {
		t.Fatalf("admin create-key --env sandbox: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}

	p := startServerIn(t, dataDir)
	prodKey := p.createKey(t, production)
	samplesCompare(t, "sandbox", ids, samplesScreen(t, p.SandboxURL, sandboxKey, plots, len(ids)), want)
	if got := samplesLayerIDs(t, p.SandboxURL, sandboxKey); len(got) < 3 || got[0] != imported[2] || got[1] != imported[1] || got[2] != imported[0] {
		t.Errorf("sandbox layers = %v, want the three imported (newest first), then the fixtures", got)
	}

	// Nothing was imported for production: no layer covers the plots there,
	// and a plot that fails its checks fails them there too.
	noLayers := map[string]string{}
	for id, v := range want {
		noLayers[id] = "FAILED NO_REFERENCE_COVERAGE"
		if strings.HasPrefix(v, "FAILED") {
			noLayers[id] = v
		}
	}
	samplesCompare(t, "production before any import", ids, samplesScreen(t, p.ProductionURL, prodKey, plots, len(ids)), noLayers)
	if got := samplesLayerIDs(t, p.ProductionURL, prodKey); len(got) != 0 {
		t.Errorf("production layers = %v, want none", got)
	}

	// The vector layer imported for production through the API (no
	// environment named: production): production screens against it alone,
	// without the sandbox's rasters, and the sandbox's verdicts stay.
	features, err := os.ReadFile(abs("deforestation.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	coverage, err := os.ReadFile(abs("deforestation-coverage.geojson"))
	if err != nil {
		t.Fatal(err)
	}
	body := map[string]any{"name": "Sample deforestation (synthetic)", "kind": "deforestation", "version": "sample-1",
		"source": "eudr examples/data", "features": json.RawMessage(features), "coverage": json.RawMessage(coverage)}
	layer := apitest.Do(t, "POST", p.ProductionURL+enterpriseAPI+"/layers",
		apitest.Merge(apitest.Bearer(p.Login(t)), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())), body).WantStatus(t, http.StatusOK).Object(t)
	if layer["environment"] != production {
		t.Errorf("POST /layers without environment: %v, want a production layer", layer)
	}
	vectorOnly := map[string]string{}
	for _, id := range ids {
		vectorOnly[id] = "COMPLIANT"
	}
	vectorOnly["CI-01"] = "HIGH_RISK DEFORESTATION_AFTER_CUTOFF"
	vectorOnly["CI-02"] = "HIGH_RISK DEFORESTATION_AFTER_CUTOFF"
	vectorOnly["CI-10"] = "FAILED SELF_INTERSECTION"
	samplesCompare(t, "production with the vector layer", ids, samplesScreen(t, p.ProductionURL, prodKey, plots, len(ids)), vectorOnly)
	samplesCompare(t, "sandbox after a production import", ids, samplesScreen(t, p.SandboxURL, sandboxKey, plots, len(ids)), want)
	if got := samplesLayerIDs(t, p.ProductionURL, prodKey); len(got) != 1 || got[0] != layer["layerId"] {
		t.Errorf("production layers = %v, want only %v", got, layer["layerId"])
	}
	p.Stop(t)
}
