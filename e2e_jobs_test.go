package main_test

// End-to-end tests of jobs (docs/jobs.md) through the sandbox's test
// job, POST /sandbox/jobs: its lifecycle as GET /jobs/{jobId} shows it, a
// fatal failure with its signed job.failed delivery (apitest.Receiver),
// validation, the production listener's 404s, and
// jobs that survive kill -9 and SIGTERM of the appliance.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

var jobIDPattern = regexp.MustCompile(`^job_[0-9A-HJKMNP-TV-Z]{26}$`)

const (
	jobTypeSandbox = "sandbox_test"
	// jobsLeaseEnv is the shortest job lease the appliance accepts: a job
	// claimed by a process that died runs again once it expires.
	jobsLeaseEnv = "EUDR_JOBS_LEASE=10s"
	// jobsLease is what jobsLeaseEnv sets.
	jobsLease = 10 * time.Second
	// deliveryLeaseEnv is the shortest webhook delivery lease the appliance
	// accepts with the default 10 s send timeout: a delivery claimed by a
	// process that died is sent again once it expires.
	deliveryLeaseEnv = "EUDR_WEBHOOKS_LEASE=15s"
	// deliveryLease is what deliveryLeaseEnv sets.
	deliveryLease = 15 * time.Second
)

// Rate limits out of the way of tests that poll.
var noRateLimit = []string{"EUDR_RATE_LIMIT_PER_SECOND=100000", "EUDR_RATE_LIMIT_BURST=100000"}

// jobResultCounts is a job's resultCounts.
type jobResultCounts struct {
	Total    int            `json:"total"`
	ByStatus map[string]int `json:"byStatus"`
}

// jobView is the answer of GET /jobs/{jobId}.
type jobView struct {
	JobID    string `json:"jobId"`
	Type     string `json:"type"`
	Status   string `json:"status"`
	Progress struct {
		Total     int `json:"total"`
		Processed int `json:"processed"`
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
		Percent   int `json:"percent"`
	} `json:"progress"`
	Results      []json.RawMessage `json:"results"`
	ResultCounts jobResultCounts   `json:"resultCounts"`
	NextResults  *string           `json:"nextResults"`
	LedgerProofs []json.RawMessage `json:"ledgerProofs"`
	Error        *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	CreatedAt     string          `json:"createdAt"`
	StartedAt     *string         `json:"startedAt"`
	CompletedAt   *string         `json:"completedAt"`
	Attempts      int             `json:"attempts"`
	LastAttempt   json.RawMessage `json:"lastAttempt"`
	NextAttemptAt *string         `json:"nextAttemptAt"`
}

func (j jobView) finished() bool { return j.Status == "COMPLETED" || j.Status == "FAILED" }

func sandboxJobsURL(base string) string { return base + eudrAPI + "/sandbox/jobs" }

func jobURL(base, id string) string { return base + eudrAPI + "/jobs/" + id }

// queueJob queues a sandbox test job with key and a fresh Idempotency-Key,
// checks the 202 (jobId and Location) and returns the job's ID.
func queueJob(t testing.TB, p *serverProc, key string, body any) string {
	t.Helper()
	r := apitest.Do(t, "POST", sandboxJobsURL(p.SandboxURL), idem(key), body).WantStatus(t, http.StatusAccepted)
	return checkAccepted(t, r)
}

// checkAccepted checks a 202 of POST /sandbox/jobs and returns the jobId.
func checkAccepted(t testing.TB, r *apitest.Response) string {
	t.Helper()
	var acc map[string]any
	r.Decode(t, &acc)
	id, _ := acc["jobId"].(string)
	if !jobIDPattern.MatchString(id) || len(acc) != 1 {
		t.Fatalf("%s: 202 body %s, want exactly a jobId", r.Request, r.Body)
	}
	if loc := r.Header.Get("Location"); loc != eudrAPI+"/jobs/"+id {
		t.Errorf("%s: Location %q, want %s", r.Request, loc, eudrAPI+"/jobs/"+id)
	}
	return id
}

// getJob reads a job, checks what every answer must hold (the shape, the
// progress arithmetic, Retry-After exactly while unfinished) and returns it.
func getJob(t testing.TB, base, key, id string) jobView {
	t.Helper()
	r, err := apitest.TryDo(t, "GET", jobURL(base, id), apitest.WithKey(key), nil)
	if err != nil {
		t.Fatal(err)
	}
	j, msg := checkJob(r, id)
	if msg != "" {
		t.Fatal(msg)
	}
	return j
}

// checkJob is getJob's check of an answer, usable from any goroutine: it
// returns a message instead of failing.
func checkJob(r *apitest.Response, id string) (jobView, string) {
	var j jobView
	if r.Status != http.StatusOK {
		return j, fmt.Sprintf("%s: status %d, want 200: %s", r.Request, r.Status, r.Body)
	}
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return j, fmt.Sprintf("%s: %v: %s", r.Request, err, r.Body)
	}
	var probs []string
	p := j.Progress
	if j.JobID != id || j.Type != jobTypeSandbox {
		probs = append(probs, fmt.Sprintf("jobId %q type %q, want %s %s", j.JobID, j.Type, id, jobTypeSandbox))
	}
	if j.Results == nil || j.LedgerProofs == nil || len(j.LedgerProofs) != 0 {
		probs = append(probs, "results and ledgerProofs must be arrays ([] for ledgerProofs)")
	}
	if j.ResultCounts.Total != 0 || j.ResultCounts.ByStatus == nil || len(j.ResultCounts.ByStatus) != 0 || j.NextResults != nil {
		probs = append(probs, fmt.Sprintf("resultCounts %+v, nextResults %v; want none counted ({} by status) and no next page", j.ResultCounts, j.NextResults))
	}
	if p.Processed < 0 || p.Processed > p.Total || p.Succeeded+p.Failed != p.Processed {
		probs = append(probs, fmt.Sprintf("progress %+v does not add up", p))
	}
	ra := r.Header.Get("Retry-After")
	switch j.Status {
	case "QUEUED", "RUNNING":
		if n, err := strconv.Atoi(ra); err != nil || n < 1 || n > 60 {
			probs = append(probs, fmt.Sprintf("Retry-After %q while %s, want 1-60", ra, j.Status))
		}
		if want := 100 * p.Processed / max(p.Total, 1); p.Percent != want {
			probs = append(probs, fmt.Sprintf("percent %d, want %d", p.Percent, want))
		}
		if j.CompletedAt != nil || j.Error != nil {
			probs = append(probs, "completedAt or error set on an unfinished job")
		}
		// startedAt is set when a worker first takes the job, which is
		// RUNNING from then on (even while it waits to be resumed).
		if (j.Status == "RUNNING") != (j.StartedAt != nil) {
			probs = append(probs, fmt.Sprintf("%s with startedAt %v", j.Status, j.StartedAt))
		}
	case "COMPLETED", "FAILED":
		if ra != "" {
			probs = append(probs, fmt.Sprintf("Retry-After %q on a %s job", ra, j.Status))
		}
		if p.Percent != 100 || j.StartedAt == nil || j.CompletedAt == nil {
			probs = append(probs, fmt.Sprintf("finished job: percent %d, startedAt %v, completedAt %v", p.Percent, j.StartedAt, j.CompletedAt))
		}
		if (j.Status == "FAILED") != (j.Error != nil) {
			probs = append(probs, fmt.Sprintf("%s with error %v", j.Status, j.Error))
		}
	default:
		probs = append(probs, "unknown status "+j.Status)
	}
	if len(probs) > 0 {
		return j, fmt.Sprintf("%s: %s: %s", r.Request, strings.Join(probs, "; "), r.Body)
	}
	return j, ""
}

// waitJob polls the job every 20ms until it is finished.
func waitJob(t testing.TB, base, key, id string, timeout time.Duration) jobView {
	t.Helper()
	var j jobView
	waitUntil(t, timeout, "job "+id+" to finish", func() bool {
		j = getJob(t, base, key, id)
		return j.finished()
	})
	return j
}

// --- (a) lifecycle ---

func TestJob_Lifecycle(t *testing.T) {
	t.Parallel()
	// One worker: a job queued behind another stays QUEUED while it runs.
	p := startServer(t, append([]string{"EUDR_JOBS_WORKERS=1"}, noRateLimit...)...)
	key := p.createKey(t, sandbox)

	const items, itemMillis = 20, 40
	before := time.Now()
	ik := apitest.NewIdemKey()
	body := map[string]any{"items": items, "itemMillis": itemMillis}
	r := apitest.Do(t, "POST", sandboxJobsURL(p.SandboxURL), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), body).WantStatus(t, http.StatusAccepted)
	long := checkAccepted(t, r)
	// A retry with the same Idempotency-Key answers the same job.
	r2 := apitest.Do(t, "POST", sandboxJobsURL(p.SandboxURL), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), body).WantStatus(t, http.StatusAccepted)
	if again := checkAccepted(t, r2); again != long || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed POST: jobId %s (replayed %q), want %s replayed", again, r2.Header.Get("Idempotent-Replayed"), long)
	}
	short := queueJob(t, p, key, map[string]any{}) // the defaults: 10 items

	// The second job waits for the only worker.
	j := getJob(t, p.SandboxURL, key, short)
	if j.Status != "QUEUED" || j.StartedAt != nil || j.Progress.Total != 10 || j.Progress.Processed != 0 || j.Progress.Percent != 0 {
		t.Errorf("job queued behind another: %+v, want QUEUED, 0 of 10, no startedAt", j)
	}
	createdAt := apitest.ParseTime(t, j.CreatedAt)
	if createdAt.Before(before.Add(-time.Second)) || createdAt.After(time.Now().Add(time.Second)) {
		t.Errorf("createdAt %s is not about now", j.CreatedAt)
	}

	// Follow the long one through the Location path: QUEUED or RUNNING,
	// then RUNNING with growing progress, then COMPLETED.
	loc := r.Header.Get("Location")
	var seen []string
	last := -1
	var runningMid bool
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := apitest.Do(t, "GET", p.SandboxURL+loc, apitest.WithKey(key), nil)
		j, msg := checkJob(r, long)
		if msg != "" {
			t.Fatal(msg)
		}
		if len(seen) == 0 || seen[len(seen)-1] != j.Status {
			seen = append(seen, j.Status)
		}
		if j.Progress.Processed < last {
			t.Errorf("processed went back from %d to %d", last, j.Progress.Processed)
		}
		last = j.Progress.Processed
		if j.Status == "RUNNING" && j.Progress.Processed > 0 && j.Progress.Processed < items {
			runningMid = true
		}
		if j.finished() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s not finished after 15s: %+v", long, j)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := strings.Join(seen, ","); s != "QUEUED,RUNNING,COMPLETED" && s != "RUNNING,COMPLETED" {
		t.Errorf("statuses seen: %s, want [QUEUED,]RUNNING,COMPLETED", s)
	}
	if !runningMid {
		t.Error("never saw the job RUNNING part way through its items")
	}
	j = getJob(t, p.SandboxURL, key, long)
	pr := j.Progress
	if j.Status != "COMPLETED" || pr.Total != items || pr.Processed != items || pr.Succeeded != items || pr.Failed != 0 || pr.Percent != 100 || j.Error != nil {
		t.Errorf("finished job: %+v, want COMPLETED %d of %d", j, items, items)
	}
	created, started, completed := apitest.ParseTime(t, j.CreatedAt), apitest.ParseTime(t, *j.StartedAt), apitest.ParseTime(t, *j.CompletedAt)
	if started.Before(created) || completed.Before(started) {
		t.Errorf("createdAt %s, startedAt %s, completedAt %s out of order", j.CreatedAt, *j.StartedAt, *j.CompletedAt)
	}
	if d := completed.Sub(started); d < items*itemMillis*time.Millisecond-50*time.Millisecond {
		t.Errorf("job ran %s, want at least %d items x %dms", d, items, itemMillis)
	}

	// The queued one runs next, to completion, with the default 10 items.
	j = waitJob(t, p.SandboxURL, key, short, 10*time.Second)
	if j.Status != "COMPLETED" || j.Progress.Processed != 10 || j.Progress.Succeeded != 10 {
		t.Errorf("default job: %+v, want COMPLETED 10 of 10", j)
	}
	if s := apitest.ParseTime(t, *j.StartedAt); s.Before(completed) {
		t.Errorf("the queued job started at %s, before the only worker was free (%s)", *j.StartedAt, *j.CompletedAt)
	}
}

// --- (b) fatal failure and job.failed ---

func TestJob_FailAtItem(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, noRateLimit...)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/jobs", "job.failed")
	subscribe(t, p, key, rc, "/reports", "report.ready")

	id := queueJob(t, p, key, map[string]any{"items": 5, "itemMillis": 10, "failAtItem": 3})
	first := queueJob(t, p, key, map[string]any{"items": 2, "failAtItem": 0})
	j := waitJob(t, p.SandboxURL, key, id, 10*time.Second)
	failedAt := time.Now()
	pr := j.Progress
	if j.Status != "FAILED" || j.Error == nil || j.Error.Code != "JOB_FAILED" || j.Error.Message == "" {
		t.Fatalf("job failing at item 3: %+v, want FAILED with JOB_FAILED and a message", j)
	}
	if pr.Total != 5 || pr.Processed != 3 || pr.Succeeded != 3 || pr.Failed != 0 || pr.Percent != 100 {
		t.Errorf("progress of the failed job: %+v, want 3 of 5 processed and succeeded, percent 100", pr)
	}
	j0 := waitJob(t, p.SandboxURL, key, first, 10*time.Second)
	if j0.Status != "FAILED" || j0.Error == nil || j0.Error.Code != "JOB_FAILED" || j0.Progress.Processed != 0 {
		t.Errorf("job failing at item 0: %+v, want FAILED before any item", j0)
	}

	// One signed job.failed per failed job, to the job.failed subscription only.
	byJob := func() map[string]apitest.Delivery {
		out := map[string]apitest.Delivery{}
		for _, r := range rc.Requests("/jobs", "") {
			out[dataField(&r, "jobId")] = r
		}
		return out
	}
	waitUntil(t, 15*time.Second, "job.failed of both jobs delivered", func() bool {
		got := byJob()
		return rc.IsDelivered("/jobs", got[id].Env.EventID) && rc.IsDelivered("/jobs", got[first].Env.EventID)
	})
	latency := time.Since(failedAt)
	t.Logf("job.failed delivered %s after the job was seen FAILED", latency.Round(time.Millisecond))
	for jobID, view := range map[string]jobView{id: j, first: j0} {
		r := byJob()[jobID]
		apitest.CheckSignatures(t, r, sub.SigningSecret)
		if r.SigErr != nil || r.EnvErr != nil || r.Env.EventType != "job.failed" || !eventIDPattern.MatchString(r.Env.EventID) {
			t.Errorf("job.failed of %s: signature %v, envelope %v: %s", jobID, r.SigErr, r.EnvErr, r.Body)
		}
		want := map[string]any{"jobId": jobID, "type": jobTypeSandbox,
			"error": map[string]any{"code": view.Error.Code, "message": view.Error.Message}}
		if !sameJSON(t, r.Env.Data, mustJSON(t, want)) {
			t.Errorf("job.failed data %s, want %s", r.Env.Data, mustJSON(t, want))
		}
		if h := r.Header.Get("X-Service-Event-Type"); h != "job.failed" {
			t.Errorf("X-Service-Event-Type %q", h)
		}
		ts := apitest.ParseTime(t, r.Env.Timestamp)
		if done := apitest.ParseTime(t, *view.CompletedAt); ts.Sub(done).Abs() > time.Second {
			t.Errorf("job.failed timestamp %s, the job's completedAt %s", r.Env.Timestamp, *view.CompletedAt)
		}
	}
	if n := len(rc.Requests("/jobs", "")); n != 2 {
		t.Errorf("/jobs got %d requests, want 2 (one job.failed per failed job)", n)
	}
	if n := len(rc.Requests("/reports", "")); n != 0 {
		t.Errorf("/reports (report.ready) got %d requests", n)
	}

	// A job that completes publishes nothing.
	ok := queueJob(t, p, key, map[string]any{"items": 2, "itemMillis": 0})
	if j := waitJob(t, p.SandboxURL, key, ok, 10*time.Second); j.Status != "COMPLETED" {
		t.Errorf("job without failAtItem: %+v", j)
	}

	t.Run("DeliveredPromptly", func(t *testing.T) {
		if latency > 2*time.Second {
			t.Errorf("job.failed delivered %s after the job failed, want well under the dispatcher's poll interval", latency)
		}
	})
	if n := len(rc.Requests("/jobs", "")); n != 2 {
		t.Errorf("/jobs got %d requests after a completed job, want still 2", n)
	}
}

// --- (c) validation and environments ---

func TestJob_Validation(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	key := p.createKey(t, sandbox)
	ro := p.createKey(t, sandbox, "read")
	live := p.createKey(t, production)
	url := sandboxJobsURL(p.SandboxURL)

	e := apitest.WantError(t, apitest.Do(t, "POST", url, apitest.WithKey(key), map[string]any{}), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	if f := e.Detail(t, "headers.Idempotency-Key"); f.Code != "IDEMPOTENCY_KEY_MISSING" {
		t.Errorf("missing Idempotency-Key: %+v", f)
	}

	// Every problem of a body, each with its JSON path.
	e = apitest.WantError(t, apitest.Do(t, "POST", url, idem(key), `{"items":0,"itemMillis":1001,"failAtItem":-1,"color":"red"}`),
		http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE", "UNKNOWN_FIELD")
	for field, code := range map[string]string{"items": "INVALID_VALUE", "itemMillis": "INVALID_VALUE", "failAtItem": "INVALID_VALUE", "color": "UNKNOWN_FIELD"} {
		if d := e.Detail(t, field); d.Code != code {
			t.Errorf("detail for %s: %+v, want %s", field, d, code)
		}
	}
	for _, c := range []struct {
		body, field string
	}{
		{`{"items":1001}`, "items"},
		{`{"items":"many"}`, "items"},
		{`{"items":2.5}`, "items"},
		{`{"itemMillis":-1}`, "itemMillis"},
		{`{"itemMillis":true}`, "itemMillis"},
		{`{"items":5,"failAtItem":5}`, "failAtItem"},
		{`{"failAtItem":10}`, "failAtItem"}, // items defaults to 10
		{`{"failAtItem":"3"}`, "failAtItem"},
	} {
		e := apitest.WantError(t, apitest.Do(t, "POST", url, idem(key), c.body), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		if len(e.Details) == 1 && e.Details[0].Field != c.field {
			t.Errorf("%s: detail field %q, want %s", c.body, e.Details[0].Field, c.field)
		}
	}
	for _, body := range []string{"", "{", `{"items":1} x`} {
		e := apitest.WantError(t, apitest.Do(t, "POST", url, idem(key), body), http.StatusBadRequest, "VALIDATION_FAILED", "MALFORMED_JSON")
		if len(e.Details) == 1 && e.Details[0].Field != "body" {
			t.Errorf("body %q: detail field %q, want body", body, e.Details[0].Field)
		}
	}
	apitest.WantError(t, apitest.Do(t, "POST", url, apitest.Merge(idem(key), apitest.Hdr("Content-Type", "text/plain")), `{}`), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "INVALID_VALUE")
	apitest.WantUnauthorized(t, apitest.Do(t, "POST", url, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey()), `{}`), "MISSING_API_KEY")
	apitest.WantForbidden(t, apitest.Do(t, "POST", url, idem(ro), `{}`), "SCOPE_REQUIRED")
	apitest.WantForbidden(t, apitest.Do(t, "POST", url, idem(live), `{}`), "WRONG_ENVIRONMENT")

	// A rejected request leaves its Idempotency-Key unused; the bounds are accepted.
	ik := apitest.NewIdemKey()
	apitest.WantError(t, apitest.Do(t, "POST", url, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), `{"items":0}`), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	r := apitest.Do(t, "POST", url, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), `{"items":1,"itemMillis":0,"failAtItem":0}`).WantStatus(t, http.StatusAccepted)
	checkAccepted(t, r)
	apitest.WantError(t, apitest.Do(t, "POST", url, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), `{"items":2}`), http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
	slow := queueJob(t, p, key, map[string]any{"items": 1000, "itemMillis": 1000, "failAtItem": 999})
	queueJob(t, p, key, map[string]any{"items": 1, "itemMillis": 0, "failAtItem": nil})
	queueJob(t, p, key, map[string]any{"items": nil, "itemMillis": nil})

	// Production: no such route, whatever the key; the sandbox's jobs are unknown there.
	for _, h := range []map[string]string{idem(live), idem(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())} {
		apitest.WantError(t, apitest.Do(t, "POST", sandboxJobsURL(p.ProductionURL), h, `{}`), http.StatusNotFound, "NOT_FOUND")
	}
	apitest.WantError(t, apitest.Do(t, "GET", jobURL(p.ProductionURL, slow), apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantForbidden(t, apitest.Do(t, "GET", jobURL(p.ProductionURL, slow), apitest.WithKey(key), nil), "WRONG_ENVIRONMENT")
	apitest.WantError(t, apitest.Do(t, "GET", jobURL(p.SandboxURL, "job_01JD3R7F5G6H7J8K9M0N1P2Q3R"), apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	if j := getJob(t, p.SandboxURL, ro, slow); j.Progress.Total != 1000 || j.finished() {
		t.Errorf("slow job: %+v, want 1000 items, unfinished", j)
	}
}

// --- (d) crash ---

// runJobCrash queues 100 jobs concurrently through the API, interrupts the
// appliance while they run (some RUNNING, some QUEUED), restarts it on the
// same data dir and checks that every accepted job completes all its items:
// none lost, none failed, none run past its items. A job RUNNING at a
// kill -9 resumes once its lease (jobsLease) expires.
func runJobCrash(t *testing.T, interrupt func(*serverProc), finishWithin time.Duration) {
	p := startServer(t, append([]string{jobsLeaseEnv}, noRateLimit...)...)
	key := p.createKey(t, sandbox)

	const total, workers, items = 100, 8, 5
	body := map[string]any{"items": items, "itemMillis": 20}
	var (
		mu   sync.Mutex
		ids  []string
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for int(next.Add(1)) <= total {
				r, err := apitest.TryDo(t, "POST", sandboxJobsURL(p.SandboxURL), idem(key), body)
				if err != nil {
					t.Errorf("queue a job: %v", err)
					return
				}
				if r.Status != http.StatusAccepted {
					t.Errorf("queue a job: status %d: %s", r.Status, r.Body)
					return
				}
				var acc struct{ JobID string }
				if json.Unmarshal(r.Body, &acc) != nil || !jobIDPattern.MatchString(acc.JobID) {
					t.Errorf("queue a job: 202 body %s", r.Body)
					return
				}
				mu.Lock()
				ids = append(ids, acc.JobID)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() || len(ids) != total {
		t.Fatalf("%d jobs accepted, want %d", len(ids), total)
	}

	// Interrupt once some jobs are done and one is part way through its
	// items, and see (from a snapshot just before) that jobs are also
	// RUNNING and QUEUED.
	snapshot := func() map[string]jobView {
		out := make(map[string]jobView, len(ids))
		for _, id := range ids {
			out[id] = getJob(t, p.SandboxURL, key, id)
		}
		return out
	}
	var before map[string]jobView
	count := func(m map[string]jobView, status string) (n int) {
		for _, j := range m {
			if j.Status == status {
				n++
			}
		}
		return n
	}
	waitUntil(t, 10*time.Second, "some jobs COMPLETED and one RUNNING part way", func() bool {
		before = snapshot()
		if count(before, "COMPLETED") < 5 {
			return false
		}
		for _, j := range before {
			if j.Status == "RUNNING" && j.Progress.Processed > 0 {
				return true
			}
		}
		return false
	})
	interrupt(p)
	t.Logf("interrupted with %d QUEUED, %d RUNNING, %d COMPLETED (snapshot just before)",
		count(before, "QUEUED"), count(before, "RUNNING"), count(before, "COMPLETED"))
	if count(before, "QUEUED") == 0 || count(before, "RUNNING") == 0 {
		t.Errorf("interrupted without both QUEUED and RUNNING jobs")
	}

	restarted := time.Now()
	first := p
	p = p.Restart(t)
	after := map[string]jobView{}
	waitUntil(t, finishWithin, "every accepted job finished after the restart", func() bool {
		done := true
		for _, id := range ids {
			if j, ok := after[id]; ok && j.finished() {
				continue
			}
			j := getJob(t, p.SandboxURL, key, id)
			// A resumed job goes on from its last recorded item.
			if b := before[id].Progress.Processed; j.Progress.Processed < b {
				t.Errorf("job %s: %d items processed before the interruption, %d after", id, b, j.Progress.Processed)
			}
			after[id] = j
			done = done && j.finished()
		}
		return done
	})
	t.Logf("all %d jobs finished %s after the restart", total, time.Since(restarted).Round(100*time.Millisecond))
	for id, j := range after {
		pr := j.Progress
		if j.Status != "COMPLETED" || pr.Total != items || pr.Processed != items || pr.Succeeded != items || pr.Failed != 0 {
			t.Errorf("job %s: %s with %+v (error %v), want COMPLETED with %d of %d items", id, j.Status, pr, j.Error, items, items)
		}
		// startedAt is when a worker first took the job: a resume keeps it.
		if b := before[id]; b.StartedAt != nil && *b.StartedAt != *j.StartedAt {
			t.Errorf("job %s: startedAt %s before the interruption, %s after", id, *b.StartedAt, *j.StartedAt)
		}
		if b := before[id]; b.Status == "COMPLETED" && *b.CompletedAt != *j.CompletedAt {
			t.Errorf("job %s completed twice: at %s and %s", id, *b.CompletedAt, *j.CompletedAt)
		}
	}
	for _, l := range append(first.Logs(), p.Logs()...) {
		if msg, _ := l["message"].(string); strings.HasPrefix(msg, "job failed") {
			t.Errorf("log: %v", l)
		}
	}
}

func TestJobCrash_Kill9(t *testing.T) {
	t.Parallel()
	runJobCrash(t, func(p *serverProc) { p.Kill(t) }, jobsLease+15*time.Second)
}

func TestJobCrash_SIGTERM(t *testing.T) {
	t.Parallel()
	// A clean stop drains the running jobs and leaves the queued ones due:
	// the restart runs them at once, no lease to wait for.
	runJobCrash(t, func(p *serverProc) { p.Stop(t) }, jobsLease-time.Second)
}
