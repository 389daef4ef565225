package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/ratelimit"
	"github.com/eudr/eudr/storage"
)

// benchApp is an appliance on a temp store with one sandbox key and a rate
// limit high enough not to interfere.
func benchApp(b *testing.B) (*App, string) {
	b.Helper()
	cfg, err := config.Load("", []string{
		"EUDR_DATA_DIR=" + b.TempDir(),
		"EUDR_ADMIN_PASSWORD=bench-password",
		"EUDR_RATE_LIMIT_PER_SECOND=1000000000",
		"EUDR_RATE_LIMIT_BURST=1000000000",
	})
	if err != nil {
		b.Fatal(err)
	}
	a, err := New(cfg, Options{Version: "bench", Logger: zerolog.New(io.Discard)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { a.Close() })
	kr, err := account.ParseKeyRequest(defaultOrg, "bench", "sandbox", nil)
	if err != nil {
		b.Fatal(err)
	}
	_, key, err := a.accounts.IssueKey(context.Background(), kr)
	if err != nil {
		b.Fatal(err)
	}
	return a, key
}

func benchGET(b *testing.B, h http.Handler, path, key string) {
	b.Helper()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			if key != "" {
				r.Header.Set("X-API-Key", key)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				b.Fatalf("GET %s: status %d: %s", path, w.Code, w.Body)
			}
		}
	})
}

// BenchmarkHealth_FullChain is GET /health through every middleware: trace
// id, access log (to io.Discard), recovery, key lookup, rate limit, router,
// store status.
func BenchmarkHealth_FullChain(b *testing.B) {
	a, key := benchApp(b)
	benchGET(b, a.Handler(storage.Sandbox), eudrPrefix+"/health", key)
}

// BenchmarkHealth_Bare is the same answer from a bare httprouter handler:
// the floor the full chain is compared with.
func BenchmarkHealth_Bare(b *testing.B) {
	benchGET(b, bareHealthRouter(), eudrPrefix+"/health", "")
}

// BenchmarkSuppliersList_FullChain lists 100 suppliers through the full chain.
func BenchmarkSuppliersList_FullChain(b *testing.B) {
	a, key := benchApp(b)
	t := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	for i := range 100 {
		s := &storage.Supplier{ERPVendorID: "V" + string(rune('A'+i%26)) + time.Duration(i).String(),
			EUOperatorUUID: "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b", Name: "Supplier", Country: "CI", Role: batch.RoleOperator}
		if err := a.db.Update(context.Background(), func(tx *storage.Tx) error { return a.batches.PutSupplier(tx, t, s) }); err != nil {
			b.Fatal(err)
		}
	}
	benchGET(b, a.Handler(storage.Sandbox), eudrPrefix+"/suppliers", key)
}

// bareHealthRouter answers a fixed health body with nothing in between.
func bareHealthRouter() http.Handler {
	rt := httprouter.New()
	body := []byte(`{"status":"ok","environment":"sandbox","version":"bench","uptimeSeconds":1,"store":{"status":"ok","schemaVersion":1,"sizeBytes":65536}}` + "\n")
	rt.GET(eudrPrefix+"/health", func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	return rt
}

func BenchmarkRateLimiter_Take(b *testing.B) {
	rl := ratelimit.New(1e9, 1e9)
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		rl.Take("key_bench", now)
	}
}

// benchPlots10k is a POST /polygons body of 10,000 realistic plots, about
// 25 MB.
var benchPlots10k = sync.OnceValue(func() []byte { return apitest.Plots(10_000) })

// BenchmarkPolygonsCreate10k is POST /polygons of 10,000 realistic plots
// through the full chain: key, rate limit, Idempotency-Key (fingerprint of
// the body), parse and validate the collection, commit the job with its
// input, answer 202. The issue's target is under 1 s per request.
func BenchmarkPolygonsCreate10k(b *testing.B) {
	a, key := benchApp(b)
	h := a.Handler(storage.Sandbox)
	body := benchPlots10k()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	runtime.GC() // not the setup's garbage in the timing
	n := 0
	for b.Loop() {
		n++
		r := httptest.NewRequest(http.MethodPost, eudrPrefix+"/polygons", bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/geo+json")
		r.Header.Set("X-API-Key", key)
		r.Header.Set("Idempotency-Key", fmt.Sprintf("bench-%d", n))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusAccepted || !bytes.Contains(w.Body.Bytes(), []byte(`"featureCount":10000`)) {
			b.Fatalf("POST /polygons: status %d: %.300s", w.Code, w.Body)
		}
	}
	b.ReportMetric(float64(10_000*n)/b.Elapsed().Seconds(), "features/s")
}

// BenchmarkJobsGet10k is GET /jobs/{jobId} of a COMPLETED job of 10,000
// realistic plots through the full chain: the job, its results and the
// proofs of their ledger entries, encoded. It reports the answer's size.
func BenchmarkJobsGet10k(b *testing.B) {
	a, key := benchApp(b)
	h := a.Handler(storage.Sandbox)
	r := httptest.NewRequest(http.MethodPost, eudrPrefix+"/polygons", bytes.NewReader(benchPlots10k()))
	r.Header.Set("Content-Type", "application/geo+json")
	r.Header.Set("X-API-Key", key)
	r.Header.Set("Idempotency-Key", "bench-job")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var acc struct {
		JobID string `json:"jobId"`
	}
	if err := json.Unmarshal(w.Body.Bytes(), &acc); w.Code != http.StatusAccepted || err != nil {
		b.Fatalf("POST /polygons: status %d: %.300s", w.Code, w.Body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.jobs.Run(ctx) }()
	t := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	for {
		var job *storage.Job
		if err := a.db.View(ctx, func(tx *storage.Tx) error {
			var err error
			job, err = tx.FindJob(t, acc.JobID)
			return err
		}); err != nil {
			b.Fatal(err)
		}
		if job.Status == storage.JobCompleted {
			break
		}
		if job.Status == storage.JobFailed {
			b.Fatalf("job %s failed: %+v", job.ID, job.Error)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	runtime.GC()
	var size int
	for b.Loop() {
		r := httptest.NewRequest(http.MethodGet, eudrPrefix+"/jobs/"+acc.JobID, nil)
		r.Header.Set("X-API-Key", key)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			b.Fatalf("GET /jobs/%s: status %d: %.300s", acc.JobID, w.Code, w.Body)
		}
		size = w.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes/answer")
}
