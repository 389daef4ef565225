package server

import (
	"time"

	"github.com/eudr/eudr/storage"
)

// A job whose work fails for a reason that may go away by itself records
// the failed attempt on its job record (work.Retry); GET /jobs/{jobId}
// shows it, with a Retry-After until the next attempt.

// defaultJobRetryAfter is the Retry-After (seconds) of an unfinished job
// that is not waiting to try again.
const defaultJobRetryAfter = 2

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
	next := storage.FormatTime(r.NextAttemptAt)
	return retryBody{Attempts: r.Attempts, NextAttemptAt: &next, LastAttempt: &jobAttemptBody{
		At: storage.FormatTime(r.LastAttempt.At), Code: r.LastAttempt.Code, Message: r.LastAttempt.Message}}
}
