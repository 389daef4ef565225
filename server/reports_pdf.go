package server

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/report/pdf"
	"github.com/eudr/eudr/storage"
)

// pdfSource is what the PDF reports are read from.
func (a *App) pdfSource() pdf.Source {
	return pdf.Source{Polygons: a.polygons, Layers: a.layers, Batches: a.batches, Shipments: a.shipments, DDS: a.dds,
		BatchPlotPages: a.cfg.Reports.BatchPlotPages}
}

func (a *App) handlePolygonsReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, ps.ByName("polygonId"), a.pdfSource().PlotReport)
}

func (a *App) handleBatchesReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, ps.ByName("batchId"), a.pdfSource().BatchReport)
}

func (a *App) handleDDSReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.servePDF(w, r, ps.ByName("ddsId"), a.pdfSource().StatementReport)
}

// servePDF answers the report render makes of the record id as a PDF,
// with its SHA-256 as X-Content-SHA256 and ETag: the same record gives the
// same bytes, so a client can record the hash and check a later copy
// against it.
func (a *App) servePDF(w http.ResponseWriter, r *http.Request, id string, render func(context.Context, storage.Tenant, string) ([]byte, error)) {
	body, err := render(r.Context(), tenantFrom(r.Context()), id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sum := sha256.Sum256(body)
	h := w.Header()
	h.Set("Content-Type", "application/pdf")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("Content-Disposition", `inline; filename="`+id+`.pdf"`)
	h.Set("X-Content-SHA256", hex.EncodeToString(sum[:]))
	h.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum[:])+":") // RFC 9530
	h.Set("ETag", `"`+hex.EncodeToString(sum[:])+`"`)
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}
