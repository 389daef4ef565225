// Package metrics defines the appliance's Prometheus metrics: one registry
// of its own (not the global default) with the Go and process collectors,
// the counters and histograms of events, which the composition root hands
// to the packages that see them as plain observer functions (so storage,
// queue, the workflows and the EU client never import Prometheus), and a
// collector that reads the facts kept in the store (jobs, queue depth, DLQ,
// ledger, store size) at scrape time, in one read transaction, so they are
// true after a restart too.
//
// Every family starts with eudr_, counters end in _total and durations are
// in seconds. Labels take a bounded set of values: a route is its pattern,
// never a path, and an environment, job kind or outcome one of a fixed
// list. docs/operations.md lists every family.
package metrics

import (
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Unmatched is the route label of a request no route matched, so that
// scans of random paths add one series, not one per path.
const Unmatched = "unmatched"

// Options are what New needs besides the store.
type Options struct {
	Version string
	// Now is the clock ages are measured by; time.Now when nil.
	Now func() time.Time
}

// Metrics holds the registry and the event metrics fed by the observers.
type Metrics struct {
	Registry *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	jobsFinished    *prometheus.CounterVec
	jobDuration     *prometheus.HistogramVec
	deliveries      *prometheus.CounterVec
	deliveryTime    prometheus.Histogram
	screened        *prometheus.CounterVec
	screenDuration  prometheus.Histogram
	commitDuration  prometheus.Histogram
	euCalls         *prometheus.CounterVec
	euDuration      *prometheus.HistogramVec

	now func() time.Time
}

// New makes the registry with the Go and process collectors and every
// event metric. The store's facts join it with WatchStore once the store
// is open.
func New(o Options) *Metrics {
	if o.Now == nil {
		o.Now = time.Now
	}
	m := &Metrics{Registry: prometheus.NewRegistry(), now: o.Now}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	}
	m.requests = counter("eudr_http_requests_total",
		"API requests answered, by listener environment, route pattern, method and status.", "environment", "route", "method", "status")
	m.requestDuration = histogram("eudr_http_request_duration_seconds",
		"Time to answer an API request, by listener environment, route pattern and method.", prometheus.DefBuckets, "environment", "route", "method")
	m.jobsFinished = counter("eudr_jobs_finished_total",
		"Jobs that ended, by kind and outcome (completed, failed).", "kind", "outcome")
	m.jobDuration = histogram("eudr_job_run_duration_seconds",
		"Time a run of a job's handler took, by kind; a job that retries or waits runs more than once.",
		prometheus.ExponentialBuckets(0.01, 4, 10), "kind")
	m.deliveries = counter("eudr_webhook_deliveries_total",
		"Webhook delivery attempts recorded, by environment and outcome (delivered, retry, dead_lettered).", "environment", "outcome")
	m.deliveryTime = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eudr_webhook_delivery_duration_seconds",
		Help: "Time a webhook delivery request took, until the receiver's answer or the failure.", Buckets: prometheus.DefBuckets})
	m.screened = counter("eudr_screening_polygons_total",
		"Plots screened and recorded, by environment and status (COMPLIANT, HIGH_RISK, FAILED).", "environment", "status")
	m.screenDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eudr_screening_duration_seconds",
		Help: "Time judging one plot against the reference layers took.", Buckets: prometheus.ExponentialBuckets(0.0005, 4, 9)})
	m.commitDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "eudr_store_commit_duration_seconds",
		Help:    "Time a write transaction of the store took to commit (written and synced to disk).",
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)})
	m.euCalls = counter("eudr_eu_system_requests_total",
		"Calls to the EU information system, by environment, operation and outcome (ok, rejected, fault, transient, error).",
		"environment", "operation", "outcome")
	m.euDuration = histogram("eudr_eu_system_request_duration_seconds",
		"Time a call to the EU information system took, by environment and operation.",
		[]float64{0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}, "environment", "operation")
	build := prometheus.NewGauge(prometheus.GaugeOpts{Name: "eudr_build_info",
		Help: "Always 1; the version label is the appliance's version.", ConstLabels: prometheus.Labels{"version": o.Version}})
	build.Set(1)
	m.startAtZero()
	m.Registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		build, m.requests, m.requestDuration, m.jobsFinished, m.jobDuration, m.deliveries, m.deliveryTime,
		m.screened, m.screenDuration, m.commitDuration, m.euCalls, m.euDuration)
	return m
}

// startAtZero makes the series of known label values (job kinds,
// environments, outcomes, EU operations) at zero, so that every family is
// in the first scrape and rate() sees the first event too.
func (m *Metrics) startAtZero() {
	for _, kind := range work.Kinds {
		m.jobDuration.WithLabelValues(kind)
		for _, outcome := range []string{work.RunCompleted, work.RunFailed} {
			m.jobsFinished.WithLabelValues(kind, outcome)
		}
	}
	for _, env := range storage.Environments {
		e := string(env)
		for _, outcome := range []string{queue.OutcomeDelivered, queue.OutcomeRetry, queue.OutcomeDeadLettered} {
			m.deliveries.WithLabelValues(e, outcome)
		}
		for _, status := range []string{geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed} {
			m.screened.WithLabelValues(e, status)
		}
		for _, op := range []string{euis.OpSubmit, euis.OpGet, euis.OpWithdraw, euis.OpVerifyDeclaration, euis.OpEcho, euis.OpFindByReference} {
			m.euDuration.WithLabelValues(e, op)
			for _, outcome := range []string{euis.OutcomeOK, euis.OutcomeRejected, euis.OutcomeFault, euis.OutcomeTransient, euis.OutcomeError} {
				m.euCalls.WithLabelValues(e, op, outcome)
			}
		}
	}
}

// statusLabels are the status codes as label values, made once: the
// request path builds no strings.
var statusLabels = func() []string {
	s := make([]string, 600)
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

// methodLabel is method if it is a standard one, and "other" if not: the
// method is the client's to choose, and a label must stay bounded.
func methodLabel(method string) string {
	switch method {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return method
	}
	return "other"
}

// ObserveRequest counts and times one API request. route is the matched
// route's pattern, "" when none matched; status 0 means 200 (nothing was
// written).
func (m *Metrics) ObserveRequest(env storage.Environment, route, method string, status int, took time.Duration) {
	if route == "" {
		route = Unmatched
	}
	if status == 0 {
		status = 200
	}
	label := "other"
	if status > 0 && status < len(statusLabels) {
		label = statusLabels[status]
	}
	method = methodLabel(method)
	m.requests.WithLabelValues(string(env), route, method, label).Inc()
	m.requestDuration.WithLabelValues(string(env), route, method).Observe(took.Seconds())
}

// ObserveJobRun records a run of a job's handler (work.Options.ObserveRun):
// its duration, and the job's end when the run ended it.
func (m *Metrics) ObserveJobRun(kind, outcome string, took time.Duration) {
	m.jobDuration.WithLabelValues(kind).Observe(took.Seconds())
	if outcome == work.RunCompleted || outcome == work.RunFailed {
		m.jobsFinished.WithLabelValues(kind, outcome).Inc()
	}
}

// ObserveDelivery records a webhook delivery attempt
// (queue.DispatcherOptions.Observe); scope is the subscription's tenant.
func (m *Metrics) ObserveDelivery(scope, outcome string, took time.Duration) {
	m.deliveries.WithLabelValues(envLabel(scope), outcome).Inc()
	m.deliveryTime.Observe(took.Seconds())
}

// ObserveScreening records a plot screened (polygon.Options.ObserveScreening).
func (m *Metrics) ObserveScreening(env storage.Environment, status string, took time.Duration) {
	m.screened.WithLabelValues(string(env), status).Inc()
	m.screenDuration.Observe(took.Seconds())
}

// ObserveCommit records a store commit (storage.Options.ObserveCommit).
func (m *Metrics) ObserveCommit(took time.Duration) { m.commitDuration.Observe(took.Seconds()) }

// envLabel is the environment of a tenant's name ("<org>/<environment>",
// the scope of its webhooks and the name of its ledger log), or "unknown".
func envLabel(tenant string) string {
	i := strings.LastIndexByte(tenant, '/')
	if env := storage.Environment(tenant[i+1:]); i > 0 && env.Valid() {
		return string(env)
	}
	return "unknown"
}
