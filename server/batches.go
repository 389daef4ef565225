package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/risk"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

const (
	// maxBatchPolygons is the most polygonIds a batch may list.
	maxBatchPolygons = 10_000
	// maxBatchReferenceLen is the longest batchReference, in characters.
	maxBatchReferenceLen = 100
	// maxQuantity bounds netMassKg and supplementaryUnit: the EU
	// information system takes decimal(16,6).
	maxQuantity = 1e10
	// maxListedRefusals is the most polygons a 404 or 422 lists; a last
	// detail counts the others.
	maxListedRefusals = 1000
)

// supplementaryUnitTypes are the qualifiers of a supplementary unit the EU
// information system takes (research/eudr.md section 1.7): thousands of
// items, square metres, cubic metres, metres, number of items, number of
// pairs.
var supplementaryUnitTypes = []string{"KSD", "MTK", "MTQ", "MTR", "NAR", "NPR"}

type batchRequest struct {
	BatchReference string                `json:"batchReference"`
	Commodity      string                `json:"commodity"`
	HSCode         string                `json:"hsCode"`
	SupplierID     string                `json:"supplierId"`
	PolygonIDs     []string              `json:"polygonIds"`
	Quantity       *batchQuantityRequest `json:"quantity"`
	HarvestStart   *string               `json:"harvestStart"`
	HarvestEnd     *string               `json:"harvestEnd"`
}

type batchQuantityRequest struct {
	NetMassKg             *float64 `json:"netMassKg"`
	SupplementaryUnit     *float64 `json:"supplementaryUnit"`
	SupplementaryUnitType *string  `json:"supplementaryUnitType"`
}

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
	NetMassKg             float64  `json:"netMassKg"`
	SupplementaryUnit     *float64 `json:"supplementaryUnit"`
	SupplementaryUnitType *string  `json:"supplementaryUnitType"`
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

// validate checks every member and reports every problem, and returns the
// batch to register (without IDs, status or times) and its polygon IDs.
func (req *batchRequest) validate() (*storage.Batch, []string, error) {
	var probs apierr.Problems
	ref := strings.TrimSpace(req.BatchReference)
	switch {
	case ref == "":
		probs.Add(apierr.DetailRequired, "batchReference", "is required: your reference of the batch (lot number, ERP document)")
	case utf8.RuneCountInString(ref) > maxBatchReferenceLen || strings.ContainsFunc(ref, unicode.IsControl):
		probs.Add(apierr.DetailInvalidValue, "batchReference", fmt.Sprintf("must be at most %d characters, without control characters", maxBatchReferenceLen))
	}
	commodityOK := false
	switch {
	case req.Commodity == "":
		probs.Add(apierr.DetailRequired, "commodity", "is required: one of "+strings.Join(geo.Commodities(), ", "))
	case !geo.IsCommodity(req.Commodity):
		probs.Add(apierr.DetailInvalidValue, "commodity", fmt.Sprintf("must be one of %s, not %q", strings.Join(geo.Commodities(), ", "), req.Commodity))
	default:
		commodityOK = true
	}
	switch {
	case req.HSCode == "":
		probs.Add(apierr.DetailRequired, "hsCode", "is required: the Harmonised System code of the product (Annex I to Regulation (EU) 2023/1115)")
	case !risk.HSCodePattern.MatchString(req.HSCode):
		probs.Add(apierr.DetailInvalidValue, "hsCode", risk.AnnexI().CheckHSCode(req.Commodity, req.HSCode))
	case len(risk.AnnexI().CommodityOf(req.HSCode)) == 0:
		// No commodity has it: wrong whatever the batch. A code Annex I
		// lists for another commodity is a business rule, judged with the
		// polygons (checkBatchRules).
		issue := fmt.Sprintf("%s is not a product of any commodity in Annex I to Regulation (EU) 2023/1115", req.HSCode)
		if commodityOK {
			issue = risk.AnnexI().CheckHSCode(req.Commodity, req.HSCode)
		}
		probs.Add(apierr.DetailHSCodeNotInAnnexI, "hsCode", issue)
	}
	switch {
	case req.SupplierID == "":
		probs.Add(apierr.DetailRequired, "supplierId", "is required: the erpVendorId of a supplier mapping (POST /suppliers)")
	case !erpVendorIDPattern.MatchString(req.SupplierID):
		probs.Add(apierr.DetailInvalidValue, "supplierId", "must be an erpVendorId: 1-64 characters of A-Z, a-z, 0-9, '.', '_' or '-', starting with a letter or digit")
	}
	switch {
	case len(req.PolygonIDs) == 0:
		probs.Add(apierr.DetailRequired, "polygonIds", "is required: the polygonId of at least one COMPLIANT polygon")
	case len(req.PolygonIDs) > maxBatchPolygons:
		probs.Add(apierr.DetailInvalidValue, "polygonIds", fmt.Sprintf("must list at most %d polygons, not %d", maxBatchPolygons, len(req.PolygonIDs)))
	default:
		first := make(map[string]int, len(req.PolygonIDs))
		for i, id := range req.PolygonIDs {
			field := fmt.Sprintf("polygonIds[%d]", i)
			if id == "" {
				probs.Add(apierr.DetailInvalidValue, field, "must be a polygonId, not empty")
			} else if j, dup := first[id]; dup {
				probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("repeats polygonIds[%d] %s: list each polygon once", j, id))
			} else {
				first[id] = i
			}
		}
	}
	b := &storage.Batch{Reference: ref, Commodity: req.Commodity, HSCode: req.HSCode, SupplierID: req.SupplierID,
		PolygonCount: len(req.PolygonIDs)}
	if q := req.Quantity; q == nil {
		probs.Add(apierr.DetailRequired, "quantity", "is required: an object with netMassKg")
	} else {
		switch {
		case q.NetMassKg == nil:
			probs.Add(apierr.DetailRequired, "quantity.netMassKg", "is required: the net mass in kilograms")
		case !(*q.NetMassKg > 0) || *q.NetMassKg >= maxQuantity:
			probs.Add(apierr.DetailInvalidValue, "quantity.netMassKg", "must be greater than 0 and below 10,000,000,000 kg")
		default:
			b.NetMassKg = *q.NetMassKg
		}
		switch {
		case q.SupplementaryUnit == nil && q.SupplementaryUnitType != nil:
			probs.Add(apierr.DetailRequired, "quantity.supplementaryUnit", "is required with supplementaryUnitType")
		case q.SupplementaryUnit != nil && (*q.SupplementaryUnit < 0 || *q.SupplementaryUnit >= maxQuantity):
			probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnit", "must be at least 0 and below 10,000,000,000")
		case q.SupplementaryUnit != nil:
			b.SupplementaryUnit = q.SupplementaryUnit
		}
		switch t := q.SupplementaryUnitType; {
		case t == nil && q.SupplementaryUnit != nil:
			probs.Add(apierr.DetailRequired, "quantity.supplementaryUnitType", "is required with supplementaryUnit: one of "+strings.Join(supplementaryUnitTypes, ", "))
		case t != nil && !isSupplementaryUnitType(*t):
			probs.Add(apierr.DetailInvalidValue, "quantity.supplementaryUnitType", fmt.Sprintf("must be one of %s, not %q", strings.Join(supplementaryUnitTypes, ", "), *t))
		case t != nil:
			b.SupplementaryUnitType = *t
		}
	}
	start, startOK := harvestDate(&probs, "harvestStart", req.HarvestStart)
	end, endOK := harvestDate(&probs, "harvestEnd", req.HarvestEnd)
	if startOK && endOK && start != "" && end != "" && end < start {
		probs.Add(apierr.DetailInvalidValue, "harvestEnd", fmt.Sprintf("must not be before harvestStart (%s)", start))
	}
	b.HarvestStart, b.HarvestEnd = start, end
	if err := probs.Err(); err != nil {
		return nil, nil, err
	}
	return b, req.PolygonIDs, nil
}

func isSupplementaryUnitType(s string) bool {
	for _, t := range supplementaryUnitTypes {
		if s == t {
			return true
		}
	}
	return false
}

// harvestDate checks an optional date YYYY-MM-DD; absent (or null) is "".
func harvestDate(probs *apierr.Problems, field string, v *string) (string, bool) {
	if v == nil {
		return "", true
	}
	if _, err := time.Parse(time.DateOnly, *v); err != nil || len(*v) != len(time.DateOnly) {
		probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf("must be a date YYYY-MM-DD (ISO 8601), not %q", *v))
		return "", false
	}
	return *v, true
}

// handleBatchesCreate validates a batch, checks its supplier and polygons,
// and registers it ASSESSING with one batch_risk_assessment job, which
// assesses it and completes it VERIFIED or HIGH_RISK.
func (a *App) handleBatchesCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req batchRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	b, polygonIDs, err := req.validate()
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		batch := *b // a shared commit may run this again
		if err := checkBatchRules(tx, t, &batch, polygonIDs); err != nil {
			return reply{}, err
		}
		if err := a.registerBatch(tx, t, &batch, polygonIDs); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + batch.JobID}},
			body: batchAcceptedResponse{BatchID: batch.ID, JobID: batch.JobID}}, nil
	})
}

// checkBatchRules refuses a well-formed batch, writing nothing, whose
// supplier mapping or polygons do not exist (404, each named), or that
// breaks a business rule (422, each case named): an hsCode Annex I lists
// only for other commodities, polygons not COMPLIANT or not of its
// commodity.
func checkBatchRules(tx *storage.Tx, t storage.Tenant, b *storage.Batch, polygonIDs []string) error {
	var missing apierr.Problems
	if _, err := tx.FindSupplier(t, b.SupplierID); errors.Is(err, storage.ErrNotFound) {
		missing.Add(apierr.DetailSupplierNotFound, "supplierId", fmt.Sprintf("no supplier mapping has erpVendorId %s in this organisation and environment (POST /suppliers)", b.SupplierID))
	} else if err != nil {
		return err
	}
	var refused apierr.Problems
	otherProduct := 0
	if _, ok := risk.AnnexI().Match(b.Commodity, b.HSCode); !ok {
		otherProduct = 1
		refused.Add(apierr.DetailHSCodeNotInAnnexI, "hsCode", risk.AnnexI().CheckHSCode(b.Commodity, b.HSCode))
	}
	notCompliant, otherCommodity, unknown := 0, 0, 0
	for i, id := range polygonIDs {
		field := fmt.Sprintf("polygonIds[%d]", i)
		p, err := tx.FindPolygon(t, id)
		if errors.Is(err, storage.ErrNotFound) {
			unknown++
			if unknown <= maxListedRefusals {
				missing.Add(apierr.DetailPolygonNotFound, field, fmt.Sprintf("no polygon %s in this organisation and environment", id))
			}
			continue
		}
		if err != nil {
			return err
		}
		if p.Status != geo.StatusCompliant {
			notCompliant++
			if len(refused) < maxListedRefusals {
				issue := fmt.Sprintf("polygon %s is %s", id, p.Status)
				if p.FailureReason != "" {
					issue += " (" + p.FailureReason + ")"
				}
				refused.Add(apierr.DetailPolygonNotCompliant, field, issue+": only COMPLIANT polygons may be in a batch; delete it and submit a corrected plot")
			}
		}
		if p.Commodity != b.Commodity {
			otherCommodity++
			if len(refused) < maxListedRefusals {
				refused.Add(apierr.DetailCommodityMismatch, field, fmt.Sprintf("polygon %s is a plot of %s, the batch is of %s", id, p.Commodity, b.Commodity))
			}
		}
	}
	if len(missing) > 0 {
		if unknown > maxListedRefusals {
			missing.Add(geo.CodeTooManyProblems, "polygonIds", fmt.Sprintf("%d more unknown polygons are not listed", unknown-maxListedRefusals))
		}
		msg := missing[0].Issue
		if len(missing) > 1 {
			msg = fmt.Sprintf("%d of the batch's references were not found", len(missing))
		}
		return &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: msg, Details: missing}
	}
	if len(refused) == 1 && otherProduct == 1 {
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule, Message: refused[0].Issue, Details: refused}
	}
	if len(refused) > 0 {
		if n := otherProduct + notCompliant + otherCommodity - len(refused); n > 0 {
			refused.Add(geo.CodeTooManyProblems, "polygonIds", fmt.Sprintf("%d more refusals are not listed", n))
		}
		var parts []string
		if otherProduct > 0 {
			parts = append(parts, fmt.Sprintf("hsCode %s is not a product of %s", b.HSCode, b.Commodity))
		}
		if notCompliant > 0 {
			parts = append(parts, fmt.Sprintf("%d not COMPLIANT", notCompliant))
		}
		if otherCommodity > 0 {
			parts = append(parts, fmt.Sprintf("%d of another commodity", otherCommodity))
		}
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "a batch must be a product of its commodity from COMPLIANT plots of it: " + strings.Join(parts, ", "), Details: refused}
	}
	return nil
}

// registerBatch records a checked batch ASSESSING, its polygons (now
// undeletable) and its batch_risk_assessment job, in the caller's
// transaction; it sets the batch's ID, job, status and creation time.
func (a *App) registerBatch(tx *storage.Tx, t storage.Tenant, b *storage.Batch, polygonIDs []string) error {
	b.ID = storage.NewID("bat", tx.Now())
	input, err := json.Marshal(batchJobInput{BatchID: b.ID})
	if err != nil {
		return err
	}
	job, err := a.jobs.Enqueue(tx, t, work.BatchRiskAssessment, 1, input)
	if err != nil {
		return err
	}
	b.JobID, b.Status, b.CreatedAt = job.ID, storage.BatchAssessing, tx.Now()
	if err := tx.PutBatch(t, b); err != nil {
		return err
	}
	return tx.PutBatchPolygons(t, b.ID, polygonIDs)
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
	if err := mergeProblems(problemsOf(err), ferr); err != nil {
		writeError(w, r, err)
		return
	}
	var list []*storage.Batch
	var more bool
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindBatches(tenantFrom(r.Context()), f, page)
		return err
	})
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
	id := ps.ByName("batchId")
	var b *storage.Batch
	var ids []string
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if b, err = tx.FindBatch(t, id); err != nil {
			return err
		}
		ids, err = tx.FindBatchPolygons(t, id)
		return err
	})
	err = apierr.Named(err, "batch", id)
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
	id := ps.ByName("batchId")
	var b *storage.Batch
	var doc []byte
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if b, err = tx.FindBatch(t, id); err != nil {
			return err
		}
		if b.Status == storage.BatchAssessing {
			return nil
		}
		doc, err = tx.FindBatchAssessment(t, id)
		return err
	})
	err = apierr.Named(err, "batch", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if doc == nil {
		w.Header().Set("Retry-After", "2")
		writeJSON(w, r, http.StatusOK, riskAssessmentDocument{BatchID: b.ID, JobID: b.JobID, Status: b.Status, Factors: []risk.Factor{}})
		return
	}
	writeJSON(w, r, http.StatusOK, json.RawMessage(doc))
}
