// Package shipment locks a VERIFIED batch to a shipment: it records the
// link, holding both, and its job anchors the link in the tenant's
// ledger under a signed checkpoint and fires shipment.linked.
package shipment

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Options are what the service needs.
type Options struct {
	DB     *storage.DB
	Jobs   *work.Queue
	Events *event.Publisher
	Ledger *anchor.Ledger
	// ConsensusTimeout is how long after its request a link may still be
	// anchored; past it the link fails and lets its batch and shipment go.
	ConsensusTimeout time.Duration
}

// Service links batches to shipments.
type Service struct {
	o Options
}

// New returns the service and registers its job with o.Jobs.
func New(o Options) *Service {
	s := &Service{o: o}
	o.Jobs.Handle(work.ShipmentLink, s.runLink)
	return s
}

// Link records l PENDING, holding its batch and shipment, and queues the
// job that anchors it, in the caller's transaction; it sets l's ID, job,
// status and creation time. The checks and the hold are made in the same
// transaction, so of two links racing for the same shipment or batch
// exactly one is accepted. It writes nothing when it refuses: a 404
// naming batchId for an unknown batch, 422 BATCH_NOT_VERIFIED, or 409
// SHIPMENT_ALREADY_LINKED or BATCH_ALREADY_LINKED.
func (s *Service) Link(tx *storage.Tx, t storage.Tenant, l *storage.ShipmentLink) error {
	if err := checkLinkable(tx, t, l); err != nil {
		return err
	}
	l.ID = storage.NewID("lnk", tx.Now())
	job, err := s.o.Jobs.Enqueue(tx, t, work.ShipmentLink, 1, []byte(l.ID))
	if err != nil {
		return err
	}
	l.JobID, l.Status, l.CreatedAt = job.ID, storage.LinkPending, tx.Now()
	return tx.PutShipmentLink(t, l)
}

// checkLinkable refuses a link of an unknown or not VERIFIED batch, of a
// shipment or batch another link holds. It writes nothing.
func checkLinkable(tx *storage.Tx, t storage.Tenant, l *storage.ShipmentLink) error {
	b, err := tx.FindBatch(t, l.BatchID)
	if errors.Is(err, storage.ErrNotFound) {
		return &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: "batch " + l.BatchID + " not found",
			Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "batchId", Issue: "no batch " + l.BatchID}}}
	}
	if err != nil {
		return err
	}
	if b.Status != storage.BatchVerified {
		return apierr.BusinessRule(apierr.DetailBatchNotVerified, "batchId",
			fmt.Sprintf("batch %s is %s; only a VERIFIED batch can be linked to a shipment", b.ID, b.Status))
	}
	if held, err := tx.ShipmentLinkOf(t, l.ShipmentID); err == nil && held.Holds() {
		return apierr.Conflict(apierr.DetailShipmentAlreadyLinked, "shipmentId", fmt.Sprintf(
			"shipment %s is already linked to batch %s (link %s)", l.ShipmentID, held.BatchID, held.ID))
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	if held, err := tx.BatchLinkOf(t, l.BatchID); err == nil && held.Holds() {
		return apierr.Conflict(apierr.DetailBatchAlreadyLinked, "batchId", fmt.Sprintf(
			"batch %s is already linked to shipment %s (link %s)", l.BatchID, held.ShipmentID, held.ID))
	} else if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return nil
}

// Find returns the shipment's latest link, or apierr.NotFound.
func (s *Service) Find(ctx context.Context, t storage.Tenant, shipmentID string) (*storage.ShipmentLink, error) {
	var l *storage.ShipmentLink
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		l, err = tx.ShipmentLinkOf(t, shipmentID)
		return err
	})
	return l, apierr.Named(err, "shipment", shipmentID)
}

// List returns one page of the tenant's shipments, each by its latest
// link, newest first; with batchID not "", those of that batch only.
func (s *Service) List(ctx context.Context, t storage.Tenant, batchID string, p storage.Page) ([]*storage.ShipmentLink, bool, error) {
	var list []*storage.ShipmentLink
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindShipments(t, batchID, p)
		return err
	})
	return list, more, err
}

// linkedFields are the outcome of a link's anchoring on the line its job's
// end is logged with.
func linkedFields(l *storage.ShipmentLink) func(zerolog.Context) zerolog.Context {
	return func(c zerolog.Context) zerolog.Context {
		c = c.Str("link_status", l.Status)
		if l.LedgerIndex != nil {
			c = c.Int64("ledger_index", *l.LedgerIndex).Int64("tree_size", l.TreeSize)
		}
		return c
	}
}

// runLink anchors a link in the tenant's ledger and signs a checkpoint
// over it, then marks it LINKED and fires shipment.linked, all in one
// transaction: the event exists exactly when the signed checkpoint does.
// A link that could not be anchored within the consensus timeout of its
// request fails instead (LEDGER_CONSENSUS_TIMEOUT) and lets its batch and
// shipment go, so that the client can link them again.
func (s *Service) runLink(ctx context.Context, t storage.Tenant, job *storage.Job, id []byte) error {
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		l, err := tx.FindShipmentLink(t, string(id))
		if err != nil {
			return fmt.Errorf("link of job %s: %w", job.ID, err)
		}
		work.Note(ctx, func(c zerolog.Context) zerolog.Context {
			return c.Str("link_id", l.ID).Str("shipment_id", l.ShipmentID).Str("batch_id", l.BatchID)
		})
		tx.OnCommit(func() { work.Note(ctx, linkedFields(l)) }) // l as the transaction leaves it
		if waited := tx.Now().Sub(job.CreatedAt); waited > s.o.ConsensusTimeout {
			l.Status = storage.LinkFailed
			if err := tx.PutShipmentLink(t, l); err != nil {
				return err
			}
			return s.o.Jobs.Fail(tx, t, job, storage.JobError{Code: apierr.JobLedgerConsensusTimeout, Message: fmt.Sprintf(
				"the link was not anchored under a signed checkpoint within %s (it waited %s); the batch and shipment are free to link again",
				s.o.ConsensusTimeout, waited.Round(time.Millisecond))})
		}
		e, err := anchor.Append(tx, t, anchor.ShipmentEntry{Type: anchor.EntryShipmentLinked, LinkID: l.ID, BatchID: l.BatchID,
			ShipmentID: l.ShipmentID, BillOfLading: l.BillOfLading, ContainerNumbers: l.ContainerNumbers,
			PortOfEntry: l.PortOfEntry, ETA: l.ETA})
		if err != nil {
			return err
		}
		cp, err := s.o.Ledger.Sign(tx, t)
		if err != nil {
			return err
		}
		now := tx.Now()
		l.Status, l.LedgerIndex, l.TransactionHash = storage.LinkLinked, &e.Index, e.TransactionHash()
		l.TreeSize, l.RootHash, l.LinkedAt = cp.Size, anchor.Hex(cp.Root), &now
		if err := tx.PutShipmentLink(t, l); err != nil {
			return err
		}
		if _, _, err := s.o.Events.Publish(tx, t, event.ShipmentLinked, event.ShipmentLinkedData{LinkID: l.ID, BatchID: l.BatchID,
			ShipmentID: l.ShipmentID, TransactionHash: l.TransactionHash, LedgerIndex: e.Index,
			TreeSize: cp.Size, RootHash: l.RootHash}); err != nil {
			return err
		}
		job.LedgerIndexes = append(job.LedgerIndexes, e.Index)
		job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
		return work.Complete(tx, t, job)
	})
}
