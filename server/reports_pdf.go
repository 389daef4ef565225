package server

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/report/pdf"
)

// pdfSource is what the PDF reports are read from.
func (a *App) pdfSource() pdf.Source {
	return pdf.Source{DB: a.db, Ledger: a.ledger, Polygons: a.polygons, Layers: a.layers, Batches: a.batches, Shipments: a.shipments, DDS: a.dds,
		BatchPlotPages: a.cfg.Reports.BatchPlotPages}
}

func (a *App) handlePolygonsReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, pdf.KindPolygon, ps.ByName("polygonId"))
}

func (a *App) handleBatchesReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, pdf.KindBatch, ps.ByName("batchId"))
}

func (a *App) handleDDSReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, pdf.KindDDS, ps.ByName("ddsId"))
}

// servePDF answers the report of kind of the record id as a PDF, recorded
// in the ledger the first time these bytes are made (pdf.Source.Make):
// X-Ledger-Index names the entry, X-Content-SHA256 and ETag carry the
// hash. The same record gives the same bytes, so a client can record the
// hash and check a later copy against it; a conditional request with that
// ETag is answered 304.
func (a *App) servePDF(w http.ResponseWriter, r *http.Request, kind, id string) {
	m, err := a.pdfSource().Make(r.Context(), tenantFrom(r.Context()), kind, id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Disposition", `inline; filename="`+id+`.pdf"`)
	h.Set("X-Content-SHA256", m.Record.SHA256)
	h.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(m.SHA256[:])+":") // RFC 9530
	h.Set("ETag", `"`+m.Record.SHA256+`"`)
	h.Set("X-Ledger-Index", strconv.FormatInt(m.Record.LedgerIndex, 10))
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(m.Body))
}

// handleReportsVerify answers whether the appliance made the PDF report
// sent as the body, of which record, and the ledger entry recording its
// SHA-256 with its proof (pdf.Source.Check).
func (a *App) handleReportsVerify(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	if err := checkContentType(r, "application/pdf"); err != nil {
		writeError(w, r, err)
		return
	}
	body, err := readBody(r)
	if err != nil {
		writeError(w, r, readBodyError(err))
		return
	}
	c, err := a.pdfSource().Check(r.Context(), tenantFrom(r.Context()), body)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, c)
}
