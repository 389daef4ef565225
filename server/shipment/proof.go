package shipment

import (
	"context"
	"fmt"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// LinkLedger is the ledger entry that anchors link l with its inclusion
// proof in the first checkpoint that covers it (the one signed with it),
// so that a document quoting it is the same bytes however the log grows;
// nil for a link not anchored (PENDING or FAILED).
func (s *Service) LinkLedger(ctx context.Context, t storage.Tenant, l *storage.ShipmentLink) (*anchor.DocumentLedger, error) {
	if l.LedgerIndex == nil {
		return nil, nil
	}
	var out anchor.DocumentLedger
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		cp, err := ledger.FirstCheckpointCovering(tx.Tx, anchor.Log(t), *l.LedgerIndex)
		if err != nil {
			return fmt.Errorf("checkpoint covering entry %d of link %s: %w", *l.LedgerIndex, l.ID, err)
		}
		out, err = anchor.ProveEntryAt(tx, t, cp, *l.LedgerIndex)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &out, nil
}
