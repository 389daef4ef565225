package server

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// maxReportYears is the longest period one archive report may cover.
const maxReportYears = 10

type archiveRequest struct {
	From *string `json:"from"`
	To   *string `json:"to"`
}

type archiveAccepted struct {
	ReportID string `json:"reportId"`
	JobID    string `json:"jobId"`
}

// archiveInput is the queued input of an archive_report job; the period
// is in the report's record.
type archiveInput struct {
	ReportID string `json:"reportId"`
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

// validate reads the period of a request: from and to are RFC 3339
// date-times or dates (whole UTC days), both included, as the DLQ filters
// read them (storage.ParseTimeBound): to covers the whole day of a date, the whole
// millisecond of a date-time. It returns every problem at once.
func (req *archiveRequest) validate() (from, to time.Time, err error) {
	var probs apierr.Problems
	read := func(field string, v *string, end bool) (time.Time, bool) {
		if v == nil || *v == "" {
			probs.Add(apierr.DetailRequired, field, "is required")
			return time.Time{}, false
		}
		t, err := storage.ParseTimeBound(*v, end)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, field, fmt.Sprintf(
				"must be an RFC 3339 date-time (2026-01-31T00:00:00Z) or a date (2026-01-31), not %q", *v))
			return time.Time{}, false
		}
		return t.UTC(), true
	}
	from, okFrom := read("from", req.From, false)
	to, okTo := read("to", req.To, true)
	if okFrom && okTo {
		switch {
		case to.Before(from):
			probs.Add(apierr.DetailInvalidValue, "to", "must not be before from")
		case !to.Before(from.AddDate(maxReportYears, 0, 0)):
			probs.Add(apierr.DetailInvalidValue, "to", fmt.Sprintf("the period may span at most %d years; request several reports", maxReportYears))
		}
	}
	return from, to, probs.Err()
}

// reportDownloadPath is where a report's zip is served.
func reportDownloadPath(id string) string { return eudrPrefix + "/reports/" + id + "/download" }

// reportFile is the path of a report's zip.
func (a *App) reportFile(id string) string {
	return filepath.Join(a.cfg.Reports.dir(a.cfg.DataDir), id+".zip")
}

// handleReportsArchive records a PENDING report of the period and queues
// the archive_report job that writes its zip.
func (a *App) handleReportsArchive(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req archiveRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	from, to, err := req.validate()
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		id := storage.NewID("rpt", tx.Now())
		input, err := json.Marshal(archiveInput{ReportID: id})
		if err != nil {
			return reply{}, err
		}
		job, err := a.jobs.Enqueue(tx, t, work.ArchiveReport, 1, input)
		if err != nil {
			return reply{}, err
		}
		rep := &storage.Report{ID: id, JobID: job.ID, From: from, To: to, Status: storage.ReportPending, CreatedAt: tx.Now()}
		if err := tx.PutReport(t, rep); err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + job.ID}},
			body: archiveAccepted{ReportID: id, JobID: job.ID}}, nil
	})
}

// findReport reads the tenant's report and its job. A PENDING report
// whose job failed (a failure recorded by the runner rather than by the
// job itself) is answered FAILED.
func (a *App) findReport(r *http.Request, id string) (*storage.Report, *storage.Job, error) {
	var rep *storage.Report
	var job *storage.Job
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if rep, err = tx.FindReport(t, id); err != nil {
			return err
		}
		if job, err = tx.FindJob(t, rep.JobID); errors.Is(err, storage.ErrNotFound) {
			job, err = nil, nil
		}
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil, apierr.NotFound{Kind: "report", ID: id}
	}
	if err != nil {
		return nil, nil, err
	}
	if rep.Status == storage.ReportPending && job != nil && job.Status == storage.JobFailed {
		rep.Status = storage.ReportFailed
	}
	return rep, job, nil
}

func (a *App) toReportResponse(rep *storage.Report, job *storage.Job) reportResponse {
	resp := reportResponse{ReportID: rep.ID, JobID: rep.JobID, Status: rep.Status, From: storage.FormatTime(rep.From),
		To: storage.FormatTime(rep.To), CreatedAt: storage.FormatTime(rep.CreatedAt), CompletedAt: storage.FormatTimePtr(rep.CompletedAt)}
	switch rep.Status {
	case storage.ReportReady:
		sum, size, path := rep.SHA256, rep.SizeBytes, reportDownloadPath(rep.ID)
		resp.SHA256, resp.SizeBytes, resp.DownloadPath = &sum, &size, &path
		if ret := a.cfg.Reports.Retention; ret > 0 && rep.CompletedAt != nil {
			expires := rep.CompletedAt.Add(ret)
			resp.ExpiresAt = storage.FormatTimePtr(&expires)
		}
	case storage.ReportExpired:
		sum, size := rep.SHA256, rep.SizeBytes
		resp.SHA256, resp.SizeBytes, resp.ExpiresAt = &sum, &size, storage.FormatTimePtr(rep.ExpiredAt)
	case storage.ReportFailed:
		if job != nil && job.Error != nil {
			resp.Error = &jobErrorBody{Code: job.Error.Code, Message: job.Error.Message}
		}
	}
	return resp
}

// handleReportsGet answers a report's record, with Retry-After while its
// archive is being written.
func (a *App) handleReportsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	rep, job, err := a.findReport(r, ps.ByName("reportId"))
	if err != nil {
		writeError(w, r, err)
		return
	}
	if rep.Status == storage.ReportPending {
		w.Header().Set("Retry-After", "2")
	}
	writeJSON(w, r, http.StatusOK, a.toReportResponse(rep, job))
}

// reportUnavailable is the error of a download of a report that has no
// file to serve, or nil for a READY one.
func reportUnavailable(rep *storage.Report, job *storage.Job) error {
	switch rep.Status {
	case storage.ReportReady:
		return nil
	case storage.ReportPending:
		issue := fmt.Sprintf("report %s is being written (job %s); download it once report.ready is sent or GET /reports/%s says READY",
			rep.ID, rep.JobID, rep.ID)
		e := apierr.Conflict(apierr.DetailReportNotReady, "reportId", issue)
		e.RetryAfter = 2
		return e
	case storage.ReportFailed:
		issue := fmt.Sprintf("report %s failed (job %s) and has no archive; request a new one", rep.ID, rep.JobID)
		if job != nil && job.Error != nil {
			issue += ": " + job.Error.Message
		}
		return apierr.Conflict(apierr.DetailReportFailed, "reportId", issue)
	default: // EXPIRED
		return &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: fmt.Sprintf(
			"the archive of report %s was deleted when it expired (reports.retention); request a new one", rep.ID)}
	}
}

// handleReportsDownload streams a READY report's zip, with its SHA-256 as
// recorded when it was written (X-Content-SHA256 in hex, Digest in
// base64), so that the client can check what it received.
func (a *App) handleReportsDownload(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	rep, job, err := a.findReport(r, ps.ByName("reportId"))
	if err == nil {
		err = reportUnavailable(rep, job)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	l := zerolog.Ctx(r.Context())
	path := a.reportFile(rep.ID)
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		l.Warn().Str("report_id", rep.ID).Str("file", path).Msg("report file is missing")
		writeError(w, r, &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: fmt.Sprintf(
			"the archive of report %s is missing from the appliance's reports directory; request a new one", rep.ID)})
		return
	}
	if err != nil {
		writeError(w, r, fmt.Errorf("open report %s: %w", rep.ID, err))
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err == nil && st.Size() != rep.SizeBytes {
		err = fmt.Errorf("report file %s has %d bytes; %d were written", path, st.Size(), rep.SizeBytes)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	sum, _ := hex.DecodeString(rep.SHA256)
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Length", strconv.FormatInt(st.Size(), 10))
	h.Set("Content-Disposition", `attachment; filename="`+rep.ID+`.zip"`)
	h.Set("X-Content-SHA256", rep.SHA256)
	h.Set("Digest", "sha-256="+base64.StdEncoding.EncodeToString(sum))           // RFC 3230
	h.Set("Repr-Digest", "sha-256=:"+base64.StdEncoding.EncodeToString(sum)+":") // RFC 9530
	h.Set("ETag", `"`+rep.SHA256+`"`)
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusOK)
		return
	}
	// A large archive over a slow link takes longer than the listener's
	// write timeout: this response has none.
	if err := http.NewResponseController(w).SetWriteDeadline(time.Time{}); err != nil {
		l.Debug().Err(err).Msg("clear write deadline")
	}
	w.WriteHeader(http.StatusOK)
	if n, err := io.Copy(w, f); err != nil {
		// Headers are out: the body falls short of Content-Length, which
		// the client detects.
		l.Warn().Err(err).Str("report_id", rep.ID).Int64("bytes", n).Msg("report download cut short")
	}
}

// runArchiveJob writes a report's zip (writeReport) and then, in one
// transaction, marks the report READY with the zip's SHA-256 and size,
// records the job's result, publishes report.ready and completes the job.
// The file is in place before that transaction commits; a crash before it
// commits runs the job again, which writes the archive again from the
// start. A failure to write fails the job and the report (the cause is
// logged, not sent: it names files of the appliance).
func (a *App) runArchiveJob(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte) error {
	var in archiveInput
	if err := json.Unmarshal(input, &in); err != nil || in.ReportID == "" {
		return fmt.Errorf("archive job %s: bad input %s", job.ID, input)
	}
	var rep *storage.Report
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		var err error
		rep, err = tx.FindReport(t, in.ReportID)
		return err
	})
	if err != nil {
		return fmt.Errorf("report %s of job %s: %w", in.ReportID, job.ID, err)
	}
	sum, err := a.writeReport(ctx, t, rep)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err() // cut off by shutdown: the job runs again on the next start
		}
		return a.failReport(ctx, t, job, rep, err)
	}
	err = a.db.Update(ctx, func(tx *storage.Tx) error {
		now := tx.Now()
		rep.Status, rep.SHA256, rep.SizeBytes, rep.CompletedAt = storage.ReportReady, sum.sha256, sum.size, &now
		if err := tx.PutReport(t, rep); err != nil {
			return err
		}
		data := event.ReportReadyData{ReportID: rep.ID, SHA256: sum.sha256, SizeBytes: sum.size, DownloadPath: reportDownloadPath(rep.ID)}
		result, err := storage.MarshalJSON(data)
		if err != nil {
			return err
		}
		if err := tx.PutJobResult(t, job.ID, 0, result); err != nil {
			return err
		}
		job.Progress.Processed, job.Progress.Succeeded = 1, 1
		if _, _, err := a.events.Publish(tx, t, event.ReportReady, data); err != nil {
			return err
		}
		return work.Complete(tx, t, job)
	})
	if err != nil && ctx.Err() == nil {
		// The job fails: its file must not outlive it.
		os.Remove(a.reportFile(rep.ID))
	}
	return err
}

// failReport records a report's failure and fails its job (JOB_FAILED,
// job.failed), taking it off the queue; if that cannot be recorded, the
// runner fails the job with cause.
func (a *App) failReport(ctx context.Context, t storage.Tenant, job *storage.Job, rep *storage.Report, cause error) error {
	a.log.Error().Err(cause).Str("job_id", job.ID).Str("report_id", rep.ID).Msg("archive report failed")
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		rep.Status = storage.ReportFailed
		if err := tx.PutReport(t, rep); err != nil {
			return err
		}
		return a.jobs.Fail(tx, t, job, storage.JobError{Code: apierr.JobFailed, Message: fmt.Sprintf(
			"the archive of report %s could not be written; the appliance's log has the cause (job %s)", rep.ID, job.ID)})
	})
	if err != nil {
		return cause
	}
	return nil
}

// errNothingToExpire rolls back a sweep that found nothing, so that an idle
// appliance writes nothing.
var errNothingToExpire = errors.New("no report to expire")

// sweepReports deletes the files of READY reports older than
// reports.retention and marks them EXPIRED. The records are changed first:
// a crash in between leaves a file that nothing serves, never a READY
// report without its file.
func (a *App) sweepReports(ctx context.Context) {
	ret := a.cfg.Reports.Retention
	if ret <= 0 {
		return
	}
	var expired []storage.TenantReport
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		if expired, err = tx.ExpireReports(tx.Now().Add(-ret)); err == nil && len(expired) == 0 {
			err = errNothingToExpire
		}
		return err
	})
	if err != nil {
		if !errors.Is(err, errNothingToExpire) && ctx.Err() == nil {
			a.log.Warn().Err(err).Msg("expire reports")
		}
		return
	}
	for _, e := range expired {
		path := a.reportFile(e.Report.ID)
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			a.log.Warn().Err(err).Str("report_id", e.Report.ID).Str("file", path).Msg("delete expired report")
			continue
		}
		a.log.Info().Str("report_id", e.Report.ID).Str("tenant", e.Tenant.String()).Msg("report expired; its file is deleted")
	}
}

// archiveFeature is a stored feature (as sent, whitespace removed) with the
// polygon's ID, status and failure reason as the first members of its
// properties, replacing any members of those names sent with it. Every
// other member is kept byte for byte, the geometry included.
func archiveFeature(feature []byte, p *storage.Polygon) ([]byte, error) {
	added, err := storage.MarshalJSON(struct {
		PolygonID     string  `json:"polygonId"`
		EUDRStatus    string  `json:"eudrStatus"`
		FailureReason *string `json:"failureReason"`
	}{p.ID, p.Status, storage.Optional(p.FailureReason)})
	if err != nil {
		return nil, err
	}
	members, err := objectMembers(feature)
	if err != nil {
		return nil, fmt.Errorf("stored feature of polygon %s: %w", p.ID, err)
	}
	out := make([]byte, 0, len(feature)+len(added)+16)
	out = append(out, '{')
	hasProps := false
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(append(out, m.key...), ':')
		if m.name != "properties" {
			out = append(out, m.value...)
			continue
		}
		hasProps = true
		props, err := objectMembers(m.value)
		if err != nil { // null: only the added members
			out = append(out, added...)
			continue
		}
		out = append(out, added[:len(added)-1]...)
		for _, pm := range props {
			switch pm.name {
			case "polygonId", "eudrStatus", "failureReason":
				continue
			}
			out = append(append(append(append(out, ','), pm.key...), ':'), pm.value...)
		}
		out = append(out, '}')
	}
	if !hasProps {
		if len(members) > 0 {
			out = append(out, ',')
		}
		out = append(append(out, `"properties":`...), added...)
	}
	return append(out, '}'), nil
}

// member is one member of a JSON object: its key as written (quoted) and
// decoded, and its value as written.
type member struct {
	key   []byte
	name  string
	value json.RawMessage
}

// objectMembers splits a JSON object into its members, in order, keeping
// their bytes. It fails for anything but an object.
func objectMembers(data []byte) ([]member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errors.New("not a JSON object")
	}
	var out []member
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		key := bytes.TrimLeft(data[start:dec.InputOffset()], ", \t\r\n")
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, member{key: key, name: name, value: v})
	}
	return out, nil
}
