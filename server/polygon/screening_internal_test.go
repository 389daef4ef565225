package polygon

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

// screeningBench is a polygon service on a Bench, and a tenant's job of
// 2 chunks and 50 features, all COMPLIANT, screened to its end.
func screeningBench(t *testing.T) (*apitest.Bench, *Service, storage.Tenant, *storage.Job, []byte) {
	return screeningBenchOf(t, 2*ChunkSize+50)
}

// screeningBenchOf is screeningBench with a job of n features.
func screeningBenchOf(t *testing.T, n int) (*apitest.Bench, *Service, storage.Tenant, *storage.Job, []byte) {
	b := apitest.NewBench(t, time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC))
	ix := geo.NewIndex(geo.SandboxLayers()...)
	s := New(Options{DB: b.DB, Jobs: b.Jobs, Events: b.Events, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Index: func(storage.Environment) *geo.Index { return ix }, Rules: geo.DefaultRules(), MaxFeatures: max(1000, n), Now: b.Clock.Now})
	tenant := storage.Tenant{Org: "default", Env: storage.Sandbox}
	feats := make([]string, n)
	for i := range feats {
		feats[i] = fmt.Sprintf(`{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[%[1]f,6],[%[2]f,6],[%[2]f,6.001],[%[1]f,6.001],[%[1]f,6]]]},`+
			`"properties":{"commodity":"cocoa","producerCountry":"GH"}}`, 5+float64(i)*0.01, 5.001+float64(i)*0.01)
	}
	body := []byte(`{"type":"FeatureCollection","features":[` + strings.Join(feats, ",") + `]}`)
	sub, err := s.Check(body, plotfile.GeoJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	var job *storage.Job
	b.Update(t, func(tx *storage.Tx) error {
		job, err = s.Submit(tx, tenant, sub)
		return err
	})
	b.RunJobs(t)
	return b, s, tenant, b.WaitJob(t, tenant, job.ID), body
}

// checkRerun checks a job run again to its end: every feature's result
// and polygon once, counted once, each result naming a ledger entry.
func checkRerun(t *testing.T, b *apitest.Bench, s *Service, tenant storage.Tenant, job *storage.Job) {
	t.Helper()
	n := job.Progress.Total
	done := b.Job(t, tenant, job.ID)
	want := storage.JobResultCounts{Total: n, ByStatus: map[string]int{geo.StatusCompliant: n}}
	if done.Status != storage.JobCompleted || done.Progress.Processed != n || done.Progress.Succeeded != n ||
		done.ResultCounts == nil || !reflect.DeepEqual(*done.ResultCounts, want) {
		t.Errorf("after the rerun: %s, progress %+v, counts %+v; want %+v", done.Status, done.Progress, done.ResultCounts, want)
	}
	p, err := b.Jobs.Find(context.Background(), tenant, job.ID, n)
	if err != nil || len(p.Results) != n || len(p.Proofs) != n || !reflect.DeepEqual(p.Counts, want) {
		t.Fatalf("after the rerun: %d results, %d proofs, counts %+v, %v; want %d of each", len(p.Results), len(p.Proofs), p.Counts, err, n)
	}
	for i, raw := range p.Results {
		var r Result
		if err := json.Unmarshal(raw, &r); err != nil || r.FeatureIndex != i || p.Proofs[i].Index != r.LedgerIndex {
			t.Fatalf("result %d: %s (proof of entry %d) %v", i, raw, p.Proofs[i].Index, err)
		}
	}
	b.Update(t, func(tx *storage.Tx) error {
		if _, err := tx.FindJobInput(tenant, job.ID); err == nil {
			t.Error("job input kept after completion")
		}
		return nil
	})
	items, _, more, err := s.List(context.Background(), tenant, storage.PolygonFilter{JobID: job.ID}, storage.Page{Limit: n}, false)
	if err != nil || more || len(items) != n {
		t.Fatalf("polygons of the job: %d (more %v) %v, want %d", len(items), more, err, n)
	}
	for i, p := range items {
		if want := n - 1 - i; p.FeatureIndex != want || p.ID != storage.PolygonID(job.ID, want) {
			t.Errorf("item %d: feature %d %s", i, p.FeatureIndex, p.ID)
			break
		}
	}
}

// TestService_ScreenedTwice runs a finished job again from the middle, as
// a worker taking over after a crash between chunks would: the features
// are written to the same polygons and results, not added, and the job
// completes again with every result, each counted once.
func TestService_ScreenedTwice(t *testing.T) {
	b, s, tenant, job, body := screeningBench(t)
	// Back to where a crash after the first chunk would have left it.
	b.Update(t, func(tx *storage.Tx) error {
		job.Status, job.CompletedAt = storage.JobRunning, nil
		job.Progress = storage.JobProgress{Total: job.Progress.Total, Processed: ChunkSize, Succeeded: ChunkSize}
		if err := tx.PutJob(tenant, job); err != nil {
			return err
		}
		return tx.PutJobInput(tenant, job.ID, body)
	})
	if err := s.runJob(context.Background(), tenant, job, body); err != nil {
		t.Fatal(err)
	}
	checkRerun(t, b, s, tenant, job)
}

// TestService_JobOfWindows screens a job of more than a window
// (ScreenWindow), each recorded a chunk at a time, and runs it again from
// the middle of its first window, as after a crash between chunks: every
// result once, in the job's order.
func TestService_JobOfWindows(t *testing.T) {
	b, s, tenant, job, body := screeningBenchOf(t, ScreenWindow+ChunkSize+7)
	checkRerun(t, b, s, tenant, job)
	b.Update(t, func(tx *storage.Tx) error {
		job.Status, job.CompletedAt = storage.JobRunning, nil
		job.Progress = storage.JobProgress{Total: job.Progress.Total, Processed: 3 * ChunkSize, Succeeded: 3 * ChunkSize}
		if err := tx.PutJob(tenant, job); err != nil {
			return err
		}
		return tx.PutJobInput(tenant, job.ID, body)
	})
	if err := s.runJob(context.Background(), tenant, job, body); err != nil {
		t.Fatal(err)
	}
	checkRerun(t, b, s, tenant, job)
}

// TestService_ResumesEarlierLayout resumes a job that an earlier version
// stopped after its first chunk: its results without their ledger entry,
// the entries listed in the job, no counts. This version counts what was
// recorded before it counts its own, and every result reads with its
// entry.
func TestService_ResumesEarlierLayout(t *testing.T) {
	b, s, tenant, job, body := screeningBench(t)
	b.Update(t, func(tx *storage.Tx) error {
		rs, more, err := tx.FindJobResultPage(tenant, job.ID, 0, 1000)
		if err != nil || more {
			return fmt.Errorf("results: more %v, %v", more, err)
		}
		job.LedgerIndexes, job.ResultCounts = nil, nil
		results := tx.Bucket([]byte("tenants")).Bucket([]byte(tenant.Org)).Bucket([]byte(tenant.Env)).Bucket([]byte("job_results"))
		for _, r := range rs {
			key := append(append([]byte(job.ID), 0), byte(r.Item>>24), byte(r.Item>>16), byte(r.Item>>8), byte(r.Item))
			if r.Item >= ChunkSize {
				if err := results.Delete(key); err != nil {
					return err
				}
				continue
			}
			var res Result
			if err := json.Unmarshal(r.Value, &res); err != nil {
				return err
			}
			job.LedgerIndexes = append(job.LedgerIndexes, res.LedgerIndex)
			old, err := json.Marshal(map[string]any{"featureIndex": res.FeatureIndex, "externalId": res.ExternalID,
				"polygonId": res.PolygonID, "eudrStatus": res.EUDRStatus, "failureReason": res.FailureReason})
			if err != nil {
				return err
			}
			if err := results.Put(key, old); err != nil {
				return err
			}
		}
		job.Status, job.CompletedAt = storage.JobRunning, nil
		job.Progress = storage.JobProgress{Total: job.Progress.Total, Processed: ChunkSize, Succeeded: ChunkSize}
		if err := tx.PutJob(tenant, job); err != nil {
			return err
		}
		return tx.PutJobInput(tenant, job.ID, body)
	})
	if rs, err := b.Jobs.Results(context.Background(), tenant, job.ID, storage.Page{Limit: 1000}); err != nil || len(rs.Results) != ChunkSize {
		t.Fatalf("the job as an earlier version left it: %v, %v", rs, err)
	}
	if err := s.runJob(context.Background(), tenant, job, body); err != nil {
		t.Fatal(err)
	}
	checkRerun(t, b, s, tenant, job)
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
