package server

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/batch"
	"github.com/eudr/eudr/storage"
)

// batchAcceptedResponse is the 202 of POST /batches.
type batchAcceptedResponse struct {
	BatchID string `json:"batchId"`
	JobID   string `json:"jobId"`
}

// batchResponse is a batch as GET /batches lists it, and with its
// polygonIds as GET /batches/{batchId} answers it.
type batchResponse struct {
	BatchID        string            `json:"batchId"`
	JobID          string            `json:"jobId"`
	BatchReference string            `json:"batchReference"`
	Commodity      string            `json:"commodity"`
	HSCode         string            `json:"hsCode"`
	SupplierID     string            `json:"supplierId"`
	PolygonCount   int               `json:"polygonCount"`
	PolygonIDs     []string          `json:"polygonIds,omitempty"`
	Quantity       batchQuantityBody `json:"quantity"`
	HarvestStart   *string           `json:"harvestStart"`
	HarvestEnd     *string           `json:"harvestEnd"`
	Status         string            `json:"status"`
	RiskScore      *int              `json:"riskScore"`
	RiskLevel      *string           `json:"riskLevel"`
	CreatedAt      string            `json:"createdAt"`
	AssessedAt     *string           `json:"assessedAt"`
}

type batchQuantityBody struct {
	NetMassKg             json.Number  `json:"netMassKg"`
	SupplementaryUnit     *json.Number `json:"supplementaryUnit"`
	SupplementaryUnitType *string      `json:"supplementaryUnitType"`
}

func toBatchResponse(b *storage.Batch) batchResponse {
	return batchResponse{BatchID: b.ID, JobID: b.JobID, BatchReference: b.Reference, Commodity: b.Commodity,
		HSCode: b.HSCode, SupplierID: b.SupplierID, PolygonCount: b.PolygonCount,
		Quantity: batchQuantityBody{NetMassKg: b.NetMassKg, SupplementaryUnit: b.SupplementaryUnit,
			SupplementaryUnitType: storage.Optional(b.SupplementaryUnitType)},
		HarvestStart: storage.Optional(b.HarvestStart), HarvestEnd: storage.Optional(b.HarvestEnd), Status: b.Status,
		RiskScore: b.RiskScore, RiskLevel: storage.Optional(b.RiskLevel), CreatedAt: storage.FormatTime(b.CreatedAt),
		AssessedAt: storage.FormatTimePtr(b.AssessedAt)}
}

// handleBatchesCreate registers a batch (batch.Register) and answers 202
// with the job that assesses it and completes it VERIFIED or HIGH_RISK.
func (a *App) handleBatchesCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req batch.Request
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	b, polygonIDs, err := req.Validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		registered := *b // a shared commit may run this again
		if err := a.batches.Register(tx, t, &registered, polygonIDs); err != nil {
			return reply{}, err
		}
		return accepted(registered.JobID, batchAcceptedResponse{BatchID: registered.ID, JobID: registered.JobID}), nil
	})
}

// batchFilter reads the list filters of GET /batches.
func batchFilter(r *http.Request) (storage.BatchFilter, error) {
	q := r.URL.Query()
	f := storage.BatchFilter{Status: q.Get("status"), SupplierID: q.Get("supplierId")}
	var probs apierr.Problems
	switch f.Status {
	case "", storage.BatchAssessing, storage.BatchVerified, storage.BatchHighRisk:
	default:
		probs.Add(apierr.DetailInvalidValue, "query.status", "must be ASSESSING, VERIFIED or HIGH_RISK")
	}
	return f, probs.Err()
}

func (a *App) handleBatchesList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	f, ferr := batchFilter(r)
	if err := apierr.Merge(apierr.DetailsOf(err), ferr); err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.batches.List(r.Context(), tenantFrom(r.Context()), f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]batchResponse, len(list))
	for i, b := range list {
		out[i] = toBatchResponse(b)
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

func (a *App) handleBatchesGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	b, ids, err := a.batches.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("batchId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	resp := toBatchResponse(b)
	resp.PolygonIDs = ids
	writeJSON(w, r, http.StatusOK, resp)
}

// handleBatchesRiskAssessment answers the batch's risk assessment as it
// was recorded; while the batch is ASSESSING, its status with nulls and
// Retry-After, as a job not yet finished is answered.
func (a *App) handleBatchesRiskAssessment(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	doc, done, err := a.batches.Assessment(r.Context(), tenantFrom(r.Context()), ps.ByName("batchId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if !done {
		w.Header().Set("Retry-After", "2")
	}
	writeJSON(w, r, http.StatusOK, json.RawMessage(doc))
}
