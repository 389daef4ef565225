package main_test

// End-to-end tests of the Prometheus metrics (docs/operations.md,
// "Metrics"): GET /metrics on a listener of its own, every family there
// from the start, the series that move when the appliance works (a
// request, a screening job, a webhook delivered and one dead-lettered, a
// batch linked into the ledger, a statement filed with the sandbox's EU
// system), nothing of it on the API listeners, the profiler only when
// asked for, and a taken port refused at start.

import (
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/eudr/eudr/server/apitest"
)

// metricsFamilies are the appliance's own families; each must be in every
// scrape.
var metricsFamilies = []string{
	"eudr_build_info",
	"eudr_http_requests_total", "eudr_http_request_duration_seconds",
	"eudr_jobs", "eudr_jobs_finished_total", "eudr_job_run_duration_seconds",
	"eudr_job_queue_depth", "eudr_job_queue_oldest_age_seconds",
	"eudr_webhook_deliveries_total", "eudr_webhook_delivery_duration_seconds",
	"eudr_webhook_deliveries_pending", "eudr_webhook_dlq_entries",
	"eudr_ledger_entries",
	"eudr_screening_polygons_total", "eudr_screening_duration_seconds",
	"eudr_store_size_bytes", "eudr_store_commit_duration_seconds",
	"eudr_eu_system_requests_total", "eudr_eu_system_request_duration_seconds",
	// The Go and process collectors.
	"go_goroutines", "process_resident_memory_bytes",
}

// metricsAddr is the address the "metrics listener ready" line reports.
func metricsAddr(t testing.TB, p *serverProc) string {
	t.Helper()
	for _, l := range p.Logs() {
		if l["message"] == "metrics listener ready" {
			return fmt.Sprint(l["addr"])
		}
	}
	t.Fatalf("no \"metrics listener ready\" line in the log:\n%s", p.LogText())
	return ""
}

// scrape is one GET /metrics, parsed: family name -> samples, each keyed
// by its labels (name=value, sorted, comma-separated); a histogram's
// sample is its count.
type scrape map[string]map[string]float64

func scrapeMetrics(t testing.TB, addr string) scrape {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s, want 200 in the text format", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("GET /metrics: not the Prometheus text format: %v", err)
	}
	out := scrape{}
	for name, f := range fams {
		samples := map[string]float64{}
		for _, m := range f.GetMetric() {
			samples[metricsLabels(m)] = metricsValue(m)
		}
		out[name] = samples
	}
	return out
}

func metricsLabels(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func metricsValue(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Untyped != nil:
		return m.Untyped.GetValue()
	case m.Histogram != nil:
		return float64(m.Histogram.GetSampleCount())
	}
	return 0
}

// plainGet is the status of a GET on the metrics listener, which is not
// the API and answers none of its headers.
func plainGet(t testing.TB, url string) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// get is a sample's value, 0 when the series is not there (yet).
func (s scrape) get(family, labels string) float64 { return s[family][labels] }

func TestMetrics_Scrape(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	rc.SetPolicy(func(d *apitest.Delivery) apitest.Answer {
		if d.Path == "/gone" {
			return apitest.Answer{Status: http.StatusGone}
		}
		return apitest.Answer{Status: http.StatusOK}
	})
	p := startWebhookServer(t, rc, ddsFast...)
	addr := metricsAddr(t, p)
	k := p.CreateKey(t, sandbox)
	key, base := k.Key, p.SandboxURL

	before := scrapeMetrics(t, addr)
	for _, f := range metricsFamilies {
		if _, ok := before[f]; !ok {
			t.Errorf("first scrape: family %s missing", f)
		}
	}
	if _, ok := before["eudr_ledger_last_checkpoint_age_seconds"]; ok {
		t.Error("first scrape: a checkpoint age before any checkpoint was signed")
	}

	// The work: requests (one to no route), a webhook delivered and one
	// dead-lettered (410), plots screened into a verified batch linked to
	// a shipment (ledger entries under a signed checkpoint), and a
	// statement filed with the sandbox's EU system.
	health := eudrAPI + "/health"
	apitest.Do(t, "GET", base+health, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	apitest.Do(t, "GET", base+eudrAPI+"/no/such/route/x1", apitest.WithKey(key), nil).WantStatus(t, http.StatusNotFound)
	subscribe(t, p, key, rc, "/ok", "job.failed")
	subscribe(t, p, key, rc, "/gone", "report.ready")
	delivered := publishEvent(t, p, key, "job.failed", map[string]any{"jobId": "job_metrics"})
	gone := publishEvent(t, p, key, "report.ready", map[string]any{"reportId": "rep_metrics"})
	ddsMapOperator(t, base, key, "V-MET", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-MET", ddsPlots(2, -1.6, 6.7, "V-MET")...)
	d := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, d.DDSID)
	ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")
	waitUntil(t, 15*time.Second, "the job.failed event delivered", func() bool { return rc.IsDelivered("/ok", delivered.EventID) })
	waitDLQ(t, base, key, "", "the report.ready event in the DLQ", func(l dlqList) bool { return dlqIDs(l)[gone.EventID] })

	// Each series the work moves. Event metrics are counted after their
	// commit, a moment after the API shows it: the scrape is polled.
	type moved struct {
		family, labels string
		by             float64 // at least
	}
	checks := []moved{
		{"eudr_http_requests_total", "environment=sandbox,method=GET,route=" + health + ",status=200", 1},
		{"eudr_http_requests_total", "environment=sandbox,method=GET,route=unmatched,status=404", 1},
		{"eudr_http_request_duration_seconds", "environment=sandbox,method=GET,route=" + health, 1},
		{"eudr_jobs_finished_total", "kind=polygon_ingestion,outcome=completed", 1},
		{"eudr_jobs_finished_total", "kind=batch_risk_assessment,outcome=completed", 1},
		{"eudr_jobs_finished_total", "kind=shipment_link,outcome=completed", 1},
		{"eudr_job_run_duration_seconds", "kind=polygon_ingestion", 1},
		{"eudr_job_run_duration_seconds", "kind=dds_submission", 1},
		{"eudr_screening_polygons_total", "environment=sandbox,status=COMPLIANT", 2},
		{"eudr_screening_duration_seconds", "", 2},
		{"eudr_webhook_deliveries_total", "environment=sandbox,outcome=delivered", 1},
		{"eudr_webhook_deliveries_total", "environment=sandbox,outcome=dead_lettered", 1},
		{"eudr_webhook_delivery_duration_seconds", "", 2},
		{"eudr_webhook_dlq_entries", "environment=sandbox", 1},
		// Two plots screened and one link anchored, at the least.
		{"eudr_ledger_entries", "environment=sandbox", 3},
		{"eudr_store_commit_duration_seconds", "", 5},
		{"eudr_eu_system_requests_total", "environment=sandbox,operation=submitDds,outcome=ok", 1},
		{"eudr_eu_system_requests_total", "environment=sandbox,operation=getDds,outcome=ok", 1},
		{"eudr_eu_system_request_duration_seconds", "environment=sandbox,operation=submitDds", 1},
	}
	var after scrape
	var lagging []string
	defer func() {
		if t.Failed() && len(lagging) > 0 {
			t.Logf("series that did not move:\n%s", strings.Join(lagging, "\n"))
		}
	}()
	waitUntil(t, 15*time.Second, "the metrics to show the work", func() bool {
		after, lagging = scrapeMetrics(t, addr), nil
		for _, c := range checks {
			if was, now := before.get(c.family, c.labels), after.get(c.family, c.labels); now-was < c.by {
				lagging = append(lagging, fmt.Sprintf("%s{%s}: %v -> %v, want +%v", c.family, c.labels, was, now, c.by))
			}
		}
		return len(lagging) == 0
	})
	if age, ok := after["eudr_ledger_last_checkpoint_age_seconds"][""]; !ok || age < 0 || age > 300 {
		t.Errorf("eudr_ledger_last_checkpoint_age_seconds: %v (present %v), want a few seconds", age, ok)
	}
	if size := after.get("eudr_store_size_bytes", ""); size <= 0 {
		t.Errorf("eudr_store_size_bytes: %v, want the file's size", size)
	}
	if v := after.get("eudr_build_info", "version="+testVersion); v != 1 {
		t.Errorf("eudr_build_info{version=%s}: %v, want 1", testVersion, v)
	}
	for _, state := range []string{"queued", "running"} {
		if _, ok := after["eudr_jobs"]["kind=polygon_ingestion,state="+state]; !ok {
			t.Errorf("eudr_jobs{kind=polygon_ingestion,state=%s} missing", state)
		}
	}

	// Nothing of it on the API listeners (their 404 envelope); no profiler
	// unless asked for.
	for _, url := range []string{p.SandboxURL + "/metrics", p.ProductionURL + "/metrics", p.SandboxURL + "/debug/pprof/"} {
		apitest.WantError(t, apitest.Do(t, "GET", url, nil, nil), http.StatusNotFound, "NOT_FOUND")
	}
	if code := plainGet(t, "http://"+addr+"/debug/pprof/"); code != http.StatusNotFound {
		t.Errorf("GET /debug/pprof/ on the metrics listener without metrics.pprof: %d, want 404", code)
	}
	p.Stop(t)
}

func TestMetrics_PProf(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_METRICS_PPROF=true")
	addr := metricsAddr(t, p)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/goroutine?debug=1"} {
		if code := plainGet(t, "http://"+addr+path); code != http.StatusOK {
			t.Errorf("GET %s with metrics.pprof on: %d, want 200", path, code)
		}
	}
	// Still not on the API listeners.
	apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+"/debug/pprof/", nil, nil), http.StatusNotFound, "NOT_FOUND")
	scrapeMetrics(t, addr)
	p.Stop(t)
}

func TestMetrics_ListenerOffOrTaken(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	t.Run("Off", func(t *testing.T) {
		p := startServer(t, "EUDR_METRICS_LISTEN=")
		for _, l := range p.Logs() {
			if l["message"] == "metrics listener ready" {
				t.Errorf("metrics.listen empty: %v, want no metrics listener", l)
			}
		}
		p.Stop(t)
	})
	t.Run("PortTaken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		res := runCLI(t, tempDataDir(t), []string{"EUDR_METRICS_LISTEN=" + ln.Addr().String()}, "serve")
		want := "listen metrics on " + ln.Addr().String()
		if res.Code == 0 || !strings.Contains(res.Stderr, want) || !strings.Contains(res.Stderr, "address already in use") {
			t.Errorf("serve with the metrics port taken: exit %d, stderr %q; want non-zero and %q", res.Code, res.Stderr, want)
		}
		if strings.Contains(res.Stdout, "listener ready") {
			t.Errorf("serve with the metrics port taken opened listeners: %s", res.Stdout)
		}
	})
}
