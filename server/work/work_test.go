package work_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}

var start = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

func enqueue(tb testing.TB, b *apitest.Bench, kind string, input []byte) *storage.Job {
	tb.Helper()
	var job *storage.Job
	b.Update(tb, func(tx *storage.Tx) error {
		var err error
		job, err = b.Jobs.Enqueue(tx, tenant, kind, 1, input)
		return err
	})
	return job
}

func TestQueue_EnqueueRunComplete(t *testing.T) {
	b := apitest.NewBench(t, start)
	type seen struct {
		input  string
		status string
		t      storage.Tenant
	}
	got := make(chan seen, 1)
	b.Jobs.Handle("echo", func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
		// The runner's goroutine: read the record without t (no Fatal here).
		var stored *storage.Job
		err := b.DB.View(ctx, func(tx *storage.Tx) error {
			var err error
			stored, err = tx.FindJob(tn, job.ID)
			return err
		})
		if err != nil {
			return err
		}
		got <- seen{string(input), stored.Status, tn}
		return b.DB.Update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
	})
	job := enqueue(t, b, "echo", []byte("lnk_1"))
	if job.Status != storage.JobQueued || job.Type != "echo" || job.Progress.Total != 1 {
		t.Errorf("enqueued: %+v, want a QUEUED echo job of 1 item", job)
	}
	b.RunJobs(t)
	if s := <-got; s.input != "lnk_1" || s.status != storage.JobRunning || s.t != tenant {
		t.Errorf("handler saw %+v, want input lnk_1 on a RUNNING job of %v", s, tenant)
	}
	done := b.WaitJob(t, tenant, job.ID)
	if done.Status != storage.JobCompleted || done.StartedAt == nil || done.CompletedAt == nil {
		t.Errorf("got %+v, want a COMPLETED job with its start and end", done)
	}
	err := b.DB.View(context.Background(), func(tx *storage.Tx) error {
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
	b := apitest.NewBench(t, start)
	got := make(chan string, 1)
	b.Jobs.Handle(work.BatchRiskAssessment, func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
		got <- string(input)
		return b.DB.Update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
	})
	const id = "job_01JD0000000000000000000000"
	err := b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		if err := tx.PutJob(tenant, &storage.Job{ID: id, Type: work.BatchRiskAssessment, Status: storage.JobQueued, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		payload := []byte(`{"org":"default","env":"sandbox","input":{"batchId":"bat_1"}}`)
		return queue.Enqueue(tx.Tx, queue.Job{ID: id, Kind: work.BatchRiskAssessment, Payload: payload, RunAt: tx.Now()})
	})
	if err != nil {
		t.Fatal(err)
	}
	b.RunJobs(t)
	if in := <-got; in != `{"batchId":"bat_1"}` {
		t.Errorf("input: got %s, want the payload's", in)
	}
	if j := b.WaitJob(t, tenant, id); j.Status != storage.JobCompleted {
		t.Errorf("got %s, want COMPLETED", j.Status)
	}
}

func TestQueue_HandlerErrorFailsJob(t *testing.T) {
	b := apitest.NewBench(t, start)
	b.Jobs.Handle("doomed", func(context.Context, storage.Tenant, *storage.Job, []byte) error {
		return errors.New("reference layer missing")
	})
	job := enqueue(t, b, "doomed", []byte("x"))
	b.RunJobs(t)
	failed := b.WaitJob(t, tenant, job.ID)
	if failed.Status != storage.JobFailed || failed.Error == nil || failed.Error.Code != apierr.JobFailed || failed.Error.Message != "reference layer missing" || failed.CompletedAt == nil {
		t.Errorf("failed job: %+v, want JOB_FAILED with the handler's error", failed)
	}
	wantJobFailedEvent(t, b, job.ID, apierr.JobFailed)
}

func TestQueue_Fail(t *testing.T) {
	b := apitest.NewBench(t, start)
	b.Jobs.Handle("late", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		return b.DB.Update(ctx, func(tx *storage.Tx) error {
			return b.Jobs.Fail(tx, tn, job, storage.JobError{Code: apierr.JobLedgerConsensusTimeout, Message: "too late"})
		})
	})
	job := enqueue(t, b, "late", nil)
	b.RunJobs(t)
	failed := b.WaitJob(t, tenant, job.ID)
	if failed.Status != storage.JobFailed || failed.Error == nil || failed.Error.Code != apierr.JobLedgerConsensusTimeout {
		t.Errorf("failed job: %+v, want the handler's own code", failed)
	}
	wantJobFailedEvent(t, b, job.ID, apierr.JobLedgerConsensusTimeout)
}

// wantJobFailedEvent checks that job.failed was published once the
// job failed: the publisher woke the dispatcher after that commit. (What
// the event holds is checked end to end by the server's tests.)
func wantJobFailedEvent(t *testing.T, b *apitest.Bench, jobID, code string) {
	t.Helper()
	if n := b.WaitPublished(t, 1); n != 1 {
		t.Errorf("job %s failed with %s: %d commits published events, want 1 (job.failed)", jobID, code, n)
	}
}

func TestRetry(t *testing.T) {
	b := apitest.NewBench(t, start)
	runs := make(chan int, 3)
	n := 0
	b.Jobs.Handle("flaky", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		n++
		runs <- n
		return b.DB.Update(ctx, func(tx *storage.Tx) error {
			if n == 1 {
				return work.Retry(tx, tn, job, storage.JobAttempt{Code: "DOWN", Message: "down"}, tx.Now())
			}
			return work.Complete(tx, tn, job)
		})
	})
	job := enqueue(t, b, "flaky", nil)
	b.RunJobs(t)
	<-runs
	<-runs
	done := b.WaitJob(t, tenant, job.ID)
	if done.Status != storage.JobCompleted || done.Retry != nil {
		t.Errorf("after a retry: %s with %+v, want COMPLETED with no retry state left", done.Status, done.Retry)
	}
}
