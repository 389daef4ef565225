package dds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// A revocation withdraws the statement in the EU system and then marks it
// REVOKED, for good (docs/dds.md): Withdraw makes the call outside
// any transaction, Revoke records it in the caller's.

// Withdrawal is a statement withdrawn in the EU system, for Revoke to
// record. Only Withdraw makes one.
type Withdrawal struct {
	ddsID string
}

// Withdraw withdraws the statement ref names (its ID or EU reference
// number) in the EU system, and writes nothing. A statement the EU system
// has withdrawn already (a revocation whose answer was lost before it was
// recorded) counts as withdrawn. It fails with apierr.NotFound; 409
// DDS_NOT_REVOCABLE for a statement that is not SUBMITTED or VALIDATED,
// past the EU system's 72-hour window (the sandbox's may be shorter), grouped into another, or that the
// EU system refuses to withdraw (the issue says which); 422
// EU_SYSTEM_NOT_CONFIGURED without usable credentials in production, or
// when the EU system does not take the call; 503 when the EU system cannot
// be reached.
func (s *Service) Withdraw(ctx context.Context, t storage.Tenant, ref string) (*Withdrawal, error) {
	var d *storage.DDS
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindDDS(t, ref); err != nil {
			return err
		}
		if err := revocable(d, tx.Now(), s.windows(t).Amend); err != nil {
			return err
		}
		creds, err = s.credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "dds", ref)
	}
	client := s.client(t)
	werr := client.Withdraw(ctx, creds, d.EUUUID)
	var fault *euis.Fault
	if errors.As(werr, &fault) && !euis.IsTransient(werr) {
		// Withdrawn already? Then it is recorded now; otherwise refused.
		st, gerr := client.Get(ctx, creds, []string{d.EUUUID})
		if gerr != nil || len(st) != 1 || st[0].Status != euis.StatusWithdrawn {
			return nil, apierr.Conflict(apierr.DetailDDSNotRevocable, "path.ddsId", "the EU system refused to withdraw it: "+fault.Message)
		}
		werr = nil
	}
	switch {
	case werr != nil && euis.IsTransient(werr):
		return nil, euchange.Unreachable(werr, "nothing was changed")
	case werr != nil:
		return nil, euchange.NotTaken("did not take the withdrawal", "nothing was changed", werr.Error())
	}
	return &Withdrawal{ddsID: d.ID}, nil
}

// Revoke records the statement w withdrew as REVOKED by actor, in the
// caller's transaction, and returns it. One the submission job has
// recorded REVOKED meanwhile (it saw the withdrawal) is returned as it
// is. It fails only when the store or the ledger does.
func (s *Service) Revoke(tx *storage.Tx, t storage.Tenant, w *Withdrawal, actor string) (Declaration, error) {
	d, err := tx.FindDDS(t, w.ddsID)
	if err != nil {
		return Declaration{}, apierr.Named(err, "dds", w.ddsID)
	}
	if d.Status != storage.DDSRevoked {
		if err := s.Record(tx, t, d, storage.DDSRevoked, actor, "revoked: withdrawn in the EU system"); err != nil {
			return Declaration{}, err
		}
	}
	return WithSubmission(tx, t, d)
}

// revocable refuses a revocation the EU system would not take: window is
// how long after submission it allows one.
func revocable(d *storage.DDS, now time.Time, window time.Duration) error {
	refuse := func(issue string) error { return apierr.Conflict(apierr.DetailDDSNotRevocable, "path.ddsId", issue) }
	switch {
	case d.Status != storage.DDSSubmitted && d.Status != storage.DDSValidated:
		return refuse(fmt.Sprintf("dds %s is %s; only a SUBMITTED or VALIDATED statement can be revoked", d.ID, d.Status))
	case d.SubmittedAt != nil && now.Sub(*d.SubmittedAt) > window:
		return refuse(fmt.Sprintf("dds %s was submitted on %s: the EU system allows a withdrawal within %s of submission only",
			d.ID, storage.FormatTime(*d.SubmittedAt), window))
	case d.Poll != nil && d.Poll.EUStatus == euis.StatusGrouped:
		return refuse(fmt.Sprintf("dds %s is grouped into another statement in the EU system and cannot be withdrawn", d.ID))
	}
	return nil
}
