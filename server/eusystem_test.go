package server

import (
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/storage"
)

// euRecorder is an https server on loopback that counts the connections
// made to it and the requests that reach it: where the EU system client
// must not send a UsernameToken.
type euRecorder struct {
	srv         *httptest.Server
	conns, reqs atomic.Int32
}

func newEURecorder(t *testing.T) *euRecorder {
	r := &euRecorder{}
	r.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.reqs.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	r.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			r.conns.Add(1)
		}
	}
	r.srv.StartTLS()
	t.Cleanup(r.srv.Close)
	return r
}

func (r *euRecorder) port() string {
	u, _ := url.Parse(r.srv.URL)
	return u.Port()
}

func (r *euRecorder) untouched(t *testing.T) {
	t.Helper()
	if c, n := r.conns.Load(), r.reqs.Load(); c != 0 || n != 0 {
		t.Errorf("the recorder saw %d connections and %d requests; want none", c, n)
	}
}

// sealAuthKey seals an auth key of tenant t as the app does, with its key
// file: what a record stored by an earlier version holds.
func (ta *testApp) sealAuthKey(t storage.Tenant, key string) []byte {
	ta.tb.Helper()
	s, err := dds.LoadSealer(ta.cfg.EUSystem.KeyPath(ta.cfg.DataDir))
	if err != nil {
		ta.tb.Fatal(err)
	}
	return s.Seal([]byte(key), t.String())
}

func putCredentials(ta *testApp, key, endpoint string) *httptest.ResponseRecorder {
	body, _ := json.Marshal(map[string]string{"username": "op", "authKey": "k", "clientId": "eudr-test", "endpoint": endpoint})
	return ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system", string(body), "X-API-Key", key))
}

// TestCredentials_EndpointGuard: an endpoint given through the API is an
// https URL without user name or password, on an address the guard
// allows (by name too); nothing is stored otherwise, and nothing reaches
// the addresses named. Private networks are allowed, as for webhooks.
func TestCredentials_EndpointGuard(t *testing.T) {
	rec := newEURecorder(t)
	port := rec.port()
	ta := newTestApp(t)
	_, live := ta.newKey(storage.Production)
	for _, c := range []struct{ endpoint, detail, issue string }{
		{"http://169.254.169.254/latest/meta-data/iam/security-credentials/", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"http://[::1]:1/", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"http://0.0.0.0:1/", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"http://user:pw@127.0.0.1:1/", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"https://user:pw@relay.example/tracesnt", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"https://user@relay.example/tracesnt", apierr.DetailInvalidValue, dds.IssueEndpointURL},
		{"https://169.254.169.254/latest/meta-data/", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress},
		{"https://[::1]:1/", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress},
		{"https://0.0.0.0:1/", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress},
		{"https://[fe80::1]/tracesnt", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress},
		{"https://127.0.0.1:" + port + "/tracesnt", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress},
		{"https://localhost:" + port + "/tracesnt", apierr.DetailTargetNotAllowed, dds.IssueEndpointAddress}, // a name that resolves to loopback
	} {
		e := wantError(t, putCredentials(ta, live, c.endpoint), http.StatusBadRequest, apierr.CodeValidationFailed, c.detail)
		if len(e.Details) != 1 || e.Details[0].Field != "endpoint" || e.Details[0].Issue != c.issue {
			t.Errorf("PUT endpoint %s: details %+v, want one at endpoint saying %q", c.endpoint, e.Details, c.issue)
		}
	}
	wantError(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/credentials/eu-system", "", "X-API-Key", live)),
		http.StatusNotFound, apierr.CodeNotFound, "")
	if w := putCredentials(ta, live, "https://10.1.2.3/tracesnt"); w.Code != http.StatusOK {
		t.Errorf("PUT an endpoint on a private network: %d %s", w.Code, w.Body)
	}
	rec.untouched(t)

	// eu_system.allow_private_endpoints lets a relay on this machine be
	// named; plain http and a user name still are not, through the API.
	relay := newTestApp(t, "EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true")
	_, relayKey := relay.newKey(storage.Production)
	if w := putCredentials(relay, relayKey, "https://localhost:"+port+"/tracesnt"); w.Code != http.StatusOK {
		t.Errorf("PUT a loopback endpoint with private endpoints allowed: %d %s", w.Code, w.Body)
	}
	for _, endpoint := range []string{"http://127.0.0.1:" + port + "/tracesnt", "https://user:pw@127.0.0.1:" + port + "/tracesnt"} {
		wantError(t, putCredentials(relay, relayKey, endpoint), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	}
	rec.untouched(t)
}

// sandboxStatement drafts a statement in the sandbox of a throwaway app:
// the Annex II content of a production DDS that passes the EU rules, so
// that submitting it would send it.
func sandboxStatement(t *testing.T) json.RawMessage {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	batch := ta.linkedBatch(key, -1.1)
	ta.mapEUOperator(key)
	return ta.draft(key, ddsBody(supplierOperator, batch)).Statement
}

// productionDraft records a DRAFT of statement in production directly:
// production screening needs imported layers.
func (ta *testApp) productionDraft(statement json.RawMessage) string {
	var id string
	ta.update(func(tx *storage.Tx) error {
		d := &storage.DDS{ID: storage.NewID("dds", tx.Now()), ActivityType: "IMPORT", InternalReference: "PO-4711", Statement: statement, CreatedAt: tx.Now()}
		id = d.ID
		return ta.dds.Record(tx, storage.Tenant{Org: defaultOrg, Env: storage.Production}, d, storage.DDSDraft, "test", "")
	})
	return id
}

func (ta *testApp) submitDDS(key, id string) *httptest.ResponseRecorder {
	return ta.serve(storage.Production, newRequest("POST", eudrPrefix+"/declarations/dds/"+id+"/submit", "", "X-API-Key", key,
		"Idempotency-Key", "submit-"+randomHex(4)))
}

// TestDDS_StoredEndpointRefused: credentials stored before the endpoint
// rules (written to the store directly, as an old record is) fail a
// submission before anything is sent: at once (422) when the stored URL
// breaks them, in the job when it was queued before, and at dial time when
// a name resolves to loopback. The recorder sees no connection.
func TestDDS_StoredEndpointRefused(t *testing.T) {
	statement := sandboxStatement(t)
	rec := newEURecorder(t)
	port := rec.port()
	ta := newTestApp(t) // its queues start below, once job 1 waits
	_, live := ta.newKey(storage.Production)
	production := storage.Tenant{Org: defaultOrg, Env: storage.Production}
	store := func(endpoint string) {
		ta.update(func(tx *storage.Tx) error {
			return tx.PutEUCredentials(production, &storage.EUCredentials{Username: "op", ClientID: "eudr-test",
				SealedAuthKey: ta.sealAuthKey(production, "k"), Endpoint: endpoint, UpdatedAt: tx.Now()})
		})
	}
	submitted := func(w *httptest.ResponseRecorder) string {
		t.Helper()
		var acc ddsSubmitAccepted
		if w.Code != http.StatusAccepted {
			t.Fatalf("submit: %d %s", w.Code, w.Body)
		}
		mustDecode(t, w, &acc)
		return acc.JobID
	}

	// Job 1 is queued while the endpoint is a name: allowed then.
	store("https://localhost:" + port + "/tracesnt")
	id1, id2 := ta.productionDraft(statement), ta.productionDraft(statement)
	job1 := submitted(ta.submitDDS(live, id1))

	for _, c := range []struct{ endpoint, issue string }{
		{"http://169.254.169.254/latest/meta-data/", dds.IssueEndpointURL},
		{"http://[::1]:" + port + "/", dds.IssueEndpointURL},
		{"http://0.0.0.0:" + port + "/", dds.IssueEndpointURL},
		{"https://0.0.0.0:" + port + "/", dds.IssueEndpointAddress},
		{"https://127.0.0.1:" + port + "/tracesnt", dds.IssueEndpointAddress},
		{"http://user:pw@127.0.0.1:" + port + "/", dds.IssueEndpointURL},
	} {
		store(c.endpoint)
		e := wantError(t, ta.submitDDS(live, id2), http.StatusUnprocessableEntity, apierr.CodeBusinessRule, apierr.DetailEUSystemNotConfigured)
		if !strings.Contains(e.Message, c.issue) || e.Details[0].Field != "credentials.endpoint" || strings.Contains(e.Message, "pw") {
			t.Errorf("submit with %s stored: %+v, want the endpoint named at credentials.endpoint with %q", c.endpoint, e, c.issue)
		}
	}

	// Job 1 runs now, with the last of those stored: it fails, nothing sent.
	ta.runQueues()
	j := ta.waitJobOn(storage.Production, live, job1, storage.JobFailed)
	if j.Error == nil || !strings.Contains(j.Error.Message, dds.IssueEndpointURL) {
		t.Errorf("job queued before the endpoint was refused: error %+v, want %q", j.Error, dds.IssueEndpointURL)
	}

	// A name that resolves to loopback passes until the client dials.
	store("https://localhost:" + port + "/tracesnt")
	j = ta.waitJobOn(storage.Production, live, submitted(ta.submitDDS(live, id2)), storage.JobFailed)
	if j.Error == nil || !strings.Contains(j.Error.Message, "target address not allowed") {
		t.Errorf("job to a name resolving to loopback: error %+v, want the guard's refusal", j.Error)
	}
	for _, id := range []string{id1, id2} {
		ta.view(func(tx *storage.Tx) error {
			d, err := tx.FindDDS(production, id)
			if err != nil || d.Status != storage.DDSDraft || d.EUUUID != "" {
				t.Errorf("dds %s after refused submissions: %+v %v, want a DRAFT", id, d, err)
			}
			return nil
		})
	}
	rec.untouched(t)
}

// TestDDS_EndpointRedirectNotFollowed: an endpoint that answers 307 does
// not get the statement and token posted on to the Location; the
// submission fails for good, naming the redirect. The relay is on
// loopback, configured by the operator with the setting that allows it.
func TestDDS_EndpointRedirectNotFollowed(t *testing.T) {
	statement := sandboxStatement(t)
	rec := newEURecorder(t)
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, rec.srv.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	ta := newTestApp(t, "EUDR_EU_SYSTEM_ENDPOINT="+redirecting.URL+"/tracesnt", "EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true")
	_, live := ta.newKey(storage.Production)
	ta.runQueues()
	if w := putCredentials(ta, live, "production"); w.Code != http.StatusOK {
		t.Fatalf("PUT credentials: %d %s", w.Code, w.Body)
	}
	id := ta.productionDraft(statement)
	w := ta.submitDDS(live, id)
	var acc ddsSubmitAccepted
	mustDecode(t, w, &acc)
	j := ta.waitJobOn(storage.Production, live, acc.JobID, storage.JobFailed)
	if j.Error == nil || !strings.Contains(j.Error.Message, "redirect not followed") || !strings.Contains(j.Error.Message, rec.srv.URL) {
		t.Errorf("job redirected: error %+v, want the redirect to %s not followed", j.Error, rec.srv.URL)
	}
	rec.untouched(t)
}

// TestCredentials_OperatorAccessIdentifier: PUT stores the identifier sent
// in the BodyIdentity header and GET shows it; a PUT without it clears it.
func TestCredentials_OperatorAccessIdentifier(t *testing.T) {
	ta := newTestApp(t)
	_, live := ta.newKey(storage.Production)
	put := func(body string) *httptest.ResponseRecorder {
		return ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system", body, "X-API-Key", live))
	}
	if w := put(`{"username":"op","authKey":"k","clientId":"eudr-test","operatorAccessIdentifier":"OP-0042"}`); w.Code != http.StatusOK {
		t.Fatalf("PUT: %d %s", w.Code, w.Body)
	}
	var c dds.CredentialsView
	mustDecode(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/credentials/eu-system", "", "X-API-Key", live)), &c)
	if c.OperatorAccessIdentifier == nil || *c.OperatorAccessIdentifier != "OP-0042" {
		t.Errorf("GET: %+v", c)
	}
	wantError(t, put(`{"username":"op","authKey":"k","clientId":"eudr-test","operatorAccessIdentifier":"OP 42"}`),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	w := put(`{"username":"op","authKey":"k","clientId":"eudr-test"}`)
	if !strings.Contains(w.Body.String(), `"operatorAccessIdentifier":null`) {
		t.Errorf("PUT without it: %s, want it cleared", w.Body)
	}
}
