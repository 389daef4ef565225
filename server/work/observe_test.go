package work_test

import (
	"context"
	"errors"
	"maps"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// A queue of its own on the bench's store, with an observer: every run
// is reported with how it left its job.
func TestQueue_ObserveRun(t *testing.T) {
	b := apitest.NewBench(t, start)
	type run struct{ kind, outcome string }
	runs := make(chan run, 8)
	q := work.New(work.Options{DB: b.DB, Events: b.Events, Workers: 2, Lease: time.Minute, DrainTimeout: time.Minute,
		Now: b.Clock.Now, Logger: zerolog.Nop(), ObserveRun: func(kind, outcome string, took time.Duration) {
			if took <= 0 {
				outcome += " (no duration)"
			}
			runs <- run{kind, outcome}
		}})
	update := func(ctx context.Context, fn func(tx *storage.Tx) error) error { return b.DB.Update(ctx, fn) }
	q.Handle("done", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		return update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
	})
	q.Handle("broken", func(context.Context, storage.Tenant, *storage.Job, []byte) error {
		return errors.New("reference layer missing")
	})
	q.Handle("refused", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		return update(ctx, func(tx *storage.Tx) error {
			return q.Fail(tx, tn, job, storage.JobError{Code: "TOO_LATE", Message: "too late"})
		})
	})
	q.Handle("flaky", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
		return update(ctx, func(tx *storage.Tx) error {
			return work.Retry(tx, tn, job, storage.JobAttempt{Code: "DOWN", Message: "down"}, tx.Now().Add(time.Hour))
		})
	})
	b.Update(t, func(tx *storage.Tx) error {
		for _, kind := range []string{"done", "broken", "refused", "flaky"} {
			if _, err := q.Enqueue(tx, tenant, kind, 1, nil); err != nil {
				return err
			}
		}
		return nil
	})
	wantLive(t, b, map[work.KindStatus]int{{"done", storage.JobQueued}: 1, {"broken", storage.JobQueued}: 1,
		{"refused", storage.JobQueued}: 1, {"flaky", storage.JobQueued}: 1})

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		if err := q.Run(ctx); err != nil {
			t.Errorf("Run: %v", err)
		}
	}()
	got := map[string]string{}
	for range 4 {
		r := <-runs
		got[r.kind] = r.outcome
	}
	cancel()
	<-stopped
	want := map[string]string{"done": work.RunCompleted, "broken": work.RunFailed, "refused": work.RunFailed, "flaky": work.RunPending}
	if !maps.Equal(got, want) {
		t.Errorf("observed runs: got %v, want %v", got, want)
	}
	// Only the job waiting to try again is left, RUNNING as the API shows it.
	wantLive(t, b, map[work.KindStatus]int{{"flaky", storage.JobRunning}: 1})
}

func wantLive(t *testing.T, b *apitest.Bench, want map[work.KindStatus]int) {
	t.Helper()
	var got map[work.KindStatus]int
	if err := b.DB.View(context.Background(), func(tx *storage.Tx) (err error) {
		got, err = work.CountLive(tx)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(got, want) {
		t.Errorf("CountLive: got %v, want %v", got, want)
	}
}
