package metrics_test

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/metrics"
	"github.com/eudr/eudr/storage"
)

// dashboardFile is the Grafana dashboard shipped for the metrics.
const dashboardFile = "../../docs/grafana-dashboard.json"

// dashboard is the part of a Grafana dashboard this test reads.
type dashboard struct {
	Inputs []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		PluginID string `json:"pluginId"`
	} `json:"__inputs"`
	Title  string `json:"title"`
	UID    string `json:"uid"`
	Panels []struct {
		Title      string `json:"title"`
		Type       string `json:"type"`
		Datasource *struct {
			UID string `json:"uid"`
		} `json:"datasource"`
		Targets []struct {
			Expr string `json:"expr"`
		} `json:"targets"`
	} `json:"panels"`
	Templating struct {
		List []struct {
			Definition string `json:"definition"`
		} `json:"list"`
	} `json:"templating"`
}

// metricName finds the metric names in a PromQL expression: ours and the
// Go and process collectors'.
var metricName = regexp.MustCompile(`\b(?:eudr|go|process)_[a-z0-9_]+\b`)

// familyOf is the family a series name belongs to: a histogram's series
// end in _bucket, _sum and _count.
func familyOf(name string, families map[string]bool) string {
	if families[name] {
		return name
	}
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(name, suffix); ok && families[base] {
			return base
		}
	}
	return ""
}

// Every query of the dashboard names families the registry has, and every
// family of ours is on the dashboard: renaming or adding a metric without
// the dashboard fails here.
func TestDashboard(t *testing.T) {
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("%s: not JSON: %v", dashboardFile, err)
	}
	if len(d.Inputs) != 1 || d.Inputs[0].Name != "DS_PROMETHEUS" || d.Inputs[0].Type != "datasource" || d.Inputs[0].PluginID != "prometheus" {
		t.Errorf("__inputs: got %+v, want the one Prometheus datasource input DS_PROMETHEUS", d.Inputs)
	}
	if d.Title == "" || d.UID == "" {
		t.Errorf("title %q, uid %q: want both", d.Title, d.UID)
	}

	// A registry with every family in it: the store's facts, a checkpoint
	// signed, one request.
	b := apitest.NewBench(t, start)
	b.Update(t, func(tx *storage.Tx) error {
		if _, err := anchor.Append(tx, sandbox, map[string]any{"type": "test"}); err != nil {
			return err
		}
		_, err := b.Ledger.Sign(tx, sandbox)
		return err
	})
	m := metrics.New(metrics.Options{Version: "test", Now: b.Clock.Now})
	m.WatchStore(b.DB)
	m.ObserveRequest(storage.Sandbox, "/livez", "GET", 200, time.Millisecond)
	families := map[string]bool{}
	for name := range gather(t, m) {
		families[name] = true
	}

	onDashboard := map[string]bool{}
	var exprs []string
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${DS_PROMETHEUS}" {
			t.Errorf("panel %q: datasource %+v, want the ${DS_PROMETHEUS} input", p.Title, p.Datasource)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
			if len(metricName.FindAllString(tg.Expr, -1)) == 0 {
				t.Errorf("panel %q: query %q names no metric", p.Title, tg.Expr)
			}
		}
	}
	for _, v := range d.Templating.List {
		exprs = append(exprs, v.Definition)
	}
	for _, expr := range exprs {
		for _, name := range metricName.FindAllString(expr, -1) {
			f := familyOf(name, families)
			if f == "" {
				t.Errorf("query %q: no metric family %s in the registry", expr, name)
				continue
			}
			onDashboard[f] = true
		}
	}
	for f := range families {
		if strings.HasPrefix(f, "eudr_") && !onDashboard[f] {
			t.Errorf("family %s is on no panel of the dashboard", f)
		}
	}
}
