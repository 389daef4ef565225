package work

import (
	"context"
	"errors"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/storage"
)

// The end of every job is logged once, after the transaction that records
// it has committed: one "job finished" line with the job's ID, type,
// organisation and environment, its status (COMPLETED or FAILED, with the
// error code), its items and how long it took from being accepted to its
// end. A handler adds what the job worked on and how that ended (the
// batch and its risk level, the statement and what the EU system
// decided) with Note, so that one line answers "what happened to it".

// Note adds fields to the line the end of the job running under ctx is
// logged with. IDs can be noted as soon as they are known; an outcome is
// best noted once its transaction has committed (tx.OnCommit), so that a
// job that fails after all does not claim it. Outside a job it does
// nothing.
func Note(ctx context.Context, fields func(zerolog.Context) zerolog.Context) {
	zerolog.Ctx(ctx).UpdateContext(fields)
}

// call runs fn on a job that is RUNNING, with a logger for its end in ctx,
// and logs its end when fn ended it. When fn fails, the runner fails the
// job (onFailed): the error carries the logger there, with what fn noted.
func (q *Queue) call(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte, fn Func) error {
	jctx := q.log.With().Str("job_id", job.ID).Str("type", job.Type).Str("org", t.Org).
		Str("environment", string(t.Env)).Logger().WithContext(ctx)
	err := fn(jctx, t, job, input)
	l := zerolog.Ctx(jctx)
	switch {
	case err != nil:
		return &noted{err: err, log: l}
	case job.Status == storage.JobCompleted || job.Status == storage.JobFailed:
		logFinished(l, job) // fn returned after the transaction that ended the job
	}
	return nil
}

// noted is a handler's error with the logger of its job's end. Its text is
// the handler's, which the job's error message shows.
type noted struct {
	err error
	log *zerolog.Logger
}

func (e *noted) Error() string { return e.err.Error() }
func (e *noted) Unwrap() error { return e.err }

// finishLogger is the logger for the end of a job the runner fails with
// cause: the one its handler ran with, or one naming the job when the
// handler never ran (a panic, a job record that could not be read).
func (q *Queue) finishLogger(cause error, t storage.Tenant, job *storage.Job) *zerolog.Logger {
	var n *noted
	if errors.As(cause, &n) {
		return n.log
	}
	l := q.log.With().Str("job_id", job.ID).Str("type", job.Type).Str("org", t.Org).
		Str("environment", string(t.Env)).Logger()
	return &l
}

// logFinished writes the line of a job's end: info when it completed,
// warn when it failed.
func logFinished(l *zerolog.Logger, job *storage.Job) {
	ev := l.Info()
	if job.Status == storage.JobFailed {
		ev = l.Warn()
		if job.Error != nil {
			ev = ev.Str("error_code", job.Error.Code).Str("error", job.Error.Message)
		}
	}
	var took time.Duration
	if job.CompletedAt != nil {
		took = job.CompletedAt.Sub(job.CreatedAt)
	}
	ev.Str("status", job.Status).Float64("duration_ms", milliseconds(took)).
		Int("items", job.Progress.Total).Int("items_succeeded", job.Progress.Succeeded).Int("items_failed", job.Progress.Failed).
		Msg("job finished")
}

// milliseconds is d in milliseconds, to the microsecond.
func milliseconds(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
