package sd

import (
	"context"
	"errors"
	"fmt"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// A withdrawal is made in the EU system first (Withdraw, outside any
// transaction) and then recorded (RecordWithdrawal, in the caller's), as a
// DDS revocation is: the declaration is marked WITHDRAWN only once the EU
// system has withdrawn it.

// Withdrawal is a declaration withdrawn in the EU system, for
// RecordWithdrawal. Only Withdraw makes one.
type Withdrawal struct{ sdID string }

// Withdraw withdraws the declaration ref names in the EU system and writes
// nothing. One the EU system shows withdrawn already (a withdrawal whose
// answer was lost) counts as withdrawn. It fails with apierr.NotFound; 409
// SD_NOT_WITHDRAWABLE for a declaration that is not SUBMITTED or
// VALIDATED, or that the EU system refuses to withdraw (grouped, under
// checks, customs lock: the issue says); 422 EU_SYSTEM_NOT_CONFIGURED
// without usable credentials or when the EU system does not take the
// call; 503 when it cannot be reached.
func (s *Service) Withdraw(ctx context.Context, t storage.Tenant, ref string) (*Withdrawal, error) {
	var d *storage.SD
	var creds euis.Credentials
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if d, err = tx.FindSD(t, ref); err != nil {
			return err
		}
		if d.Status != storage.SDSubmitted && d.Status != storage.SDValidated {
			return apierr.Conflict(DetailNotWithdrawable, "path.sdId",
				fmt.Sprintf("simplified declaration %s is %s; only a SUBMITTED or VALIDATED one can be withdrawn", d.ID, d.Status))
		}
		creds, err = s.o.Credentials(tx, t)
		return err
	})
	if err != nil {
		return nil, apierr.Named(err, "simplified declaration", ref)
	}
	client := s.o.Clients[t.Env]
	_, werr := client.WithdrawSD(ctx, creds, d.SDIdentifier)
	var fault *euis.Fault
	if errors.As(werr, &fault) && !euis.IsTransient(werr) {
		st, gerr := client.GetSD(ctx, creds, []string{d.SDIdentifier})
		if gerr != nil || len(st) != 1 || st[0].Status != euis.StatusWithdrawn {
			return nil, apierr.Conflict(DetailNotWithdrawable, "path.sdId", "the EU system refused to withdraw it: "+fault.Message)
		}
		werr = nil
	}
	switch {
	case werr != nil && euis.IsTransient(werr):
		return nil, euchange.Unreachable(werr, "nothing was changed")
	case werr != nil:
		return nil, euchange.NotTaken("did not take the withdrawal", "nothing was changed", werr.Error())
	}
	return &Withdrawal{sdID: d.ID}, nil
}

// RecordWithdrawal records the declaration w withdrew as WITHDRAWN by
// actor, in the caller's transaction, and returns it; one the submission
// job recorded WITHDRAWN meanwhile is returned as it is. The view leaves
// out the statement.
func (s *Service) RecordWithdrawal(tx *storage.Tx, t storage.Tenant, w *Withdrawal, actor string) (View, error) {
	d, err := tx.FindSD(t, w.sdID)
	if err != nil {
		return View{}, apierr.Named(err, "simplified declaration", w.sdID)
	}
	if d.Status != storage.SDWithdrawn {
		if err := s.record(tx, t, d, storage.SDWithdrawn, actor, "withdrawn in the EU system"); err != nil {
			return View{}, err
		}
	}
	dcl, err := withSubmission(tx, t, d)
	return ViewOf(dcl, false), err
}
