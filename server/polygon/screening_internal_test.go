package polygon

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

// TestService_ScreenedTwice runs a finished job again from the middle, as
// a worker taking over after a crash between chunks would: the features
// are written to the same polygons, not added, and the job completes
// again with every result.
func TestService_ScreenedTwice(t *testing.T) {
	b := apitest.NewBench(t, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	ix := geo.NewIndex(geo.SandboxLayers()...)
	s := New(Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Index: func(storage.Environment) *geo.Index { return ix }, Rules: geo.DefaultRules(), MaxFeatures: 1000, Now: b.Clock.Now})
	tenant := storage.Tenant{Org: "default", Env: storage.Sandbox}
	feats := make([]string, 2*ChunkSize+50)
	for i := range feats {
		feats[i] = fmt.Sprintf(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[%[1]f,6],[%[2]f,6],[%[2]f,6.001],[%[1]f,6.001],[%[1]f,6]]]},`+
			`"properties":{"commodity":"cocoa","producerCountry":"GH"}}`, 5+float64(i)*0.01, 5.001+float64(i)*0.01)
	}
	body := []byte(`{"type":"FeatureCollection","features":[` + strings.Join(feats, ",") + `]}`)
	sub, err := s.Check(body)
	if err != nil {
		t.Fatal(err)
	}
	var job *storage.Job
	b.Update(t, func(tx *storage.Tx) error {
		job, err = s.Submit(tx, tenant, sub)
		return err
	})
	b.RunJobs(t)
	b.WaitJob(t, tenant, job.ID)

	// Back to where a crash after the first chunk would have left it.
	b.Update(t, func(tx *storage.Tx) error {
		if job, err = tx.FindJob(tenant, job.ID); err != nil {
			return err
		}
		job.Status, job.CompletedAt = storage.JobRunning, nil
		job.Progress = storage.JobProgress{Total: len(feats), Processed: ChunkSize, Succeeded: ChunkSize}
		if err := tx.PutJob(tenant, job); err != nil {
			return err
		}
		return tx.PutJobInput(tenant, job.ID, body)
	})
	if err := s.runJob(context.Background(), tenant, job, body); err != nil {
		t.Fatal(err)
	}
	done := b.Job(t, tenant, job.ID)
	var results [][]byte
	b.Update(t, func(tx *storage.Tx) error {
		raw, err := tx.FindJobResults(tenant, job.ID)
		for _, r := range raw {
			results = append(results, json.RawMessage(r))
		}
		if _, err := tx.FindJobInput(tenant, job.ID); err == nil {
			t.Error("job input kept after completion")
		}
		return err
	})
	if done.Status != storage.JobCompleted || done.Progress.Processed != len(feats) || done.Progress.Succeeded != len(feats) ||
		len(results) != len(feats) {
		t.Errorf("after the rerun: %s, progress %+v, %d results", done.Status, done.Progress, len(results))
	}
	items, more, err := s.List(context.Background(), tenant, storage.PolygonFilter{JobID: job.ID}, storage.Page{Limit: 1000})
	if err != nil || more || len(items) != len(feats) {
		t.Fatalf("polygons of the job: %d (more %v) %v, want %d", len(items), more, err, len(feats))
	}
	for i, p := range items {
		if want := len(feats) - 1 - i; p.FeatureIndex != want || p.ID != storage.PolygonID(job.ID, want) {
			t.Errorf("item %d: feature %d %s", i, p.FeatureIndex, p.ID)
			break
		}
	}
}

// The benchmark's plots and reference layer: 10,000 realistic plots and a
// production index of one deforestation layer of 100,000 polygons over
// their region (see apitest.Plots and apitest.PlotLayer).
var (
	benchPlots10k = sync.OnceValue(func() []byte { return apitest.Plots(10_000) })
	benchIndex    = sync.OnceValue(func() *geo.Index { return geo.NewIndex(apitest.PlotLayer(100_000)) })
)

// BenchmarkScreenChunk screens one job chunk (200 realistic plots, on
// every CPU as a job does) against the 100,000-polygon index: screening,
// evidence and results, not the transaction that records them. Each
// iteration takes the next chunk of the 10,000 plots: -benchtime=50x
// screens each once. The target is at least 2,000 features/s.
func BenchmarkScreenChunk(b *testing.B) {
	ix := benchIndex()
	feats, err := geo.ParseFeatureCollection(benchPlots10k(), geo.ParseOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sc := screening{ix: ix, layers: ix.Layers(), rules: geo.DefaultRules(), appVersion: "bench",
		log: func(index int, cause any) { b.Errorf("feature %d: panic %v", index, cause) }}
	now := time.Now()
	// Every plot is valid and covered, and some overlap the layer.
	var highRisk int
	for _, o := range sc.screenAll(context.Background(), "job_bench", feats[:ChunkSize], now) {
		switch o.polygon.Status {
		case geo.StatusFailed:
			b.Fatalf("feature %d: FAILED %s: %s", o.polygon.FeatureIndex, o.polygon.FailureReason, o.polygon.FailureDetail)
		case geo.StatusHighRisk:
			highRisk++
		}
	}
	if highRisk == 0 {
		b.Fatal("no plot of the first chunk overlaps the layer")
	}
	b.ReportAllocs()
	runtime.GC()
	n := 0
	for b.Loop() {
		start := (n * ChunkSize) % len(feats)
		n++
		out := sc.screenAll(context.Background(), "job_bench", feats[start:start+ChunkSize], now)
		if out[len(out)-1].polygon == nil {
			b.Fatal("chunk not screened")
		}
	}
	b.ReportMetric(float64(ChunkSize*n)/b.Elapsed().Seconds(), "features/s")
}
