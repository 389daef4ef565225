package main_test

// End-to-end test of amending a validated statement in the sandbox's
// simulated EU system. The binary runs on the wall clock: the EU system's
// 72 hours and 8 days are tested at the unit level (server/dds,
// server/euis) and in the OpenAPI conformance test, which run on fake
// clocks; here the sandbox's periods are set to seconds
// (eu_system.sandbox_amend_window, sandbox_amend_extension).

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

// ddsAmend posts an amendment of the DDS ref names with a fresh
// Idempotency-Key.
func ddsAmend(t testing.TB, base, key, ref string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", base+ddsPath+"/"+ref+"/amend", idem(key), body)
}

// TestDDS_Amend: a VALIDATED statement, named by its reference number, is
// amended within the 72 hours: it stays VALIDATED with its numbers, its
// statement is the amended one (here and in the EU system, as a look-up by
// its numbers shows), the history records the change, a dds.amended ledger
// entry anchors the new statement's hash and dds.amended is delivered.
// A draft and a request that changes what cannot change are refused.
func TestDDS_Amend(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, ddsFast...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.amended")
	ddsMapOperator(t, base, key, "V-AMD", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-AMD", ddsPlots(1, -1.3, 6.3, "V-AMD")...)
	draft := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	change := map[string]any{"commodities": []map[string]any{{"position": 1, "netWeightKg": json.Number("12600.000125")}}}

	e := apitest.WantError(t, ddsAmend(t, base, key, draft.DDSID, change), http.StatusConflict, "CONFLICT", "DDS_NOT_AMENDABLE")
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "is DRAFT; only a VALIDATED statement can be amended") {
		t.Errorf("amending a draft: %q", e.Details[0].Issue)
	}
	ddsSubmit(t, base, key, draft.DDSID)
	v := ddsWaitStatus(t, base, key, draft.DDSID, "VALIDATED")
	ref, ver := polStr(v.ReferenceNumber), polStr(v.VerificationNumber)

	apitest.WantError(t, ddsAmend(t, base, key, ref, map[string]any{"activityType": "EXPORT"}), http.StatusBadRequest, "VALIDATION_FAILED",
		"UNKNOWN_FIELD", "REQUIRED")

	why := "the weighbridge at Tema was out of calibration"
	change["justification"] = why
	r := ddsAmend(t, base, key, ref, change).WantStatus(t, http.StatusOK)
	a := ddsDecode(t, r, r.Body)
	if a.DDSID != v.DDSID || a.Status != "VALIDATED" || ddsHistory(a) != "DRAFT SUBMITTED VALIDATED VALIDATED" ||
		polStr(a.ReferenceNumber) != ref || polStr(a.VerificationNumber) != ver || polStr(a.EUUUID) != polStr(v.EUUUID) {
		t.Fatalf("amended: %s", r.Body)
	}
	if !strings.Contains(string(a.Statement), `"netWeightKg":12600.000125`) {
		t.Errorf("the amended statement does not keep the net weight as given: %s", a.Statement)
	}
	got := ddsGet(t, base, key, v.DDSID)
	if string(got.Statement) != string(a.Statement) || ddsHistory(got) != ddsHistory(a) {
		t.Errorf("read again: %s", got.Statement)
	}
	last := got.History[3]
	sum := sha256.Sum256(got.Statement)
	hash := hex.EncodeToString(sum[:])
	if last.Actor == "eu-system" || last.Note == nil || !strings.Contains(*last.Note, "commodities[0].netWeightKg") ||
		!strings.Contains(*last.Note, hash) || !strings.Contains(*last.Note, "justification: "+why) {
		t.Errorf("the amendment's history entry: %+v", last)
	}

	// The ledger: the first three entries anchor the statement as filed,
	// the fourth the amended one, with the changes and the justification.
	before := v
	before.History = v.History[:3]
	ddsCheckLedger(t, base, key, before, v.Statement)
	var le ledEntry
	ledGet(t, base, key, fmt.Sprintf("/ledger/entries/%d", *last.LedgerIndex), &le)
	data, err := base64.StdEncoding.DecodeString(le.Data)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Type, DDSID, Status, StatementSHA256, ReferenceNumber, Justification string
		Changes                                                              []string
	}
	json.Unmarshal(data, &f)
	if f.Type != "dds.amended" || f.DDSID != v.DDSID || f.Status != "VALIDATED" || f.StatementSHA256 != hash || f.ReferenceNumber != ref ||
		f.Justification != why || !slices.Equal(f.Changes, []string{"commodities[0].netWeightKg"}) {
		t.Errorf("the amendment's ledger entry: %s", data)
	}

	ev := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.amended", v.DDSID)
	m := ddsEventData(t, ev, "changes", "ddsId", "justification", "referenceNumber", "statementSha256")
	if ddsString(t, m["statementSha256"]) != hash || ddsString(t, m["justification"]) != why || ddsString(t, m["referenceNumber"]) != ref {
		t.Errorf("dds.amended data: %s", ev.Env.Data)
	}

	// The EU system answers the amended statement to a look-up.
	r = apitest.Do(t, "POST", base+"/api/v1/enterprise/eudr/declarations/references/lookup", idem(key),
		map[string]string{"referenceNumber": ref, "verificationNumber": ver}).WantStatus(t, http.StatusOK)
	var look struct {
		Found     bool `json:"found"`
		Statement struct {
			Commodities []struct {
				NetWeightKg *string `json:"netWeightKg"`
			} `json:"commodities"`
		} `json:"statement"`
	}
	r.Decode(t, &look)
	if !look.Found || len(look.Statement.Commodities) != 1 || polStr(look.Statement.Commodities[0].NetWeightKg) != "12600.000125" {
		t.Errorf("looked up after the amendment: %s", r.Body)
	}

	// An amendment the EU system answers UPDATED (the simulator's marker)
	// makes the statement SUBMITTED, followed by a submission job, until
	// the EU system shows it AVAILABLE again.
	r = ddsAmend(t, base, key, ref, map[string]any{"commodities": []map[string]any{{"position": 1,
		"descriptionOfGoods": "cocoa beans, weighed again [sandbox:updated]"}}}).WantStatus(t, http.StatusOK)
	if u := ddsDecode(t, r, r.Body); u.Status != "SUBMITTED" || u.Submission == nil {
		t.Fatalf("amended and UPDATED: %s", r.Body)
	}
	again := ddsWaitStatus(t, base, key, v.DDSID, "VALIDATED")
	if h := ddsHistory(again); h != "DRAFT SUBMITTED VALIDATED VALIDATED SUBMITTED VALIDATED" || polStr(again.ReferenceNumber) != ref {
		t.Errorf("after UPDATED: history %s, reference number %s", h, polStr(again.ReferenceNumber))
	}
}

// TestDDS_AmendWindows: in a sandbox whose statements can be amended for 3
// seconds after submission, and 3 more on a justified request, a statement
// is amended within the 3 seconds; after them only with a justification,
// and it can no longer be revoked; after the 6 seconds not at all, the
// refusal saying when the period closed. The test waits for the wall
// clock to pass the times it computes from submittedAt; a step the
// machine was too slow to take in time is not held against the server.
func TestDDS_AmendWindows(t *testing.T) {
	t.Parallel()
	const window, extension = 3 * time.Second, 3 * time.Second
	p := startServer(t, append([]string{"EUDR_EU_SYSTEM_SANDBOX_DELAY=200ms", "EUDR_EU_SYSTEM_SANDBOX_POLL_SCHEDULE=100ms",
		"EUDR_EU_SYSTEM_SANDBOX_AMEND_WINDOW=3s", "EUDR_EU_SYSTEM_SANDBOX_AMEND_EXTENSION=3s"}, noRateLimit...)...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	ddsMapOperator(t, base, key, "V-AMW", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-AMW", ddsPlots(1, -1.3, 6.3, "V-AMW")...)
	draft := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, draft.DDSID)
	v := ddsWaitStatus(t, base, key, draft.DDSID, "VALIDATED")
	if v.SubmittedAt == nil {
		t.Fatalf("validated without submittedAt: %+v", v)
	}
	submitted := apitest.ParseTime(t, *v.SubmittedAt)
	ends, closes := submitted.Add(window), submitted.Add(window+extension)
	kg := func(weight, justification string) map[string]any {
		body := map[string]any{"commodities": []map[string]any{{"position": 1, "netWeightKg": json.Number(weight)}}}
		if justification != "" {
			body["justification"] = justification
		}
		return body
	}
	// amendBy amends and says whether the answer came back before by: a
	// refusal after it may be the server's clock passing by meanwhile.
	amendBy := func(by time.Time, body map[string]any) (*apitest.Response, bool) {
		r := ddsAmend(t, base, key, v.DDSID, body)
		return r, time.Now().Before(by)
	}
	sleepUntil := func(at time.Time) { time.Sleep(time.Until(at)) }

	if r, inTime := amendBy(ends, kg("12600.5", "")); r.Status != http.StatusOK && inTime {
		t.Errorf("amended within the %s without a justification: %d %s", window, r.Status, r.Body)
	} else if !inTime {
		t.Logf("the first amendment came back %s after submission, past the %s: not checked", time.Since(submitted), window)
	}

	sleepUntil(ends.Add(500 * time.Millisecond))
	e := apitest.WantError(t, ddsAmend(t, base, key, v.DDSID, kg("12601", "")), http.StatusConflict, "CONFLICT", "DDS_NOT_AMENDABLE")
	if len(e.Details) == 1 && (e.Details[0].Field != "justification" || !strings.Contains(e.Details[0].Issue, "the 3s after the submission")) {
		t.Errorf("amended past the %s without a justification: %+v", window, e.Details[0])
	}
	e = apitest.WantError(t, ddsPost(t, base, key, v.DDSID, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "within 3s of submission") {
		t.Errorf("revoked past the %s: %+v", window, e.Details[0])
	}
	// The simulated EU system dates the submission a little earlier than
	// the appliance does: a second's margin before it closes.
	if r, inTime := amendBy(closes.Add(-time.Second), kg("12601", "the weighbridge at Tema was out of calibration")); r.Status != http.StatusOK && inTime {
		t.Errorf("amended in the extension with a justification: %d %s", r.Status, r.Body)
	} else if !inTime {
		t.Logf("the justified amendment came back %s after submission: not checked", time.Since(submitted))
	}

	sleepUntil(closes.Add(500 * time.Millisecond))
	e = apitest.WantError(t, ddsAmend(t, base, key, v.DDSID, kg("12602", "the weighbridge again")), http.StatusConflict, "CONFLICT", "DDS_NOT_AMENDABLE")
	// The period counts from the start of the filing attempt, a moment
	// before submittedAt: the time it says it closed is at most a second
	// before the one computed here.
	if len(e.Details) == 1 && (e.Details[0].Field != "path.ddsId" || !closedAbout(t, e.Details[0].Issue, closes)) {
		t.Errorf("amended past the extension: %+v, want it to say it closed at about %s", e.Details[0], storage.FormatTime(closes))
	}
	if got := ddsGet(t, base, key, v.DDSID); got.Status != "VALIDATED" {
		t.Errorf("after the refusals: %s, want VALIDATED", got.Status)
	}
}

// closedAbout reports whether issue says "closed at <time>", that time at
// most a second before closes.
func closedAbout(t testing.TB, issue string, closes time.Time) bool {
	t.Helper()
	_, after, ok := strings.Cut(issue, "closed at ")
	if !ok {
		return false
	}
	at, _, _ := strings.Cut(after, " ")
	got, err := time.Parse(time.RFC3339Nano, at)
	return err == nil && !got.After(closes) && closes.Sub(got) < time.Second
}
