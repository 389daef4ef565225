package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"time"
)

var (
	bucketJobs       = []byte("jobs")
	bucketJobInputs  = []byte("job_inputs")
	bucketJobResults = []byte("job_results")
)

// Job statuses (docs/jobs.md).
const (
	JobQueued    = "QUEUED"
	JobRunning   = "RUNNING"
	JobCompleted = "COMPLETED"
	JobFailed    = "FAILED"
)

// Job is the record of an asynchronous job as clients see it; the work item
// itself waits in the queue package's buckets.
type Job struct {
	ID            string      `json:"id"`
	Type          string      `json:"type"`
	Status        string      `json:"status"`
	Progress      JobProgress `json:"progress"`
	LedgerIndexes []int64     `json:"ledgerIndexes,omitempty"` // entries the job anchored in the tenant's ledger log
	Error         *JobError   `json:"error,omitempty"`
	CreatedAt     time.Time   `json:"createdAt"`
	StartedAt     *time.Time  `json:"startedAt,omitempty"`
	CompletedAt   *time.Time  `json:"completedAt,omitempty"`
	// Retry is set while the job waits to try again after a failure that
	// may go away by itself (the EU system down or too slow); nil
	// otherwise. It is written in the transaction that puts the job back
	// in the queue, and cleared by the next attempt that gets through and
	// when the job ends.
	Retry *JobRetry `json:"retry,omitempty"`
}

// JobRetry is where a job that is trying again stands.
type JobRetry struct {
	Attempts      int        `json:"attempts"` // failed attempts in a row, the last one included
	LastAttempt   JobAttempt `json:"lastAttempt"`
	NextAttemptAt time.Time  `json:"nextAttemptAt"` // when the job runs again
}

// JobAttempt is the outcome of one failed attempt of a job.
type JobAttempt struct {
	At      time.Time `json:"at"`
	Code    string    `json:"code"`    // machine-readable cause, such as EU_SYSTEM_UNAVAILABLE
	Message string    `json:"message"` // what happened, for humans
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

// PutJobInput keeps a job's input, such as a polygon request body, until
// the job ends. It is kept here rather than in the queue entry, which is
// rewritten at every lease.
func (tx *Tx) PutJobInput(t Tenant, jobID string, input []byte) error {
	b, err := tx.tenantBucket(t, bucketJobInputs)
	if err != nil {
		return err
	}
	return b.Put([]byte(jobID), input)
}

// FindJobInput returns a job's input or ErrNotFound. The bytes are valid
// only during the transaction.
func (tx *Tx) FindJobInput(t Tenant, jobID string) ([]byte, error) {
	b, err := tx.tenantBucket(t, bucketJobInputs)
	if err != nil {
		return nil, err
	}
	var v []byte
	if b != nil {
		v = b.Get([]byte(jobID))
	}
	if v == nil {
		return nil, ErrNotFound
	}
	return v, nil
}

// DeleteJobInput drops a job's input once the job has ended.
func (tx *Tx) DeleteJobInput(t Tenant, jobID string) error {
	b, err := tx.tenantBucket(t, bucketJobInputs)
	if err != nil {
		return err
	}
	return b.Delete([]byte(jobID))
}

// jobResultKey orders a job's results by item: the job ID, a zero byte, the
// item index big-endian.
func jobResultKey(jobID string, item int) []byte {
	k := make([]byte, len(jobID)+5)
	copy(k, jobID)
	binary.BigEndian.PutUint32(k[len(jobID)+1:], uint32(item))
	return k
}

// PutJobResult records the result of one item of a job (a feature of a
// polygon request), replacing any recorded for that item before.
func (tx *Tx) PutJobResult(t Tenant, jobID string, item int, result json.RawMessage) error {
	b, err := tx.tenantBucket(t, bucketJobResults)
	if err != nil {
		return err
	}
	return b.Put(jobResultKey(jobID, item), result)
}

// FindJobResults returns a job's recorded results in item order, copied.
func (tx *Tx) FindJobResults(t Tenant, jobID string) ([]json.RawMessage, error) {
	b, err := tx.tenantBucket(t, bucketJobResults)
	if err != nil || b == nil {
		return nil, err
	}
	prefix := append([]byte(jobID), 0)
	var out []json.RawMessage
	c := b.Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		out = append(out, bytes.Clone(v))
	}
	return out, nil
}
