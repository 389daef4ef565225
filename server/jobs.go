package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

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
	resp := jobResponse{JobID: j.ID, Type: j.Type, Status: j.Status,
		Progress: progressBody{Total: j.Progress.Total, Processed: j.Progress.Processed,
			Succeeded: j.Progress.Succeeded, Failed: j.Progress.Failed},
		Results: p.ResultsJSON(), ResultCounts: resultCountsBody{Total: p.Counts.Total, ByStatus: p.Counts.ByStatus},
		NextResults: storage.Optional(next), LedgerProofs: p.Proofs, CreatedAt: storage.FormatTime(j.CreatedAt),
		StartedAt: storage.FormatTimePtr(j.StartedAt), CompletedAt: storage.FormatTimePtr(j.CompletedAt), retryBody: toRetryBody(j.Retry)}
	switch {
	case j.Status == storage.JobCompleted || j.Status == storage.JobFailed:
		resp.Progress.Percent = 100
	case j.Progress.Total > 0:
		resp.Progress.Percent = 100 * j.Progress.Processed / j.Progress.Total
	}
	if resp.LedgerProofs == nil {
		resp.LedgerProofs = []anchor.Proof{}
	}
	if j.Error != nil {
		resp.Error = &jobErrorBody{Code: j.Error.Code, Message: j.Error.Message}
	}
	return resp
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
