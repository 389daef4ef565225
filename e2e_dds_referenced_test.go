package main_test

// End-to-end test of referenced statements, which group the statements
// they name or keep a statement from being filed.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// TestDDS_ReferencedStatements: a statement referencing a validated one is
// filed and groups it, which can then not be revoked; a statement
// referencing a grouped one, or with a wrong verification number, is
// rejected without being filed; revoking the grouping statement frees the
// first.
func TestDDS_ReferencedStatements(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, ddsFast...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-GRP", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-GRP", ddsPlots(1, -1.1, 6.5, "V-GRP")...)

	first := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	ddsSubmit(t, base, key, first.DDSID)
	v1 := ddsWaitStatus(t, base, key, first.DDSID, "VALIDATED")
	ref, ver := polStr(v1.ReferenceNumber), polStr(v1.VerificationNumber)
	refBody := func(verification string) map[string]any {
		b := ddsBody(ddsOperatorUUID, batch)
		b["referencedStatements"] = []map[string]string{{"referenceNumber": ref, "verificationNumber": verification}}
		return b
	}

	second := ddsDraft(t, base, key, refBody(ver))
	var refs []map[string]string
	for _, raw := range second.ReferencedStatements {
		var m map[string]string
		json.Unmarshal(raw, &m)
		refs = append(refs, m)
	}
	var sp struct {
		ReferencedStatements []map[string]string `json:"referencedStatements"`
	}
	json.Unmarshal(second.Statement, &sp)
	want := []map[string]string{{"referenceNumber": ref, "verificationNumber": ver}}
	if fmt.Sprint(refs) != fmt.Sprint(want) || fmt.Sprint(sp.ReferencedStatements) != fmt.Sprint(want) {
		t.Errorf("referenced statements: view %v, statement %v, want %v", refs, sp.ReferencedStatements, want)
	}
	ddsSubmit(t, base, key, second.DDSID)
	v2 := ddsWaitStatus(t, base, key, second.DDSID, "VALIDATED")

	// The first is grouped into the second now: the EU system refuses its
	// withdrawal.
	e := apitest.WantError(t, ddsPost(t, base, key, ref, "revoke"), http.StatusConflict, "CONFLICT", "DDS_NOT_REVOCABLE")
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "GROUPED") {
		t.Errorf("revoke of a grouped statement: %q does not say why", e.Details[0].Issue)
	}
	if g := ddsGet(t, base, key, first.DDSID); g.Status != "VALIDATED" {
		t.Errorf("the grouped statement is %s after the refused revoke", g.Status)
	}

	// Referencing the grouped statement, or with a wrong verification
	// number: rejected before filing.
	cases := []struct{ verification, reason string }{{ver, "REFERENCED_STATEMENT_EXISTING_NON_USABLE"}, {"WRONG1234", "REFERENCED_STATEMENT_NON_EXISTENT"}}
	ids := make([]string, len(cases))
	for i, c := range cases {
		ids[i] = ddsDraft(t, base, key, refBody(c.verification)).DDSID
		ddsSubmit(t, base, key, ids[i])
	}
	for i, c := range cases {
		v := ddsWaitStatus(t, base, key, ids[i], "REJECTED")
		if ddsHistory(v) != "DRAFT REJECTED" || v.EUUUID != nil || v.SubmittedAt != nil || len(v.Reasons) != 1 ||
			!strings.HasPrefix(v.Reasons[0], c.reason) || !strings.Contains(v.Reasons[0], ref) {
			t.Errorf("%s: %s, euUuid %v, reasons %v; want DRAFT REJECTED, not filed, %s naming %s", c.reason, ddsHistory(v),
				polStr(v.EUUUID), v.Reasons, c.reason, ref)
		}
		ev := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.rejected", ids[i])
		var reasons []string
		json.Unmarshal(ddsEventData(t, ev, "ddsId", "reasons")["reasons"], &reasons)
		if !slices.Equal(reasons, v.Reasons) {
			t.Errorf("dds.rejected reasons %v, want %v", reasons, v.Reasons)
		}
		if n := len(ddsDeliveries(rc, "dds.submitted", ids[i])); n != 0 {
			t.Errorf("%s: %d dds.submitted of a statement never filed", c.reason, n)
		}
		ddsCheckLedger(t, base, key, v, v.Statement)
	}

	// Revoking the grouping statement frees the first.
	ddsPost(t, base, key, polStr(v2.ReferenceNumber), "revoke").WantStatus(t, http.StatusOK)
	r := ddsPost(t, base, key, ref, "revoke").WantStatus(t, http.StatusOK)
	if v := ddsDecode(t, r, r.Body); v.DDSID != first.DDSID || v.Status != "REVOKED" {
		t.Errorf("revoke of the freed statement: %s", r.Body)
	}
}
