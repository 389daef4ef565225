package server

import (
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/storage"
)

// A job whose work fails for a reason that may go away by itself (another
// system down or too slow) does not fail: it records the failed attempt on
// its job record and puts itself back in the queue, in one transaction, so
// that GET /jobs/{jobId} shows what went wrong and when the job tries
// again. To the queue's runner, a handler that returns an error has failed
// for good and one that called queue.Reschedule runs again later: the
// retry state is the job record's, kept here for any job type that
// retries.

// defaultJobRetryAfter is the Retry-After (seconds) of an unfinished job
// that is not waiting to try again.
const defaultJobRetryAfter = 2

// retryJob records failure, the outcome of an attempt of job that is worth
// repeating, and puts the job back in the queue due at next, in the
// caller's transaction: the job record and its queue entry change
// together. The attempt's time is the transaction's.
func retryJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, failure storage.JobAttempt, next time.Time) error {
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

// rescheduleJob puts job back in the queue due at next after an attempt
// that got through but left the job waiting on something (a statement the
// EU system is still processing), in the caller's transaction. The attempt
// worked, so the job is no longer retrying.
func rescheduleJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, next time.Time) error {
	job.Retry = nil
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	return queue.Reschedule(tx.Tx, job.ID, next)
}

// jobRetryAfter is the Retry-After of an unfinished job at now: the seconds
// until its next attempt (1 to 60) while it waits to try again, else
// defaultJobRetryAfter (also once that time has come: the attempt is under
// way).
func jobRetryAfter(j *storage.Job, now time.Time) int {
	if j.Retry == nil {
		return defaultJobRetryAfter
	}
	wait := j.Retry.NextAttemptAt.Sub(now)
	if wait <= 0 {
		return defaultJobRetryAfter
	}
	return int(min((wait+time.Second-1)/time.Second, 60))
}

// retryBody is a job's retry state as the API shows it, in the job and in
// a statement's submission: attempts 0 and nulls while it is not retrying.
type retryBody struct {
	Attempts      int             `json:"attempts"`
	LastAttempt   *jobAttemptBody `json:"lastAttempt"`
	NextAttemptAt *string         `json:"nextAttemptAt"`
}

type jobAttemptBody struct {
	At      string `json:"at"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func toRetryBody(r *storage.JobRetry) retryBody {
	if r == nil {
		return retryBody{}
	}
	next := formatTime(r.NextAttemptAt)
	return retryBody{Attempts: r.Attempts, NextAttemptAt: &next, LastAttempt: &jobAttemptBody{
		At: formatTime(r.LastAttempt.At), Code: r.LastAttempt.Code, Message: r.LastAttempt.Message}}
}
