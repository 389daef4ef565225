package dds

import (
	"context"
	"errors"
	"fmt"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Proved is a statement with the dds.status ledger entries of its history,
// each with its bytes and its inclusion proof, all in one checkpoint: the
// first that covers the last of them, signed with it (Record signs one in
// the transaction of every change). A proof made in it is the same bytes
// however the log grows, so a document made of it can be hashed and
// checked later.
type Proved struct {
	Declaration
	// Entries are the ledger entries of the history's changes, in the
	// history's order; a change without a ledger index has none.
	Entries []anchor.DocumentLedger
	// Checkpoint is the signed note every entry is proved in; "" when the
	// history has no ledger entry.
	Checkpoint string
}

// FindProved is Find with the ledger entries of the statement's history
// proved (Proved). It fails with apierr.NotFound for a statement the
// tenant does not have, and when the ledger or the store cannot be read.
func (s *Service) FindProved(ctx context.Context, t storage.Tenant, ref string) (Proved, error) {
	var out Proved
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		d, err := tx.FindDDS(t, ref)
		if err != nil {
			return err
		}
		if out.Declaration, err = WithSubmission(tx, t, d); err != nil {
			return err
		}
		last := int64(-1)
		for _, c := range d.History {
			if c.LedgerIndex != nil {
				last = max(last, *c.LedgerIndex)
			}
		}
		if last < 0 {
			return nil
		}
		cp, err := ledger.FirstCheckpointCovering(tx.Tx, anchor.Log(t), last)
		if errors.Is(err, ledger.ErrNotFound) {
			return fmt.Errorf("dds %s: no checkpoint covers its ledger entry %d", d.ID, last)
		}
		if err != nil {
			return fmt.Errorf("dds %s: checkpoint covering entry %d: %w", d.ID, last, err)
		}
		out.Checkpoint = string(cp.Note)
		for _, c := range d.History {
			if c.LedgerIndex == nil {
				continue
			}
			e, err := anchor.ProveEntryAt(tx, t, cp, *c.LedgerIndex)
			if err != nil {
				return fmt.Errorf("dds %s: %w", d.ID, err)
			}
			out.Entries = append(out.Entries, e)
		}
		return nil
	})
	return out, apierr.Named(err, "dds", ref)
}
