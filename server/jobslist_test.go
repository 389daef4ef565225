package server

import (
	"net/http"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// GET /jobs lists the caller's jobs newest first, without their results,
// filtered by status and type, one page at a time.
func TestApp_JobsList(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}
	var ids []string // oldest first
	ta.update(func(tx *storage.Tx) error {
		for i, kind := range []string{work.PolygonIngestion, work.SandboxTest, work.SandboxTest, work.BatchRiskAssessment} {
			j, err := ta.jobs.Enqueue(tx, sandbox, kind, 10*(i+1), nil)
			if err != nil {
				return err
			}
			ids = append(ids, j.ID)
		}
		// The second is half done, the fourth failed.
		j, err := tx.FindJob(sandbox, ids[1])
		if err != nil {
			return err
		}
		j.Status, j.Progress.Processed, j.Progress.Succeeded = storage.JobRunning, 10, 10
		j.ResultCounts.Add("DONE")
		if err := tx.PutJob(sandbox, j); err != nil {
			return err
		}
		if j, err = tx.FindJob(sandbox, ids[3]); err != nil {
			return err
		}
		j.Status, j.Error = storage.JobFailed, &storage.JobError{Code: apierr.JobFailed, Message: "boom"}
		if err := tx.PutJob(sandbox, j); err != nil {
			return err
		}
		// Another organisation's job is not the caller's.
		_, err = ta.jobs.Enqueue(tx, storage.Tenant{Org: "other", Env: storage.Sandbox}, work.SandboxTest, 1, nil)
		return err
	})
	list := func(query string) ([]jobSummaryResponse, http.Header) {
		t.Helper()
		w := ta.do("GET", eudrPrefix+"/jobs"+query, "", "X-API-Key", key)
		if w.Code != http.StatusOK {
			t.Fatalf("GET /jobs%s: %d %s", query, w.Code, w.Body)
		}
		var out []jobSummaryResponse
		mustDecode(t, w, &out)
		return out, w.Header()
	}
	idsOf := func(js []jobSummaryResponse) []string {
		out := make([]string, len(js))
		for i, j := range js {
			out[i] = j.JobID
		}
		return out
	}
	equal := func(what string, got, want []string) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("%s: got %v, want %v", what, got, want)
				return
			}
		}
	}

	all, _ := list("")
	equal("all", idsOf(all), []string{ids[3], ids[2], ids[1], ids[0]})
	if r := all[2]; r.Status != storage.JobRunning || r.Type != work.SandboxTest || r.Progress.Total != 20 ||
		r.Progress.Processed != 10 || r.Progress.Percent != 50 || r.ResultCounts.Total != 1 || r.ResultCounts.ByStatus["DONE"] != 1 {
		t.Errorf("running job: %+v", r)
	}
	if f := all[0]; f.Status != storage.JobFailed || f.Error == nil || f.Error.Code != apierr.JobFailed || f.Progress.Percent != 100 {
		t.Errorf("failed job: %+v", f)
	}
	var raw []map[string]any
	mustDecode(t, ta.do("GET", eudrPrefix+"/jobs", "", "X-API-Key", key), &raw)
	for _, field := range []string{"results", "nextResults", "ledgerProofs"} {
		if _, ok := raw[0][field]; ok {
			t.Errorf("a listed job has %s: %v", field, raw[0])
		}
	}

	queued, _ := list("?status=QUEUED")
	equal("QUEUED", idsOf(queued), []string{ids[2], ids[0]})
	tests, _ := list("?type=sandbox_test&status=QUEUED")
	equal("QUEUED sandbox_test", idsOf(tests), []string{ids[2]})

	// Pages of two, the filter kept in the link.
	first, h := list("?limit=2")
	equal("first page", idsOf(first), []string{ids[3], ids[2]})
	if h.Get("X-Next-Cursor") != ids[2] || h.Get("Link") != `<`+eudrPrefix+`/jobs?cursor=`+ids[2]+`&limit=2>; rel="next"` {
		t.Errorf("first page's links: %v", h)
	}
	second, h := list("?limit=2&cursor=" + ids[2])
	equal("second page", idsOf(second), []string{ids[1], ids[0]})
	if h.Get("X-Next-Cursor") != "" || h.Get("Link") != "" {
		t.Errorf("last page's links: %v", h)
	}

	w := ta.do("GET", eudrPrefix+"/jobs?status=DONE&type=nope&limit=0", "", "X-API-Key", key)
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	got := detailSet(e.Details)
	for _, f := range []string{"query.status", "query.type", "query.limit"} {
		if !got[apierr.DetailInvalidValue+" "+f] {
			t.Errorf("details: %v, want %s", e.Details, f)
		}
	}
}
