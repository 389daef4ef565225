package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type jobResponse struct {
	JobID        string          `json:"jobId"`
	Type         string          `json:"type"`
	Status       string          `json:"status"`
	Progress     progressBody    `json:"progress"`
	Results      json.RawMessage `json:"results"`
	LedgerProofs []anchor.Proof  `json:"ledgerProofs"`
	Error        *jobErrorBody   `json:"error"`
	CreatedAt    string          `json:"createdAt"`
	StartedAt    *string         `json:"startedAt"`
	CompletedAt  *string         `json:"completedAt"`
	retryBody
}

type progressBody struct {
	Total     int `json:"total"`
	Processed int `json:"processed"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
	Percent   int `json:"percent"`
}

type jobErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// toJobResponse answers job j with its recorded results (one JSON value
// per item, in item order) and the proofs of the entries it anchored.
func toJobResponse(j *storage.Job, results []json.RawMessage, proofs []anchor.Proof) jobResponse {
	resp := jobResponse{JobID: j.ID, Type: j.Type, Status: j.Status,
		Progress: progressBody{Total: j.Progress.Total, Processed: j.Progress.Processed,
			Succeeded: j.Progress.Succeeded, Failed: j.Progress.Failed},
		Results: joinJSON(results), LedgerProofs: proofs, CreatedAt: storage.FormatTime(j.CreatedAt),
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

// handleJobsGet answers a job's record, with Retry-After while it is not
// finished (API.md section 5): the time until its next attempt when it is
// waiting to try again.
func (a *App) handleJobsGet(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	var job *storage.Job
	var results []json.RawMessage
	var proofs []anchor.Proof
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if job, err = tx.FindJob(t, ps.ByName("jobId")); err != nil {
			return err
		}
		if results, err = tx.FindJobResults(t, job.ID); err != nil {
			return err
		}
		proofs, _, err = anchor.Prove(tx, t, job.LedgerIndexes)
		return err
	})
	if err != nil {
		err = apierr.Named(err, "job", ps.ByName("jobId"))
		writeError(w, r, err)
		return
	}
	if job.Status == storage.JobQueued || job.Status == storage.JobRunning {
		w.Header().Set("Retry-After", strconv.Itoa(jobRetryAfter(job, a.now())))
	}
	writeJSON(w, r, http.StatusOK, toJobResponse(job, results, proofs))
}

// joinJSON makes one JSON array of values.
func joinJSON(values []json.RawMessage) json.RawMessage {
	n := 2
	for _, v := range values {
		n += len(v) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, v := range values {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']')
}
