package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// runDDSJob files a DDS and follows it. Each run does one call to the EU
// system and records what it learnt in one transaction, with the events
// and ledger entries of any state change; while the statement is still
// being processed the job reschedules itself on the poll schedule, and a
// transient failure (EU system down, too slow, rate limited) is retried
// the same way, recorded on the job as its last attempt (retryDDS). The EU
// system is never called inside a transaction.
func (a *App) runDDSJob(ctx context.Context, t storage.Tenant, job *storage.Job, id []byte) error {
	var d *storage.DDS
	var creds euis.Credentials
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindDDS(t, string(id)); err != nil {
			return fmt.Errorf("dds of job %s: %w", job.ID, err)
		}
		creds, err = a.euCredentials(tx, t)
		return err
	})
	if err != nil {
		return err
	}
	client := a.euClient(t.Env)
	switch {
	case d.Status == storage.DDSRevoked || d.Status == storage.DDSValidated || d.Status == storage.DDSRejected:
		return a.db.Update(ctx, func(tx *storage.Tx) error { return finishDDSJob(tx, t, job, d.Status != storage.DDSRejected) })
	case d.EUUUID == "":
		return a.submitDDS(ctx, t, job, d, client, creds)
	default:
		return a.pollDDS(ctx, t, job, d, client, creds)
	}
}

// finder is the lookup by internal reference both EU clients have.
type finder interface {
	FindByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error)
}

// submitDDS files a statement. Its referenced statements are checked first
// (verifyDeclaration): one that is not EXISTING_USABLE rejects the DDS
// without filing it. A submission whose answer was lost (a crash right
// after sending) is found again by its internal reference rather than sent
// twice.
func (a *App) submitDDS(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.DDS, client euis.Client, creds euis.Credentials) error {
	s, err := fromPayload(d.Statement)
	if err != nil {
		return fmt.Errorf("dds %s statement: %w", d.ID, err)
	}
	var unusable []string
	for _, ref := range s.ReferencedStatements {
		res, err := client.VerifyDeclaration(ctx, creds, ref)
		if euis.IsTransient(err) {
			return a.db.Update(ctx, func(tx *storage.Tx) error { return a.retryDDS(tx, t, job, d, err) })
		}
		if err != nil {
			return fmt.Errorf("verify referenced statement %s: %w", ref.ReferenceNumber, err)
		}
		if res != euis.VerifyExistingUsable {
			unusable = append(unusable, fmt.Sprintf("REFERENCED_STATEMENT_%s: %s", res, ref.ReferenceNumber))
		}
	}
	if len(unusable) > 0 {
		return a.db.Update(ctx, func(tx *storage.Tx) error {
			return a.rejectDDS(tx, t, job, d, unusable, "not filed: a referenced statement cannot be used")
		})
	}
	uuid := ""
	if d.Poll != nil && d.Poll.SubmitAttemptAt != nil {
		if f, ok := client.(finder); ok && s.InternalReference != "" {
			found, err := f.FindByInternalReference(ctx, creds, s.InternalReference)
			if euis.IsTransient(err) {
				return a.db.Update(ctx, func(tx *storage.Tx) error { return a.retryDDS(tx, t, job, d, err) })
			}
			var candidates []string
			for _, st := range found {
				if st.InternalReference == s.InternalReference && (st.Date.IsZero() || !st.Date.Before(d.Poll.SubmitAttemptAt.Add(-time.Minute))) {
					candidates = append(candidates, st.UUID)
				}
			}
			// Adopt a filing only when it is unambiguous: one candidate
			// that no other DDS of the tenant holds (an internal reference
			// a client chose may repeat). Otherwise file again.
			if len(candidates) == 1 {
				err := a.db.View(ctx, func(tx *storage.Tx) error {
					other, err := tx.FindDDSByEUUUID(t, candidates[0])
					if errors.Is(err, storage.ErrNotFound) || (err == nil && other.ID == d.ID) {
						uuid = candidates[0]
						return nil
					}
					return err
				})
				if err != nil {
					return err
				}
			}
		}
	}
	if uuid == "" {
		err = a.db.Update(ctx, func(tx *storage.Tx) error {
			now := tx.Now()
			if d.Poll == nil {
				d.Poll = &storage.DDSPollState{}
			}
			d.Poll.SubmitAttemptAt = &now
			return tx.PutDDS(t, d)
		})
		if err != nil {
			return err
		}
		uuid, err = client.Submit(ctx, creds, s)
	}
	var fault *euis.Fault
	switch {
	case errors.As(err, &fault) && fault.Rejected():
		return a.db.Update(ctx, func(tx *storage.Tx) error {
			return a.rejectDDS(tx, t, job, d, fault.Reasons, "refused on submission: "+fault.Message)
		})
	case euis.IsTransient(err):
		return a.db.Update(ctx, func(tx *storage.Tx) error { return a.retryDDS(tx, t, job, d, err) })
	case err != nil:
		return fmt.Errorf("submit dds %s: %w", d.ID, err)
	}
	return a.db.Update(ctx, func(tx *storage.Tx) error {
		now := tx.Now()
		d.EUUUID, d.SubmittedAt = uuid, &now
		// Status polls start at the schedule's first delay, however many
		// attempts the filing itself took.
		d.Poll.Polls = 0
		if err := a.changeDDSByJob(tx, t, job, d, storage.DDSSubmitted, "accepted by the EU system, uuid "+uuid); err != nil {
			return err
		}
		if _, _, err := a.events.Publish(tx, t, event.DDSSubmitted, event.DDSSubmittedData{DDSID: d.ID, EUUUID: uuid,
			ReferenceNumber: storage.Optional(d.ReferenceNumber)}); err != nil {
			return err
		}
		return a.schedulePoll(tx, t, job, d)
	})
}

func (a *App) pollDDS(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.DDS, client euis.Client, creds euis.Credentials) error {
	statuses, err := client.Get(ctx, creds, []string{d.EUUUID})
	switch {
	case euis.IsTransient(err):
		return a.db.Update(ctx, func(tx *storage.Tx) error { return a.retryDDS(tx, t, job, d, err) })
	case err != nil:
		return fmt.Errorf("status of dds %s: %w", d.ID, err)
	}
	return a.db.Update(ctx, func(tx *storage.Tx) error {
		// Read again: a revocation may have come in since.
		cur, err := tx.FindDDS(t, d.ID)
		if err != nil {
			return err
		}
		if cur.Status == storage.DDSRevoked {
			return finishDDSJob(tx, t, job, true)
		}
		d = cur
		var st *euis.Status
		for i := range statuses {
			if statuses[i].UUID == d.EUUUID {
				st = &statuses[i]
			}
		}
		if st == nil { // not visible yet: eventually consistent
			return a.schedulePoll(tx, t, job, d)
		}
		d.Poll.EUStatus = st.Status
		if st.ReferenceNumber != "" {
			d.ReferenceNumber = st.ReferenceNumber
		}
		switch st.Status {
		case euis.StatusAvailable:
			d.VerificationNumber = st.VerificationNumber
			if err := a.changeDDSByJob(tx, t, job, d, storage.DDSValidated, "available: validated by the EU system"); err != nil {
				return err
			}
			if _, _, err := a.events.Publish(tx, t, event.DDSValidated, event.DDSValidatedData{DDSID: d.ID, ReferenceNumber: d.ReferenceNumber,
				VerificationNumber: d.VerificationNumber}); err != nil {
				return err
			}
			return finishDDSJob(tx, t, job, true)
		case euis.StatusRejected:
			return a.rejectDDS(tx, t, job, d, st.Reasons, "rejected by the EU system")
		case euis.StatusWithdrawn:
			if err := a.changeDDSByJob(tx, t, job, d, storage.DDSRevoked, "withdrawn in the EU system"); err != nil {
				return err
			}
			return finishDDSJob(tx, t, job, true)
		}
		return a.schedulePoll(tx, t, job, d)
	})
}

// rejectDDS records a rejection and fires dds.rejected, completing the job.
func (a *App) rejectDDS(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, reasons []string, note string) error {
	d.Reasons = reasons
	if len(d.Reasons) == 0 {
		d.Reasons = []string{"REJECTED"}
	}
	if err := a.changeDDSByJob(tx, t, job, d, storage.DDSRejected, note); err != nil {
		return err
	}
	if _, _, err := a.events.Publish(tx, t, event.DDSRejected, event.DDSRejectedData{DDSID: d.ID, Reasons: d.Reasons}); err != nil {
		return err
	}
	return finishDDSJob(tx, t, job, false)
}

// changeDDSByJob is changeDDS for a change the EU system made, seen by the
// submission job: the job lists the ledger entry among those it anchored.
func (a *App) changeDDSByJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, status, note string) error {
	if err := a.changeDDS(tx, t, d, status, actorEUSystem, note); err != nil {
		return err
	}
	job.LedgerIndexes = append(job.LedgerIndexes, *d.History[len(d.History)-1].LedgerIndex)
	return nil
}

// finishDDSJob completes the submission job: its one item succeeded when
// the statement was validated (or withdrawn), failed when rejected.
func finishDDSJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, ok bool) error {
	job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
	if !ok {
		job.Progress.Succeeded, job.Progress.Failed = 0, 1
	}
	return work.Complete(tx, t, job)
}

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
		what := oneLine(fault.Message, maxFaultText)
		if what == "" {
			what = "fault code " + fault.Code
		}
		return storage.JobAttempt{Code: apierr.AttemptEUSystemUnavailable,
			Message: fmt.Sprintf("the EU information system answered %s with a server fault (%s)%s", fault.Operation, what, again)}
	case errors.As(err, &he):
		code := apierr.AttemptEUSystemUnavailable
		switch he.StatusCode {
		case http.StatusTooManyRequests:
			code = apierr.AttemptEUSystemRateLimited
		case http.StatusRequestTimeout, http.StatusGatewayTimeout:
			code = apierr.AttemptEUSystemTimeout
		}
		return storage.JobAttempt{Code: code, Message: fmt.Sprintf("the EU information system answered HTTP %d (%s) to %s%s",
			he.StatusCode, http.StatusText(he.StatusCode), he.Operation, again)}
	case errors.As(err, &pe):
		return storage.JobAttempt{Code: apierr.AttemptEUSystemUnreadableAnswer,
			Message: fmt.Sprintf("the EU information system's answer to %s could not be read (%v)%s", pe.Operation, pe.Err, again)}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return storage.JobAttempt{Code: apierr.AttemptEUSystemTimeout, Message: "the EU information system did not answer in time" + again}
	}
	return storage.JobAttempt{Code: apierr.AttemptEUSystemUnreachable,
		Message: fmt.Sprintf("the EU information system could not be reached (%s)%s", unreachableCause(err), again)}
}

// maxFaultText bounds the EU system's fault text in a message (a fault
// can carry a stack trace).
const maxFaultText = 200

// oneLine is s with its runs of white space made one space, cut to limit
// characters as an echo is (cutEcho).
func oneLine(s string, limit int) string {
	return cutEcho(strings.Join(strings.Fields(s), " "), limit)
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
	return work.Retry(tx, t, job, failure, next)
}

// schedulePoll records a poll of d and runs the job again after the next
// delay of the environment's poll schedule.
func (a *App) schedulePoll(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS) error {
	next := tx.Now().Add(a.countPoll(tx, t, d))
	if err := tx.PutDDS(t, d); err != nil {
		return err
	}
	return work.Reschedule(tx, t, job, next)
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
