package sd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Create records the declaration req (which passed Validate) as a DRAFT by
// actor and queues its filing, an sd_submission job, in the caller's
// transaction, and returns the 202 answer. Production needs EU system credentials
// (422 EU_SYSTEM_NOT_CONFIGURED, nothing written); the sandbox files with
// the simulator. A declaration without internal reference gets one made
// from its ID: the filing is found by it again after a crash.
func (s *Service) Create(tx *storage.Tx, t storage.Tenant, req *Request, actor string) (Accepted, error) {
	if _, err := s.o.Credentials(tx, t); err != nil {
		return Accepted{}, err
	}
	id := storage.NewID("sd", tx.Now())
	if req.InternalReference == "" {
		req.InternalReference = "SD" + id[len(id)-12:]
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return Accepted{}, err
	}
	d := &storage.SD{ID: id, OperatorRole: req.OperatorRole, InternalReference: req.InternalReference, Statement: raw,
		CreatedAt: tx.Now()}
	job, err := s.o.Jobs.Enqueue(tx, t, work.SDSubmission, 1, []byte(d.ID))
	if err != nil {
		return Accepted{}, err
	}
	d.Poll = &storage.DDSPollState{JobID: job.ID}
	if err := s.record(tx, t, d, storage.SDDraft, actor, "recorded; filing queued as job "+job.ID); err != nil {
		return Accepted{}, err
	}
	return Accepted{SDID: d.ID, JobID: job.ID}, nil
}

// runSubmission files a declaration and follows it, as the DDS workflow's
// job does a statement: each run makes one call to the EU system and
// records what it learnt in one transaction; while the declaration is
// being processed, or the EU system fails in a way that may go away, the
// job runs again on the poll schedule.
func (s *Service) runSubmission(ctx context.Context, t storage.Tenant, job *storage.Job, id []byte) error {
	work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("sd_id", string(id)) })
	var d *storage.SD
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindSD(t, string(id)); err != nil {
			return fmt.Errorf("sd of job %s: %w", job.ID, err)
		}
		creds, err = s.o.Credentials(tx, t)
		return err
	})
	if err != nil {
		return err
	}
	client := s.o.Clients[t.Env]
	switch {
	case d.Status == storage.SDWithdrawn || d.Status == storage.SDValidated || d.Status == storage.SDRejected:
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return finish(ctx, tx, t, job, d) })
	case d.SDIdentifier == "":
		return s.file(ctx, t, job, d, client, creds)
	default:
		return s.poll(ctx, t, job, d, client, creds)
	}
}

// file files the declaration. A filing whose answer was lost (a crash
// right after sending) is found again by its internal reference rather
// than sent twice.
func (s *Service) file(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.SD, client euis.SDClient, creds euis.Credentials) error {
	st, err := statementOf(d.Statement)
	if err != nil {
		return fmt.Errorf("sd %s: %w", d.ID, err)
	}
	sdID := ""
	if d.Poll != nil && d.Poll.SubmitAttemptAt != nil {
		if sdID, err = s.findFiled(ctx, t, d, client, creds); euis.IsTransient(err) {
			return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
		} else if err != nil {
			return err
		}
	}
	if sdID == "" {
		err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
			now := tx.Now()
			if d.Poll == nil {
				d.Poll = &storage.DDSPollState{JobID: job.ID}
			}
			d.Poll.SubmitAttemptAt = &now
			return tx.PutSD(t, d)
		})
		if err != nil {
			return err
		}
		sdID, err = client.SubmitSD(ctx, creds, st)
	}
	var fault *euis.Fault
	switch {
	case errors.As(err, &fault) && fault.Rejected():
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
			return s.reject(ctx, tx, t, job, d, fault.Reasons, "refused on submission: "+fault.Message)
		})
	case euis.IsTransient(err):
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
	case err != nil:
		return fmt.Errorf("submit sd %s: %w", d.ID, err)
	}
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		now := tx.Now()
		d.SDIdentifier, d.SubmittedAt = sdID, &now
		d.Poll.Polls = 0
		if err := s.recordByJob(tx, t, job, d, storage.SDSubmitted, "accepted by the EU system, sdIdentifier "+sdID); err != nil {
			return err
		}
		return s.schedulePoll(tx, t, job, d)
	})
}

// findFiled looks for the filing of an earlier attempt whose answer was
// lost and returns its sdIdentifier, or "" when there is none to adopt:
// exactly one declaration under the internal reference, made since that
// attempt, that no other declaration of the tenant holds.
func (s *Service) findFiled(ctx context.Context, t storage.Tenant, d *storage.SD, client euis.SDClient, creds euis.Credentials) (string, error) {
	found, err := client.FindSDByInternalReference(ctx, creds, d.InternalReference)
	if err != nil {
		// Not knowing whether the earlier attempt was filed is no
		// reason to file again: a transient failure is retried, any
		// other fails the job, the declaration still a DRAFT.
		return "", fmt.Errorf("look for an earlier filing of sd %s by its internal reference: %w", d.ID, err)
	}
	var candidates []string
	for _, fs := range found {
		if fs.InternalReference == d.InternalReference && (fs.Date.IsZero() || !fs.Date.Before(d.Poll.SubmitAttemptAt.Add(-time.Minute))) {
			candidates = append(candidates, fs.UUID)
		}
	}
	if len(candidates) != 1 {
		return "", nil
	}
	adopt := ""
	err = s.o.DB.View(ctx, func(tx *storage.Tx) error {
		other, err := tx.FindSD(t, candidates[0])
		if errors.Is(err, storage.ErrNotFound) || (err == nil && other.ID == d.ID) {
			adopt = candidates[0]
			return nil
		}
		return err
	})
	return adopt, err
}

// poll asks the EU system for the declaration's status and records its
// decision: VALIDATED (AVAILABLE there), REJECTED or WITHDRAWN, each
// completing the job; otherwise the job polls again.
func (s *Service) poll(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.SD, client euis.SDClient, creds euis.Credentials) error {
	statuses, err := client.GetSD(ctx, creds, []string{d.SDIdentifier})
	switch {
	case euis.IsTransient(err):
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
	case err != nil:
		return fmt.Errorf("status of sd %s: %w", d.ID, err)
	}
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		cur, err := tx.FindSD(t, d.ID) // a withdrawal may have come in since
		if err != nil {
			return err
		}
		if cur.Status == storage.SDWithdrawn {
			return finish(ctx, tx, t, job, cur)
		}
		d = cur
		var st *euis.Status
		for i := range statuses {
			if statuses[i].UUID == d.SDIdentifier {
				st = &statuses[i]
			}
		}
		if st == nil { // not visible yet
			return s.schedulePoll(tx, t, job, d)
		}
		d.Poll.EUStatus = st.Status
		switch st.Status {
		case euis.StatusAvailable:
			d.ReferenceNumber, d.VerificationNumber = st.ReferenceNumber, st.VerificationNumber
			if err := s.recordByJob(tx, t, job, d, storage.SDValidated, "available: validated by the EU system"); err != nil {
				return err
			}
			return finish(ctx, tx, t, job, d)
		case euis.StatusRejected:
			return s.reject(ctx, tx, t, job, d, st.Reasons, "rejected by the EU system")
		case euis.StatusWithdrawn:
			if err := s.recordByJob(tx, t, job, d, storage.SDWithdrawn, "withdrawn in the EU system"); err != nil {
				return err
			}
			return finish(ctx, tx, t, job, d)
		}
		return s.schedulePoll(tx, t, job, d)
	})
}

// reject records a rejection, completing the job with its item failed.
func (s *Service) reject(ctx context.Context, tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.SD, reasons []string, note string) error {
	d.Reasons = reasons
	if len(d.Reasons) == 0 {
		d.Reasons = []string{"REJECTED"}
	}
	if err := s.recordByJob(tx, t, job, d, storage.SDRejected, note); err != nil {
		return err
	}
	return finish(ctx, tx, t, job, d)
}

// recordByJob is record by the EU system's actor, the ledger entry listed
// on the job.
func (s *Service) recordByJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.SD, status, note string) error {
	if err := s.record(tx, t, d, status, ActorEUSystem, note); err != nil {
		return err
	}
	job.LedgerIndexes = append(job.LedgerIndexes, *d.History[len(d.History)-1].LedgerIndex)
	return nil
}

// finish completes the job of a decided declaration: its item succeeded
// unless the declaration was rejected.
func finish(ctx context.Context, tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.SD) error {
	job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
	if d.Status == storage.SDRejected {
		job.Progress.Succeeded, job.Progress.Failed = 0, 1
	}
	tx.OnCommit(func() {
		work.Note(ctx, func(c zerolog.Context) zerolog.Context {
			c = c.Str("sd_status", d.Status)
			if d.ReferenceNumber != "" {
				c = c.Str("reference_number", d.ReferenceNumber)
			}
			return c
		})
	})
	return work.Complete(tx, t, job)
}

// retry records a transient failure on the job and runs it again after
// the schedule's next delay.
func (s *Service) retry(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.SD, cause error) error {
	cur, err := tx.FindSD(t, d.ID)
	if err != nil {
		return err
	}
	failure := s.o.AttemptOf(cause)
	next := tx.Now().Add(s.countPoll(tx, t, cur))
	s.o.Logger.Warn().Err(cause).Str("sd_id", d.ID).Str("job_id", job.ID).Str("code", failure.Code).
		Time("next_attempt_at", next).Msg("EU system unavailable; trying again later")
	if err := tx.PutSD(t, cur); err != nil {
		return err
	}
	return work.Retry(tx, t, job, failure, next)
}

// schedulePoll records a poll and runs the job again after the next delay.
func (s *Service) schedulePoll(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.SD) error {
	next := tx.Now().Add(s.countPoll(tx, t, d))
	if err := tx.PutSD(t, d); err != nil {
		return err
	}
	return work.Reschedule(tx, t, job, next)
}

func (s *Service) countPoll(tx *storage.Tx, t storage.Tenant, d *storage.SD) time.Duration {
	return storage.CountPoll(&d.Poll, s.o.PollSchedules[t.Env], tx.Now())
}
