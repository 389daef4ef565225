package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
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
	// ResultCounts counts the results recorded so far, by status, kept
	// in the transaction that records them; nil for a job recorded by a
	// version that kept no counts (work counts its results when read).
	ResultCounts *JobResultCounts `json:"resultCounts,omitempty"`
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

// JobResultCounts counts a job's recorded results: all of them, and by
// the status each was recorded with (a polygon's eudrStatus, a batch's
// status).
type JobResultCounts struct {
	Total    int            `json:"total"`
	ByStatus map[string]int `json:"byStatus"`
}

// NewJobResultCounts returns counts of no results.
func NewJobResultCounts() *JobResultCounts { return &JobResultCounts{ByStatus: map[string]int{}} }

// Add counts one more result of status.
func (c *JobResultCounts) Add(status string) {
	if c.ByStatus == nil {
		c.ByStatus = map[string]int{}
	}
	c.Total++
	c.ByStatus[status]++
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

// JobFilter selects jobs; an empty field matches any.
type JobFilter struct {
	Status string
	Type   string
}

func (f JobFilter) match(j *Job) bool {
	return (f.Status == "" || j.Status == f.Status) && (f.Type == "" || j.Type == f.Type)
}

// FindJobs returns the tenant's jobs that match f, newest first (job IDs
// are ULIDs: in creation order), one page, and whether more follow. It
// reads from the cursor on and stops once the page is full.
func (tx *Tx) FindJobs(t Tenant, f JobFilter, p Page) ([]*Job, bool, error) {
	b, err := tx.tenantBucket(t, bucketJobs)
	if err != nil || b == nil {
		return nil, false, err
	}
	var out []*Job
	c := b.Cursor()
	for k, v := lastBefore(c, []byte(p.After)); k != nil; k, v = c.Prev() {
		var j Job
		if err := unmarshal(v, &j); err != nil {
			return nil, false, fmt.Errorf("read job %s: %w", k, err)
		}
		if !f.match(&j) {
			continue
		}
		if len(out) == p.Limit {
			return out, true, nil
		}
		out = append(out, &j)
	}
	return out, false, nil
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

// JobResult is one recorded result of a job: the item it is the result of
// and its JSON.
type JobResult struct {
	Item  int
	Value json.RawMessage
}

// PutJobResult records the result of one item of a job (a feature of a
// polygon request), replacing any recorded for that item before, and
// reports whether it replaced one.
func (tx *Tx) PutJobResult(t Tenant, jobID string, item int, result json.RawMessage) (bool, error) {
	b, err := tx.tenantBucket(t, bucketJobResults)
	if err != nil {
		return false, err
	}
	k := jobResultKey(jobID, item)
	replaced := b.Get(k) != nil
	return replaced, b.Put(k, result)
}

// FindJobResults returns a job's recorded results in item order, copied.
func (tx *Tx) FindJobResults(t Tenant, jobID string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	err := tx.eachJobResult(t, jobID, 0, func(_ int, v []byte) bool {
		out = append(out, bytes.Clone(v))
		return true
	})
	return out, err
}

// FindJobResultPage returns at most limit of a job's recorded results, in
// item order from item from on, copied, and whether more follow. It reads
// only the page (and one key past it), however many results the job has.
// limit must be at least 1.
func (tx *Tx) FindJobResultPage(t Tenant, jobID string, from, limit int) ([]JobResult, bool, error) {
	if limit < 1 || from < 0 {
		return nil, false, fmt.Errorf("page of job %s's results from %d, limit %d", jobID, from, limit)
	}
	var out []JobResult
	more := false
	err := tx.eachJobResult(t, jobID, from, func(item int, v []byte) bool {
		if len(out) == limit {
			more = true
			return false
		}
		out = append(out, JobResult{Item: item, Value: bytes.Clone(v)})
		return true
	})
	return out, more, err
}

// eachJobResult calls fn with each of a job's results from item from on,
// in item order, until fn returns false. v is valid only during the call.
func (tx *Tx) eachJobResult(t Tenant, jobID string, from int, fn func(item int, v []byte) bool) error {
	b, err := tx.tenantBucket(t, bucketJobResults)
	if err != nil || b == nil {
		return err
	}
	prefix := append([]byte(jobID), 0)
	c := b.Cursor()
	for k, v := c.Seek(jobResultKey(jobID, from)); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		if !fn(int(binary.BigEndian.Uint32(k[len(prefix):])), v) {
			return nil
		}
	}
	return nil
}
