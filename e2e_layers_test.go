package main_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestCLI_LayersImport(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	dir := t.TempDir()
	features := filepath.Join(dir, "loss.geojson")
	coverage := filepath.Join(dir, "coverage.geojson")
	if err := os.WriteFile(features, []byte(`{"type":"FeatureCollection","features":[
	 {"type":"Feature","id":"loss-1","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-61.9,-10.9],[-61.5,-10.9],[-61.5,-10.5],[-61.9,-10.9]]]}},
	 {"type":"Feature","properties":{"id":"loss-2"},"geometry":{"type":"Polygon","coordinates":[[[-61.4,-10.4],[-61.2,-10.4],[-61.2,-10.2],[-61.4,-10.4]]]}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(coverage, []byte(`{"type":"FeatureCollection","features":[{"type":"Feature","properties":{},"geometry":{"type":"Polygon","coordinates":[[[-62,-11],[-61,-11],[-61,-10],[-62,-10],[-62,-11]]]}}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"layers", "import", "--name", "GFC loss", "--kind", "deforestation", "--version", "1.11",
		"--source", "glad", "--coverage", coverage, features}

	res := runCLI(t, p.DataDir, nil, args...)
	if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
		t.Errorf("layers import on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
	}
	p.Stop(t)

	// An environment other than production or sandbox is bad usage; nothing
	// is imported (the production list below holds one layer).
	res = runCLI(t, p.DataDir, nil, append([]string{"layers", "import", "--env", "staging"}, args[2:]...)...)
	if res.Code != 2 || !strings.Contains(res.Stderr, `--env must be sandbox or production, not "staging"`) {
		t.Errorf("layers import --env staging: exit %d, stderr %q; want 2 and the environments allowed", res.Code, res.Stderr)
	}

	res = runCLI(t, p.DataDir, nil, "layers", "import", "--name", "x", "--kind", "deforestation", "--version", "1", "--source", "s", features)
	if res.Code != 1 || !strings.Contains(res.Stderr, "coverage: REQUIRED") {
		t.Errorf("deforestation layer without coverage: exit %d, stderr %q; want 1 and a coverage problem", res.Code, res.Stderr)
	}

	res = runCLI(t, p.DataDir, nil, args...)
	fields := strings.Fields(res.Stdout)
	if res.Code != 0 || len(fields) != 2 || !strings.HasPrefix(fields[0], "lyr_") || fields[1] != "2" {
		t.Fatalf("layers import: exit %d, stdout %q, stderr %q; want 0 and \"lyr_... 2\"", res.Code, res.Stdout, res.Stderr)
	}

	p = p.Restart(t)
	key := p.createKey(t, "production")
	layers := p.mustDo(t, "GET", p.ProductionURL+"/api/v1/enterprise/eudr/layers", apitest.WithKey(key), nil, http.StatusOK).Array(t)
	if len(layers) != 1 || layers[0]["layerId"] != fields[0] || layers[0]["name"] != "GFC loss" ||
		layers[0]["kind"] != "deforestation" || layers[0]["featureCount"] != float64(2) {
		t.Errorf("production layers = %v", layers)
	}
	p.Stop(t)
}
