package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// polygonMediaTypes are the request bodies POST /polygons takes.
var polygonMediaTypes = []string{"application/json", "application/geo+json"}

type polygonsAcceptedResponse struct {
	JobID        string `json:"jobId"`
	FeatureCount int    `json:"featureCount"`
}

// handlePolygonsCreate validates a FeatureCollection as a whole, answering
// every problem at once, and queues one polygon_ingestion job for all its
// features. The body is kept with the job until the job ends.
func (a *App) handlePolygonsCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if err := checkContentType(r, polygonMediaTypes...); err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, readBodyError(err))
		return
	}
	if len(bytes.TrimSpace(body)) == 0 {
		writeError(w, r, apierr.Validation(apierr.Detail{Code: apierr.DetailMalformedJSON, Field: "body",
			Issue: "request body is empty; a GeoJSON FeatureCollection is required"}))
		return
	}
	// Validated as a whole, counted, not kept: the job decodes the body
	// again, a chunk at a time.
	max, count := a.cfg.Limits.MaxFeatures, 0
	_, err = geo.ParseFeatureCollection(body, geo.ParseOptions{MaxFeatures: max,
		Each: func(geo.Feature) error { count++; return nil }})
	if err != nil {
		writeError(w, r, polygonRequestError(err, max))
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		job, err := a.jobs.Enqueue(tx, t, work.PolygonIngestion, count, body)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + job.ID}},
			body: polygonsAcceptedResponse{JobID: job.ID, FeatureCount: count}}, nil
	})
}

// polygonRequestError maps what ParseFeatureCollection refused: its
// problems to the 400 envelope, too many features to 413.
func polygonRequestError(err error, maxFeatures int) error {
	if errors.Is(err, geo.ErrTooManyFeatures) {
		return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Code: apierr.CodePayloadTooLarge,
			Message: fmt.Sprintf("a request may hold at most %d features; split the collection", maxFeatures),
			Details: []apierr.Detail{{Code: apierr.DetailInvalidValue, Field: "features",
				Issue: fmt.Sprintf("more than %d features (limits.max_features)", maxFeatures)}}}
	}
	return err // geo.Problems: apierr.From lists them all
}

// polygonResponse is a polygon as GET /polygons lists it, and with its
// geometry as GET /polygons/{polygonId} answers it.
type polygonResponse struct {
	PolygonID       string          `json:"polygonId"`
	JobID           string          `json:"jobId"`
	FeatureIndex    int             `json:"featureIndex"`
	ExternalID      *string         `json:"externalId"`
	SupplierID      *string         `json:"supplierId"`
	Commodity       string          `json:"commodity"`
	ProducerCountry string          `json:"producerCountry"`
	ProducerName    *string         `json:"producerName"`
	ProductionPlace *string         `json:"productionPlace"`
	DeclaredAreaHa  *float64        `json:"declaredAreaHa"`
	GeometryType    string          `json:"geometryType"`
	AreaHa          float64         `json:"areaHa"`
	EUDRStatus      string          `json:"eudrStatus"`
	FailureReason   *string         `json:"failureReason"`
	FailureDetail   *string         `json:"failureDetail"`
	Risk            *riskBody       `json:"risk"`
	ScreenedAt      string          `json:"screenedAt"`
	Geometry        json.RawMessage `json:"geometry,omitempty"`
}

// riskBody is a screened plot's measured overlaps and risk score.
type riskBody struct {
	DeforestedHa  float64 `json:"deforestedHa"`
	DeforestedPct float64 `json:"deforestedPct"`
	ProtectedHa   float64 `json:"protectedHa"`
	ProtectedPct  float64 `json:"protectedPct"`
	RiskScore     int     `json:"riskScore"`
}

// polygonStatusResponse is GET /polygons/{polygonId}/status (API.md
// section 4), with the failure's explanation besides its reason.
type polygonStatusResponse struct {
	PolygonID     string    `json:"polygonId"`
	JobID         string    `json:"jobId"`
	EUDRStatus    string    `json:"eudrStatus"`
	FailureReason *string   `json:"failureReason"`
	FailureDetail *string   `json:"failureDetail"`
	AreaHa        float64   `json:"areaHa"`
	Risk          *riskBody `json:"risk"`
	ScreenedAt    string    `json:"screenedAt"`
}

func toRiskBody(r *storage.PolygonRisk) *riskBody {
	if r == nil {
		return nil
	}
	return &riskBody{DeforestedHa: r.DeforestedHa, DeforestedPct: r.DeforestedPct,
		ProtectedHa: r.ProtectedHa, ProtectedPct: r.ProtectedPct, RiskScore: r.RiskScore}
}

func toPolygonResponse(p *storage.Polygon) polygonResponse {
	return polygonResponse{PolygonID: p.ID, JobID: p.JobID, FeatureIndex: p.FeatureIndex,
		ExternalID: storage.Optional(p.ExternalID), SupplierID: storage.Optional(p.SupplierID), Commodity: p.Commodity,
		ProducerCountry: p.ProducerCountry, ProducerName: storage.Optional(p.ProducerName),
		ProductionPlace: storage.Optional(p.ProductionPlace), DeclaredAreaHa: p.DeclaredAreaHa, GeometryType: p.GeometryType,
		AreaHa: p.AreaHa, EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason),
		FailureDetail: storage.Optional(p.FailureDetail), Risk: toRiskBody(p.Risk), ScreenedAt: storage.FormatTime(p.ScreenedAt)}
}

// polygonFilter reads the list filters of GET /polygons, checking the
// enumerated ones so that a misspelt value is an error, not an empty list.
func polygonFilter(r *http.Request) (storage.PolygonFilter, error) {
	q := r.URL.Query()
	f := storage.PolygonFilter{JobID: q.Get("jobId"), Status: q.Get("eudrStatus"),
		SupplierID: q.Get("supplierId"), Commodity: q.Get("commodity")}
	var probs apierr.Problems
	switch f.Status {
	case "", geo.StatusCompliant, geo.StatusHighRisk, geo.StatusFailed:
	default:
		probs.Add(apierr.DetailInvalidValue, "query.eudrStatus", "must be COMPLIANT, HIGH_RISK or FAILED")
	}
	if f.Commodity != "" && !geo.IsCommodity(f.Commodity) {
		probs.Add(apierr.DetailInvalidValue, "query.commodity", "must be one of cattle, cocoa, coffee, oil_palm, soya, wood, rubber")
	}
	return f, probs.Err()
}

func (a *App) handlePolygonsList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	f, ferr := polygonFilter(r)
	if err := mergeProblems(problemsOf(err), ferr); err != nil {
		writeError(w, r, err)
		return
	}
	var list []*storage.Polygon
	var more bool
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		list, more, err = tx.FindPolygons(tenantFrom(r.Context()), f, page)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]polygonResponse, len(list))
	for i, p := range list {
		out[i] = toPolygonResponse(p)
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// problemsOf returns the details of a 400, or nil for no error.
func problemsOf(err error) apierr.Problems {
	if err == nil {
		return nil
	}
	return apierr.From(err).Details
}

// findPolygon reads the polygon of the request's path, and its detail when
// withDetail is set; a missing one is a 404 that names it.
func (a *App) findPolygon(r *http.Request, id string, withDetail bool) (*storage.Polygon, *storage.PolygonDetail, error) {
	var p *storage.Polygon
	var d *storage.PolygonDetail
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if p, err = tx.FindPolygon(t, id); err != nil || !withDetail {
			return err
		}
		d, err = tx.FindPolygonDetail(t, id)
		return err
	})
	err = apierr.Named(err, "polygon", id)
	return p, d, err
}

func (a *App) handlePolygonsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	p, d, err := a.findPolygon(r, ps.ByName("polygonId"), true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	geom, err := featureGeometry(d.Feature)
	if err != nil {
		writeError(w, r, fmt.Errorf("polygon %s: %w", p.ID, err))
		return
	}
	resp := toPolygonResponse(p)
	resp.Geometry = geom
	writeJSON(w, r, http.StatusOK, resp)
}

// featureGeometry returns the geometry member of a stored feature.
func featureGeometry(feature json.RawMessage) (json.RawMessage, error) {
	var f struct {
		Geometry json.RawMessage `json:"geometry"`
	}
	if err := json.Unmarshal(feature, &f); err != nil {
		return nil, fmt.Errorf("stored feature: %w", err)
	}
	return f.Geometry, nil
}

func (a *App) handlePolygonsStatus(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	p, _, err := a.findPolygon(r, ps.ByName("polygonId"), false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, polygonStatusResponse{PolygonID: p.ID, JobID: p.JobID, EUDRStatus: p.Status,
		FailureReason: storage.Optional(p.FailureReason), FailureDetail: storage.Optional(p.FailureDetail), AreaHa: p.AreaHa,
		Risk: toRiskBody(p.Risk), ScreenedAt: storage.FormatTime(p.ScreenedAt)})
}

// handlePolygonsEvidence answers the evidence document recorded when the
// polygon was screened, byte for byte, with its ledger entry and proof
// added as a "ledger" member (see withLedger).
func (a *App) handlePolygonsEvidence(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("polygonId")
	var body []byte
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		p, err := tx.FindPolygon(t, id)
		if err != nil {
			return err
		}
		d, err := tx.FindPolygonDetail(t, id)
		if err != nil {
			return err
		}
		body, err = anchor.WithProof(tx, t, d.Evidence, p.LedgerIndex)
		return err
	})
	err = apierr.Named(err, "polygon", id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, json.RawMessage(body))
}

func (a *App) handlePolygonsDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("polygonId")
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return tx.DeletePolygon(tenantFrom(r.Context()), id)
	})
	var inUse *storage.PolygonInUseError
	switch {
	case errors.Is(err, storage.ErrNotFound):
		err = apierr.NotFound{Kind: "polygon", ID: id}
	case errors.As(err, &inUse):
		err = apierr.Conflict(apierr.DetailPolygonInUse, "polygonId", fmt.Sprintf("polygon %s is used by batch %s: a polygon in a batch cannot be deleted",
			id, strings.Join(inUse.BatchIDs, ", ")))
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
