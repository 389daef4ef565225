package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

type jobResponse struct {
	JobID        string           `json:"jobId"`
	Type         string           `json:"type"`
	Status       string           `json:"status"`
	Progress     progressBody     `json:"progress"`
	Results      json.RawMessage  `json:"results"`
	ResultCounts resultCountsBody `json:"resultCounts"`
	NextResults  *string          `json:"nextResults"`
	LedgerProofs []anchor.Proof   `json:"ledgerProofs"`
	Error        *jobErrorBody    `json:"error"`
	CreatedAt    string           `json:"createdAt"`
	StartedAt    *string          `json:"startedAt"`
	CompletedAt  *string          `json:"completedAt"`
	retryBody
}

// jobSummaryResponse is a job as GET /jobs lists it: its record without
// its results or proofs.
type jobSummaryResponse struct {
	JobID        string           `json:"jobId"`
	Type         string           `json:"type"`
	Status       string           `json:"status"`
	Progress     progressBody     `json:"progress"`
	ResultCounts resultCountsBody `json:"resultCounts"`
	Error        *jobErrorBody    `json:"error"`
	CreatedAt    string           `json:"createdAt"`
	StartedAt    *string          `json:"startedAt"`
	CompletedAt  *string          `json:"completedAt"`
	retryBody
}

type progressBody struct {
	Total     int `json:"total"`
	Processed int `json:"processed"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Percent   int `json:"percent"`
}

type resultCountsBody struct {
	Total    int            `json:"total"`
	ByStatus map[string]int `json:"byStatus"`
}

type jobErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// toJobResponse answers job p.Job with the page of its results p holds
// (one JSON value per item, in item order), the counts of all of them, the
// link to the next page (next, "" for none) and the proofs of its entries.
func toJobResponse(p *work.Page, next string) jobResponse {
	j := p.Job
	s := toJobSummary(j, p.Counts)
	resp := jobResponse{JobID: s.JobID, Type: s.Type, Status: s.Status, Progress: s.Progress,
		Results: p.ResultsJSON(), ResultCounts: s.ResultCounts, NextResults: storage.Optional(next), LedgerProofs: p.Proofs,
		Error: s.Error, CreatedAt: s.CreatedAt, StartedAt: s.StartedAt, CompletedAt: s.CompletedAt, retryBody: s.retryBody}
	if resp.LedgerProofs == nil {
		resp.LedgerProofs = []anchor.Proof{}
	}
	return resp
}

// toJobSummary answers job j whose results counts are c.
func toJobSummary(j *storage.Job, c storage.JobResultCounts) jobSummaryResponse {
	resp := jobSummaryResponse{JobID: j.ID, Type: j.Type, Status: j.Status,
		Progress: progressBody{Total: j.Progress.Total, Processed: j.Progress.Processed,
			Succeeded: j.Progress.Succeeded, Failed: j.Progress.Failed},
		ResultCounts: resultCountsBody{Total: c.Total, ByStatus: c.ByStatus}, CreatedAt: storage.FormatTime(j.CreatedAt),
		StartedAt: storage.FormatTimePtr(j.StartedAt), CompletedAt: storage.FormatTimePtr(j.CompletedAt), retryBody: toRetryBody(j.Retry)}
	if resp.ResultCounts.ByStatus == nil {
		resp.ResultCounts.ByStatus = map[string]int{}
	}
	switch {
	case j.Status == storage.JobCompleted || j.Status == storage.JobFailed:
		resp.Progress.Percent = 100
	case j.Progress.Total > 0:
		resp.Progress.Percent = 100 * j.Progress.Processed / j.Progress.Total
	}
	if j.Error != nil {
		resp.Error = &jobErrorBody{Code: j.Error.Code, Message: j.Error.Message}
	}
	return resp
}

// handleJobsList answers one page of the caller's jobs, newest first,
// without their results (?status=, ?type=).
func (a *App) handleJobsList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	q := r.URL.Query()
	f := storage.JobFilter{Status: q.Get("status"), Type: q.Get("type")}
	probs := apierr.DetailsOf(err)
	switch f.Status {
	case "", storage.JobQueued, storage.JobRunning, storage.JobCompleted, storage.JobFailed:
	default:
		probs.Add(apierr.DetailInvalidValue, "query.status", "must be QUEUED, RUNNING, COMPLETED or FAILED")
	}
	if f.Type != "" && !slices.Contains(work.Kinds, f.Type) {
		probs.Add(apierr.DetailInvalidValue, "query.type", "must be one of "+strings.Join(work.Kinds, ", "))
	}
	if err := probs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	list, more, err := a.jobs.List(r.Context(), tenantFrom(r.Context()), f, page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]jobSummaryResponse, len(list))
	for i, j := range list {
		out[i] = toJobSummary(j, *j.ResultCounts)
	}
	if more {
		setNextPage(w, r, page, list[len(list)-1].ID)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// handleJobsGet answers a job's record with the first page of its results
// (?limit=, 1,000 by default) and, when more follow, nextResults: the job is
// no list, so the link is in its body, not in Link and X-Next-Cursor. It has
// Retry-After while the job is not finished (docs/jobs.md): the time until
// its next attempt when it is waiting to try again.
func (a *App) handleJobsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	limit, err := parseLimit(r, maxPageLimit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	p, err := a.jobs.Find(r.Context(), tenantFrom(r.Context()), ps.ByName("jobId"), limit)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if p.Job.Status == storage.JobQueued || p.Job.Status == storage.JobRunning {
		w.Header().Set("Retry-After", strconv.Itoa(jobRetryAfter(p.Job, a.now())))
	}
	next := ""
	if p.Next != "" { // a cursor needs no escaping: a job ID, "_", digits
		next = fmt.Sprintf("%s/jobs/%s/results?cursor=%s&limit=%d", eudrPrefix, p.Job.ID, p.Next, limit)
	}
	writeJSON(w, r, http.StatusOK, toJobResponse(p, next))
}

// handleJobResults answers one page of a job's results in item order
// (not newest first: they are a sequence), paged as the lists are.
func (a *App) handleJobResults(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	page, err := parsePage(r)
	if err := apierr.Merge(apierr.DetailsOf(err), work.CheckCursor(ps.ByName("jobId"), page.After)); err != nil {
		writeError(w, r, err)
		return
	}
	p, err := a.jobs.Results(r.Context(), tenantFrom(r.Context()), ps.ByName("jobId"), page)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if p.Next != "" {
		setNextPage(w, r, page, p.Next)
	}
	writeJSON(w, r, http.StatusOK, p.ResultsJSON())
}
