package apitest

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Bench is what a workflow package's tests build their service on: a
// store in a temp dir with the queue and ledger buckets, a job queue, an
// event publisher that counts the events it published, the ledger with a
// key of its own, and a fake clock they all read.
type Bench struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Events *event.Publisher
	Ledger *anchor.Ledger
	Clock  *Clock
	// Published counts the events published, each once the transaction
	// that published it has committed (a commit that publishes two counts
	// two).
	Published atomic.Int32
	// Logs has what the job queue logged: the runner's lines and the
	// "job finished" line of every job's end.
	Logs *Logs

	start sync.Once
	stop  func()
}

// NewBench opens a Bench whose clock starts at start; everything is closed
// when the test ends.
func NewBench(tb testing.TB, start time.Time) *Bench {
	tb.Helper()
	dir := tb.TempDir()
	b := &Bench{Clock: NewClock(start), Logs: &Logs{}}
	db, err := storage.Open(dir, storage.Options{Now: b.Clock.Now})
	if err != nil {
		tb.Fatal(err)
	}
	b.DB = db
	err = db.Update(context.Background(), func(tx *storage.Tx) error {
		if err := queue.Init(tx.Tx); err != nil {
			return err
		}
		var err error
		b.Ledger, err = anchor.Open(tx, anchor.Options{KeyFile: filepath.Join(dir, "ledger.key"), KeyName: "bench.test", Logger: zerolog.Nop()})
		return err
	})
	if err != nil {
		db.Close()
		tb.Fatal(err)
	}
	b.Events = event.NewPublisher(func() { b.Published.Add(1) })
	b.Jobs = work.New(work.Options{DB: db, Events: b.Events, Workers: 2, Lease: time.Minute,
		DrainTimeout: time.Minute, Now: b.Clock.Now, Logger: zerolog.New(b.Logs)})
	b.stop = func() {}
	tb.Cleanup(func() {
		b.stop()
		db.Close()
	})
	return b
}

// RunJobs starts the job runner (once); it stops when the test ends.
func (b *Bench) RunJobs(tb testing.TB) {
	b.start.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := b.Jobs.Run(ctx); err != nil {
				tb.Errorf("job runner: %v", err)
			}
		}()
		b.stop = func() { cancel(); <-done }
	})
}

// Job reads the tenant's job.
func (b *Bench) Job(tb testing.TB, t storage.Tenant, id string) *storage.Job {
	tb.Helper()
	var job *storage.Job
	if err := b.DB.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		job, err = tx.FindJob(t, id)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return job
}

// WaitJob waits until the tenant's job is COMPLETED or FAILED and returns
// it. The runner makes progress by itself (it polls), so there is no
// deadline but the test's own.
func (b *Bench) WaitJob(tb testing.TB, t storage.Tenant, id string) *storage.Job {
	tb.Helper()
	for {
		if j := b.Job(tb, t, id); j.Status == storage.JobCompleted || j.Status == storage.JobFailed {
			return j
		}
		b.Jobs.Wake()
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitJobAdvancing waits until done holds for the tenant's job and
// returns the job, moving the clock on by step at each look (the EU
// system's simulators and the poll schedules run on it), and fails the
// test once the clock has moved maxSteps times: a job that never ends is a
// failure, not a hang. A job that waits for its next run (a poll, a retry)
// is RUNNING all the while, so every look moves the clock; give maxSteps
// room for a slow machine, where the clock may move on several times
// before the runner gets to the job. A step of 0 leaves the clock alone,
// maxSteps then bounding the looks. done nil is "COMPLETED or FAILED".
// The runner is started if it is not yet.
func (b *Bench) WaitJobAdvancing(tb testing.TB, t storage.Tenant, id string, step time.Duration, maxSteps int, done func(*storage.Job) bool) *storage.Job {
	tb.Helper()
	if done == nil {
		done = func(j *storage.Job) bool { return j.Status == storage.JobCompleted || j.Status == storage.JobFailed }
	}
	b.RunJobs(tb)
	for steps := 0; ; {
		j := b.Job(tb, t, id)
		if done(j) {
			return j
		}
		if steps == maxSteps {
			tb.Fatalf("job %s is %s after %d looks, the clock moved on by %s at each", id, j.Status, maxSteps, step)
		}
		steps++
		b.Clock.Advance(step)
		b.Jobs.Wake()
		time.Sleep(5 * time.Millisecond)
	}
}

// WaitFinished waits for the "job finished" line of the job and returns
// it: WaitJob sees a job end a moment before its line is written.
func (b *Bench) WaitFinished(tb testing.TB, id string) map[string]any {
	tb.Helper()
	return b.Logs.Wait(tb, "job finished", map[string]any{"job_id": id})
}

// WaitPublished waits until at least n events have been published, and
// returns how many have. A commit's state is visible to readers a moment
// before its after-commit callbacks (which count here) have run, so a test
// that saw a job end waits for its events this way.
func (b *Bench) WaitPublished(tb testing.TB, n int32) int32 {
	tb.Helper()
	for {
		if got := b.Published.Load(); got >= n {
			return got
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Update runs fn in a write transaction and fails the test on error.
func (b *Bench) Update(tb testing.TB, fn func(tx *storage.Tx) error) {
	tb.Helper()
	if err := b.DB.Update(context.Background(), fn); err != nil {
		tb.Fatal(err)
	}
}
