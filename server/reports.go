package server

import (
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/report"
	"github.com/eudr/eudr/storage"
)

type archiveAccepted struct {
	ReportID string `json:"reportId"`
	JobID    string `json:"jobId"`
}

// reportResponse is GET /reports/{reportId}.
type reportResponse struct {
	ReportID     string        `json:"reportId"`
	JobID        string        `json:"jobId"`
	Status       string        `json:"status"` // PENDING, READY, FAILED, EXPIRED
	From         string        `json:"from"`
	To           string        `json:"to"`
	SHA256       *string       `json:"sha256"`
	SizeBytes    *int64        `json:"sizeBytes"`
	DownloadPath *string       `json:"downloadPath"`
	CreatedAt    string        `json:"createdAt"`
	CompletedAt  *string       `json:"completedAt"`
	ExpiresAt    *string       `json:"expiresAt"`
	Error        *jobErrorBody `json:"error"`
}

// reportDownloadPath is where a report's zip is served.
func reportDownloadPath(id string) string { return eudrPrefix + "/reports/" + id + "/download" }

// handleReportsArchive records a PENDING report of the period and queues
// the archive_report job that writes its zip (report.Request).
func (a *App) handleReportsArchive(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req report.ArchiveRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	rep, err := req.Validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := a.reports.Request(tx, t, rep); err != nil {
			return reply{}, err
		}
		return accepted(rep.JobID, archiveAccepted{ReportID: rep.ID, JobID: rep.JobID}), nil
	})
}

// handleReportsGet answers a report's record, with Retry-After while its
// archive is being written.
func (a *App) handleReportsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	found, err := a.reports.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("reportId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	rep := found.Record
	resp := reportResponse{ReportID: rep.ID, JobID: rep.JobID, Status: rep.Status, From: storage.FormatTime(rep.From),
		To: storage.FormatTime(rep.To), CreatedAt: storage.FormatTime(rep.CreatedAt), CompletedAt: storage.FormatTimePtr(rep.CompletedAt),
		ExpiresAt: storage.FormatTimePtr(found.ExpiresAt)}
	switch rep.Status {
	case storage.ReportPending:
		w.Header().Set("Retry-After", "2")
	case storage.ReportReady:
		sum, size, path := rep.SHA256, rep.SizeBytes, reportDownloadPath(rep.ID)
		resp.SHA256, resp.SizeBytes, resp.DownloadPath = &sum, &size, &path
	case storage.ReportExpired:
		sum, size := rep.SHA256, rep.SizeBytes
		resp.SHA256, resp.SizeBytes = &sum, &size
	case storage.ReportFailed:
		if found.Job != nil && found.Job.Error != nil {
			resp.Error = &jobErrorBody{Code: found.Job.Error.Code, Message: found.Job.Error.Message}
		}
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// handleReportsDownload streams a READY report's zip (report.Open), with
// its SHA-256 as recorded when it was written (X-Content-SHA256 in hex,
// Digest in base64), so that the client can check what it received.
func (a *App) handleReportsDownload(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	f, err := a.reports.Open(r.Context(), tenantFrom(r.Context()), ps.ByName("reportId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	defer f.Zip.Close()
	rep := f.Report
	sum, _ := hex.DecodeString(rep.SHA256)
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	h.Set("Content-Disposition", `attachment; filename="`+rep.ID+`.zip"`)
	h.Set("X-Content-SHA256", rep.SHA256)
	h.Set("Digest", "sha-256="+base64.StdEncoding.EncodeToString(sum))           // RFC 3230
	h.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":") // RFC 9530
	h.Set("ETag", `"`+rep.SHA256+`"`)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	l := zerolog.Ctx(r.Context())
	// A large archive over a slow link takes longer than the listener's
	// write timeout: this response has none.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
		l.Debug().Err(err).Msg("clear write deadline")
	}
	w.WriteHeader(http.StatusOK)
	if n, err := io.Copy(w, f.Zip); err != nil {
		// Headers are out: the body falls short of Content-Length, which
		// the client detects.
		l.Warn().Err(err).Str("report_id", rep.ID).Int64("bytes", n).Msg("report download cut short")
	}
}
