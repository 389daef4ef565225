package work

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// AddResult records the result of one item of job (a feature of a polygon
// request, the assessment of a batch) and counts it under status in
// job.ResultCounts, in the caller's transaction, which must also write
// job (PutJob, Complete): the counts a job shows always match the results
// it recorded. A job recorded by an earlier version, which kept no
// counts, is counted from its recorded results first; an item recorded
// again replaces its result, and the job is counted anew. It fails only
// when the store does.
func AddResult(tx *storage.Tx, t storage.Tenant, job *storage.Job, item int, status string, result json.RawMessage) error {
	if job.ResultCounts == nil {
		c, err := countRecorded(tx, t, job)
		if err != nil {
			return err
		}
		job.ResultCounts = &c
	}
	replaced, err := tx.PutJobResult(t, job.ID, item, result)
	if err != nil {
		return err
	}
	if !replaced {
		job.ResultCounts.Add(status)
		return nil
	}
	c, err := countRecorded(tx, t, job)
	job.ResultCounts = &c
	return err
}

// Page is a job with one page of its results.
type Page struct {
	Job *storage.Job
	// Results are the page's results in item order. Each result of a
	// polygon job names the ledger entry of its screening (ledgerIndex).
	Results []json.RawMessage
	// Next is the cursor of the page after this one; "" when this one is
	// the last.
	Next string
	// Counts counts every result of the job (Find only).
	Counts storage.JobResultCounts
	// Proofs prove the ledger entries the job anchored, in the tree of the
	// latest checkpoint (Find only): for a polygon job, those of the
	// page's results, in their order; for any other job all of them (a
	// few).
	Proofs []anchor.Proof
}

// ResultsJSON is the page's results as one JSON array.
func (p *Page) ResultsJSON() json.RawMessage {
	n := 2
	for _, v := range p.Results {
		n += len(v) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, '[')
	for i, v := range p.Results {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, v...)
	}
	return append(out, ']')
}

// Find returns the tenant's job with the first page of its results (at
// most limit), the counts of all of them and the proofs of its ledger
// entries (Page). Reading it costs the page, not the job: a job records
// its results one per item and keeps its counts as it records them (a job
// recorded before jobs kept counts is counted when read). It fails with
// apierr.NotFound for an unknown job, and when the store does.
func (q *Queue) Find(ctx context.Context, t storage.Tenant, id string, limit int) (*Page, error) {
	var p *Page
	err := q.db.View(ctx, func(tx *storage.Tx) error {
		var entries []int64
		var err error
		if p, entries, err = readPage(tx, t, id, 0, limit); err != nil {
			return err
		}
		if c := p.Job.ResultCounts; c != nil {
			p.Counts = *c
		} else if p.Counts, err = countRecorded(tx, t, p.Job); err != nil {
			return err
		}
		p.Proofs, _, err = anchor.Prove(tx, t, entries)
		return err
	})
	return p, apierr.Named(err, "job", id)
}

// List returns one page of the tenant's jobs that match f, newest first,
// without their results, and whether more follow. Each has its
// ResultCounts (a job recorded before jobs kept counts is counted here).
func (q *Queue) List(ctx context.Context, t storage.Tenant, f storage.JobFilter, page storage.Page) ([]*storage.Job, bool, error) {
	var jobs []*storage.Job
	var more bool
	err := q.db.View(ctx, func(tx *storage.Tx) error {
		var err error
		if jobs, more, err = tx.FindJobs(t, f, page); err != nil {
			return err
		}
		for _, j := range jobs {
			if j.ResultCounts == nil {
				c, err := countRecorded(tx, t, j)
				if err != nil {
					return err
				}
				j.ResultCounts = &c
			}
		}
		return nil
	})
	return jobs, more, err
}

// Results returns the page of the tenant's job's results after
// page.After (the Next of the page before; "" for the first page), at
// most page.Limit of them, without counts or proofs. It fails with a 400
// for a cursor that is not one of this job's, apierr.NotFound for an
// unknown job, and when the store does.
func (q *Queue) Results(ctx context.Context, t storage.Tenant, id string, page storage.Page) (*Page, error) {
	from, err := parseCursor(id, page.After)
	if err != nil {
		return nil, err
	}
	var p *Page
	err = q.db.View(ctx, func(tx *storage.Tx) error {
		var err error
		p, _, err = readPage(tx, t, id, from, page.Limit)
		return err
	})
	return p, apierr.Named(err, "job", id)
}

// readPage reads the tenant's job and its results from item from on (at
// most limit), and the ledger entries Page.Proofs proves.
func readPage(tx *storage.Tx, t storage.Tenant, id string, from, limit int) (*Page, []int64, error) {
	job, err := tx.FindJob(t, id)
	if err != nil {
		return nil, nil, err
	}
	rs, more, err := tx.FindJobResultPage(t, job.ID, from, limit)
	if err != nil {
		return nil, nil, err
	}
	p := &Page{Job: job, Results: make([]json.RawMessage, len(rs))}
	if more {
		p.Next = job.ID + "_" + strconv.Itoa(rs[len(rs)-1].Item)
	}
	if job.Type != PolygonIngestion {
		for i, r := range rs {
			p.Results[i] = r.Value
		}
		return p, job.LedgerIndexes, nil
	}
	entries := make([]int64, 0, len(rs))
	for i, r := range rs {
		var v struct {
			LedgerIndex *int64 `json:"ledgerIndex"`
		}
		if err := json.Unmarshal(r.Value, &v); err != nil {
			return nil, nil, fmt.Errorf("result %d of job %s: %w", r.Item, job.ID, err)
		}
		p.Results[i] = r.Value
		if v.LedgerIndex == nil && r.Item < len(job.LedgerIndexes) {
			// Recorded by a version that listed a polygon job's entries in
			// the job, the entry of feature i at i, and not in its results.
			v.LedgerIndex = &job.LedgerIndexes[r.Item]
			if p.Results[i], err = withLedgerIndex(r.Value, *v.LedgerIndex); err != nil {
				return nil, nil, fmt.Errorf("result %d of job %s: %w", r.Item, job.ID, err)
			}
		}
		if v.LedgerIndex != nil {
			entries = append(entries, *v.LedgerIndex)
		}
	}
	return p, entries, nil
}

// withLedgerIndex adds ledgerIndex as the last member of a result, where
// this version records it.
func withLedgerIndex(result json.RawMessage, index int64) (json.RawMessage, error) {
	r := bytes.TrimSpace(result)
	if len(r) < 3 || r[0] != '{' || r[len(r)-1] != '}' {
		return nil, fmt.Errorf("recorded result %.40s is not a JSON object with members", r)
	}
	out := make([]byte, 0, len(r)+32)
	out = append(out, r[:len(r)-1]...)
	out = append(out, `,"ledgerIndex":`...)
	out = strconv.AppendInt(out, index, 10)
	return append(out, '}'), nil
}

// CheckCursor checks a cursor of job jobID's results as Results does,
// for a caller that lists every problem of a request at once.
func CheckCursor(jobID, cursor string) error {
	_, err := parseCursor(jobID, cursor)
	return err
}

// parseCursor returns the item a page of job jobID's results starts at:
// 0 for no cursor, else the one after the item the cursor names (a Next:
// the job's ID, "_", the last item of the page before). It returns a 400
// for anything else, naming a cursor of another job as such, so pages of
// two jobs are never mixed.
func parseCursor(jobID, cursor string) (int, error) {
	if cursor == "" {
		return 0, nil
	}
	rest, ok := strings.CutPrefix(cursor, jobID+"_")
	if n, err := strconv.Atoi(rest); ok && err == nil && n >= 0 && n < math.MaxInt32 && strconv.Itoa(n) == rest {
		return n + 1, nil
	}
	issue := "must be the X-Next-Cursor of a page of this job's results"
	if i := strings.LastIndexByte(cursor, '_'); !ok && i > len("job_") && strings.HasPrefix(cursor, "job_") {
		issue = fmt.Sprintf("is a cursor of job %s's results, not of job %s's: page each job from its own GET /jobs/{jobId}",
			apierr.Cut(cursor[:i], 40), apierr.Cut(jobID, 40))
	}
	return 0, apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "query.cursor", Issue: issue})
}

// countRecorded counts a job's recorded results, reading each back (one
// page at a time): for a job recorded before jobs kept their counts.
func countRecorded(tx *storage.Tx, t storage.Tenant, job *storage.Job) (storage.JobResultCounts, error) {
	c := storage.JobResultCounts{ByStatus: map[string]int{}}
	for from := 0; ; {
		rs, more, err := tx.FindJobResultPage(t, job.ID, from, 1000)
		if err != nil {
			return c, err
		}
		for _, r := range rs {
			s, err := recordedStatus(job.Type, r.Value)
			if err != nil {
				return c, fmt.Errorf("result %d of job %s: %w", r.Item, job.ID, err)
			}
			c.Add(s)
		}
		if !more {
			return c, nil
		}
		from = rs[len(rs)-1].Item + 1
	}
}

// recordedStatus is the status a recorded result counts under, read back
// from the result: a polygon's eudrStatus, a batch's status. An archive
// report's one result is its report, written when it is READY.
func recordedStatus(kind string, result json.RawMessage) (string, error) {
	if kind == ArchiveReport {
		return storage.ReportReady, nil
	}
	var r struct {
		EUDRStatus string `json:"eudrStatus"`
		Status     string `json:"status"`
	}
	if err := json.Unmarshal(result, &r); err != nil {
		return "", err
	}
	if r.EUDRStatus != "" {
		return r.EUDRStatus, nil
	}
	return r.Status, nil
}
