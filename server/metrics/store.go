package metrics

import (
	"context"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// The families the store collector reads at scrape time.
var (
	descJobs = prometheus.NewDesc("eudr_jobs",
		"Jobs not yet ended, by kind and state (queued; running: running now, retrying or waiting on the EU system).",
		[]string{"kind", "state"}, nil)
	descQueueDepth = prometheus.NewDesc("eudr_job_queue_depth",
		"Jobs due to run and not yet taken by a worker.", nil, nil)
	descQueueAge = prometheus.NewDesc("eudr_job_queue_oldest_age_seconds",
		"How long the job due longest has been waiting for a worker; 0 when none is due.", nil, nil)
	descPending = prometheus.NewDesc("eudr_webhook_deliveries_pending",
		"Webhook deliveries not yet done: due, in flight or waiting to be tried again.", nil, nil)
	descDLQ = prometheus.NewDesc("eudr_webhook_dlq_entries",
		"Entries in the webhook dead-letter queue, by environment.", []string{"environment"}, nil)
	descLedger = prometheus.NewDesc("eudr_ledger_entries",
		"Entries in the ledger logs, by environment.", []string{"environment"}, nil)
	descCheckpointAge = prometheus.NewDesc("eudr_ledger_last_checkpoint_age_seconds",
		"Seconds since the newest ledger checkpoint was signed; absent until one is.", nil, nil)
	descStoreSize = prometheus.NewDesc("eudr_store_size_bytes",
		"Size of the store file.", nil, nil)
	storeDescs = []*prometheus.Desc{descJobs, descQueueDepth, descQueueAge, descPending, descDLQ, descLedger,
		descCheckpointAge, descStoreSize}
)

// WatchStore adds the collector of db's facts to the registry.
func (m *Metrics) WatchStore(db *storage.DB) {
	m.Registry.MustRegister(storeCollector{db: db, m: m})
}

// storeCollector reads the facts kept in the store at each scrape, in one
// read transaction: each costs a step per live job, due job, pending
// delivery, DLQ entry or ledger log, never a walk of history.
type storeCollector struct {
	db *storage.DB
	m  *Metrics
}

func (c storeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range storeDescs {
		ch <- d
	}
}

func (c storeCollector) Collect(ch chan<- prometheus.Metric) {
	var out []prometheus.Metric
	err := c.db.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		out, err = c.read(tx)
		return err
	})
	if err != nil {
		// The handler logs it and serves the other families.
		ch <- prometheus.NewInvalidMetric(descStoreSize, err)
		return
	}
	for _, m := range out {
		ch <- m
	}
}

// read makes the store's metrics from tx.
func (c storeCollector) read(tx *storage.Tx) ([]prometheus.Metric, error) {
	now := c.m.now()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) prometheus.Metric {
		return prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	var out []prometheus.Metric

	live, err := work.CountLive(tx)
	if err != nil {
		return nil, err
	}
	// Every kind and state, zeros included, so a series does not vanish
	// when its jobs are done.
	for _, kind := range work.Kinds {
		for _, status := range []string{storage.JobQueued, storage.JobRunning} {
			out = append(out, gauge(descJobs, float64(live[work.KindStatus{Kind: kind, Status: status}]), kind, strings.ToLower(status)))
		}
	}
	depth, oldest := queue.DueJobs(tx.Tx, now)
	age := 0.0
	if depth > 0 {
		age = max(now.Sub(oldest).Seconds(), 0)
	}
	out = append(out, gauge(descQueueDepth, float64(depth)), gauge(descQueueAge, age),
		gauge(descPending, float64(queue.PendingDeliveries(tx.Tx))))

	dlq := map[string]int{}
	for scope, n := range queue.DeadLetters(tx.Tx) {
		dlq[envLabel(scope)] += n
	}
	entries := map[string]int64{}
	logs, err := ledger.Logs(tx.Tx)
	if err != nil {
		return nil, err
	}
	for _, log := range logs {
		n, err := ledger.Size(tx.Tx, log)
		if err != nil {
			return nil, err
		}
		entries[envLabel(log)] += n
	}
	for _, env := range storage.Environments {
		out = append(out, gauge(descDLQ, float64(dlq[string(env)]), string(env)),
			gauge(descLedger, float64(entries[string(env)]), string(env)))
	}
	if at, ok := ledger.LastSigned(tx.Tx); ok {
		out = append(out, gauge(descCheckpointAge, max(now.Sub(at).Seconds(), 0)))
	}
	return append(out, gauge(descStoreSize, float64(tx.Size()))), nil
}
