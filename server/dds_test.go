package server

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// linkedBatch registers a VERIFIED batch of a fresh compliant plot and
// links it to a shipment entering at Rotterdam.
func (ta *testApp) linkedBatch(key string, lon float64) string {
	ta.tb.Helper()
	batch := ta.verifiedBatch(key, lon)
	w := ta.link(key, "lnk-"+randomHex(4), batch, "SHP-"+randomHex(4))
	var acc shipmentLinkAccepted
	mustDecode(ta.tb, w, &acc)
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	return batch
}

const supplierOperator = "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b" // of mapSupplier's V-1

// mapEUOperator makes supplier V-1 an importer established in the
// Netherlands, with an EORI: the operator a statement is filed for.
func (ta *testApp) mapEUOperator(key string) {
	ta.tb.Helper()
	w := ta.do("POST", eudrPrefix+"/suppliers", `{"erpVendorId":"V-1","euOperatorUuid":"`+supplierOperator+`","name":"Importer BV","country":"NL","eori":"NL123456789"}`,
		"X-API-Key", key, "Idempotency-Key", "sup-V-1-nl")
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("POST /suppliers: %d %s", w.Code, w.Body)
	}
}

func ddsBody(operator string, batches ...string) string {
	ids, _ := json.Marshal(batches)
	return fmt.Sprintf(`{"batchIds":%s,"activityType":"IMPORT","operatorUuid":%q,"internalReference":"PO-4711"}`, ids, operator)
}

func (ta *testApp) draft(key, body string) ddsResponse {
	ta.tb.Helper()
	w := ta.do("POST", eudrPrefix+"/declarations/dds", body, "X-API-Key", key, "Idempotency-Key", "dds-"+randomHex(4))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("POST /declarations/dds: %d %s", w.Code, w.Body)
	}
	var d ddsResponse
	mustDecode(ta.tb, w, &d)
	return d
}

// waitDDS advances the clock (the simulator and the poll schedule run on
// it) a second at a time until the sandbox DDS has status want; a DDS that
// reached another final status, or whose submission failed, fails the test
// at once. There is no deadline but the test's own: each GET the clock
// moves on refills the key's rate limit, and on a loaded machine the
// submission job takes as long as it takes.
func (ta *testApp) waitDDS(key, id, want string) ddsResponse {
	ta.tb.Helper()
	for {
		var d ddsResponse
		mustDecode(ta.tb, ta.do("GET", eudrPrefix+"/declarations/dds/"+id, "", "X-API-Key", key), &d)
		switch {
		case d.Status == want:
			return d
		case d.Status == storage.DDSValidated || d.Status == storage.DDSRejected || d.Status == storage.DDSRevoked,
			d.Submission != nil && d.Submission.Status == storage.JobFailed:
			ta.tb.Fatalf("dds %s is %s (submission %+v), want %s", id, d.Status, d.Submission, want)
		}
		ta.clock.Advance(time.Second)
		ta.jobs.Wake()
		time.Sleep(10 * time.Millisecond)
	}
}

func TestDDS_SandboxFlow(t *testing.T) {
	rc := newReceiver(t)
	ta := newTestApp(t, "EUDR_WEBHOOKS_CA_FILE="+rc.caFile)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	batch := ta.linkedBatch(key, -1.6)
	ta.mapEUOperator(key)
	rc.subscribe(ta, key, event.DDSSubmitted, event.DDSValidated, event.DDSRejected)

	d := ta.draft(key, ddsBody(supplierOperator, batch))
	if d.Status != storage.DDSDraft || len(d.History) != 1 || d.History[0].LedgerIndex == nil {
		t.Fatalf("draft: %+v", d)
	}
	// The Annex II payload of the batch, with the internal reference
	// asked for (what it holds is dds's tests').
	var p dds.Payload
	if err := json.Unmarshal(d.Statement, &p); err != nil {
		t.Fatal(err)
	}
	if len(p.Commodities) != 1 || p.Commodities[0].HSHeading != "180100" || len(p.Commodities[0].Producers) != 1 ||
		p.CountryOfActivity != "NL" || p.InternalReferenceNumber != "PO-4711" {
		t.Fatalf("payload: %s", d.Statement)
	}

	w := ta.do("POST", eudrPrefix+"/declarations/dds/"+d.DDSID+"/submit", "", "X-API-Key", key, "Idempotency-Key", "sub-1")
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	if typ, data := rc.next(t); typ != event.DDSSubmitted || !strings.Contains(string(data), d.DDSID) {
		t.Errorf("first event %s %s", typ, data)
	}
	v := ta.waitDDS(key, d.DDSID, storage.DDSValidated)
	if v.ReferenceNumber == nil || !euis.IsReferenceNumber(*v.ReferenceNumber) || v.VerificationNumber == nil || v.EUUUID == nil {
		t.Errorf("validated: %+v", v)
	}
	typ, data := rc.next(t)
	var vd event.DDSValidatedData
	json.Unmarshal(data, &vd)
	if typ != event.DDSValidated || vd.ReferenceNumber != *v.ReferenceNumber || vd.VerificationNumber != *v.VerificationNumber {
		t.Errorf("dds.validated: %s %s", typ, data)
	}
	if got := historyStatuses(v); got != "DRAFT SUBMITTED VALIDATED" {
		t.Errorf("history %s", got)
	}

	ta.lookUpValidated(key, v)

	// Revoke by reference number: 200 once, then 409.
	w = ta.do("POST", eudrPrefix+"/declarations/dds/"+*v.ReferenceNumber+"/revoke", "", "X-API-Key", key, "Idempotency-Key", "rev-1")
	var rv ddsResponse
	mustDecode(t, w, &rv)
	if w.Code != http.StatusOK || rv.Status != storage.DDSRevoked || historyStatuses(rv) != "DRAFT SUBMITTED VALIDATED REVOKED" {
		t.Fatalf("revoke: %d %s", w.Code, w.Body)
	}
	wantError(t, ta.do("POST", eudrPrefix+"/declarations/dds/"+d.DDSID+"/revoke", "", "X-API-Key", key, "Idempotency-Key", "rev-2"),
		http.StatusConflict, apierr.CodeConflict, apierr.DetailDDSNotRevocable)
	for _, h := range rv.History {
		var e entryResponse
		mustDecode(t, ta.do("GET", eudrPrefix+fmt.Sprintf("/ledger/entries/%d", *h.LedgerIndex), "", "X-API-Key", key), &e)
		raw, _ := base64.StdEncoding.DecodeString(e.Data)
		if !strings.Contains(string(raw), `"status":"`+h.Status+`"`) || !strings.Contains(string(raw), d.DDSID) {
			t.Errorf("ledger entry of %s: %s", h.Status, raw)
		}
	}
}

// lookUpValidated looks the validated statement v up by its numbers, as a
// downstream operator would: found, summarised, the same answer on a
// replay; a wrong verification number is found false; a number of the
// wrong form is a 400 naming it.
func (ta *testApp) lookUpValidated(key string, v ddsResponse) {
	t := ta.tb
	t.Helper()
	lookup := eudrPrefix + "/declarations/references/lookup"
	body := fmt.Sprintf(`{"referenceNumber":%q,"verificationNumber":%q}`, *v.ReferenceNumber, *v.VerificationNumber)
	w := ta.do("POST", lookup, body, "X-API-Key", key, "Idempotency-Key", "look-1")
	var l dds.ReferenceLookup
	mustDecode(t, w, &l)
	if w.Code != http.StatusOK || !l.Found || l.Statement == nil || l.Usability == nil || *l.Usability != euis.VerifyExistingUsable || len(l.Statement.Commodities) != 1 ||
		l.Statement.Commodities[0].HSHeading != "180100" || l.Statement.Commodities[0].Producers != 1 || *l.Statement.InternalReference != "PO-4711" {
		t.Fatalf("look-up: %d %s", w.Code, w.Body)
	}
	if again := ta.do("POST", lookup, body, "X-API-Key", key, "Idempotency-Key", "look-1"); again.Body.String() != w.Body.String() ||
		again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed look-up: %s %s", again.Header(), again.Body)
	}
	// The stored answer is read back without asking the EU system.
	var stored dds.ReferenceLookup
	mustDecode(t, ta.do("GET", eudrPrefix+"/declarations/references/"+*v.ReferenceNumber, "", "X-API-Key", key), &stored)
	if stored.LookedUpAt != l.LookedUpAt || !stored.Found || stored.Statement == nil || *stored.Statement.InternalReference != "PO-4711" ||
		stored.VerificationNumber != *v.VerificationNumber {
		t.Errorf("GET of the stored look-up: %+v; want the look-up just made", stored)
	}
	wantError(t, ta.do("GET", eudrPrefix+"/declarations/references/26NLSN6LX00000", "", "X-API-Key", key), http.StatusNotFound, apierr.CodeNotFound, "")
	wrong := fmt.Sprintf(`{"referenceNumber":%q,"verificationNumber":"WRONG123"}`, *v.ReferenceNumber)
	mustDecode(t, ta.do("POST", lookup, wrong, "X-API-Key", key, "Idempotency-Key", "look-2"), &l)
	if l.Found || l.Statement != nil {
		t.Errorf("a wrong verification number: %+v", l)
	}
	wantError(t, ta.do("POST", lookup, `{"referenceNumber":"26NL","verificationNumber":"WRONG123"}`, "X-API-Key", key, "Idempotency-Key", "look-3"),
		http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
}

func historyStatuses(d ddsResponse) string {
	var s []string
	for _, h := range d.History {
		s = append(s, h.Status)
	}
	return strings.Join(s, " ")
}

// TestDDS_ResubmitAfterFailedJob: a submission whose job failed for good
// (the EU system answered 404: a wrong endpoint) leaves a DRAFT that can be
// submitted again once the credentials are fixed.
func TestDDS_ResubmitAfterFailedJob(t *testing.T) {
	eu := httptest.NewServer(http.NotFoundHandler())
	defer eu.Close()
	// An operator's relay on loopback: the config names it and allows it.
	ta := newTestApp(t, "EUDR_EU_SYSTEM_ENDPOINT="+eu.URL+"/tracesnt", "EUDR_EU_SYSTEM_ALLOW_PRIVATE_ENDPOINTS=true")
	_, live := ta.newKey(storage.Production)
	ta.runQueues()
	production := storage.Tenant{Org: defaultOrg, Env: storage.Production}
	w := ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system",
		`{"username":"op","authKey":"k","clientId":"eudr-test","endpoint":"production"}`, "X-API-Key", live))
	if w.Code != http.StatusOK {
		t.Fatalf("PUT credentials: %d %s", w.Code, w.Body)
	}
	// A DRAFT made directly: production screening needs imported layers.
	var id string
	ta.update(func(tx *storage.Tx) error {
		statement, err := storage.MarshalJSON(dds.PayloadOf(apitest.EUStatement(t, supplierOperator)))
		if err != nil {
			return err
		}
		d := &storage.DDS{ID: storage.NewID("dds", tx.Now()), ActivityType: "IMPORT", Statement: statement, CreatedAt: tx.Now()}
		id = d.ID
		return ta.dds.Record(tx, production, d, storage.DDSDraft, "test", "")
	})
	submit := func(idem string) *httptest.ResponseRecorder {
		return ta.serve(storage.Production, newRequest("POST", eudrPrefix+"/declarations/dds/"+id+"/submit", "", "X-API-Key", live, "Idempotency-Key", idem))
	}
	var acc ddsSubmitAccepted
	mustDecode(t, submit("one"), &acc)
	ta.waitJobView(storage.Production, live, acc.JobID, "the job to fail", func(j jobResponse) bool { return j.Status == storage.JobFailed })
	// The statement shows why its submission failed.
	var d ddsResponse
	mustDecode(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/declarations/dds/"+id, "", "X-API-Key", live)), &d)
	if sub := d.Submission; d.Status != storage.DDSDraft || sub == nil || sub.JobID != acc.JobID || sub.Status != storage.JobFailed ||
		sub.Error == nil || sub.Error.Code != apierr.JobFailed || !strings.Contains(sub.Error.Message, "http 404 Not Found") || sub.LastAttempt != nil {
		t.Errorf("the statement after its submission failed: %s, submission %+v", d.Status, d.Submission)
	}
	w = submit("two")
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit after the job failed: %d %s", w.Code, w.Body)
	}
	var again ddsSubmitAccepted
	mustDecode(t, w, &again)
	mustDecode(t, ta.serve(storage.Production, newRequest("GET", eudrPrefix+"/declarations/dds/"+id, "", "X-API-Key", live)), &d)
	if d.Submission == nil || d.Submission.JobID != again.JobID {
		t.Errorf("the statement submitted again: submission %+v, want job %s", d.Submission, again.JobID)
	}
}

func TestCredentials_Endpoints(t *testing.T) {
	ta := newTestApp(t)
	_, live := ta.newKey(storage.Production)
	for _, c := range []struct{ endpoint, want string }{
		{`"acceptance"`, "https://acceptance.eudr.webcloud.ec.europa.eu/tracesnt"},
		{`"production"`, "https://eudr.webcloud.ec.europa.eu/tracesnt"},
		{`"https://relay.example/tracesnt"`, "https://relay.example/tracesnt"},
	} {
		w := ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system",
			`{"username":"op","authKey":"k","clientId":"eudr-test","endpoint":`+c.endpoint+`}`, "X-API-Key", live))
		var cr dds.CredentialsView
		mustDecode(t, w, &cr)
		if cr.EffectiveEndpoint != c.want {
			t.Errorf("endpoint %s: effective %q, want %q", c.endpoint, cr.EffectiveEndpoint, c.want)
		}
	}
	e := wantError(t, ta.serve(storage.Production, newRequest("PUT", eudrPrefix+"/credentials/eu-system",
		`{"username":"","endpoint":"ftp://x"}`, "X-API-Key", live)), http.StatusBadRequest, apierr.CodeValidationFailed, "")
	if len(e.Details) != 4 { // username, authKey, clientId and endpoint, all at once
		t.Errorf("problems: %+v", e.Details)
	}
}
