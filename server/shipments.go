package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

var (
	// shipmentIDPattern keeps shipment IDs usable as a URL path segment.
	shipmentIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)
	// containerPattern is an ISO 6346 container number: owner code,
	// category letter, six digits and a check digit.
	containerPattern = regexp.MustCompile(`^[A-Z]{3}[UJZ][0-9]{7}$`)
	// unlocodePattern is a UN/LOCODE: country code and three letters or digits 2-9.
	unlocodePattern = regexp.MustCompile(`^[A-Z]{2}[A-Z2-9]{3}$`)
)

const (
	maxBillOfLadingLen = 64
	maxContainers      = 1000
)

type shipmentLinkRequest struct {
	BatchID          *string  `json:"batchId"`
	ShipmentID       *string  `json:"shipmentId"`
	BillOfLading     *string  `json:"billOfLading"`
	ContainerNumbers []string `json:"containerNumbers"`
	PortOfEntry      *string  `json:"portOfEntry"`
	ETA              *string  `json:"eta"`
}

type shipmentLinkAccepted struct {
	LinkID string `json:"linkId"`
	JobID  string `json:"jobId"`
}

// shipmentResponse is GET /shipments/{shipmentId}: the shipment's latest
// link.
type shipmentResponse struct {
	LinkID           string   `json:"linkId"`
	JobID            string   `json:"jobId"`
	BatchID          string   `json:"batchId"`
	ShipmentID       string   `json:"shipmentId"`
	BillOfLading     *string  `json:"billOfLading"`
	ContainerNumbers []string `json:"containerNumbers"`
	PortOfEntry      *string  `json:"portOfEntry"`
	ETA              *string  `json:"eta"`
	Status           string   `json:"status"`
	TransactionHash  *string  `json:"transactionHash"`
	LedgerIndex      *int64   `json:"ledgerIndex"`
	TreeSize         *int64   `json:"treeSize"`
	RootHash         *string  `json:"rootHash"`
	CreatedAt        string   `json:"createdAt"`
	LinkedAt         *string  `json:"linkedAt"`
}

func (req *shipmentLinkRequest) validate() (*storage.ShipmentLink, error) {
	var probs apierr.Problems
	l := &storage.ShipmentLink{}
	switch {
	case req.BatchID == nil || *req.BatchID == "":
		probs.Add(apierr.DetailRequired, "batchId", "is required")
	default:
		l.BatchID = *req.BatchID
	}
	switch {
	case req.ShipmentID == nil || *req.ShipmentID == "":
		probs.Add(apierr.DetailRequired, "shipmentId", "is required")
	case !shipmentIDPattern.MatchString(*req.ShipmentID):
		probs.Add(apierr.DetailInvalidValue, "shipmentId", "must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
	default:
		l.ShipmentID = *req.ShipmentID
	}
	if b := req.BillOfLading; b != nil {
		if *b == "" || len(*b) > maxBillOfLadingLen {
			probs.Add(apierr.DetailInvalidValue, "billOfLading", fmt.Sprintf("must be 1-%d characters", maxBillOfLadingLen))
		}
		l.BillOfLading = *b
	}
	if len(req.ContainerNumbers) > maxContainers {
		probs.Add(apierr.DetailInvalidValue, "containerNumbers", fmt.Sprintf("must list at most %d containers", maxContainers))
	}
	seen := map[string]bool{}
	for i, c := range req.ContainerNumbers {
		field := fmt.Sprintf("containerNumbers[%d]", i)
		switch {
		case !containerPattern.MatchString(c) || !containerCheckDigitOK(c):
			probs.Add(apierr.DetailInvalidValue, field, "must be an ISO 6346 container number (e.g. MSCU1234566) with a valid check digit")
		case seen[c]:
			probs.Add(apierr.DetailInvalidValue, field, "is listed twice")
		}
		seen[c] = true
	}
	l.ContainerNumbers = req.ContainerNumbers
	if p := req.PortOfEntry; p != nil {
		if !unlocodePattern.MatchString(*p) {
			probs.Add(apierr.DetailInvalidValue, "portOfEntry", "must be a UN/LOCODE such as NLRTM")
		}
		l.PortOfEntry = *p
	}
	if e := req.ETA; e != nil {
		if _, err := time.Parse(time.DateOnly, *e); err != nil {
			if _, err := time.Parse(time.RFC3339, *e); err != nil {
				probs.Add(apierr.DetailInvalidValue, "eta", "must be a date (YYYY-MM-DD) or an RFC 3339 date-time")
			}
		}
		l.ETA = *e
	}
	return l, probs.Err()
}

// containerCheckDigitOK checks the ISO 6346 check digit of a number that
// matches containerPattern.
func containerCheckDigitOK(c string) bool {
	sum := 0
	for i := range 10 {
		var v int
		ch := c[i]
		if ch >= '0' && ch <= '9' {
			v = int(ch - '0')
		} else {
			// Letters count 10 upwards, skipping multiples of 11.
			v = 10 + int(ch-'A')
			v += (v - 1) / 10
		}
		sum += v << i
	}
	return sum%11%10 == int(c[10]-'0')
}

// handleShipmentLink locks a VERIFIED batch to a shipment: it records a
// PENDING link that holds both and queues the job that anchors it. The
// checks and the hold are made in one transaction, so of two links
// racing for the same shipment or batch exactly one is accepted.
func (a *App) handleShipmentLink(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req shipmentLinkRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	l, err := req.validate()
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := checkLinkable(tx, t, l); err != nil {
			return reply{}, err
		}
		l.ID = storage.NewID("lnk", tx.Now())
		job, err := a.jobs.Enqueue(tx, t, work.ShipmentLink, 1, []byte(l.ID))
		if err != nil {
			return reply{}, err
		}
		l.JobID, l.Status, l.CreatedAt = job.ID, storage.LinkPending, tx.Now()
		if err := tx.PutShipmentLink(t, l); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + job.ID}},
			body: shipmentLinkAccepted{LinkID: l.ID, JobID: job.ID}}, nil
	})
}

// checkLinkable refuses a link of an unknown or not VERIFIED batch, of a
// shipment or batch another link holds. It writes nothing.
func checkLinkable(tx *storage.Tx, t storage.Tenant, l *storage.ShipmentLink) error {
	b, err := tx.FindBatch(t, l.BatchID)
	if errors.Is(err, storage.ErrNotFound) {
		return &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: "batch " + l.BatchID + " not found",
			Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "batchId", Issue: "no batch " + l.BatchID}}}
	}
	if err != nil {
		return err
	}
	if b.Status != storage.BatchVerified {
		issue := fmt.Sprintf("batch %s is %s; only a VERIFIED batch can be linked to a shipment", b.ID, b.Status)
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule, Message: issue,
			Details: []apierr.Detail{{Code: apierr.DetailBatchNotVerified, Field: "batchId", Issue: issue}}}
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

// runShipmentLinkJob anchors a link in the tenant's ledger and signs a
// checkpoint over it, then marks it LINKED and fires shipment.linked, all
// in one transaction: the event exists exactly when the signed checkpoint
// does. A link that could not be anchored within ledger.consensus_timeout
// of its request fails instead (LEDGER_CONSENSUS_TIMEOUT) and lets its
// batch and shipment go, so that the client can link them again.
func (a *App) runShipmentLinkJob(ctx context.Context, t storage.Tenant, job *storage.Job, id []byte) error {
	return a.db.Update(ctx, func(tx *storage.Tx) error {
		l, err := tx.FindShipmentLink(t, string(id))
		if err != nil {
			return fmt.Errorf("link of job %s: %w", job.ID, err)
		}
		if waited := tx.Now().Sub(job.CreatedAt); waited > a.cfg.Ledger.ConsensusTimeout {
			l.Status = storage.LinkFailed
			if err := tx.PutShipmentLink(t, l); err != nil {
				return err
			}
			return a.jobs.Fail(tx, t, job, storage.JobError{Code: apierr.JobLedgerConsensusTimeout, Message: fmt.Sprintf(
				"the link was not anchored under a signed checkpoint within %s (it waited %s); the batch and shipment are free to link again",
				a.cfg.Ledger.ConsensusTimeout, waited.Round(time.Millisecond))})
		}
		e, err := anchor.Append(tx, t, anchor.ShipmentEntry{Type: anchor.EntryShipmentLinked, LinkID: l.ID, BatchID: l.BatchID,
			ShipmentID: l.ShipmentID, BillOfLading: l.BillOfLading, ContainerNumbers: l.ContainerNumbers,
			PortOfEntry: l.PortOfEntry, ETA: l.ETA})
		if err != nil {
			return err
		}
		cp, err := a.ledger.Sign(tx, t)
		if err != nil {
			return err
		}
		now := tx.Now()
		l.Status, l.LedgerIndex, l.TransactionHash = storage.LinkLinked, &e.Index, e.TransactionHash()
		l.TreeSize, l.RootHash, l.LinkedAt = cp.Size, anchor.Hex(cp.Root), &now
		if err := tx.PutShipmentLink(t, l); err != nil {
			return err
		}
		if _, _, err := a.events.Publish(tx, t, event.ShipmentLinked, event.ShipmentLinkedData{LinkID: l.ID, BatchID: l.BatchID,
			ShipmentID: l.ShipmentID, TransactionHash: l.TransactionHash, LedgerIndex: e.Index,
			TreeSize: cp.Size, RootHash: l.RootHash}); err != nil {
			return err
		}
		job.LedgerIndexes = append(job.LedgerIndexes, e.Index)
		job.Progress = storage.JobProgress{Total: 1, Processed: 1, Succeeded: 1}
		return work.Complete(tx, t, job)
	})
}

func (a *App) handleShipmentGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("shipmentId")
	var l *storage.ShipmentLink
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		l, err = tx.ShipmentLinkOf(tenantFrom(r.Context()), id)
		return err
	})
	err = apierr.Named(err, "shipment", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	resp := shipmentResponse{LinkID: l.ID, JobID: l.JobID, BatchID: l.BatchID, ShipmentID: l.ShipmentID,
		BillOfLading: optional(l.BillOfLading), ContainerNumbers: l.ContainerNumbers, PortOfEntry: optional(l.PortOfEntry),
		ETA: optional(l.ETA), Status: l.Status, TransactionHash: optional(l.TransactionHash), LedgerIndex: l.LedgerIndex,
		RootHash: optional(l.RootHash), CreatedAt: formatTime(l.CreatedAt), LinkedAt: formatTimePtr(l.LinkedAt)}
	if resp.ContainerNumbers == nil {
		resp.ContainerNumbers = []string{}
	}
	if l.TreeSize > 0 {
		resp.TreeSize = &l.TreeSize
	}
	writeJSON(w, r, http.StatusOK, resp)
}
