package queue_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
)

// jobT0 is where the fake clocks of these tests start.
var jobT0 = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// jobWait bounds every wait for something that should happen promptly.
const jobWait = 10 * time.Second

// newJobClock is a fake clock (whClock, shared with the webhook tests) at jobT0.
func newJobClock() *whClock { return &whClock{t: jobT0} }

// mustOpenJobDB opens (creating) the bbolt file at path, runs queue.Init and
// closes the file when the test ends.
func mustOpenJobDB(tb testing.TB, path string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatalf("bolt.Open(%s): %v", path, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	if err := db.Update(queue.Init); err != nil {
		tb.Fatalf("Init: %v", err)
	}
	return db
}

func newJobDB(tb testing.TB) (*bolt.DB, string) {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "jobs.db")
	return mustOpenJobDB(tb, path), path
}

func mustJobUpdate(tb testing.TB, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	tb.Helper()
	if err := db.Update(fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

func mustEnqueue(tb testing.TB, db *bolt.DB, jobs ...queue.Job) {
	tb.Helper()
	mustJobUpdate(tb, db, func(tx *bolt.Tx) error {
		for _, j := range jobs {
			if err := queue.Enqueue(tx, j); err != nil {
				return err
			}
		}
		return nil
	})
}

func pendingJobs(tb testing.TB, db *bolt.DB) int {
	tb.Helper()
	var n int
	if err := db.View(func(tx *bolt.Tx) error { n = queue.Pending(tx); return nil }); err != nil {
		tb.Fatalf("View: %v", err)
	}
	return n
}

// jobDue reads queue.JobDue for id and fails the test on error.
func jobDue(tb testing.TB, db *bolt.DB, id string) (time.Time, int, bool) {
	tb.Helper()
	var (
		due      time.Time
		attempts int
		ok       bool
	)
	if err := db.View(func(tx *bolt.Tx) (err error) {
		due, attempts, ok, err = queue.JobDue(tx, id)
		return err
	}); err != nil {
		tb.Fatalf("JobDue(%s): %v", id, err)
	}
	return due, attempts, ok
}

// recvJob waits for a value from ch.
func recvJob[T any](tb testing.TB, ch <-chan T, what string) T {
	tb.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(jobWait):
		tb.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

// waitForJobs polls cond (1 ms apart) until it holds.
func waitForJobs(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(jobWait)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// testRunner is a queue.Runner running in the background.
type testRunner struct {
	*queue.Runner
	cancel context.CancelFunc
	errc   chan error
	once   sync.Once
	err    error
}

// Stop cancels Run's context and returns what Run returned.
func (tr *testRunner) Stop() error {
	tr.once.Do(func() {
		tr.cancel()
		tr.err = <-tr.errc
	})
	return tr.err
}

// startRunner starts a runner on opts (fake-clock friendly defaults: one
// worker pass per Wake, no polling) with handlers, and stops it when the test
// ends. claimed, if not nil, receives the size of every claim pass.
func startRunner(tb testing.TB, opts queue.RunnerOptions, handlers map[string]queue.Handler, claimed chan<- int) *testRunner {
	tb.Helper()
	if opts.PollInterval == 0 {
		opts.PollInterval = time.Hour
	}
	if opts.DrainTimeout == 0 {
		opts.DrainTimeout = jobWait
	}
	opts.Logger = zerolog.New(zerolog.NewTestWriter(tb))
	r := queue.NewRunner(opts)
	for kind, h := range handlers {
		r.Handle(kind, h)
	}
	if claimed != nil {
		queue.SetClaimHook(r, func(n int) {
			select {
			case claimed <- n:
			default: // the test stopped listening
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	tr := &testRunner{Runner: r, cancel: cancel, errc: make(chan error, 1)}
	go func() { tr.errc <- r.Run(ctx) }()
	tb.Cleanup(func() {
		if err := tr.Stop(); err != nil {
			tb.Errorf("Run: %v", err)
		}
	})
	return tr
}

// failure is one OnFailed call.
type failure struct {
	job           queue.Job
	err           error
	pendingInside int
}

// recordFailures returns an OnFailed that stores a key in bucket "failed"
// (to show it commits with the removal) and reports each call on the
// returned channel.
func recordFailures() (func(tx *bolt.Tx, j queue.Job, err error) error, chan failure) {
	ch := make(chan failure, 16)
	return func(tx *bolt.Tx, j queue.Job, err error) error {
		b, berr := tx.CreateBucketIfNotExists([]byte("failed"))
		if berr != nil {
			return berr
		}
		if berr := b.Put([]byte(j.ID), []byte(err.Error())); berr != nil {
			return berr
		}
		ch <- failure{job: j, err: err, pendingInside: queue.Pending(tx)}
		return nil
	}, ch
}

func TestEnqueue(t *testing.T) {
	t.Run("Durable", func(t *testing.T) {
		db, path := newJobDB(t)
		runAt := jobT0.Add(time.Hour)
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k", Payload: []byte("p"), RunAt: runAt, Attempt: 7})
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		db = mustOpenJobDB(t, path)
		if got := pendingJobs(t, db); got != 1 {
			t.Fatalf("Pending after reopen: got %d, want 1", got)
		}
		due, attempts, ok := jobDue(t, db, "job_1")
		if !ok || !due.Equal(runAt) || attempts != 0 {
			t.Errorf("JobDue(job_1): got %v, %d, %v; want %v, 0, true", due, attempts, ok, runAt)
		}
	})
	t.Run("RolledBack", func(t *testing.T) {
		db, _ := newJobDB(t)
		errAbort := errors.New("abort")
		err := db.Update(func(tx *bolt.Tx) error {
			if err := queue.Enqueue(tx, queue.Job{ID: "job_1", Kind: "k"}); err != nil {
				return err
			}
			return errAbort
		})
		if !errors.Is(err, errAbort) {
			t.Fatalf("Update: got %v, want %v", err, errAbort)
		}
		if got := pendingJobs(t, db); got != 0 {
			t.Errorf("Pending: got %d, want 0", got)
		}
	})
	t.Run("DuplicateID", func(t *testing.T) {
		db, _ := newJobDB(t)
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "a"})
		err := db.Update(func(tx *bolt.Tx) error { return queue.Enqueue(tx, queue.Job{ID: "job_1", Kind: "b"}) })
		if !errors.Is(err, queue.ErrJobExists) {
			t.Fatalf("second Enqueue(job_1): got %v, want ErrJobExists", err)
		}
		if got := pendingJobs(t, db); got != 1 {
			t.Errorf("Pending: got %d, want 1", got)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		db, _ := newJobDB(t)
		for _, j := range []queue.Job{{Kind: "k"}, {ID: "job_1"}} {
			if err := db.Update(func(tx *bolt.Tx) error { return queue.Enqueue(tx, j) }); err == nil {
				t.Errorf("Enqueue(%+v): got nil error, want one", j)
			}
		}
	})
	t.Run("NoInit", func(t *testing.T) {
		db, err := bolt.Open(filepath.Join(t.TempDir(), "bare.db"), 0o600, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.Update(func(tx *bolt.Tx) error { return queue.Enqueue(tx, queue.Job{ID: "job_1", Kind: "k"}) }); err == nil {
			t.Error("Enqueue without Init: got nil error, want one")
		}
	})
}

func TestComplete(t *testing.T) {
	db, _ := newJobDB(t)
	mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k"}, queue.Job{ID: "job_2", Kind: "k"})
	for _, id := range []string{"job_1", "job_1", "job_unknown"} {
		if err := db.Update(func(tx *bolt.Tx) error { return queue.Complete(tx, id) }); err != nil {
			t.Errorf("Complete(%s): %v", id, err)
		}
	}
	if got := pendingJobs(t, db); got != 1 {
		t.Errorf("Pending: got %d, want 1", got)
	}
	var keys int
	if err := db.View(func(tx *bolt.Tx) error { keys = queue.DueKeys(tx); return nil }); err != nil {
		t.Fatal(err)
	}
	if keys != 1 {
		t.Errorf("due index: got %d keys, want 1", keys)
	}
}

func TestRunner_Run(t *testing.T) {
	t.Run("HandlersByKind", func(t *testing.T) {
		db, _ := newJobDB(t)
		clock := newJobClock()
		mustEnqueue(t, db,
			queue.Job{ID: "job_a", Kind: "a", Payload: []byte("pa")},
			queue.Job{ID: "job_b", Kind: "b", Payload: []byte("pb"), RunAt: jobT0})
		gotA, gotB := make(chan queue.Job, 1), make(chan queue.Job, 1)
		tr := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now}, map[string]queue.Handler{
			"a": func(_ context.Context, j queue.Job) error { gotA <- j; return nil },
			"b": func(_ context.Context, j queue.Job) error { gotB <- j; return nil },
		}, nil)
		a, b := recvJob(t, gotA, "handler a"), recvJob(t, gotB, "handler b")
		if a.ID != "job_a" || string(a.Payload) != "pa" || a.Attempt != 0 {
			t.Errorf("handler a: got %+v, want job_a with payload pa, attempt 0", a)
		}
		if b.ID != "job_b" || string(b.Payload) != "pb" || b.Attempt != 0 || !b.RunAt.Equal(jobT0) {
			t.Errorf("handler b: got %+v, want job_b with payload pb, attempt 0, run at %v", b, jobT0)
		}
		if err := tr.Stop(); err != nil {
			t.Fatalf("Run: got %v, want nil", err)
		}
		if got := pendingJobs(t, db); got != 0 {
			t.Errorf("Pending after both ran: got %d, want 0", got)
		}
	})

	t.Run("CompleteInHandler", func(t *testing.T) {
		db, _ := newJobDB(t)
		onFailed, failures := recordFailures()
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k", Payload: []byte("result")})
		ran := make(chan struct{}, 1)
		tr := startRunner(t, queue.RunnerOptions{DB: db, OnFailed: onFailed}, map[string]queue.Handler{
			"k": func(_ context.Context, j queue.Job) error {
				defer func() { ran <- struct{}{} }()
				return db.Update(func(tx *bolt.Tx) error {
					b, err := tx.CreateBucketIfNotExists([]byte("results"))
					if err != nil {
						return err
					}
					if err := b.Put([]byte(j.ID), j.Payload); err != nil {
						return err
					}
					return queue.Complete(tx, j.ID)
				})
			},
		}, nil)
		recvJob(t, ran, "handler")
		if err := tr.Stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := pendingJobs(t, db); got != 0 {
			t.Errorf("Pending: got %d, want 0", got)
		}
		var results map[string]string
		if err := db.View(func(tx *bolt.Tx) error {
			results = map[string]string{}
			return tx.Bucket([]byte("results")).ForEach(func(k, v []byte) error {
				results[string(k)] = string(v)
				return nil
			})
		}); err != nil {
			t.Fatal(err)
		}
		if len(results) != 1 || results["job_1"] != "result" {
			t.Errorf("results: got %v, want exactly job_1=result", results)
		}
		if len(failures) != 0 {
			t.Errorf("OnFailed called %d times, want 0", len(failures))
		}
	})

	t.Run("Error", func(t *testing.T) {
		db, _ := newJobDB(t)
		onFailed, failures := recordFailures()
		errBoom := errors.New("boom")
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k", Payload: []byte("p")})
		tr := startRunner(t, queue.RunnerOptions{DB: db, OnFailed: onFailed}, map[string]queue.Handler{
			"k": func(context.Context, queue.Job) error { return errBoom },
		}, nil)
		f := recvJob(t, failures, "OnFailed")
		if err := tr.Stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if f.job.ID != "job_1" || string(f.job.Payload) != "p" || f.job.Attempt != 0 || !errors.Is(f.err, errBoom) {
			t.Errorf("OnFailed: got %+v, %v; want job_1 (payload p, attempt 0), %v", f.job, f.err, errBoom)
		}
		if f.pendingInside != 0 {
			t.Errorf("Pending inside OnFailed: got %d, want 0 (job removed in the same tx)", f.pendingInside)
		}
		if n := len(failures); n != 0 {
			t.Errorf("OnFailed called %d more times, want once", n)
		}
		if got := pendingJobs(t, db); got != 0 {
			t.Errorf("Pending: got %d, want 0", got)
		}
		if err := db.View(func(tx *bolt.Tx) error {
			if tx.Bucket([]byte("failed")).Get([]byte("job_1")) == nil {
				return errors.New("OnFailed's record not committed")
			}
			return nil
		}); err != nil {
			t.Error(err)
		}
	})

	t.Run("PanicKeepsRunning", func(t *testing.T) {
		db, _ := newJobDB(t)
		onFailed, failures := recordFailures()
		mustEnqueue(t, db, queue.Job{ID: "job_panic", Kind: "panic"})
		ran := make(chan string, 1)
		tr := startRunner(t, queue.RunnerOptions{DB: db, OnFailed: onFailed}, map[string]queue.Handler{
			"panic": func(context.Context, queue.Job) error { panic("handler bug") },
			"ok":    func(_ context.Context, j queue.Job) error { ran <- j.ID; return nil },
		}, nil)
		f := recvJob(t, failures, "OnFailed")
		if f.job.ID != "job_panic" || f.err == nil || !strings.Contains(f.err.Error(), "handler bug") || f.pendingInside != 0 {
			t.Errorf("OnFailed: got %+v, %v, pending %d; want job_panic, an error naming the panic, pending 0", f.job, f.err, f.pendingInside)
		}
		mustEnqueue(t, db, queue.Job{ID: "job_ok", Kind: "ok"})
		tr.Wake()
		if got := recvJob(t, ran, "handler after the panic"); got != "job_ok" {
			t.Errorf("handler ran %s, want job_ok", got)
		}
		if err := tr.Stop(); err != nil {
			t.Fatalf("Run: %v", err)
		}
		if got := pendingJobs(t, db); got != 0 {
			t.Errorf("Pending: got %d, want 0", got)
		}
	})

	t.Run("UnknownKind", func(t *testing.T) {
		db, _ := newJobDB(t)
		onFailed, failures := recordFailures()
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "nobody_handles_this"})
		startRunner(t, queue.RunnerOptions{DB: db, OnFailed: onFailed}, nil, nil)
		f := recvJob(t, failures, "OnFailed")
		if f.job.ID != "job_1" || f.err == nil || !strings.Contains(f.err.Error(), "nobody_handles_this") {
			t.Errorf("OnFailed: got %+v, %v; want job_1 and an error naming the kind", f.job, f.err)
		}
	})

	t.Run("RunAtInFuture", func(t *testing.T) {
		db, _ := newJobDB(t)
		clock := newJobClock()
		mustEnqueue(t, db, queue.Job{ID: "job_later", Kind: "k", RunAt: jobT0.Add(time.Minute)})
		ran := make(chan queue.Job, 1)
		claimed := make(chan int, 16)
		tr := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now}, map[string]queue.Handler{
			"k": func(_ context.Context, j queue.Job) error { ran <- j; return nil },
		}, claimed)
		if n := recvJob(t, claimed, "first claim pass"); n != 0 {
			t.Fatalf("claim pass at %v: got %d jobs, want 0 (job due at +1m)", jobT0, n)
		}
		clock.Add(time.Minute - time.Nanosecond)
		tr.Wake()
		if n := recvJob(t, claimed, "claim pass before RunAt"); n != 0 {
			t.Fatalf("claim pass 1ns before RunAt: got %d jobs, want 0", n)
		}
		clock.Add(time.Nanosecond)
		tr.Wake()
		if j := recvJob(t, ran, "handler at RunAt"); j.ID != "job_later" {
			t.Errorf("ran %s, want job_later", j.ID)
		}
	})

	t.Run("Wake", func(t *testing.T) {
		db, _ := newJobDB(t)
		ran := make(chan string, 1)
		claimed := make(chan int, 16)
		tr := startRunner(t, queue.RunnerOptions{DB: db, PollInterval: time.Hour}, map[string]queue.Handler{
			"k": func(_ context.Context, j queue.Job) error { ran <- j.ID; return nil },
		}, claimed)
		recvJob(t, claimed, "first (empty) claim pass") // only a Wake can find the job now
		mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k"})
		tr.Wake()
		tr.Wake() // coalesces, never blocks
		if got := recvJob(t, ran, "handler after Wake"); got != "job_1" {
			t.Errorf("ran %s, want job_1", got)
		}
	})
}

func TestRunner_Workers(t *testing.T) {
	const workers, jobs = 2, 6
	db, _ := newJobDB(t)
	for i := range jobs {
		mustEnqueue(t, db, queue.Job{ID: "job_" + string(rune('a'+i)), Kind: "k"})
	}
	var cur, peak, total atomic.Int32
	started := make(chan struct{}, jobs)
	release := make(chan struct{})
	releaseAll := sync.OnceFunc(func() { close(release) })
	claimed := make(chan int, 64)
	tr := startRunner(t, queue.RunnerOptions{DB: db, Workers: workers}, map[string]queue.Handler{
		"k": func(context.Context, queue.Job) error {
			n := cur.Add(1)
			defer cur.Add(-1)
			for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
			}
			total.Add(1)
			started <- struct{}{}
			<-release
			return nil
		},
	}, claimed)
	t.Cleanup(releaseAll) // runs before the runner is stopped, even after a Fatal
	for range workers {
		recvJob(t, started, "a worker to start")
	}
	if n := recvJob(t, claimed, "first claim pass"); n != workers {
		t.Errorf("first claim pass: got %d jobs, want %d", n, workers)
	}
	releaseAll()
	for range jobs - workers {
		recvJob(t, started, "the remaining jobs to start")
	}
	if err := tr.Stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	close(claimed)
	for n := range claimed {
		if n > workers {
			t.Errorf("a claim pass took %d jobs, want at most %d", n, workers)
		}
	}
	if p := peak.Load(); p != workers {
		t.Errorf("peak concurrent handlers: got %d, want %d", p, workers)
	}
	if n := total.Load(); n != jobs {
		t.Errorf("handlers run: got %d, want %d", n, jobs)
	}
	if got := pendingJobs(t, db); got != 0 {
		t.Errorf("Pending: got %d, want 0", got)
	}
}

// TestRunner_Crash kills a runner (its store closes under it) while a handler
// runs: after a restart the job is not run again before its lease ends, and
// is run again, with Attempt 1, after.
func TestRunner_Crash(t *testing.T) {
	db, path := newJobDB(t)
	clock := newJobClock()
	const lease = time.Minute
	mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k", Payload: []byte("p")})
	started, unblock := make(chan struct{}, 1), make(chan struct{})
	dead := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now, Lease: lease}, map[string]queue.Handler{
		"k": func(context.Context, queue.Job) error { started <- struct{}{}; <-unblock; return nil },
	}, nil)
	unblockOnce := sync.OnceFunc(func() { close(unblock) })
	t.Cleanup(unblockOnce)
	recvJob(t, started, "first run")
	// kill -9: nothing the old runner does from here on reaches the file.
	if err := db.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	unblockOnce()
	if err := dead.Stop(); err != nil {
		t.Fatalf("Run of the killed runner: %v", err)
	}

	db = mustOpenJobDB(t, path)
	if due, attempts, ok := jobDue(t, db, "job_1"); !ok || !due.Equal(jobT0.Add(lease)) || attempts != 1 {
		t.Fatalf("after restart: got due %v, attempts %d, queued %v; want %v, 1, true", due, attempts, ok, jobT0.Add(lease))
	}
	clock.Add(lease - time.Second)
	ran := make(chan queue.Job, 1)
	claimed := make(chan int, 16)
	tr := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now, Lease: lease}, map[string]queue.Handler{
		"k": func(_ context.Context, j queue.Job) error { ran <- j; return nil },
	}, claimed)
	if n := recvJob(t, claimed, "claim pass within the lease"); n != 0 {
		t.Fatalf("claim pass within the old lease: got %d jobs, want 0", n)
	}
	clock.Add(time.Second)
	tr.Wake()
	j := recvJob(t, ran, "second run")
	if j.ID != "job_1" || j.Attempt != 1 || string(j.Payload) != "p" {
		t.Errorf("second run: got %+v, want job_1, attempt 1, payload p", j)
	}
	if err := tr.Stop(); err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got := pendingJobs(t, db); got != 0 {
		t.Errorf("Pending: got %d, want 0", got)
	}
}

// TestRunner_LeaseRenewal runs a handler for far longer than the lease (on
// the fake clock) while a second runner polls the same file: the second
// runner never gets the job.
func TestRunner_LeaseRenewal(t *testing.T) {
	db, _ := newJobDB(t)
	clock := newJobClock()
	const lease = 30 * time.Millisecond // renewed every 10 ms of real time
	mustEnqueue(t, db, queue.Job{ID: "job_1", Kind: "k"})
	started, finish := make(chan struct{}, 1), make(chan struct{})
	first := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now, Lease: lease}, map[string]queue.Handler{
		"k": func(context.Context, queue.Job) error { started <- struct{}{}; <-finish; return nil },
	}, nil)
	finishOnce := sync.OnceFunc(func() { close(finish) })
	t.Cleanup(finishOnce)
	recvJob(t, started, "first runner's handler")
	clock.Add(time.Hour) // the first lease is long gone
	waitForJobs(t, "the lease to be renewed", func() bool {
		due, _, ok := jobDue(t, db, "job_1")
		return ok && due.After(clock.Now())
	})

	var stolen atomic.Int32
	claimed := make(chan int, 64)
	second := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now, Lease: lease, PollInterval: time.Millisecond},
		map[string]queue.Handler{"k": func(context.Context, queue.Job) error { stolen.Add(1); return nil }}, claimed)
	for i := range 5 {
		if n := recvJob(t, claimed, "second runner's claim pass"); n != 0 {
			t.Fatalf("second runner's claim pass %d: got %d jobs, want 0", i, n)
		}
	}
	if _, attempts, _ := jobDue(t, db, "job_1"); attempts != 1 {
		t.Errorf("claims of job_1: got %d, want 1", attempts)
	}
	finishOnce()
	if err := first.Stop(); err != nil {
		t.Fatalf("first Run: %v", err)
	}
	if err := second.Stop(); err != nil {
		t.Fatalf("second Run: %v", err)
	}
	if n := stolen.Load(); n != 0 {
		t.Errorf("second runner ran the job %d times, want 0", n)
	}
	if got := pendingJobs(t, db); got != 0 {
		t.Errorf("Pending: got %d, want 0", got)
	}
}

// TestRunner_GracefulStop stops a runner with two handlers in flight: one
// finishes within DrainTimeout and completes its job, the other is cancelled
// at the deadline and its job is due again at once.
func TestRunner_GracefulStop(t *testing.T) {
	db, _ := newJobDB(t)
	clock := newJobClock()
	onFailed, failures := recordFailures()
	mustEnqueue(t, db, queue.Job{ID: "job_quick", Kind: "quick"}, queue.Job{ID: "job_stuck", Kind: "stuck"})
	started := make(chan string, 2)
	finish := make(chan struct{})
	quickCtxErr, stuckCtxErr := make(chan error, 1), make(chan error, 1)
	tr := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now, Workers: 2, DrainTimeout: 100 * time.Millisecond, OnFailed: onFailed},
		map[string]queue.Handler{
			"quick": func(ctx context.Context, j queue.Job) error {
				started <- j.ID
				<-finish
				quickCtxErr <- ctx.Err()
				return nil
			},
			"stuck": func(ctx context.Context, j queue.Job) error {
				started <- j.ID
				<-ctx.Done()
				stuckCtxErr <- ctx.Err()
				return ctx.Err()
			},
		}, nil)
	finishOnce := sync.OnceFunc(func() { close(finish) })
	t.Cleanup(finishOnce)
	recvJob(t, started, "a handler")
	recvJob(t, started, "the other handler")
	tr.cancel()
	finishOnce()
	if err := recvJob(t, quickCtxErr, "quick handler"); err != nil {
		t.Errorf("quick handler's ctx right after Run's ctx was cancelled: got %v, want nil", err)
	}
	if err := tr.Stop(); err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}
	if err := recvJob(t, stuckCtxErr, "stuck handler"); !errors.Is(err, context.Canceled) {
		t.Errorf("stuck handler's ctx: got %v, want context.Canceled", err)
	}
	if len(failures) != 0 {
		t.Errorf("OnFailed called %d times, want 0 (a cut-off job is not failed)", len(failures))
	}
	if _, _, ok := jobDue(t, db, "job_quick"); ok {
		t.Error("job_quick still queued, want completed")
	}
	due, attempts, ok := jobDue(t, db, "job_stuck")
	if !ok || due.After(clock.Now()) || attempts != 1 {
		t.Fatalf("job_stuck: got due %v, attempts %d, queued %v; want due by %v, 1, true", due, attempts, ok, clock.Now())
	}

	// The next start resumes it at once.
	resumed := make(chan queue.Job, 1)
	startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now}, map[string]queue.Handler{
		"stuck": func(_ context.Context, j queue.Job) error { resumed <- j; return nil },
	}, nil)
	if j := recvJob(t, resumed, "resumed job"); j.ID != "job_stuck" || j.Attempt != 1 {
		t.Errorf("resumed: got %+v, want job_stuck, attempt 1", j)
	}
}

// TestReschedule: a handler that reschedules its job stays queued, due
// then, and runs again when the time comes; completing it then removes it.
func TestReschedule(t *testing.T) {
	db, _ := newJobDB(t)
	clock := newJobClock()
	mustEnqueue(t, db, queue.Job{ID: "job_poll", Kind: "poll"})
	runs := make(chan int, 4)
	n := 0
	tr := startRunner(t, queue.RunnerOptions{DB: db, Now: clock.Now}, map[string]queue.Handler{
		"poll": func(_ context.Context, j queue.Job) error {
			n++
			runs <- n
			if n == 1 {
				// An hour, not the lease's minute: the wait below must see
				// the reschedule, not the claim's lease.
				return db.Update(func(tx *bolt.Tx) error { return queue.Reschedule(tx, j.ID, clock.Now().Add(time.Hour)) })
			}
			return nil
		},
	}, nil)
	recvJob(t, runs, "first run")
	waitForJobs(t, "the rescheduled job due in an hour", func() bool {
		var due time.Time
		var ok bool
		mustJobUpdate(t, db, func(tx *bolt.Tx) error {
			var err error
			due, _, ok, err = queue.JobDue(tx, "job_poll")
			return err
		})
		return ok && due.Equal(clock.Now().Add(time.Hour))
	})
	clock.Add(time.Hour)
	tr.Wake()
	if got := recvJob(t, runs, "second run"); got != 2 {
		t.Fatalf("run %d", got)
	}
	waitForJobs(t, "the job done", func() bool { return pendingJobs(t, db) == 0 })
	mustJobUpdate(t, db, func(tx *bolt.Tx) error {
		if err := queue.Reschedule(tx, "job_poll", clock.Now()); err == nil {
			t.Error("Reschedule of a job that is not queued: no error")
		}
		return nil
	})
}
