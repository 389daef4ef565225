package dds

import (
	"context"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// poll asks the EU system for the status of a filed statement and records
// what it decided: VALIDATED (dds.validated), REJECTED (dds.rejected) or
// withdrawn there (REVOKED), each completing the job; while it has not
// decided, the job polls again on the schedule.
func (s *Service) poll(ctx context.Context, t storage.Tenant, job *storage.Job, d *storage.DDS, client euis.Client, creds euis.Credentials) error {
	statuses, err := client.Get(ctx, creds, []string{d.EUUUID})
	switch {
	case euis.IsTransient(err):
		return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return s.retry(tx, t, job, d, err) })
	case err != nil:
		return fmt.Errorf("status of dds %s: %w", d.ID, err)
	}
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		// Read again: a revocation may have come in since.
		cur, err := tx.FindDDS(t, d.ID)
		if err != nil {
			return err
		}
		if cur.Status == storage.DDSRevoked {
			return finish(ctx, tx, t, job, cur)
		}
		d = cur
		var st *euis.Status
		for i := range statuses {
			if statuses[i].UUID == d.EUUUID {
				st = &statuses[i]
			}
		}
		if st == nil { // not visible yet: eventually consistent
			return s.schedulePoll(tx, t, job, d)
		}
		d.Poll.EUStatus = st.Status
		if st.ReferenceNumber != "" {
			d.ReferenceNumber = st.ReferenceNumber
		}
		switch st.Status {
		case euis.StatusAvailable:
			d.VerificationNumber = st.VerificationNumber
			if err := s.recordByJob(tx, t, job, d, storage.DDSValidated, "available: validated by the EU system"); err != nil {
				return err
			}
			if _, _, err := s.o.Events.Publish(tx, t, event.DDSValidated, event.DDSValidatedData{DDSID: d.ID, ReferenceNumber: d.ReferenceNumber,
				VerificationNumber: d.VerificationNumber}); err != nil {
				return err
			}
			return finish(ctx, tx, t, job, d)
		case euis.StatusRejected:
			return s.reject(ctx, tx, t, job, d, st.Reasons, "rejected by the EU system")
		case euis.StatusWithdrawn:
			if err := s.recordByJob(tx, t, job, d, storage.DDSRevoked, "withdrawn in the EU system"); err != nil {
				return err
			}
			return finish(ctx, tx, t, job, d)
		case euis.StatusSuspended, euis.StatusUpdated:
			// Not a decision: a suspended statement may come back
			// AVAILABLE, an updated one is profiled again. The statement
			// stays SUBMITTED, its euStatus shows which.
		}
		// SUBMITTED, the two above, and any status a later release adds:
		// poll again.
		return s.schedulePoll(tx, t, job, d)
	})
}

// reject records a rejection and fires dds.rejected, completing the job.
func (s *Service) reject(ctx context.Context, tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, reasons []string, note string) error {
	d.Reasons = reasons
	if len(d.Reasons) == 0 {
		d.Reasons = []string{"REJECTED"}
	}
	if err := s.recordByJob(tx, t, job, d, storage.DDSRejected, note); err != nil {
		return err
	}
	if _, _, err := s.o.Events.Publish(tx, t, event.DDSRejected, event.DDSRejectedData{DDSID: d.ID, Reasons: d.Reasons}); err != nil {
		return err
	}
	return finish(ctx, tx, t, job, d)
}

// recordByJob is Record for a change the EU system made, seen by the
// submission job: the job lists the ledger entry among those it anchored.
func (s *Service) recordByJob(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, status, note string) error {
	if err := s.Record(tx, t, d, status, ActorEUSystem, note); err != nil {
		return err
	}
	job.LedgerIndexes = append(job.LedgerIndexes, *d.History[len(d.History)-1].LedgerIndex)
	return nil
}

// finish completes the submission job of d, which the EU system has
// decided on: its one item succeeded when the statement was validated (or
// withdrawn), failed when rejected. The line the job's end is logged with
// tells which.
func finish(ctx context.Context, tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS) error {
	job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
	if d.Status == storage.DDSRejected {
		job.Progress.Succeeded, job.Progress.Failed = 0, 1
	}
	tx.OnCommit(func() {
		work.Note(ctx, func(c zerolog.Context) zerolog.Context {
			c = c.Str("dds_status", d.Status)
			if d.ReferenceNumber != "" {
				c = c.Str("reference_number", d.ReferenceNumber)
			}
			if d.Status == storage.DDSRejected {
				c = c.Strs("reasons", d.Reasons)
			}
			return c
		})
	})
	return work.Complete(tx, t, job)
}

// retry records a transient failure of the EU system on the submission
// job and runs the job again after the next delay of the poll schedule, in
// one transaction. The statement is read again: the job's copy may be
// older than a revocation.
func (s *Service) retry(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS, cause error) error {
	cur, err := tx.FindDDS(t, d.ID)
	if err != nil {
		return err
	}
	failure := AttemptOf(cause)
	next := tx.Now().Add(s.countPoll(tx, t, cur))
	s.o.Logger.Warn().Err(cause).Str("dds_id", d.ID).Str("job_id", job.ID).Str("code", failure.Code).
		Time("next_attempt_at", next).Msg("EU system unavailable; trying again later")
	if err := tx.PutDDS(t, cur); err != nil {
		return err
	}
	return work.Retry(tx, t, job, failure, next)
}

// schedulePoll records a poll of d and runs the job again after the next
// delay of the environment's poll schedule.
func (s *Service) schedulePoll(tx *storage.Tx, t storage.Tenant, job *storage.Job, d *storage.DDS) error {
	next := tx.Now().Add(s.countPoll(tx, t, d))
	if err := tx.PutDDS(t, d); err != nil {
		return err
	}
	return work.Reschedule(tx, t, job, next)
}

// countPoll counts a call to the EU system in d's poll state (not written)
// and returns the delay before the next one. Polls and retries share the
// schedule.
func (s *Service) countPoll(tx *storage.Tx, t storage.Tenant, d *storage.DDS) time.Duration {
	return storage.CountPoll(&d.Poll, s.o.PollSchedules[t.Env], tx.Now())
}
