package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// jobPayload is what every queued job carries besides its own input: whose
// job it is, so handlers and failures find the job record.
type jobPayload struct {
	Org   string          `json:"org"`
	Env   string          `json:"env"`
	Input json.RawMessage `json:"input,omitempty"`
}

func (p jobPayload) tenant() storage.Tenant {
	return storage.Tenant{Org: p.Org, Env: storage.Environment(p.Env)}
}

// enqueueJob records a QUEUED job of the tenant and its queue entry in the
// caller's transaction: the job exists exactly when its work is queued. The
// runner is woken when the transaction commits.
func (a *App) enqueueJob(tx *storage.Tx, t storage.Tenant, jobType string, total int, input any) (*storage.Job, error) {
	raw, err := json.Marshal(input)
	if err != nil {
		return nil, fmt.Errorf("encode %s input: %w", jobType, err)
	}
	payload, err := json.Marshal(jobPayload{Org: t.Org, Env: string(t.Env), Input: raw})
	if err != nil {
		return nil, err
	}
	job := &storage.Job{ID: storage.NewID("job", tx.Now()), Type: jobType, Status: storage.JobQueued,
		Progress: storage.JobProgress{Total: total}, CreatedAt: tx.Now()}
	if err := tx.PutJob(t, job); err != nil {
		return nil, err
	}
	if err := queue.Enqueue(tx.Tx, queue.Job{ID: job.ID, Kind: jobType, Payload: payload, RunAt: tx.Now()}); err != nil {
		return nil, err
	}
	tx.OnCommit(a.runner.Wake)
	return job, nil
}

// failJob marks a job FAILED after a fatal error and fires job.failed, in
// the runner's transaction that removes it from the queue.
func (a *App) failJob(btx *bolt.Tx, j queue.Job, cause error) error {
	var p jobPayload
	if err := json.Unmarshal(j.Payload, &p); err != nil {
		return fmt.Errorf("job %s payload: %w", j.ID, err)
	}
	tx := storage.WrapTx(btx, a.now())
	t := p.tenant()
	job, err := tx.FindJob(t, j.ID)
	if errors.Is(err, storage.ErrNotFound) {
		return nil // deleted meanwhile: nothing to report
	}
	if err != nil {
		return err
	}
	return a.markJobFailed(tx, t, job, storage.JobError{Code: apierr.JobFailed, Message: cause.Error()})
}

// markJobFailed records job as FAILED with jerr, drops its input and fires
// job.failed, in the caller's transaction. A handler that fails its job
// itself (with its own error code) also takes it off the queue.
func (a *App) markJobFailed(tx *storage.Tx, t storage.Tenant, job *storage.Job, jerr storage.JobError) error {
	now := tx.Now()
	job.Status = storage.JobFailed
	job.Error = &jerr
	job.CompletedAt = &now
	job.Retry = nil // the fatal error is the last attempt's outcome
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	if err := tx.DeleteJobInput(t, job.ID); err != nil {
		return err
	}
	_, _, err := a.events.Publish(tx, t, event.JobFailed, event.JobFailedData{JobID: job.ID, Type: job.Type, Error: *job.Error})
	return err
}

type jobResponse struct {
	JobID        string          `json:"jobId"`
	Type         string          `json:"type"`
	Status       string          `json:"status"`
	Progress     progressBody    `json:"progress"`
	Results      json.RawMessage `json:"results"`
	LedgerProofs []ledgerProof   `json:"ledgerProofs"`
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
func toJobResponse(j *storage.Job, results []json.RawMessage, proofs []ledgerProof) jobResponse {
	resp := jobResponse{JobID: j.ID, Type: j.Type, Status: j.Status,
		Progress: progressBody{Total: j.Progress.Total, Processed: j.Progress.Processed,
			Succeeded: j.Progress.Succeeded, Failed: j.Progress.Failed},
		Results: joinJSON(results), LedgerProofs: proofs, CreatedAt: formatTime(j.CreatedAt),
		StartedAt: formatTimePtr(j.StartedAt), CompletedAt: formatTimePtr(j.CompletedAt), retryBody: toRetryBody(j.Retry)}
	switch {
	case j.Status == storage.JobCompleted || j.Status == storage.JobFailed:
		resp.Progress.Percent = 100
	case j.Progress.Total > 0:
		resp.Progress.Percent = 100 * j.Progress.Processed / j.Progress.Total
	}
	if resp.LedgerProofs == nil {
		resp.LedgerProofs = []ledgerProof{}
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
	var proofs []ledgerProof
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if job, err = tx.FindJob(t, ps.ByName("jobId")); err != nil {
			return err
		}
		if results, err = tx.FindJobResults(t, job.ID); err != nil {
			return err
		}
		proofs, _, err = proveEntries(tx.Tx, t, job.LedgerIndexes)
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

// jobFunc does a job's work. It records its results and completes the job
// with completeJob in its final transaction.
type jobFunc func(ctx context.Context, t storage.Tenant, job *storage.Job, input json.RawMessage) error

// handleJob registers fn for a job type: the job is marked RUNNING when a
// worker takes it (again, after a crash), then fn runs.
func (a *App) handleJob(jobType string, fn jobFunc) {
	a.runner.Handle(jobType, func(ctx context.Context, qj queue.Job) error {
		var p jobPayload
		if err := json.Unmarshal(qj.Payload, &p); err != nil {
			return fmt.Errorf("job %s payload: %w", qj.ID, err)
		}
		t := p.tenant()
		var job *storage.Job
		err := a.db.Update(ctx, func(tx *storage.Tx) error {
			var err error
			if job, err = tx.FindJob(t, qj.ID); err != nil {
				return err
			}
			if job.StartedAt == nil {
				now := tx.Now()
				job.StartedAt = &now
			}
			job.Status = storage.JobRunning
			return tx.PutJob(t, job)
		})
		if err != nil {
			return err
		}
		return fn(ctx, t, job, p.Input)
	})
}

// completeJob marks the job COMPLETED, drops its stored input and takes it
// off the queue, in the transaction that records its last results.
func completeJob(tx *storage.Tx, t storage.Tenant, job *storage.Job) error {
	now := tx.Now()
	job.Status = storage.JobCompleted
	job.CompletedAt = &now
	job.Retry = nil
	if err := tx.PutJob(t, job); err != nil {
		return err
	}
	if err := tx.DeleteJobInput(t, job.ID); err != nil {
		return err
	}
	return queue.Complete(tx.Tx, job.ID)
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
