package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// Limits of a sandbox test job.
const (
	maxSandboxItems      = 1000
	maxSandboxItemMillis = 1000
)

type sandboxJobRequest struct {
	Items      *int `json:"items"`
	ItemMillis *int `json:"itemMillis"`
	FailAtItem *int `json:"failAtItem"`
}

// sandboxJobInput is the queued input of a sandbox test job.
type sandboxJobInput struct {
	Items      int  `json:"items"`
	ItemMillis int  `json:"itemMillis"`
	FailAtItem *int `json:"failAtItem,omitempty"`
}

type jobAcceptedResponse struct {
	JobID string `json:"jobId"`
}

func (req *sandboxJobRequest) validate() (sandboxJobInput, error) {
	in := sandboxJobInput{Items: 10, ItemMillis: 10, FailAtItem: req.FailAtItem}
	var probs apierr.Problems
	if req.Items != nil {
		if in.Items = *req.Items; in.Items < 1 || in.Items > maxSandboxItems {
			probs.Add(apierr.DetailInvalidValue, "items", fmt.Sprintf("must be from 1 to %d", maxSandboxItems))
		}
	}
	if req.ItemMillis != nil {
		if in.ItemMillis = *req.ItemMillis; in.ItemMillis < 0 || in.ItemMillis > maxSandboxItemMillis {
			probs.Add(apierr.DetailInvalidValue, "itemMillis", fmt.Sprintf("must be from 0 to %d", maxSandboxItemMillis))
		}
	}
	if f := req.FailAtItem; f != nil && (*f < 0 || *f >= in.Items) {
		probs.Add(apierr.DetailInvalidValue, "failAtItem", "must be an item index from 0 to items-1")
	}
	return in, probs.Err()
}

// handleSandboxJob queues a test job that works through its items one by
// one (progress visible in GET /jobs/{jobId}), and fails with job.failed at
// failAtItem if given: an integration can exercise its job polling and
// failure handling, and the job resumes after a restart like any other.
// Sandbox listener only.
func (a *App) handleSandboxJob(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req sandboxJobRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	in, err := req.validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		input, err := json.Marshal(in)
		if err != nil {
			return reply{}, err
		}
		job, err := a.jobs.Enqueue(tx, t, work.SandboxTest, in.Items, input)
		if err != nil {
			return reply{}, err
		}
		return accepted(job.ID, jobAcceptedResponse{JobID: job.ID}), nil
	})
}

// runSandboxJob records each item in its own transaction, so a job resumed
// after a crash goes on from the last recorded item.
func (a *App) runSandboxJob(ctx context.Context, t storage.Tenant, job *storage.Job, input []byte) error {
	var in sandboxJobInput
	if err := json.Unmarshal(input, &in); err != nil {
		return fmt.Errorf("sandbox job input: %w", err)
	}
	for i := job.Progress.Processed; i < in.Items; i++ {
		if in.FailAtItem != nil && i == *in.FailAtItem {
			return fmt.Errorf("sandbox test job failed at item %d, as asked", i)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(in.ItemMillis) * time.Millisecond):
		}
		last := i == in.Items-1
		err := a.db.Update(ctx, func(tx *storage.Tx) error {
			job.Progress.Processed, job.Progress.Succeeded = i+1, i+1
			if last {
				return work.Complete(tx, t, job)
			}
			return tx.PutJob(t, job)
		})
		if err != nil {
			return err
		}
	}
	return nil
}
