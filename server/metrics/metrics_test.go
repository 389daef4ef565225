package metrics_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/metrics"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var (
	start   = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	sandbox = storage.Tenant{Org: "default", Env: storage.Sandbox}
	prod    = storage.Tenant{Org: "default", Env: storage.Production}
)

// gathered is a scrape of a registry: family name -> its samples, each
// keyed by its labels written name=value,... in label order.
type gathered map[string]map[string]float64

func gather(t *testing.T, m *metrics.Metrics) gathered {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatalf("Gather: %v", err)
	}
	out := gathered{}
	for _, f := range fams {
		samples := map[string]float64{}
		for _, s := range f.GetMetric() {
			samples[labelKey(s.GetLabel())] = value(s)
		}
		out[f.GetName()] = samples
	}
	return out
}

func labelKey(ls []*dto.LabelPair) string {
	parts := make([]string, len(ls))
	for i, l := range ls {
		parts[i] = l.GetName() + "=" + l.GetValue()
	}
	return strings.Join(parts, ",")
}

// value is a gauge's or counter's value, or a histogram's count.
func value(s *dto.Metric) float64 {
	switch {
	case s.Gauge != nil:
		return s.Gauge.GetValue()
	case s.Counter != nil:
		return s.Counter.GetValue()
	case s.Histogram != nil:
		return float64(s.Histogram.GetSampleCount())
	}
	return 0
}

// want checks one sample.
func (g gathered) want(t *testing.T, family, labels string, want float64) {
	t.Helper()
	samples, ok := g[family]
	if !ok {
		t.Errorf("%s: no such family", family)
		return
	}
	got, ok := samples[labels]
	if !ok {
		keys := slices.Sorted(maps.Keys(samples))
		t.Errorf("%s{%s}: no such sample; have %v", family, labels, keys)
		return
	}
	if got != want {
		t.Errorf("%s{%s}: got %v, want %v", family, labels, got, want)
	}
}

func TestStoreCollector(t *testing.T) {
	b := apitest.NewBench(t, start)
	// Three polygon jobs queued at start, one of them already taken;
	// a shipment job due in an hour.
	var running *storage.Job
	b.Update(t, func(tx *storage.Tx) error {
		for i := range 3 {
			job, err := b.Jobs.Enqueue(tx, sandbox, work.PolygonIngestion, 1, nil)
			if err != nil {
				return err
			}
			if i == 0 {
				running = job
			}
		}
		job, err := b.Jobs.Enqueue(tx, prod, work.ShipmentLink, 1, nil)
		if err != nil {
			return err
		}
		return queue.Reschedule(tx.Tx, job.ID, start.Add(time.Hour))
	})
	b.Update(t, func(tx *storage.Tx) error {
		running.Status = storage.JobRunning
		if err := tx.PutJob(sandbox, running); err != nil {
			return err
		}
		// A claim puts its job off by its lease.
		return queue.Reschedule(tx.Tx, running.ID, start.Add(time.Minute))
	})
	// Two DLQ entries in production, one in the sandbox; one delivery
	// pending.
	b.Update(t, func(tx *storage.Tx) error {
		for i, tn := range []storage.Tenant{prod, prod, sandbox} {
			if err := queue.PutDeadLetter(tx.Tx, tn.String(), &queue.DeadLetter{EventID: fmt.Sprintf("evt_%d", i),
				EventType: "polygon.verified", SubscriptionID: "wh_1", FailedAt: start, Timestamp: start}); err != nil {
				return err
			}
		}
		sub := &queue.Subscription{ID: "wh_1", Scope: sandbox.String(), TargetURL: "https://example.test/hook",
			EventTypes: []string{"polygon.verified"}, Secret: "whsec_x", CreatedAt: start}
		if err := queue.PutSubscription(tx.Tx, sub); err != nil {
			return err
		}
		_, err := queue.Publish(tx.Tx, queue.Event{ID: "evt_p", Scope: sandbox.String(), Type: "polygon.verified",
			Timestamp: start, Data: json.RawMessage(`{}`)})
		return err
	})

	m := metrics.New(metrics.Options{Version: "test", Now: b.Clock.Now})
	m.WatchStore(b.DB)
	b.Clock.Advance(90 * time.Second)
	g := gather(t, m)
	g.want(t, "eudr_jobs", "kind=polygon_ingestion,state=queued", 2)
	g.want(t, "eudr_jobs", "kind=polygon_ingestion,state=running", 1)
	g.want(t, "eudr_jobs", "kind=shipment_link,state=queued", 1)
	g.want(t, "eudr_jobs", "kind=dds_submission,state=queued", 0) // every kind, zeros too
	// Due: the two polygon jobs not taken, and the one whose lease ran out
	// 30 s ago; waiting longest since start.
	g.want(t, "eudr_job_queue_depth", "", 3)
	g.want(t, "eudr_job_queue_oldest_age_seconds", "", 90)
	g.want(t, "eudr_webhook_deliveries_pending", "", 1)
	g.want(t, "eudr_webhook_dlq_entries", "environment=production", 2)
	g.want(t, "eudr_webhook_dlq_entries", "environment=sandbox", 1)
	g.want(t, "eudr_ledger_entries", "environment=sandbox", 0)
	if _, ok := g["eudr_ledger_last_checkpoint_age_seconds"]; ok {
		t.Error("eudr_ledger_last_checkpoint_age_seconds present before any checkpoint, want it absent")
	}
	if size := g["eudr_store_size_bytes"][""]; size <= 0 {
		t.Errorf("eudr_store_size_bytes: got %v, want the file's size", size)
	}

	// Two entries anchored and signed; a minute later the checkpoint is a
	// minute old. The facts are read anew at each scrape.
	b.Update(t, func(tx *storage.Tx) error {
		for i := range 2 {
			if _, err := anchor.Append(tx, sandbox, map[string]any{"type": "test", "n": i}); err != nil {
				return err
			}
		}
		_, err := b.Ledger.Sign(tx, sandbox)
		return err
	})
	b.Clock.Advance(time.Minute)
	g = gather(t, m)
	g.want(t, "eudr_ledger_entries", "environment=sandbox", 2)
	g.want(t, "eudr_ledger_entries", "environment=production", 0)
	g.want(t, "eudr_ledger_last_checkpoint_age_seconds", "", 60)
	g.want(t, "eudr_job_queue_oldest_age_seconds", "", 150)
}

func TestMetrics_Observers(t *testing.T) {
	m := metrics.New(metrics.Options{Version: "1.2.3"})
	m.ObserveRequest(storage.Sandbox, "/api/v1/enterprise/eudr/polygons/:polygonId", "GET", 200, time.Millisecond)
	m.ObserveRequest(storage.Sandbox, "/api/v1/enterprise/eudr/polygons/:polygonId", "GET", 404, time.Millisecond)
	m.ObserveRequest(storage.Production, "", "BREW", 0, time.Millisecond)
	m.ObserveJobRun(work.PolygonIngestion, work.RunCompleted, time.Second)
	m.ObserveJobRun(work.DDSSubmission, work.RunPending, time.Second)
	m.ObserveJobRun(work.DDSSubmission, work.RunFailed, time.Second)
	m.ObserveDelivery("default/sandbox", queue.OutcomeDelivered, 20*time.Millisecond)
	m.ObserveDelivery("default/production", queue.OutcomeDeadLettered, 20*time.Millisecond)
	m.ObserveScreening(storage.Sandbox, "COMPLIANT", time.Millisecond)
	m.ObserveCommit(2 * time.Millisecond)

	g := gather(t, m)
	g.want(t, "eudr_build_info", "version=1.2.3", 1)
	route := "/api/v1/enterprise/eudr/polygons/:polygonId"
	g.want(t, "eudr_http_requests_total", "environment=sandbox,method=GET,route="+route+",status=200", 1)
	g.want(t, "eudr_http_requests_total", "environment=sandbox,method=GET,route="+route+",status=404", 1)
	// No route matched, a method nobody knows, nothing written: bounded labels.
	g.want(t, "eudr_http_requests_total", "environment=production,method=other,route=unmatched,status=200", 1)
	g.want(t, "eudr_http_request_duration_seconds", "environment=sandbox,method=GET,route="+route, 2)
	g.want(t, "eudr_jobs_finished_total", "kind=polygon_ingestion,outcome=completed", 1)
	g.want(t, "eudr_jobs_finished_total", "kind=dds_submission,outcome=failed", 1)
	if _, ok := g["eudr_jobs_finished_total"]["kind=dds_submission,outcome=pending"]; ok {
		t.Error("a run that left its job pending counted as finished")
	}
	g.want(t, "eudr_job_run_duration_seconds", "kind=dds_submission", 2)
	g.want(t, "eudr_webhook_deliveries_total", "environment=sandbox,outcome=delivered", 1)
	g.want(t, "eudr_webhook_deliveries_total", "environment=production,outcome=dead_lettered", 1)
	g.want(t, "eudr_webhook_delivery_duration_seconds", "", 2)
	g.want(t, "eudr_screening_polygons_total", "environment=sandbox,status=COMPLIANT", 1)
	g.want(t, "eudr_screening_duration_seconds", "", 1)
	g.want(t, "eudr_store_commit_duration_seconds", "", 1)
	for _, f := range []string{"go_goroutines", "process_resident_memory_bytes"} {
		if _, ok := g[f]; !ok {
			t.Errorf("%s missing: want the Go and process collectors", f)
		}
	}
}

// fakeEU answers every call with err.
type fakeEU struct{ err error }

func (f fakeEU) Submit(context.Context, euis.Credentials, euis.Statement) (string, error) {
	return "uuid", f.err
}
func (f fakeEU) Get(context.Context, euis.Credentials, []string) ([]euis.Status, error) {
	return nil, f.err
}
func (f fakeEU) Withdraw(context.Context, euis.Credentials, string) error { return f.err }
func (f fakeEU) Amend(context.Context, euis.Credentials, string, euis.Statement) (string, error) {
	return euis.StatusAvailable, f.err
}
func (f fakeEU) VerifyDeclaration(context.Context, euis.Credentials, euis.Reference) (string, error) {
	return euis.VerifyExistingUsable, f.err
}
func (f fakeEU) Echo(context.Context, euis.Credentials, string) (string, error) { return "OK", f.err }
func (f fakeEU) GetByIdentifiers(context.Context, euis.Credentials, euis.Reference) (*euis.Statement, error) {
	return nil, f.err
}

func TestEUClient(t *testing.T) {
	m := metrics.New(metrics.Options{})
	ctx := context.Background()
	var cr euis.Credentials
	for _, tc := range []struct {
		err  error
		call func(c euis.Client) error
	}{
		{nil, func(c euis.Client) error { _, err := c.Submit(ctx, cr, euis.Statement{}); return err }},
		{&euis.Fault{Operation: "submitDds", Kind: euis.FaultBusinessRules}, func(c euis.Client) error {
			_, err := c.Submit(ctx, cr, euis.Statement{})
			return err
		}},
		{&euis.Fault{Operation: "getDds", Kind: euis.FaultServer}, func(c euis.Client) error { _, err := c.Get(ctx, cr, nil); return err }},
		{&euis.HTTPError{Operation: "getDds", StatusCode: 503}, func(c euis.Client) error { _, err := c.Get(ctx, cr, nil); return err }},
		{&euis.Fault{Operation: "withdrawDds", Kind: euis.FaultAuthentication}, func(c euis.Client) error { return c.Withdraw(ctx, cr, "u") }},
		{fmt.Errorf("verify: %w", euis.ErrNotConfigured), func(c euis.Client) error {
			_, err := c.VerifyDeclaration(ctx, cr, euis.Reference{})
			return err
		}},
		{nil, func(c euis.Client) error { _, err := c.Echo(ctx, cr, "q"); return err }},
	} {
		c := m.EUClient(storage.Production, fakeEU{tc.err})
		if err := tc.call(c); !errors.Is(err, tc.err) {
			t.Errorf("wrapped call: got %v, want the client's %v", err, tc.err)
		}
	}
	// A client without the lookup by internal reference finds nothing.
	type finder interface {
		FindByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error)
	}
	if st, err := m.EUClient(storage.Production, fakeEU{}).(finder).FindByInternalReference(ctx, cr, "ref"); st != nil || err != nil {
		t.Errorf("FindByInternalReference on a client without it: got %v, %v; want nothing", st, err)
	}

	g := gather(t, m)
	for labels, n := range map[string]float64{
		"operation=submitDds,outcome=ok":            1,
		"operation=submitDds,outcome=rejected":      1,
		"operation=getDds,outcome=transient":        2,
		"operation=withdrawDds,outcome=fault":       1,
		"operation=verifyDeclaration,outcome=error": 1,
		"operation=testEcho,outcome=ok":             1,
	} {
		g.want(t, "eudr_eu_system_requests_total", "environment=production,"+labels, n)
	}
	g.want(t, "eudr_eu_system_request_duration_seconds", "environment=production,operation=getDds", 2)
}

// fakeSD answers every simplified-declaration call with err.
type fakeSD struct{ err error }

func (f fakeSD) SubmitSD(context.Context, euis.Credentials, euis.SDStatement) (string, error) {
	return "sd", f.err
}
func (f fakeSD) GetSD(context.Context, euis.Credentials, []string) ([]euis.Status, error) {
	return nil, f.err
}
func (f fakeSD) WithdrawSD(context.Context, euis.Credentials, string) (string, error) {
	return euis.StatusWithdrawn, f.err
}
func (f fakeSD) FindSDByInternalReference(context.Context, euis.Credentials, string) ([]euis.Status, error) {
	return nil, f.err
}
func (f fakeSD) UpdateSD(context.Context, euis.Credentials, string, euis.SDStatement) (string, error) {
	return euis.StatusAvailable, f.err
}
func (f fakeSD) GetSDByIdentifiers(context.Context, euis.Credentials, euis.Reference) (*euis.SDStatement, error) {
	return nil, f.err
}

// TestEUSDClient: simplified-declaration calls are counted and timed in
// the EU system's metrics by their own operations.
func TestEUSDClient(t *testing.T) {
	m := metrics.New(metrics.Options{})
	ctx := context.Background()
	var cr euis.Credentials
	c := m.EUSDClient(storage.Sandbox, fakeSD{})
	_, _ = c.SubmitSD(ctx, cr, euis.SDStatement{})
	_, _ = c.GetSD(ctx, cr, nil)
	_, _ = m.EUSDClient(storage.Sandbox, fakeSD{&euis.Fault{Operation: "updateSd", Kind: euis.FaultBusinessRules}}).UpdateSD(ctx, cr, "sd", euis.SDStatement{})
	g := gather(t, m)
	for labels, n := range map[string]float64{
		"operation=submitSd,outcome=ok":       1,
		"operation=getSd,outcome=ok":          1,
		"operation=updateSd,outcome=rejected": 1,
	} {
		g.want(t, "eudr_eu_system_requests_total", "environment=sandbox,"+labels, n)
	}
	g.want(t, "eudr_eu_system_request_duration_seconds", "environment=sandbox,operation=updateSd", 1)
}

// BenchmarkObserveRequest is what the metrics add to every API request.
func BenchmarkObserveRequest(b *testing.B) {
	m := metrics.New(metrics.Options{})
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveRequest(storage.Sandbox, "/api/v1/enterprise/eudr/health", "GET", 200, time.Millisecond)
		}
	})
}
