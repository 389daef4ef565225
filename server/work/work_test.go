package work_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}

// harness is a job queue over a temp store, its runner running until the
// test ends.
type harness struct {
	db        *storage.DB
	jobs      *work.Queue
	run       func()
	published atomic.Int32 // commits that published an event
}

func newHarness(tb testing.TB) *harness {
	tb.Helper()
	db, err := storage.Open(tb.TempDir(), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Update(context.Background(), func(tx *storage.Tx) error {
		if err := queue.Init(tx.Tx); err != nil {
			return err
		}
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	h := &harness{db: db}
	h.jobs = work.New(work.Options{DB: db, Events: event.NewPublisher(func() { h.published.Add(1) }), Workers: 2,
		Lease: time.Minute, DrainTimeout: time.Minute, Logger: zerolog.Nop()})
	var once sync.Once
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	h.run = func() {
		once.Do(func() {
			go func() {
				defer close(done)
				if err := h.jobs.Run(ctx); err != nil {
					tb.Errorf("run: %v", err)
				}
			}()
		})
	}
	tb.Cleanup(func() {
		cancel()
		once.Do(func() { close(done) })
		<-done
		db.Close()
	})
	return h
}

func (h *harness) job(tb testing.TB, id string) *storage.Job {
	tb.Helper()
	var job *storage.Job
	if err := h.db.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		job, err = tx.FindJob(tenant, id)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return job
}

// waitStatus waits for the job to reach status; the runner's own poll
// makes progress, so there is no deadline but the test's.
func (h *harness) waitStatus(tb testing.TB, id, status string) *storage.Job {
	tb.Helper()
	for {
		if j := h.job(tb, id); j.Status == status {
			return j
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (h *harness) enqueue(tb testing.TB, kind string, input []byte) *storage.Job {
	tb.Helper()
	var job *storage.Job
	if err := h.db.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		job, err = h.jobs.Enqueue(tx, tenant, kind, 1, input)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return job
}

func TestQueue_EnqueueRunComplete(t *testing.T) {
	h := newHarness(t)
	type seen struct {
		input  string
		status string
		t      storage.Tenant
	}
	got := make(chan seen, 1)
	h.jobs.Handle("echo", func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
		got <- seen{string(input), h.job(t, job.ID).Status, tn}
		return h.db.Update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
	})
	job := h.enqueue(t, "echo", []byte("lnk_1"))
	if job.Status != storage.JobQueued || job.Type != "echo" || job.Progress.Total != 1 {
		t.Errorf("enqueued: %+v, want a QUEUED echo job of 1 item", job)
	}
	h.run()
	if s := <-got; s.input != "lnk_1" || s.status != storage.JobRunning || s.t != tenant {
		t.Errorf("handler saw %+v, want input lnk_1 on a RUNNING job of %v", s, tenant)
	}
	done := h.waitStatus(t, job.ID, storage.JobCompleted)
	if done.StartedAt == nil || done.CompletedAt == nil {
		t.Errorf("completed job without start or end: %+v", done)
	}
	err := h.db.View(context.Background(), func(tx *storage.Tx) error {
		_, err := tx.FindJobInput(tenant, job.ID)
		return err
	})
	if !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("input of a completed job: got %v, want it dropped", err)
	}
}

// A job queued by an earlier version carried its input in the queue
// entry's payload: it still runs with that input.
func TestQueue_InputInOldPayload(t *testing.T) {
	h := newHarness(t)
	got := make(chan string, 1)
	h.jobs.Handle(work.BatchRiskAssessment, func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
		got <- string(input)
		return h.db.Update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
	})
	const id = "job_01JD0000000000000000000000"
	err := h.db.Update(context.Background(), func(tx *storage.Tx) error {
		if err := tx.PutJob(tenant, &storage.Job{ID: id, Type: work.BatchRiskAssessment, Status: storage.JobQueued, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		payload := []byte(`{"org":"default","env":"sandbox","input":{"batchId":"bat_1"}}`)
		return queue.Enqueue(tx.Tx, queue.Job{ID: id, Kind: work.BatchRiskAssessment, Payload: payload, RunAt: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	h.run()
	if in := <-got; in != `{"batchId":"bat_1"}` {
		t.Errorf("input: got %s, want the payload's", in)
	}
	h.waitStatus(t, id, storage.JobCompleted)
}

func TestQueue_HandlerErrorFailsJob(t *testing.T) {
	h := newHarness(t)
	h.jobs.Handle("doomed", func(context.Context, storage.Tenant, *storage.Job, []byte) error {
		return errors.New("reference layer missing")
	})
	job := h.enqueue(t, "doomed", []byte("x"))
	h.run()
	failed := h.waitStatus(t, job.ID, storage.JobFailed)
	if failed.Error == nil || failed.Error.Code != apierr.JobFailed || failed.Error.Message != "reference layer missing" || failed.CompletedAt == nil {
		t.Errorf("failed job: %+v, want JOB_FAILED with the handler's error", failed)
	}
	wantJobFailedEvent(t, h, job.ID, apierr.JobFailed)
}

func TestQueue_Fail(t *testing.T) {
	h := newHarness(t)
	h.jobs.Handle("late", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		return h.db.Update(ctx, func(tx *storage.Tx) error {
			return h.jobs.Fail(tx, tn, job, storage.JobError{Code: apierr.JobLedgerConsensusTimeout, Message: "too late"})
		})
	})
	job := h.enqueue(t, "late", nil)
	h.run()
	failed := h.waitStatus(t, job.ID, storage.JobFailed)
	if failed.Error == nil || failed.Error.Code != apierr.JobLedgerConsensusTimeout {
		t.Errorf("failed job: %+v, want the handler's own code", failed)
	}
	wantJobFailedEvent(t, h, job.ID, apierr.JobLedgerConsensusTimeout)
}

// wantJobFailedEvent checks that job.failed was published once the
// job failed: the publisher woke the dispatcher after that commit. (What
// the event holds is checked end to end by the server's tests.)
func wantJobFailedEvent(t *testing.T, h *harness, jobID, code string) {
	t.Helper()
	if n := h.published.Load(); n != 1 {
		t.Errorf("job %s failed with %s: %d commits published events, want 1 (job.failed)", jobID, code, n)
	}
}

func TestRetry(t *testing.T) {
	h := newHarness(t)
	runs := make(chan int, 3)
	n := 0
	h.jobs.Handle("flaky", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		n++
		runs <- n
		return h.db.Update(ctx, func(tx *storage.Tx) error {
			if n == 1 {
				return work.Retry(tx, tn, job, storage.JobAttempt{Code: "DOWN", Message: "down"}, tx.Now())
			}
			return work.Complete(tx, tn, job)
		})
	})
	job := h.enqueue(t, "flaky", nil)
	h.run()
	<-runs
	<-runs
	done := h.waitStatus(t, job.ID, storage.JobCompleted)
	if done.Retry != nil {
		t.Errorf("completed after a retry: %+v, want no retry state left", done.Retry)
	}
}
