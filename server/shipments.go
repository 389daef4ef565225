package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/shipment"
	"github.com/eudr/eudr/storage"
)

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

// handleShipmentLink locks a VERIFIED batch to a shipment (shipment.Link)
// and answers 202 with the job that anchors the link.
func (a *App) handleShipmentLink(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req shipment.LinkRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	l, err := req.Validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := a.shipments.Link(tx, t, l); err != nil {
			return reply{}, err
		}
		return accepted(l.JobID, shipmentLinkAccepted{LinkID: l.ID, JobID: l.JobID}), nil
	})
}

// handleShipmentsList lists the shipments by their latest links, newest
// first, optionally those of one batch (?batchId=).
func (a *App) handleShipmentsList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.shipments.List(r.Context(), tenantFrom(r.Context()), r.URL.Query().Get("batchId"), page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]shipmentResponse, len(list))
	for i, l := range list {
		out[i] = toShipmentResponse(l)
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

func (a *App) handleShipmentGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	l, err := a.shipments.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("shipmentId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toShipmentResponse(l))
}

func toShipmentResponse(l *storage.ShipmentLink) shipmentResponse {
	resp := shipmentResponse{LinkID: l.ID, JobID: l.JobID, BatchID: l.BatchID, ShipmentID: l.ShipmentID,
		BillOfLading: storage.Optional(l.BillOfLading), ContainerNumbers: l.ContainerNumbers, PortOfEntry: storage.Optional(l.PortOfEntry),
		ETA: storage.Optional(l.ETA), Status: l.Status, TransactionHash: storage.Optional(l.TransactionHash), LedgerIndex: l.LedgerIndex,
		RootHash: storage.Optional(l.RootHash), CreatedAt: storage.FormatTime(l.CreatedAt), LinkedAt: storage.FormatTimePtr(l.LinkedAt)}
	if resp.ContainerNumbers == nil {
		resp.ContainerNumbers = []string{}
	}
	if l.TreeSize > 0 {
		resp.TreeSize = &l.TreeSize
	}
	return resp
}
