package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// Codes of a failed attempt of the submission job to reach the EU
// information system (lastAttempt.code of the job and of the statement's
// submission): failures that may go away by themselves, after which the
// job tries again (euis.IsTransient).
const (
	// AttemptEUSystemUnavailable: HTTP 5xx, or a SOAP server fault such as
	// InternalSystemException.
	AttemptEUSystemUnavailable = "EU_SYSTEM_UNAVAILABLE"
	// AttemptEUSystemTimeout: no answer within eu_system.timeout, or HTTP
	// 408 or 504 (a relay gave up waiting).
	AttemptEUSystemTimeout = "EU_SYSTEM_TIMEOUT"
	// AttemptEUSystemUnreachable: no connection (refused, reset, host not
	// found), or one closed before the answer.
	AttemptEUSystemUnreachable = "EU_SYSTEM_UNREACHABLE"
	// AttemptEUSystemRateLimited: HTTP 429.
	AttemptEUSystemRateLimited = "EU_SYSTEM_RATE_LIMITED"
	// AttemptEUSystemUnreadableAnswer: a 2xx answer that is not the SOAP
	// answer asked for (a maintenance page, say).
	AttemptEUSystemUnreadableAnswer = "EU_SYSTEM_UNREADABLE_ANSWER"
)

// euAttempt describes a transient failure of a call to the EU system for
// the job's lastAttempt: a code and a message a client can show. The full
// error (addresses, URLs) is only logged.
func euAttempt(err error) storage.JobAttempt {
	var (
		fault *euis.Fault
		he    *euis.HTTPError
		pe    *euis.ProtocolError
		ne    net.Error
	)
	const again = "; trying again"
	switch {
	case errors.As(err, &fault):
		what := fault.Message
		if what == "" {
			what = "fault code " + fault.Code
		}
		return storage.JobAttempt{Code: AttemptEUSystemUnavailable,
			Message: fmt.Sprintf("the EU information system answered %s with a server fault (%s)%s", fault.Operation, what, again)}
	case errors.As(err, &he):
		code := AttemptEUSystemUnavailable
		switch he.StatusCode {
		case http.StatusTooManyRequests:
			code = AttemptEUSystemRateLimited
		case http.StatusRequestTimeout, http.StatusGatewayTimeout:
			code = AttemptEUSystemTimeout
		}
		return storage.JobAttempt{Code: code, Message: fmt.Sprintf("the EU information system answered HTTP %d (%s) to %s%s",
			he.StatusCode, http.StatusText(he.StatusCode), he.Operation, again)}
	case errors.As(err, &pe):
		return storage.JobAttempt{Code: AttemptEUSystemUnreadableAnswer,
			Message: fmt.Sprintf("the EU information system's answer to %s could not be read (%v)%s", pe.Operation, pe.Err, again)}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return storage.JobAttempt{Code: AttemptEUSystemTimeout, Message: "the EU information system did not answer in time" + again}
	}
	return storage.JobAttempt{Code: AttemptEUSystemUnreachable,
		Message: fmt.Sprintf("the EU information system could not be reached (%s)%s", unreachableCause(err), again)}
}

// unreachableCause names why a connection failed, in a few words.
func unreachableCause(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return "its host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection closed before the answer"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	}
	return "network error"
}

// retryDDS records a transient failure of the EU system on the submission
// job and runs the job again after the next delay of the poll schedule, in
// one transaction. The statement is read again: the job's copy may be
// older than a revocation.
func (a *App) retryDDS(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, cause error) error {
	cur, err := tx.FindDDS(t, d.ID)
	if err != nil {
		return err
	}
	failure := euAttempt(cause)
	next := tx.Now().Add(a.countPoll(tx, t, cur))
	a.log.Warn().Err(cause).Str("dds_id", d.ID).Str("job_id", job.ID).Str("code", failure.Code).
		Time("next_attempt_at", next).Msg("EU system unavailable; trying again later")
	if err := tx.PutDDS(t, cur); err != nil {
		return err
	}
	return retryJob(tx, t, job, failure, next)
}

// schedulePoll records a poll of d and runs the job again after the next
// delay of the environment's poll schedule.
func (a *App) schedulePoll(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS) error {
	next := tx.Now().Add(a.countPoll(tx, t, d))
	if err := tx.PutDDS(t, d); err != nil {
		return err
	}
	return rescheduleJob(tx, t, job, next)
}

// countPoll counts a call to the EU system in d's poll state (not written)
// and returns the delay before the next one. Polls and retries share the
// schedule.
func (a *App) countPoll(tx *storage.Tx, t storage.Tenant, d *storage.DDS) time.Duration {
	if d.Poll == nil {
		d.Poll = &storage.DDSPollState{}
	}
	sched := a.pollSchedule(t.Env)
	delay := sched[min(d.Poll.Polls, len(sched)-1)]
	d.Poll.Polls++
	d.Poll.LastPoll = tx.Now()
	return delay
}

// pollSchedule is the delays between polls of the EU system.
func (a *App) pollSchedule(env storage.Environment) []time.Duration {
	if env == storage.Sandbox {
		return a.cfg.EUSystem.SandboxPollSchedule
	}
	return a.cfg.EUSystem.PollSchedule
}

// ddsSubmissionBody is a statement's submission while its job is under way
// or after the job failed: the job's status, retry state and error, as
// GET /jobs/{jobId} shows them.
type ddsSubmissionBody struct {
	JobID  string `json:"jobId"`
	Status string `json:"status"`
	retryBody
	Error *jobErrorBody `json:"error"`
}

// ddsView is d as the API shows it, with its submission.
func ddsView(tx *storage.Tx, t storage.Tenant, d *storage.DDS, withStatement bool) (ddsResponse, error) {
	r := toDDSResponse(d, withStatement)
	var err error
	r.Submission, err = findDDSSubmission(tx, t, d)
	return r, err
}

// findDDSSubmission reads the submission job of d: nil when there is none
// or it has completed (the statement's status and history tell the rest).
func findDDSSubmission(tx *storage.Tx, t storage.Tenant, d *storage.DDS) (*ddsSubmissionBody, error) {
	if d.Poll == nil || d.Poll.JobID == "" {
		return nil, nil
	}
	job, err := tx.FindJob(t, d.Poll.JobID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("submission job of dds %s: %w", d.ID, err)
	}
	if job.Status == storage.JobCompleted {
		return nil, nil
	}
	sub := &ddsSubmissionBody{JobID: job.ID, Status: job.Status, retryBody: toRetryBody(job.Retry)}
	if job.Error != nil {
		sub.Error = &jobErrorBody{Code: job.Error.Code, Message: job.Error.Message}
	}
	return sub, nil
}
