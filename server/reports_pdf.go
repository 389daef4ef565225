package server

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/report/pdf"
)

// handlePolygonsReportPDF answers a plot's report as a PDF
// (pdf.Source.PlotReport), with its SHA-256 as X-Content-SHA256 and
// ETag: the same record gives the same bytes, so a client can record the
// hash and check a later copy against it.
func (a *App) handlePolygonsReportPDF(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	id := ps.ByName("polygonId")
	body, err := pdf.Source{Polygons: a.polygons, Layers: a.layers}.PlotReport(r.Context(), tenantFrom(r.Context()), id)
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
