package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// soapReply is one answer of fakeEUSystem.
type soapReply struct {
	status int
	body   []byte
}

// fakeEUSystem stands in for the EU information system behind the real
// SOAP client: each call is answered with the next reply queued for its
// operation (the SOAPAction's last part: submitDds, getDds, ...), the last
// one repeating.
type fakeEUSystem struct {
	srv     *httptest.Server
	mu      sync.Mutex
	replies map[string][]soapReply
	calls   map[string]int
	bodies  map[string][]byte // the last request of each operation
}

func newFakeEUSystem(tb testing.TB, replies map[string][]soapReply) *fakeEUSystem {
	f := &fakeEUSystem{replies: replies, calls: map[string]int{}, bodies: map[string][]byte{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		action := strings.Trim(r.Header.Get("SOAPAction"), `"`)
		op := action[strings.LastIndexByte(action, '/')+1:]
		f.mu.Lock()
		queue := f.replies[op]
		f.bodies[op] = body
		f.calls[op]++
		n := f.calls[op]
		f.mu.Unlock()
		if len(queue) == 0 {
			tb.Errorf("fake EU system: unexpected call %s", op)
			w.WriteHeader(http.StatusNotImplemented)
			return
		}
		reply := queue[min(n, len(queue))-1]
		w.Header().Set("Content-Type", "text/xml; charset=utf-8")
		w.WriteHeader(reply.status)
		w.Write(reply.body)
	}))
	tb.Cleanup(f.srv.Close)
	return f
}

func (f *fakeEUSystem) callsOf(op string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[op]
}

// lastBody is the last request of op received.
func (f *fakeEUSystem) lastBody(op string) []byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.bodies[op]
}

// euTestdata reads a recorded answer of the EU system (server/euis/testdata).
func euTestdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("euis", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestDDS_SubmissionRetryVisible: while the EU system answers HTTP 500,
// the submission job stays RUNNING and both the job and the statement
// show the last attempt's outcome and when the next one is due; once the
// EU system takes the statement the retry state is gone, the statement is
// SUBMITTED, and then VALIDATED with the job COMPLETED.
func TestDDS_SubmissionRetryVisible(t *testing.T) {
	eu := newFakeEUSystem(t, map[string][]soapReply{
		"submitDds": {
			{500, []byte("<html><body>Internal Server Error</body></html>")},
			{500, euTestdata(t, "fault_internal.xml")},
			{200, euTestdata(t, "submit_response.xml")},
		},
		// The second attempt first looks for a filing whose answer was lost.
		"getDdsByInternalReference": {{500, euTestdata(t, "fault_not_found.xml")}},
		"getDds":                    {{200, euTestdata(t, "get_dds_response.xml")}},
	})
	// An operator's relay on loopback: the config names it and allows it.
	ta := newTestApp(t, "EUDR_EU_SYSTEM_ENDPOINT="+eu.srv.URL+"/tracesnt", "EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true")
	_, live := ta.newKey(storage.Production)
	ta.runQueues()
	production := storage.Tenant{Org: defaultOrg, Env: storage.Production}
	w := ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system",
		`{"username":"op","authKey":"k","clientId":"eudr-test","endpoint":"production"}`, "X-API-Key", live))
	if w.Code != http.StatusOK {
		t.Fatalf("PUT credentials: %d %s", w.Code, w.Body)
	}
	s := apitest.EUStatement(t, supplierOperator)
	var id string
	ta.update(func(tx *storage.Tx) error {
		statement, err := storage.MarshalJSON(dds.PayloadOf(s))
		if err != nil {
			return err
		}
		d := &storage.DDS{ID: storage.NewID("dds", tx.Now()), ActivityType: s.ActivityType, OperatorUUID: s.OperatorUUID,
			InternalReference: s.InternalReference, Statement: statement, CreatedAt: tx.Now()}
		id = d.ID
		return ta.dds.Record(tx, production, d, storage.DDSDraft, "test", "")
	})
	w = ta.serve(storage.Production, newRequest("POST", eudrPrefix+"/declarations/dds/"+id+"/submit", "", "X-API-Key", live, "Idempotency-Key", "sub"))
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	var acc ddsSubmitAccepted
	mustDecode(t, w, &acc)
	getDDS := func() ddsResponse {
		t.Helper()
		var d ddsResponse
		mustDecode(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/declarations/dds/"+id, "", "X-API-Key", live)), &d)
		return d
	}
	attempts := func(n int) func(jobResponse) bool {
		return func(j jobResponse) bool { return j.Attempts == n }
	}
	// wantRetrying checks a job that failed n attempts, the last at at with
	// code and a message saying what, due again at next; and that the
	// statement, still a DRAFT, shows the same.
	wantRetrying := func(j jobResponse, w *httptest.ResponseRecorder, n int, at, next time.Time, code, what string) {
		t.Helper()
		la := j.LastAttempt
		if j.Status != storage.JobRunning || j.Error != nil || la == nil || j.NextAttemptAt == nil {
			t.Fatalf("after %d failed attempts: %s", n, w.Body)
		}
		if la.Code != code || !strings.Contains(la.Message, what) || !strings.HasSuffix(la.Message, "; trying again") ||
			la.At != storage.FormatTime(at) || *j.NextAttemptAt != storage.FormatTime(next) {
			t.Errorf("after %d failed attempts: lastAttempt %+v, nextAttemptAt %s; want %s %q at %s, next at %s",
				n, *la, *j.NextAttemptAt, code, what, storage.FormatTime(at), storage.FormatTime(next))
		}
		if ra := w.Header().Get("Retry-After"); ra != "60" { // the next attempt is more than a minute away
			t.Errorf("Retry-After %q, want 60", ra)
		}
		d := getDDS()
		want := ddsSubmissionBody{JobID: acc.JobID, Status: storage.JobRunning, retryBody: j.retryBody}
		if d.Status != storage.DDSDraft || d.Submission == nil || !jsonEqual(t, *d.Submission, want) {
			t.Errorf("the statement after %d failed attempts: %s %+v, want DRAFT with submission %+v", n, d.Status, d.Submission, want)
		}
	}
	sched := ta.cfg.EUSystem.PollSchedule // production's: the first delays are minutes or more
	start := ta.clock.Now()

	// HTTP 500 with an HTML page.
	j, w := ta.waitJobView(storage.Production, live, acc.JobID, "a first failed attempt", attempts(1))
	wantRetrying(j, w, 1, start, start.Add(sched[0]), apierr.AttemptEUSystemUnavailable, "answered HTTP 500 (Internal Server Error) to submitDds")

	// HTTP 500 with a SOAP server fault.
	ta.clock.Advance(sched[0])
	second := ta.clock.Now()
	ta.jobs.Wake()
	j, w = ta.waitJobView(storage.Production, live, acc.JobID, "a second failed attempt", attempts(2))
	wantRetrying(j, w, 2, second, second.Add(sched[1]), apierr.AttemptEUSystemUnavailable,
		"answered submitDds with a server fault (An internal error occurred. Please try again later.)")

	// Taken: the statement is SUBMITTED, the job follows it with no retry
	// state left.
	ta.clock.Advance(sched[1])
	ta.jobs.Wake()
	j, w = ta.waitJobView(storage.Production, live, acc.JobID, "the statement to be filed", func(j jobResponse) bool { return j.Attempts == 0 })
	if j.Status != storage.JobRunning || j.LastAttempt != nil || j.NextAttemptAt != nil || j.Error != nil {
		t.Errorf("job after the statement was filed: %s", w.Body)
	}
	if ra := w.Header().Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After of a job that is not retrying: %q, want 2", ra)
	}
	d := getDDS()
	if d.Status != storage.DDSSubmitted || d.EUUUID == nil || *d.EUUUID != "071874bd-8c62-4cac-8eb6-b2fbe003410c" ||
		d.Submission == nil || !jsonEqual(t, *d.Submission, ddsSubmissionBody{JobID: acc.JobID, Status: storage.JobRunning}) {
		t.Errorf("the statement once filed: %+v, submission %+v", d, d.Submission)
	}
	if n := eu.callsOf("submitDds"); n != 3 {
		t.Errorf("submitDds called %d times, want 3", n)
	}

	// Validated at the first status poll, the schedule's first delay after
	// the filing (the failed attempts do not lengthen it): the job is
	// COMPLETED and the statement shows no submission.
	ta.clock.Advance(sched[0])
	ta.jobs.Wake()
	j, w = ta.waitJobView(storage.Production, live, acc.JobID, "the job to complete", func(j jobResponse) bool { return j.Status != storage.JobRunning })
	if j.Status != storage.JobCompleted || j.Attempts != 0 || j.LastAttempt != nil || j.NextAttemptAt != nil || w.Header().Get("Retry-After") != "" {
		t.Errorf("job after validation: %s (Retry-After %q)", w.Body, w.Header().Get("Retry-After"))
	}
	if d := getDDS(); d.Status != storage.DDSValidated || d.Submission != nil {
		t.Errorf("the statement once validated: %s, submission %+v", d.Status, d.Submission)
	}
}

// jsonEqual compares the JSON encodings of a and b.
func jsonEqual(tb testing.TB, a, b any) bool {
	tb.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		tb.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		tb.Fatal(err)
	}
	return string(ja) == string(jb)
}
