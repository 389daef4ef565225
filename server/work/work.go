// Package work runs the appliance's jobs: it names the job kinds, records a
// job and its queue entry together in the caller's transaction, marks a job
// RUNNING when a worker takes it, hands the handler its input, and records
// how it ended (completed, failed, or waiting to try again) in the
// handler's own transaction. It records each item's result with the job's
// counts by status, and reads a job with one page of its results.
//
// # Job input
//
// A job's input (a polygon request's body, the ID of the link to anchor)
// is stored beside the job record, not in the queue entry, which is
// rewritten on every claim; it is dropped when the job ends. Jobs queued
// by earlier versions carried some inputs in the queue entry's payload
// instead: those still run, with that input.
package work

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// Job kinds: a job's type as GET /jobs/{jobId} shows it.
const (
	PolygonIngestion    = "polygon_ingestion"
	BatchRiskAssessment = "batch_risk_assessment"
	ShipmentLink        = "shipment_link"
	DDSSubmission       = "dds_submission"
	SDSubmission        = "sd_submission"
	ArchiveReport       = "archive_report"
	SandboxTest         = "sandbox_test"
)

// Kinds lists every job kind.
var Kinds = []string{PolygonIngestion, BatchRiskAssessment, ShipmentLink, DDSSubmission, SDSubmission, ArchiveReport, SandboxTest}

// Options configure the job queue.
type Options struct {
	DB     *storage.DB
	Events *event.Publisher // for job.failed
	// Workers is how many jobs run at once; Lease how long a claim lasts
	// without being renewed; DrainTimeout how long running jobs get to
	// finish on shutdown.
	Workers      int
	Lease        time.Duration
	DrainTimeout time.Duration
	Now          func() time.Time // time.Now when nil
	Logger       zerolog.Logger
	// ObserveRun, when set, is told of each run of a job's handler once
	// it has returned: the job's kind, how the run left the job
	// (RunCompleted, RunFailed, RunPending or RunInterrupted) and how
	// long it took.
	ObserveRun func(kind, outcome string, took time.Duration)
}

// How a run of a job's handler left the job, as Options.ObserveRun names it.
const (
	RunCompleted   = "completed"   // the job is COMPLETED
	RunFailed      = "failed"      // the job is FAILED
	RunPending     = "pending"     // back in the queue: retrying, or waiting on something outside
	RunInterrupted = "interrupted" // cut off by shutdown: it runs again at the next start
)

// Queue records jobs and runs them with the handlers registered by kind.
type Queue struct {
	db         *storage.DB
	events     *event.Publisher
	runner     *queue.Runner
	now        func() time.Time
	observeRun func(kind, outcome string, took time.Duration)
	log        zerolog.Logger // the "job finished" lines (finish.go)
}

// Func does a job's work on its input. It records its results and ends
// the job (Complete, Fail, Retry or Reschedule) in its final transaction,
// through the job it was given. An error it returns fails the job for good
// (JOB_FAILED), unless ctx was cancelled: then the job runs again after
// the next start. Note adds what the job worked on to the line its end is
// logged with.
type Func func(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte) error

// New returns a Queue over the store's job buckets, which must exist
// (queue.Init).
func New(o Options) *Queue {
	if o.Now == nil {
		o.Now = time.Now
	}
	q := &Queue{db: o.DB, events: o.Events, now: o.Now, observeRun: o.ObserveRun, log: o.Logger}
	q.runner = queue.NewRunner(queue.RunnerOptions{
		DB:           o.DB.Bolt(),
		Workers:      o.Workers,
		Lease:        o.Lease,
		DrainTimeout: o.DrainTimeout,
		Now:          o.Now,
		Logger:       o.Logger,
		OnFailed:     q.onFailed,
	})
	return q
}

// Run takes and runs due jobs until ctx is done; it returns nil on a clean
// stop.
func (q *Queue) Run(ctx context.Context) error { return q.runner.Run(ctx) }

// payload is what every queue entry carries: whose job it is. Input is
// only in entries queued by earlier versions (see the package comment).
type payload struct {
	Org   string          `json:"org"`
	Env   string          `json:"env"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (p payload) tenant() storage.Tenant {
	return storage.Tenant{Org: p.Org, Env: storage.Environment(p.Env)}
}

// Enqueue records a QUEUED job of the tenant with total items, its input
// (nil for none) and its queue entry, in the caller's transaction: the job
// exists exactly when its work is queued. The runner is woken when the
// transaction commits. It fails only when the store does.
func (q *Queue) Enqueue(tx *storage.Tx, t storage.Tenant, kind string, total int, input []byte) (*storage.Job, error) {
	p, err := json.Marshal(payload{Org: t.Org, Env: string(t.Env)})
	if err != nil {
		return nil, err
	}
	job := &storage.Job{ID: storage.NewID("job", tx.Now()), Type: kind, Status: storage.JobQueued,
		Progress: storage.JobProgress{Total: total}, ResultCounts: storage.NewJobResultCounts(), CreatedAt: tx.Now()}
	if err := tx.PutJob(t, job); err != nil {
		return nil, err
	}
	if input != nil {
		if err := tx.PutJobInput(t, job.ID, input); err != nil {
			return nil, err
		}
	}
	if err := queue.Enqueue(tx.Tx, queue.Job{ID: job.ID, Kind: kind, Payload: p, RunAt: tx.Now()}); err != nil {
		return nil, err
	}
	tx.OnCommit(q.runner.Wake)
	return job, nil
}

// Handle registers fn for a kind: when a worker takes such a job (again,
// after a crash), the job is marked RUNNING and fn runs with its input.
func (q *Queue) Handle(kind string, fn Func) {
	q.runner.Handle(kind, func(ctx context.Context, qj queue.Job) error {
		start := time.Now()
		err := q.run(ctx, qj, fn)
		if q.observeRun != nil {
			q.observeRun(kind, q.outcome(ctx, qj, err), time.Since(start))
		}
		return err
	})
}

// outcome names how a run that returned err left job qj: an error fails
// the job (the runner records it), unless shutdown cut the run off; after
// a run that returned nil the job's record tells.
func (q *Queue) outcome(ctx context.Context, qj queue.Job, err error) string {
	switch {
	case ctx.Err() != nil:
		return RunInterrupted
	case err != nil:
		return RunFailed
	}
	var p payload
	status := storage.JobCompleted // a job deleted meanwhile has ended too
	if json.Unmarshal(qj.Payload, &p) == nil {
		_ = q.db.View(ctx, func(tx *storage.Tx) error {
			if job, err := tx.FindJob(p.tenant(), qj.ID); err == nil {
				status = job.Status
			}
			return nil
		})
	}
	switch status {
	case storage.JobCompleted:
		return RunCompleted
	case storage.JobFailed:
		return RunFailed
	default:
		return RunPending
	}
}

// run marks the job RUNNING and calls fn with its input (call).
func (q *Queue) run(ctx context.Context, qj queue.Job, fn Func) error {
	var p payload
	if err := json.Unmarshal(qj.Payload, &p); err != nil {
		return fmt.Errorf("job %s payload: %w", qj.ID, err)
	}
	t := p.tenant()
	var job *storage.Job
	input := []byte(p.Input)
	err := q.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		if job, err = tx.FindJob(t, qj.ID); err != nil {
			return err
		}
		switch in, err := tx.FindJobInput(t, job.ID); {
		case err == nil:
			input = bytes.Clone(in)
		case !errors.Is(err, storage.ErrNotFound):
			return err
		}
		if job.StartedAt == nil {
			now := tx.Now()
			job.StartedAt = &now
		}
		job.Status = storage.JobRunning
		return tx.PutJob(t, job)
	})
	if err != nil {
		return err
	}
	return q.call(ctx, t, job, input, fn)
}

// Complete marks the job COMPLETED, drops its input and takes it off the
// queue, in the transaction that records its last results. It fails only
// when the store does.
func Complete(tx *storage.Tx, t storage.Tenant, job *storage.Job) error {
	now := tx.Now()
	job.Status = storage.JobCompleted
	job.CompletedAt = &now
	job.Retry = nil
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	if err := tx.DeleteJobInput(t, job.ID); err != nil {
		return err
	}
	return queue.Complete(tx.Tx, job.ID)
}

// Fail records the job FAILED with jerr, drops its input, fires job.failed
// and takes it off the queue, in the caller's transaction: for a handler
// that fails its job with its own error code. It fails only when the store
// does.
func (q *Queue) Fail(tx *storage.Tx, t storage.Tenant, job *storage.Job, jerr storage.JobError) error {
	if err := q.markFailed(tx, t, job, jerr); err != nil {
		return err
	}
	return queue.Complete(tx.Tx, job.ID)
}

// Retry records failure, the outcome of an attempt worth repeating, and
// puts the job back in the queue due at next, in the caller's
// transaction: the job record (which GET /jobs/{jobId} shows) and its
// queue entry change together. The attempt's time is the transaction's.
// It fails only when the store does.
func Retry(tx *storage.Tx, t storage.Tenant, job *storage.Job, failure storage.JobAttempt, next time.Time) error {
	failure.At = tx.Now()
	r := storage.JobRetry{Attempts: 1, LastAttempt: failure, NextAttemptAt: next}
	if job.Retry != nil {
		r.Attempts = job.Retry.Attempts + 1
	}
	job.Retry = &r
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	return queue.Reschedule(tx.Tx, job.ID, next)
}

// Reschedule puts the job back in the queue due at next after an attempt
// that got through but left it waiting on something (a statement the EU
// system is still processing), in the caller's transaction. The attempt
// worked, so the job is no longer retrying. It fails only when the store
// does.
func Reschedule(tx *storage.Tx, t storage.Tenant, job *storage.Job, next time.Time) error {
	job.Retry = nil
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	return queue.Reschedule(tx.Tx, job.ID, next)
}

// onFailed marks a job FAILED after its handler returned an error and
// fires job.failed, in the runner's transaction that takes it off the
// queue. A job deleted meanwhile has nothing to report.
func (q *Queue) onFailed(btx *bolt.Tx, j queue.Job, cause error) error {
	var p payload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return fmt.Errorf("job %s payload: %w", j.ID, err)
	}
	tx := storage.WrapTx(btx, q.now())
	t := p.tenant()
	job, err := tx.FindJob(t, j.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := q.markFailed(tx, t, job, storage.JobError{Code: apierr.JobFailed, Message: cause.Error()}); err != nil {
		return err
	}
	l := q.finishLogger(cause, t, job)
	btx.OnCommit(func() { logFinished(l, job) })
	return nil
}

func (q *Queue) markFailed(tx *storage.Tx, t storage.Tenant, job *storage.Job, jerr storage.JobError) error {
	now := tx.Now()
	job.Status = storage.JobFailed
	job.Error = &jerr
	job.CompletedAt = &now
	job.Retry = nil // the fatal error is the last attempt's outcome
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	if err := tx.DeleteJobInput(t, job.ID); err != nil {
		return err
	}
	_, _, err := q.events.Publish(tx, t, event.JobFailed, event.JobFailedData{JobID: job.ID, Type: job.Type, Error: *job.Error})
	return err
}

// Wake makes the runner look for due jobs now, rather than at its next
// poll: after a job's due time was moved by hand, say.
func (q *Queue) Wake() { q.runner.Wake() }

// KindStatus is a job kind and a job status.
type KindStatus struct{ Kind, Status string }

// CountLive counts the jobs that have not ended, by kind and status as
// GET /jobs/{jobId} shows it (QUEUED, or RUNNING: running now, retrying,
// or waiting on something outside), in the caller's transaction. It reads
// the queue's entries and their job records: a step per queued job, not
// per job ever made.
func CountLive(tx *storage.Tx) (map[KindStatus]int, error) {
	counts := map[KindStatus]int{}
	err := queue.ForEachJob(tx.Tx, func(qj queue.Job) error {
		var p payload
		if json.Unmarshal(qj.Payload, &p) != nil {
			return nil
		}
		job, err := tx.FindJob(p.tenant(), qj.ID)
		if errors.Is(err, storage.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		counts[KindStatus{job.Type, job.Status}]++
		return nil
	})
	return counts, err
}
