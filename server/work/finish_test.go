package work_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// wantFields fails t unless line has every field of want (numbers as
// JSON decodes them).
func wantFields(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if line[k] != v {
			t.Errorf("%s: got %v, want %v; line %v", k, line[k], v, line)
		}
	}
}

// Every job's end is logged once, after it is recorded: its IDs, tenant,
// outcome and how long it took from being accepted, with what the
// handler noted about the work.
func TestQueue_FinishLogged(t *testing.T) {
	t.Run("Completed", func(t *testing.T) {
		b := apitest.NewBench(t, start)
		b.Jobs.Handle("echo", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
			work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("thing_id", "thg_1") })
			return b.DB.Update(ctx, func(tx *storage.Tx) error {
				job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
				tx.OnCommit(func() {
					work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("thing_status", "DONE") })
				})
				return work.Complete(tx, tn, job)
			})
		})
		job := enqueue(t, b, "echo", nil)
		b.Clock.Advance(90*time.Second + 250*time.Millisecond) // accepted 90.25 s before it runs
		b.RunJobs(t)
		line := b.WaitFinished(t, job.ID)
		wantFields(t, line, map[string]any{"level": "info", "type": "echo", "org": "default", "environment": "sandbox",
			"status": "COMPLETED", "duration_ms": 90250.0, "items": 1.0, "items_succeeded": 1.0, "items_failed": 0.0,
			"thing_id": "thg_1", "thing_status": "DONE"})
		if _, ok := line["error_code"]; ok {
			t.Errorf("a completed job's line has an error code: %v", line)
		}
	})

	t.Run("HandlerError", func(t *testing.T) {
		b := apitest.NewBench(t, start)
		b.Jobs.Handle("doomed", func(ctx context.Context, _ storage.Tenant, _ *storage.Job, _ []byte) error {
			work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("thing_id", "thg_2") })
			return errors.New("reference layer missing")
		})
		job := enqueue(t, b, "doomed", nil)
		b.RunJobs(t)
		wantFields(t, b.WaitFinished(t, job.ID), map[string]any{"level": "warn", "type": "doomed", "org": "default",
			"environment": "sandbox", "status": "FAILED", "error_code": apierr.JobFailed, "error": "reference layer missing",
			"thing_id": "thg_2", "duration_ms": 0.0})
	})

	t.Run("FailedWithOwnCode", func(t *testing.T) {
		b := apitest.NewBench(t, start)
		b.Jobs.Handle("late", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
			return b.DB.Update(ctx, func(tx *storage.Tx) error {
				return b.Jobs.Fail(tx, tn, job, storage.JobError{Code: apierr.JobLedgerConsensusTimeout, Message: "too late"})
			})
		})
		job := enqueue(t, b, "late", nil)
		b.RunJobs(t)
		wantFields(t, b.WaitFinished(t, job.ID), map[string]any{"level": "warn", "status": "FAILED",
			"error_code": apierr.JobLedgerConsensusTimeout, "error": "too late"})
	})

	// A run that puts the job back in the queue ends nothing: only the
	// run that ends the job is logged.
	t.Run("OnlyTheEnd", func(t *testing.T) {
		b := apitest.NewBench(t, start)
		runs := 0
		b.Jobs.Handle("flaky", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
			runs++
			return b.DB.Update(ctx, func(tx *storage.Tx) error {
				if runs == 1 {
					return work.Retry(tx, tn, job, storage.JobAttempt{Code: "DOWN", Message: "down"}, tx.Now())
				}
				return work.Complete(tx, tn, job)
			})
		})
		job := enqueue(t, b, "flaky", nil)
		b.RunJobs(t)
		b.WaitFinished(t, job.ID)
		if n := len(b.Logs.Find(t, "job finished", map[string]any{"job_id": job.ID})); n != 1 || runs != 2 {
			t.Errorf("%d runs logged %d \"job finished\" lines, want 2 runs and 1 line", runs, n)
		}
	})

	// A panicking handler never returns: the runner fails its job, and
	// the line names the job all the same.
	t.Run("Panic", func(t *testing.T) {
		b := apitest.NewBench(t, start)
		b.Jobs.Handle("panicky", func(context.Context, storage.Tenant, *storage.Job, []byte) error { panic("boom") })
		job := enqueue(t, b, "panicky", nil)
		b.RunJobs(t)
		wantFields(t, b.WaitFinished(t, job.ID), map[string]any{"type": "panicky", "org": "default", "environment": "sandbox",
			"status": "FAILED", "error_code": apierr.JobFailed})
	})
}
