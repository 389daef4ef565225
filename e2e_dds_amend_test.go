package main_test

// End-to-end test of amending a validated statement in the sandbox's
// simulated EU system. The binary runs on the wall clock, so the end of
// the amendment period (72 hours, 8 days more with a justification) is
// tested at the unit level (server/dds, server/euis) and in the OpenAPI
// conformance test, which run on fake clocks.

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

	"github.com/eudr/eudr/server/apitest"
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
}
