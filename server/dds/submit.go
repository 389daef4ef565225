package dds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Submit queues the filing of the DRAFT id in the caller's transaction and
// returns its job (a dds_submission job, its input the statement's ID).
// Production needs EU system credentials; the sandbox files with the
// simulator. It writes nothing when it refuses: apierr.NotFound, 409
// DDS_NOT_DRAFT for a statement that is not a DRAFT or is being submitted
// already, 422 EU_SYSTEM_NOT_CONFIGURED.
func (s *Service) Submit(tx *storage.Tx, t storage.Tenant, id string) (*storage.Job, error) {
	d, err := tx.FindDDS(t, id)
	if err != nil {
		return nil, apierr.Named(err, "dds", id)
	}
	if d.Status != storage.DDSDraft {
		return nil, apierr.Conflict(apierr.DetailDDSNotDraft, "path.ddsId", fmt.Sprintf("dds %s is %s; only a DRAFT can be submitted", d.ID, d.Status))
	}
	if d.Poll != nil && d.Poll.JobID != "" {
		// Being submitted, unless that job failed for good: then a new
		// submission may start (the job found nothing was filed, or the
		// DDS would no longer be a DRAFT).
		prev, err := tx.FindJob(t, d.Poll.JobID)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
		if prev != nil && prev.Status != storage.JobFailed {
			return nil, apierr.Conflict(apierr.DetailDDSNotDraft, "path.ddsId", fmt.Sprintf("dds %s is being submitted already (job %s)", d.ID, prev.ID))
		}
	}
	if _, err := s.credentials(tx, t); err != nil {
		return nil, err
	}
	job, err := s.o.Jobs.Enqueue(tx, t, work.DDSSubmission, 1, []byte(d.ID))
	if err != nil {
		return nil, err
	}
	// A failed job may have filed the statement before it failed: its
	// attempt's time stays, so the new job looks for that filing first.
	var attempted *time.Time
	if d.Poll != nil {
		attempted = d.Poll.SubmitAttemptAt
	}
	d.Poll = &storage.DDSPollState{JobID: job.ID, SubmitAttemptAt: attempted}
	if err := tx.PutDDS(t, d); err != nil {
		return nil, err
	}
	return job, nil
}

// runSubmission files a DDS and follows it; its input is the statement's
// ID (as jobs queued by earlier versions have it too). Each run does one
// call to the EU system and records what it learnt in one transaction,
// with the events and ledger entries of any state change; while the
// statement is still being processed the job reschedules itself on the
// poll schedule, and a transient failure (EU system down, too slow, rate
// limited) is retried the same way, recorded on the job as its last
// attempt (retry). The EU system is never called inside a transaction.
func (s *Service) runSubmission(ctx context.Context, t storage.Tenant, job *storage.Job, id []byte) error {
	work.Note(ctx, func(c zerolog.Context) zerolog.Context { return c.Str("dds_id", string(id)) })
	var d *storage.DDS
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindDDS(t, string(id)); err != nil {
			return fmt.Errorf("dds of job %s: %w", job.ID, err)
		}
		creds, err = s.credentials(tx, t)
		return err
	})
	if err != nil {
		return err
	}
	client := s.client(t)
	switch {
	case d.Status == storage.DDSRevoked || d.Status == storage.DDSValidated || d.Status == storage.DDSRejected:
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return finish(ctx, tx, t, job, d) })
	case d.EUUUID == "":
		return s.file(ctx, t, job, d, client, creds)
	default:
		return s.poll(ctx, t, job, d, client, creds)
	}
}

// file files a statement. Its referenced statements are checked first
// (verifyDeclaration): one that is not EXISTING_USABLE rejects the DDS
// without filing it. A submission whose answer was lost (a crash right
// after sending) is found again by its internal reference rather than sent
// twice.
func (s *Service) file(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.DDS, client euis.Client, creds euis.Credentials) error {
	st, err := statementOf(d.Statement)
	if err != nil {
		return fmt.Errorf("dds %s: %w", d.ID, err)
	}
	var unusable []string
	for _, ref := range st.ReferencedStatements {
		res, err := client.VerifyDeclaration(ctx, creds, ref)
		if euis.IsTransient(err) {
			return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
		}
		if err != nil {
			return fmt.Errorf("verify referenced statement %s: %w", ref.ReferenceNumber, err)
		}
		if res != euis.VerifyExistingUsable {
			unusable = append(unusable, fmt.Sprintf("REFERENCED_STATEMENT_%s: %s", res, ref.ReferenceNumber))
		}
	}
	if len(unusable) > 0 {
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
			return s.reject(ctx, tx, t, job, d, unusable, "not filed: a referenced statement cannot be used")
		})
	}
	uuid := ""
	if d.Poll != nil && d.Poll.SubmitAttemptAt != nil {
		if uuid, err = s.findFiled(ctx, t, d, st, client, creds); euis.IsTransient(err) {
			return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
		} else if err != nil {
			return err
		}
	}
	if uuid == "" {
		err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
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
		uuid, err = client.Submit(ctx, creds, st)
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
		return fmt.Errorf("submit dds %s: %w", d.ID, err)
	}
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		now := tx.Now()
		d.EUUUID, d.SubmittedAt = uuid, &now
		// Status polls start at the schedule's first delay, however many
		// attempts the filing itself took.
		d.Poll.Polls = 0
		if err := s.recordByJob(tx, t, job, d, storage.DDSSubmitted, "accepted by the EU system, uuid "+uuid); err != nil {
			return err
		}
		if _, _, err := s.o.Events.Publish(tx, t, event.DDSSubmitted, event.DDSSubmittedData{DDSID: d.ID, EUUUID: uuid,
			ReferenceNumber: storage.Optional(d.ReferenceNumber)}); err != nil {
			return err
		}
		return s.schedulePoll(tx, t, job, d)
	})
}

// findFiled looks for the filing of an earlier attempt whose answer was
// lost, by the statement's internal reference, and returns its UUID, or ""
// when there is none to adopt: a filing is adopted only when it is
// unambiguous, one candidate made since that attempt that no other DDS of
// the tenant holds (an internal reference a client chose may repeat).
func (s *Service) findFiled(ctx context.Context, t storage.Tenant, d *storage.DDS, st euis.Statement, client euis.Client, creds euis.Credentials) (string, error) {
	f, ok := client.(euis.Finder)
	if !ok || st.InternalReference == "" {
		return "", nil
	}
	found, err := f.FindByInternalReference(ctx, creds, st.InternalReference)
	if err != nil {
		// Not knowing whether the earlier attempt was filed is no
		// reason to file again: a transient failure is retried, any
		// other fails the job, the statement still a DRAFT.
		return "", fmt.Errorf("look for an earlier filing of dds %s by its internal reference: %w", d.ID, err)
	}
	var candidates []string
	for _, fs := range found {
		if fs.InternalReference == st.InternalReference && (fs.Date.IsZero() || !fs.Date.Before(d.Poll.SubmitAttemptAt.Add(-time.Minute))) {
			candidates = append(candidates, fs.UUID)
		}
	}
	if len(candidates) != 1 {
		return "", nil
	}
	uuid := ""
	err = s.o.DB.View(ctx, func(tx *storage.Tx) error {
		other, err := tx.FindDDSByEUUUID(t, candidates[0])
		if errors.Is(err, storage.ErrNotFound) || (err == nil && other.ID == d.ID) {
			uuid = candidates[0]
			return nil
		}
		return err
	})
	return uuid, err
}
