package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/geo/plotfile"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/polygon"
	"github.com/eudr/eudr/storage"
)

// plotFormat is the format of a POST /polygons body: ?format= when given
// (for a client that cannot set a Content-Type), else its Content-Type
// (none is GeoJSON); ?sheet= is only for a workbook.
func plotFormat(r *http.Request) (plotfile.Format, error) {
	q := r.URL.Query()
	var f plotfile.Format
	if name := q.Get("format"); name != "" {
		var ok bool
		if f, ok = plotfile.FormatOf(name, ""); !ok {
			names := make([]string, len(plotfile.Formats))
			for i, g := range plotfile.Formats {
				names[i] = string(g)
			}
			return "", apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "query.format",
				Issue: fmt.Sprintf("must be one of %s, not %q", strings.Join(names, ", "), name)})
		}
	} else {
		if err := checkContentType(r, plotfile.MediaTypes()...); err != nil {
			return "", err
		}
		f, _ = plotfile.FormatOf("", r.Header.Get("Content-Type"))
	}
	if q.Get("sheet") != "" && f != plotfile.XLSX {
		return "", apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "query.sheet",
			Issue: fmt.Sprintf("names a sheet of an XLSX workbook; the body is %s", f)})
	}
	return f, nil
}

type polygonsAcceptedResponse struct {
	JobID        string `json:"jobId"`
	FeatureCount int    `json:"featureCount"`
}

// handlePolygonsCreate checks a plot file (a FeatureCollection, or a file
// of another format converted to one) as a whole, answering every problem
// at once, and queues one polygon_ingestion job for all its features
// (polygon.Check, polygon.Submit).
func (a *App) handlePolygonsCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	format, err := plotFormat(r)
	repair, rerr := repairParam(r)
	if err := apierr.Merge(apierr.DetailsOf(rerr), err); err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, readBodyError(err))
		return
	}
	var sub *polygon.Submission
	if repair {
		sub, _, err = a.polygons.CheckRepaired(body, format, r.URL.Query().Get("sheet"))
	} else {
		sub, err = a.polygons.Check(body, format, r.URL.Query().Get("sheet"))
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		job, err := a.polygons.Submit(tx, t, sub)
		if err != nil {
			return reply{}, err
		}
		return accepted(job.ID, polygonsAcceptedResponse{JobID: job.ID, FeatureCount: sub.FeatureCount()}), nil
	})
}

// repairParam reads ?repair= of POST /polygons: true screens the features
// as POST /polygons/repair repairs them.
func repairParam(r *http.Request) (bool, error) {
	switch v := r.URL.Query().Get("repair"); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "query.repair",
			Issue: fmt.Sprintf("must be true or false, not %q", v)})
	}
}

// polygonsRepairResponse is the answer of POST /polygons/repair.
type polygonsRepairResponse struct {
	FeatureCount    int                     `json:"featureCount"`
	ChangedCount    int                     `json:"changedCount"`
	UnrepairedCount int                     `json:"unrepairedCount"`
	Collection      json.RawMessage         `json:"collection"`
	Features        []polygon.FeatureRepair `json:"features"`
}

// handlePolygonsRepair repairs a plot file (the same inputs and limits as
// POST /polygons) and answers the repaired FeatureCollection with every
// change made to each feature (polygon.Repair). It stores nothing.
func (a *App) handlePolygonsRepair(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	format, err := plotFormat(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, readBodyError(err))
		return
	}
	rep, err := a.polygons.Repair(body, format, r.URL.Query().Get("sheet"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	changed, unrepaired := rep.Counts()
	writeJSON(w, r, http.StatusOK, polygonsRepairResponse{FeatureCount: len(rep.Features), ChangedCount: changed,
		UnrepairedCount: unrepaired, Collection: rep.Collection, Features: rep.Features})
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

// riskBody is a screened plot's measured overlaps and risk score, as its
// evidence records them.
type riskBody = polygon.Risk

// polygonStatusResponse is GET /polygons/{polygonId}/status (docs/screening.md),
// with the failure's explanation besides its reason.
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

func toPolygonResponse(p *storage.Polygon, geom json.RawMessage) polygonResponse {
	return polygonResponse{PolygonID: p.ID, JobID: p.JobID, FeatureIndex: p.FeatureIndex,
		ExternalID: storage.Optional(p.ExternalID), SupplierID: storage.Optional(p.SupplierID), Commodity: p.Commodity,
		ProducerCountry: p.ProducerCountry, ProducerName: storage.Optional(p.ProducerName),
		ProductionPlace: storage.Optional(p.ProductionPlace), DeclaredAreaHa: p.DeclaredAreaHa, GeometryType: p.GeometryType,
		AreaHa: p.AreaHa, EUDRStatus: p.Status, FailureReason: storage.Optional(p.FailureReason),
		FailureDetail: storage.Optional(p.FailureDetail), Risk: polygon.RiskOf(p.Risk), ScreenedAt: storage.FormatTime(p.ScreenedAt), Geometry: geom}
}

func (a *App) handlePolygonsList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	q := r.URL.Query()
	f := polygon.FilterOf(q)
	if err := apierr.Merge(apierr.DetailsOf(err), polygon.CheckList(f, q.Get("include"))); err != nil {
		writeError(w, r, err)
		return
	}
	list, geoms, more, err := a.polygons.List(r.Context(), tenantFrom(r.Context()), f, page, q.Get("include") == "geometry")
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]polygonResponse, len(list))
	for i, p := range list {
		out[i] = toPolygonResponse(p, geoms[i])
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handlePolygonsExport streams the plots GET /polygons would list as one
// file (polygon.Export): the EU's GeoJSON file profile, CSV or KML.
func (a *App) handlePolygonsExport(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	q := r.URL.Query()
	f := polygon.FilterOf(q)
	format, err := polygon.CheckExport(q.Get("format"), f)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", format.MediaType())
	h.Set("Content-Disposition", `attachment; filename="`+format.FileName()+`"`)
	if r.Method == http.MethodHead {
		return
	}
	// Many plots over a slow link take longer than the listener's write
	// timeout: this response has none.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
		zerolog.Ctx(r.Context()).Debug().Err(err).Msg("clear write deadline")
	}
	cw := &countingWriter{w: w}
	if err := a.polygons.Export(r.Context(), tenantFrom(r.Context()), f, format, cw); err != nil {
		if cw.n == 0 {
			h.Del("Content-Disposition")
			writeError(w, r, err)
			return
		}
		// The file is under way: cut the response, so that the client
		// sees a failed download rather than a file that merely ends. A
		// client that went away is no failure of ours.
		l := zerolog.Ctx(r.Context())
		if r.Context().Err() != nil {
			l.Info().Err(err).Int64("bytes", cw.n).Msg("polygon export cut short by the client")
		} else {
			l.Error().Err(err).Int64("bytes", cw.n).Msg("polygon export failed")
		}
		panic(http.ErrAbortHandler)
	}
}

// countingWriter counts what was written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (a *App) handlePolygonsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	p, geom, err := a.polygons.FindWithGeometry(r.Context(), tenantFrom(r.Context()), ps.ByName("polygonId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, toPolygonResponse(p, geom))
}

func (a *App) handlePolygonsStatus(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	p, err := a.polygons.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("polygonId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, polygonStatusResponse{PolygonID: p.ID, JobID: p.JobID, EUDRStatus: p.Status,
		FailureReason: storage.Optional(p.FailureReason), FailureDetail: storage.Optional(p.FailureDetail), AreaHa: p.AreaHa,
		Risk: polygon.RiskOf(p.Risk), ScreenedAt: storage.FormatTime(p.ScreenedAt)})
}

// handlePolygonsEvidence answers the evidence document recorded when the
// polygon was screened, byte for byte, with its ledger entry and proof
// added as a "ledger" member (polygon.Evidence).
func (a *App) handlePolygonsEvidence(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	body, err := a.polygons.Evidence(r.Context(), tenantFrom(r.Context()), ps.ByName("polygonId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, json.RawMessage(body))
}

func (a *App) handlePolygonsDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return a.polygons.Delete(tx, t, ps.ByName("polygonId"))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}
