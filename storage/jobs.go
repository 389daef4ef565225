package storage

import (
	"encoding/json"
	"time"
)

var bucketJobs = []byte("jobs")

// Job statuses (API.md section 5).
const (
	JobQueued    = "QUEUED"
	JobRunning   = "RUNNING"
	JobCompleted = "COMPLETED"
	JobFailed    = "FAILED"
)

// Job is the record of an asynchronous job as clients see it; the work item
// itself waits in the queue package's buckets.
type Job struct {
	ID           string          `json:"id"`
	Type         string          `json:"type"`
	Status       string          `json:"status"`
	Progress     JobProgress     `json:"progress"`
	Results      json.RawMessage `json:"results,omitempty"`      // per type, encoded by the server
	LedgerProofs json.RawMessage `json:"ledgerProofs,omitempty"` // entries the job anchored
	Error        *JobError       `json:"error,omitempty"`
	CreatedAt    time.Time       `json:"createdAt"`
	StartedAt    *time.Time      `json:"startedAt,omitempty"`
	CompletedAt  *time.Time      `json:"completedAt,omitempty"`
}

// JobProgress counts the items of a job.
type JobProgress struct {
	Total     int `json:"total"`
	Processed int `json:"processed"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

// JobError is why a job FAILED.
type JobError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// PutJob writes the tenant's job record.
func (tx *Tx) PutJob(t Tenant, j *Job) error {
	b, err := tx.tenantBucket(t, bucketJobs)
	if err != nil {
		return err
	}
	return putJSON(b, []byte(j.ID), j)
}

// FindJob returns the tenant's job or ErrNotFound.
func (tx *Tx) FindJob(t Tenant, id string) (*Job, error) {
	b, err := tx.tenantBucket(t, bucketJobs)
	if err != nil {
		return nil, err
	}
	var j Job
	if err := getJSON(b, []byte(id), &j); err != nil {
		return nil, err
	}
	return &j, nil
}
