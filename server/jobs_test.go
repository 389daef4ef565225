package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// runQueues runs the app's job runner and dispatcher until the test ends.
func (ta *testApp) runQueues() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	for _, run := range []func(context.Context) error{ta.jobs.Run, ta.dispatcher.Run} {
		go func() {
			defer func() { done <- struct{}{} }()
			if err := run(ctx); err != nil {
				ta.tb.Errorf("queue worker: %v", err)
			}
		}()
	}
	ta.tb.Cleanup(func() { cancel(); <-done; <-done })
}

// waitJob waits until the sandbox job has status want and answers GET
// /jobs/{id}; a job that ended otherwise fails the test at once.
func (ta *testApp) waitJob(key, id, want string) (jobResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	return ta.waitJobIn(storage.Sandbox, key, id, want)
}

// waitJobOn is waitJobIn without the response recorder.
func (ta *testApp) waitJobOn(env storage.Environment, key, id, want string) jobResponse {
	ta.tb.Helper()
	j, _ := ta.waitJobIn(env, key, id, want)
	return j
}

// waitJobIn is waitJob for a job of env.
func (ta *testApp) waitJobIn(env storage.Environment, key, id, want string) (jobResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	ta.watchJob(env, key, id, func(j *storage.Job) bool {
		if j.Status != want && (j.Status == storage.JobCompleted || j.Status == storage.JobFailed) {
			ta.tb.Fatalf("job %s: status %s (error %+v), want %s", id, j.Status, j.Error, want)
		}
		return j.Status == want
	})
	j, w := ta.getJobOn(env, key, id)
	if j.Status != want {
		ta.tb.Fatalf("job %s: GET answers status %s once the store had %s: %s", id, j.Status, want, w.Body)
	}
	return j, w
}

// waitJobView waits until done holds for the job of env as GET
// /jobs/{id} shows it, and answers that GET; what names the wait in a
// failure.
func (ta *testApp) waitJobView(env storage.Environment, key, id, what string, done func(jobResponse) bool) (jobResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	ta.watchJob(env, key, id, func(j *storage.Job) bool { return done(toJobResponse(&work.Page{Job: j}, "")) })
	j, w := ta.getJobOn(env, key, id)
	if !done(j) {
		ta.tb.Fatalf("job %s: GET answers %s once the store showed %s", id, w.Body, what)
	}
	return j, w
}

// watchJob reads the job of key's organisation in env from the store until
// done holds for it. It reads the store rather than GET /jobs/{id}: every
// GET counts against the key's rate limit, whose bucket refills on the
// test's fake clock, which stands still while a job runs, so polling the
// API would end in 429s however long it waited. There is no deadline but
// the test's own: on a loaded machine a job takes as long as it takes.
func (ta *testApp) watchJob(env storage.Environment, key, id string, done func(*storage.Job) bool) {
	ta.tb.Helper()
	k, err := ta.accounts.VerifyKey(context.Background(), key, env)
	if err != nil {
		ta.tb.Fatalf("watch job %s: the key: %v", id, err)
	}
	t := storage.Tenant{Org: k.Org, Env: env}
	for {
		var job *storage.Job
		ta.view(func(tx *storage.Tx) error {
			var err error
			job, err = tx.FindJob(t, id)
			return err
		})
		if done(job) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// getJobOn answers GET /jobs/{id} on env.
func (ta *testApp) getJobOn(env storage.Environment, key, id string) (jobResponse, *httptest.ResponseRecorder) {
	ta.tb.Helper()
	w := ta.serve(env, newRequest("GET", eudrPrefix+"/jobs/"+id, "", "X-API-Key", key))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("GET /jobs/%s: %d %s", id, w.Code, w.Body)
	}
	var j jobResponse
	mustDecode(ta.tb, w, &j)
	return j, w
}

func TestApp_Jobs(t *testing.T) {
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}

	t.Run("RunAndComplete", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox, "read")
		_, liveKey := ta.newKey(storage.Production, "read")
		running, release := make(chan struct{}), make(chan struct{})
		ta.jobs.Handle("test_job", func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
			if string(input) != `{"n":3}` || tn != sandbox {
				t.Errorf("handler: input %s tenant %v, want {\"n\":3} %v", input, tn, sandbox)
			}
			close(running)
			<-release
			return ta.db.Update(ctx, func(tx *storage.Tx) error {
				job.Progress = storage.JobProgress{Total: 3, Processed: 3, Succeeded: 2, Failed: 1}
				for i := range 2 {
					if err := work.AddResult(tx, tn, job, i, "DONE", json.RawMessage(fmt.Sprintf(`{"featureIndex":%d}`, i))); err != nil {
						return err
					}
				}
				return work.Complete(tx, tn, job)
			})
		})
		var job *storage.Job
		ta.update(func(tx *storage.Tx) error {
			var err error
			job, err = ta.jobs.Enqueue(tx, sandbox, "test_job", 3, []byte(`{"n":3}`))
			return err
		})
		queued, w := ta.waitJob(key, job.ID, storage.JobQueued)
		if w.Header().Get("Retry-After") == "" || queued.Progress.Total != 3 || queued.StartedAt != nil {
			t.Errorf("queued job: Retry-After %q, %+v", w.Header().Get("Retry-After"), queued)
		}
		ta.runQueues()
		<-running
		if j, w := ta.waitJob(key, job.ID, storage.JobRunning); w.Header().Get("Retry-After") == "" || j.StartedAt == nil {
			t.Errorf("running job: Retry-After %q, startedAt %v", w.Header().Get("Retry-After"), j.StartedAt)
		}
		close(release)
		done, w := ta.waitJob(key, job.ID, storage.JobCompleted)
		if w.Header().Get("Retry-After") != "" {
			t.Errorf("completed job: Retry-After %q, want none", w.Header().Get("Retry-After"))
		}
		if done.Progress.Percent != 100 || done.Progress.Failed != 1 || string(done.Results) != `[{"featureIndex":0},{"featureIndex":1}]` ||
			done.CompletedAt == nil || done.Error != nil || done.LedgerProofs == nil || len(done.LedgerProofs) != 0 ||
			done.ResultCounts.Total != 2 || !reflect.DeepEqual(done.ResultCounts.ByStatus, map[string]int{"DONE": 2}) || done.NextResults != nil {
			t.Errorf("completed job: got %+v", done)
		}
		ta.view(func(tx *storage.Tx) error {
			if n := queue.Pending(tx.Tx); n != 0 {
				t.Errorf("queued jobs after completion: got %d, want 0", n)
			}
			return nil
		})
		// Another environment (or organisation) does not see it.
		wantError(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/jobs/"+job.ID, "", "X-API-Key", liveKey)),
			http.StatusNotFound, apierr.CodeNotFound, "")
		wantError(t, ta.serve(storage.Sandbox, newRequest("GET", eudrPrefix+"/jobs/job_nope", "", "X-API-Key", key)),
			http.StatusNotFound, apierr.CodeNotFound, "")
	})

	// A job of more results than a page: the job shows the first 1,000
	// (or ?limit=) with the counts of all, and links to the next page of
	// its results list, whose pages link on to the last, in item order.
	t.Run("ResultsPaged", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox, "read")
		_, liveKey := ta.newKey(storage.Production, "read")
		const n = 2500
		ta.jobs.Handle("big_job", func(ctx context.Context, tn storage.Tenant, job *storage.Job, _ []byte) error {
			return ta.db.Update(ctx, func(tx *storage.Tx) error {
				for i := range n {
					status := map[bool]string{true: "GOOD", false: "BAD"}[i%10 != 0]
					if err := work.AddResult(tx, tn, job, i, status, json.RawMessage(fmt.Sprintf(`{"featureIndex":%d,"status":%q}`, i, status))); err != nil {
						return err
					}
				}
				job.Progress = storage.JobProgress{Total: n, Processed: n, Succeeded: n}
				return work.Complete(tx, tn, job)
			})
		})
		var job *storage.Job
		ta.update(func(tx *storage.Tx) error {
			var err error
			job, err = ta.jobs.Enqueue(tx, sandbox, "big_job", n, nil)
			return err
		})
		ta.runQueues()
		done, w := ta.waitJob(key, job.ID, storage.JobCompleted)
		var first []struct{ FeatureIndex int }
		if err := json.Unmarshal(done.Results, &first); err != nil {
			t.Fatal(err)
		}
		next := eudrPrefix + "/jobs/" + job.ID + "/results?cursor=" + job.ID + "_999&limit=1000"
		if len(first) != 1000 || first[999].FeatureIndex != 999 || done.NextResults == nil || *done.NextResults != next ||
			!reflect.DeepEqual(done.ResultCounts, resultCountsBody{Total: n, ByStatus: map[string]int{"GOOD": 2250, "BAD": 250}}) ||
			w.Header().Get("Link") != "" || w.Header().Get("X-Next-Cursor") != "" {
			t.Fatalf("job of %d results: %d shown, next %v, counts %+v, Link %q", n, len(first), done.NextResults, done.ResultCounts, w.Header().Get("Link"))
		}
		seen := len(first)
		for path := *done.NextResults; path != ""; {
			w := ta.serve(storage.Sandbox, newRequest("GET", path, "", "X-API-Key", key))
			var page []struct{ FeatureIndex int }
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, w.Code, w.Body)
			}
			mustDecode(t, w, &page)
			for _, r := range page {
				if r.FeatureIndex != seen {
					t.Fatalf("GET %s: feature %d after %d", path, r.FeatureIndex, seen-1)
				}
				seen++
			}
			path = ""
			if link := w.Header().Get("Link"); link != "" {
				path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
				if cur := w.Header().Get("X-Next-Cursor"); cur != fmt.Sprintf("%s_%d", job.ID, seen-1) || !strings.Contains(path, "cursor="+cur) {
					t.Errorf("GET %s: Link %q, X-Next-Cursor %q", path, link, cur)
				}
			}
		}
		if seen != n {
			t.Errorf("the pages hold %d results, want %d", seen, n)
		}

		small, _ := ta.getJobOn(storage.Sandbox, key, job.ID+"?limit=3")
		if string(small.Results) != `[{"featureIndex":0,"status":"BAD"},{"featureIndex":1,"status":"GOOD"},{"featureIndex":2,"status":"GOOD"}]` ||
			small.NextResults == nil || !strings.HasSuffix(*small.NextResults, "?cursor="+job.ID+"_2&limit=3") || small.ResultCounts.Total != n {
			t.Errorf("job with ?limit=3: results %s, next %v, counts %+v", small.Results, small.NextResults, small.ResultCounts)
		}
		get := func(path, key string, env storage.Environment) *httptest.ResponseRecorder {
			return ta.serve(env, newRequest("GET", eudrPrefix+path, "", "X-API-Key", key))
		}
		for _, limit := range []string{"0", "1001", "ten"} {
			e := wantError(t, get("/jobs/"+job.ID+"?limit="+limit, key, storage.Sandbox), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
			if e.Details[0].Field != "query.limit" {
				t.Errorf("job with ?limit=%s: %+v", limit, e.Details)
			}
		}
		e := wantError(t, get("/jobs/"+job.ID+"/results?limit=0&cursor=job_01ARZ3NDEKTSV4RRFFQ69G5FAV_5", key, storage.Sandbox),
			http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
		if got := detailSet(e.Details); len(got) != 2 || !got["INVALID_VALUE query.limit"] || !got["INVALID_VALUE query.cursor"] {
			t.Errorf("results with a bad limit and another job's cursor: %+v", e.Details)
		}
		wantError(t, get("/jobs/job_nope/results", key, storage.Sandbox), http.StatusNotFound, apierr.CodeNotFound, "")
		wantError(t, get("/jobs/"+job.ID+"/results", liveKey, storage.Production), http.StatusNotFound, apierr.CodeNotFound, "")
	})

	t.Run("FatalErrorFailsAndFiresJobFailed", func(t *testing.T) {
		rc := newReceiver(t)
		ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
		_, key := ta.newKey(storage.Sandbox)
		rc.subscribe(ta, key, event.JobFailed)

		ta.jobs.Handle("doomed", func(context.Context, storage.Tenant, *storage.Job, []byte) error {
			return errors.New("reference layer missing")
		})
		var job *storage.Job
		ta.update(func(tx *storage.Tx) error {
			var err error
			job, err = ta.jobs.Enqueue(tx, sandbox, "doomed", 1, nil)
			return err
		})
		ta.runQueues()
		failed, w := ta.waitJob(key, job.ID, storage.JobFailed)
		if failed.Error == nil || failed.Error.Code != apierr.JobFailed || failed.Error.Message != "reference layer missing" ||
			failed.CompletedAt == nil || w.Header().Get("Retry-After") != "" {
			t.Errorf("failed job: got %+v (Retry-After %q)", failed, w.Header().Get("Retry-After"))
		}
		// No Wake here: publishing in the failing transaction wakes the
		// dispatcher when it commits (the poll is 5 s, deliveries come
		// within milliseconds).
		typ, raw := rc.next(t)
		var data event.JobFailedData
		if err := json.Unmarshal(raw, &data); err != nil {
			t.Fatal(err)
		}
		if typ != event.JobFailed || data.JobID != job.ID || data.Type != "doomed" || data.Error.Code != apierr.JobFailed {
			t.Errorf("job.failed delivery: got %s %s", typ, raw)
		}
	})

	// Any job type can try again after a transient failure: the job shows
	// its failed attempts until one gets through or the job fails.
	t.Run("TransientFailureRetriesVisibly", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox, "read")
		var mu sync.Mutex
		runs := map[string]int{}
		delays := []time.Duration{10*time.Second + 500*time.Millisecond, 90 * time.Second}
		ta.jobs.Handle("flaky", func(ctx context.Context, tn storage.Tenant, job *storage.Job, input []byte) error {
			mu.Lock()
			runs[job.ID]++
			n := runs[job.ID]
			mu.Unlock()
			doomed := string(input) == `"doomed"`
			switch {
			case n <= len(delays) && !(doomed && n == 2):
				return ta.db.Update(ctx, func(tx *storage.Tx) error {
					return work.Retry(tx, tn, job, storage.JobAttempt{Code: "TEST_DOWN", Message: fmt.Sprintf("down on run %d", n)}, tx.Now().Add(delays[n-1]))
				})
			case doomed:
				return errors.New("gave up")
			}
			return ta.db.Update(ctx, func(tx *storage.Tx) error { return work.Complete(tx, tn, job) })
		})
		var job, doomed *storage.Job
		ta.update(func(tx *storage.Tx) error {
			var err error
			if job, err = ta.jobs.Enqueue(tx, sandbox, "flaky", 1, nil); err != nil {
				return err
			}
			doomed, err = ta.jobs.Enqueue(tx, sandbox, "flaky", 1, []byte(`"doomed"`))
			return err
		})
		ta.runQueues()
		retrying := func(id string, n int) jobResponse {
			t.Helper()
			j, w := ta.waitJobView(storage.Sandbox, key, id, fmt.Sprintf("failed attempt %d", n), func(j jobResponse) bool { return j.Attempts == n })
			next := ta.clock.Now().Add(delays[n-1])
			want := jobAttemptBody{At: storage.FormatTime(ta.clock.Now()), Code: "TEST_DOWN", Message: fmt.Sprintf("down on run %d", n)}
			wantAfter := map[int]string{1: "11", 2: "60"}[n]
			if j.Status != storage.JobRunning || j.LastAttempt == nil || *j.LastAttempt != want || j.NextAttemptAt == nil ||
				*j.NextAttemptAt != storage.FormatTime(next) || j.Error != nil || w.Header().Get("Retry-After") != wantAfter {
				t.Errorf("after failed attempt %d: %s (Retry-After %q), want lastAttempt %+v, next %s, Retry-After %s",
					n, w.Body, w.Header().Get("Retry-After"), want, storage.FormatTime(next), wantAfter)
			}
			return j
		}
		retrying(job.ID, 1)
		retrying(doomed.ID, 1)
		ta.clock.Advance(delays[0])
		ta.jobs.Wake()
		retrying(job.ID, 2)
		failed, w := ta.waitJob(key, doomed.ID, storage.JobFailed)
		if failed.Error == nil || failed.Error.Message != "gave up" || failed.Attempts != 0 || failed.LastAttempt != nil || failed.NextAttemptAt != nil {
			t.Errorf("job that failed after retrying: %s", w.Body)
		}
		ta.clock.Advance(delays[1])
		ta.jobs.Wake()
		done, w := ta.waitJob(key, job.ID, storage.JobCompleted)
		if done.Attempts != 0 || done.LastAttempt != nil || done.NextAttemptAt != nil || w.Header().Get("Retry-After") != "" {
			t.Errorf("job that completed after retrying: %s (Retry-After %q)", w.Body, w.Header().Get("Retry-After"))
		}
		ta.view(func(tx *storage.Tx) error {
			if n := queue.Pending(tx.Tx); n != 0 {
				t.Errorf("queued jobs at the end: %d, want 0", n)
			}
			return nil
		})
	})
}

func TestApp_SandboxJob(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	_, liveKey := ta.newKey(storage.Production)
	ta.runQueues()

	post := func(body, idem string) *httptest.ResponseRecorder {
		return ta.serve(storage.Sandbox, newRequest("POST", sandboxOnlyPrefix+"/jobs", body, "X-API-Key", key, "Idempotency-Key", idem))
	}
	w := post(`{"items":3,"itemMillis":0}`, "j1")
	if w.Code != http.StatusAccepted {
		t.Fatalf("POST /sandbox/jobs: got %d %s, want 202", w.Code, w.Body)
	}
	var acc jobAcceptedResponse
	mustDecode(t, w, &acc)
	if w.Header().Get("Location") != eudrPrefix+"/jobs/"+acc.JobID {
		t.Errorf("Location: got %q, want the job's path", w.Header().Get("Location"))
	}
	done, _ := ta.waitJob(key, acc.JobID, storage.JobCompleted)
	if done.Type != work.SandboxTest || done.Progress.Total != 3 || done.Progress.Processed != 3 || done.Progress.Succeeded != 3 {
		t.Errorf("completed sandbox job: got %+v", done)
	}

	w = post(`{"items":4,"itemMillis":0,"failAtItem":2}`, "j2")
	mustDecode(t, w, &acc)
	failed, _ := ta.waitJob(key, acc.JobID, storage.JobFailed)
	if failed.Progress.Processed != 2 || failed.Error == nil || failed.Error.Code != apierr.JobFailed {
		t.Errorf("failed sandbox job: got %+v, want 2 items processed and JOB_FAILED", failed)
	}

	e := wantError(t, post(`{"items":0,"itemMillis":5000,"failAtItem":7}`, "j3"), http.StatusBadRequest, apierr.CodeValidationFailed, "")
	if got := detailSet(e.Details); !got["INVALID_VALUE items"] || !got["INVALID_VALUE itemMillis"] || !got["INVALID_VALUE failAtItem"] {
		t.Errorf("validation: got %+v, want items, itemMillis and failAtItem", e.Details)
	}
	wantError(t, ta.serve(storage.Production, newRequest("POST", sandboxOnlyPrefix+"/jobs", `{}`, "X-API-Key", liveKey, "Idempotency-Key", "j4")),
		http.StatusNotFound, apierr.CodeNotFound, "")
}
