package dds_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// amend amends the statement in the EU system and records it.
func (r *rig) amend(t storage.Tenant, ref string, req *dds.AmendRequest) (dds.Declaration, error) {
	a, err := r.s.Amend(context.Background(), t, ref, req)
	if err != nil {
		return dds.Declaration{}, err
	}
	var dcl dds.Declaration
	err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		dcl, err = r.s.RecordAmendment(tx, t, a, "key_test")
		return err
	})
	return dcl, err
}

// ledgerEntry reads the tenant's ledger entry i.
func (r *rig) ledgerEntry(tb testing.TB, t storage.Tenant, i int64) anchor.DDSEntry {
	tb.Helper()
	var e anchor.DDSEntry
	r.b.Update(tb, func(tx *storage.Tx) error {
		le, err := ledger.ReadEntry(tx.Tx, anchor.Log(t), i)
		if err != nil {
			return err
		}
		return json.Unmarshal(le.Data, &e)
	})
	return e
}

func str(s string) *string { return &s }

func decimal(s string) *euis.Decimal { d := euis.Decimal(s); return &d }

// netWeight is the net weight of a statement's first commodity.
func netWeight(tb testing.TB, d *storage.DDS) string {
	tb.Helper()
	var p dds.Payload
	if err := json.Unmarshal(d.Statement, &p); err != nil {
		tb.Fatal(err)
	}
	return string(p.Commodities[0].NetWeightKg)
}

// TestService_Amend: a VALIDATED statement, named by its reference number,
// is amended in the EU system (which answers the new content from then
// on) and stays VALIDATED; its history gains an entry with the changes
// and the new statement's hash, anchored by a dds.amended ledger entry,
// and dds.amended is published.
func TestService_Amend(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	// dds.submitted and dds.validated: counted once their commits' hooks
	// have run, which may be after the statement reads VALIDATED.
	published := r.b.WaitPublished(t, 2)
	req := &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1200.5"),
		DescriptionOfGoods: str("cocoa, batch LOT-bat_1, weighed again")}}}
	dcl, err := r.amend(sandbox, v.ReferenceNumber, req)
	if err != nil {
		t.Fatal(err)
	}
	d := dcl.DDS
	sum := sha256.Sum256(d.Statement)
	hash := hex.EncodeToString(sum[:])
	if d.Status != storage.DDSValidated || history(d) != "DRAFT/key_test SUBMITTED/eu-system VALIDATED/eu-system VALIDATED/key_test" ||
		d.ReferenceNumber != v.ReferenceNumber || d.EUUUID != v.EUUUID || netWeight(t, d) != "1200.5" {
		t.Fatalf("amended: %s %s %s, history %s", d.Status, d.ReferenceNumber, netWeight(t, d), history(d))
	}
	last := d.History[3]
	if !strings.Contains(last.Note, "commodities[0].descriptionOfGoods, commodities[0].netWeightKg") || !strings.Contains(last.Note, hash) ||
		strings.Contains(last.Note, "justification") {
		t.Errorf("history note %q", last.Note)
	}
	e := r.ledgerEntry(t, sandbox, *last.LedgerIndex)
	if e.Type != anchor.EntryDDSAmended || e.Status != storage.DDSValidated || e.StatementSHA256 != hash || e.Actor != "key_test" ||
		e.ReferenceNumber != v.ReferenceNumber || len(e.Changes) != 2 || e.Justification != "" {
		t.Errorf("ledger entry %+v", e)
	}
	if n := r.b.WaitPublished(t, published+1); n != published+1 {
		t.Errorf("%d events published, want dds.amended only", n-published)
	}
	found, err := r.sim.GetByIdentifiers(context.Background(), dds.SandboxCredentials,
		euis.Reference{ReferenceNumber: v.ReferenceNumber, VerificationNumber: v.VerificationNumber})
	if err != nil || found == nil || found.Commodities[0].NetWeightKg != "1200.5" {
		t.Errorf("in the EU system: %+v %v, want the amended net weight", found, err)
	}
	if got := r.find(t, sandbox, v.ID).DDS; netWeight(t, got) != "1200.5" || len(got.History) != 4 {
		t.Errorf("read again: %s, %d history entries", netWeight(t, got), len(got.History))
	}
}

// TestService_AmendWindow: within 72 hours of submission a statement is
// amended as it is; in the 8 days after them only with a justification,
// which the history and the ledger entry keep; after them not at all,
// the refusal saying when the period closed. The clock is the rig's.
func TestService_AmendWindow(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	window, closes := euis.EUWindows.Period(*v.Poll.SubmitAttemptAt)
	change := func(kg string, justification *string) *dds.AmendRequest {
		return &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal(kg)}}, Justification: justification}
	}
	r.b.Clock.Set(window.Add(-time.Minute))
	if _, err := r.amend(sandbox, v.ID, change("1100", nil)); err != nil {
		t.Fatalf("within 72 hours: %v", err)
	}

	r.b.Clock.Set(window.Add(time.Minute))
	_, err := r.amend(sandbox, v.ID, change("1200", nil))
	e := wantError(t, "after 72 hours without a justification", err, 409, apierr.DetailDDSNotAmendable)
	if len(e.Details) == 1 && (e.Details[0].Field != "justification" || !strings.Contains(e.Details[0].Issue, storage.FormatTime(closes))) {
		t.Errorf("after 72 hours without a justification: %+v", e.Details[0])
	}
	why := "the weighbridge at Tema was out of calibration"
	dcl, err := r.amend(sandbox, v.ID, change("1200", str(why)))
	if err != nil {
		t.Fatalf("after 72 hours with a justification: %v", err)
	}
	last := dcl.DDS.History[len(dcl.DDS.History)-1]
	if !strings.HasSuffix(last.Note, "justification: "+why) || r.ledgerEntry(t, sandbox, *last.LedgerIndex).Justification != why {
		t.Errorf("the justification is not recorded: %q", last.Note)
	}

	r.b.Clock.Set(closes.Add(time.Second))
	calls := len(dcl.DDS.History)
	_, err = r.amend(sandbox, v.ID, change("1300", str(why)))
	e = wantError(t, "after the extension", err, 409, apierr.DetailDDSNotAmendable)
	if len(e.Details) == 1 && (e.Details[0].Field != "path.ddsId" || !strings.Contains(e.Details[0].Issue, "closed at "+storage.FormatTime(closes))) {
		t.Errorf("after the extension: %+v, want it to say it closed at %s", e.Details[0], storage.FormatTime(closes))
	}
	if d := r.find(t, sandbox, v.ID).DDS; len(d.History) != calls || netWeight(t, d) != "1200" {
		t.Errorf("a refused amendment changed the statement: %s, %d history entries", netWeight(t, d), len(d.History))
	}
}

// TestService_AmendRefused: what cannot be amended is refused before the
// EU system is asked, and what it refuses is refused; nothing is recorded
// either way.
func TestService_AmendRefused(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	r.declarable(t, sandbox, "bat_2")
	draft := r.mustDraft(t, sandbox, request("bat_2"))
	kg := func(position int, v string) *dds.AmendRequest {
		return &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: position, NetWeightKg: decimal(v)}}}
	}
	for _, tc := range []struct {
		name    string
		ref     string
		req     *dds.AmendRequest
		status  int
		details []string
		issue   string
	}{
		{"a draft", draft.ID, kg(1, "5"), 409, []string{apierr.DetailDDSNotAmendable}, "is DRAFT; only a VALIDATED statement can be amended"},
		{"nothing named", v.ID, &dds.AmendRequest{}, 400, []string{apierr.DetailRequired}, "names nothing to change"},
		{"an empty change", v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1}}}, 400, []string{apierr.DetailRequired}, "changes nothing"},
		{"no such position", v.ID, kg(2, "5"), 400, []string{apierr.DetailInvalidValue}, "has 1 commodity entries"},
		{"the same value", v.ID, kg(1, "1000"), 400, []string{apierr.DetailInvalidValue}, "reads so already"},
		{"a blank justification", v.ID, &dds.AmendRequest{CountryOfActivity: str("BE"), Justification: str("  ")}, 400, []string{apierr.DetailInvalidValue}, "justification"},
		{"not a member state", v.ID, &dds.AmendRequest{BorderCrossCountry: str("GH")}, 400, []string{apierr.DetailInvalidValue}, "EU member state"},
		{"an EU rule broken", v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, DescriptionOfGoods: str("")}}}, 422,
			[]string{apierr.DetailEUSystemRule}, "statement.commodities[0].descriptionOfGoods"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.amend(sandbox, tc.ref, tc.req)
			e := wantError(t, tc.name, err, tc.status, tc.details...)
			if !strings.Contains(e.Message+" "+e.Details[0].Issue+" "+e.Details[0].Field, tc.issue) {
				t.Errorf("%s: %q %+v, want it to say %q", tc.name, e.Message, e.Details, tc.issue)
			}
		})
	}
	if _, err := r.amend(sandbox, "dds_nope", kg(1, "5")); !isNotFound(err) {
		t.Errorf("an unknown statement: %v, want apierr.NotFound", err)
	}

	// The EU system no longer has it AVAILABLE: withdrawn there.
	if err := r.sim.Withdraw(context.Background(), dds.SandboxCredentials, v.EUUUID); err != nil {
		t.Fatal(err)
	}
	_, err := r.amend(sandbox, v.ID, kg(1, "5"))
	if e := wantError(t, "withdrawn in the EU system", err, 409, apierr.DetailDDSNotAmendable); !strings.Contains(e.Message, "the EU system refused to amend it") {
		t.Errorf("withdrawn in the EU system: %q", e.Message)
	}
	if d := r.find(t, sandbox, v.ID).DDS; len(d.History) != 3 || netWeight(t, d) != "1000" {
		t.Errorf("refused amendments changed the statement: %s, history %s", netWeight(t, d), history(d))
	}
}

// TestService_AmendProduction: an EU system that cannot be reached is 503
// with nothing changed; the amendment goes through once it answers, with
// the organisation's credentials.
func TestService_AmendProduction(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, production, "bat_1")
	d := r.mustDraft(t, production, request("bat_1"))
	user, key, client := "op", "k", "eudr-test"
	if _, err := r.s.PutCredentials(context.Background(), production, &dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.submit(production, d.ID); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, production, d.ID, storage.DDSSubmitted)
	r.b.Clock.Advance(schedules[storage.Production][0])
	r.waitStatus(t, production, d.ID, storage.DDSValidated)

	req := &dds.AmendRequest{CountryOfActivity: str("BE")}
	r.eu.failNext(1)
	_, err := r.amend(production, d.ID, req)
	if e := wantError(t, "the EU system unreachable", err, 503); e.RetryAfter != 30 {
		t.Errorf("the EU system unreachable: %+v, want Retry-After 30", e)
	}
	if got := r.find(t, production, d.ID).DDS; len(got.History) != 3 {
		t.Errorf("after an amendment that could not reach the EU system: history %s", history(got))
	}
	dcl, err := r.amend(production, d.ID, req)
	if err != nil || !strings.Contains(string(dcl.DDS.Statement), `"countryOfActivity":"BE"`) {
		t.Errorf("amend: %v, statement %s", err, dcl.DDS.Statement)
	}
	r.eu.mu.Lock()
	defer r.eu.mu.Unlock()
	if cr := r.eu.creds[len(r.eu.creds)-1]; cr.Username != user {
		t.Errorf("amended with %v, want the organisation's credentials", cr)
	}
}

// TestService_SandboxWindows: the sandbox's periods of withdrawal and
// amendment, when set, bound both the service's checks and its simulated
// EU system; production keeps the EU's 72 hours and 8 days.
func TestService_SandboxWindows(t *testing.T) {
	w := euis.Windows{Amend: time.Hour, Extension: 2 * time.Hour}
	r := newWindowedRig(t, nil, w)
	v := r.validated(t, "bat_1")
	window, closes := w.Period(*v.Poll.SubmitAttemptAt)
	kg := func(v string, justification *string) *dds.AmendRequest {
		return &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal(v)}}, Justification: justification}
	}
	r.b.Clock.Set(window.Add(time.Second))
	_, err := r.amend(sandbox, v.ID, kg("1100", nil))
	if e := wantError(t, "past the sandbox's window without a justification", err, 409, apierr.DetailDDSNotAmendable); len(e.Details) == 1 &&
		(e.Details[0].Field != "justification" || !strings.Contains(e.Details[0].Issue, "the 1h0m0s after the submission")) {
		t.Errorf("past the sandbox's window: %+v", e.Details[0])
	}
	_, err = r.revoke(sandbox, v.ID)
	if e := wantError(t, "revoked past the sandbox's window", err, 409, apierr.DetailDDSNotRevocable); !strings.Contains(e.Details[0].Issue, "within 1h0m0s of submission") {
		t.Errorf("revoked past the sandbox's window: %+v", e.Details[0])
	}
	// The simulator refuses it too: the service's check is not all.
	if err := r.sim.Withdraw(context.Background(), dds.SandboxCredentials, v.EUUUID); !refusedAs(err, euis.ReasonWithdrawNotPossible) {
		t.Errorf("the simulator's withdrawal past its window: %v", err)
	}
	if _, err := r.amend(sandbox, v.ID, kg("1100", str("a justified request"))); err != nil {
		t.Fatalf("in the sandbox's extension with a justification: %v", err)
	}
	r.b.Clock.Set(closes.Add(time.Second))
	_, err = r.amend(sandbox, v.ID, kg("1200", str("a justified request")))
	if e := wantError(t, "past the sandbox's extension", err, 409, apierr.DetailDDSNotAmendable); len(e.Details) == 1 &&
		!strings.Contains(e.Details[0].Issue, "closed at "+storage.FormatTime(closes)) {
		t.Errorf("past the sandbox's extension: %+v", e.Details[0])
	}
	if _, err := r.sim.Amend(context.Background(), dds.SandboxCredentials, v.EUUUID, apitest.EUStatement(t, operator)); !refusedAs(err, euis.ReasonAmendNotPossible) {
		t.Errorf("the simulator's amendment past its extension: %v", err)
	}

	// Production: the same hours later, within the EU's 72 hours.
	r.declarable(t, production, "bat_2")
	d := r.mustDraft(t, production, request("bat_2"))
	user, key, client := "op", "k", "eudr-test"
	if _, err := r.s.PutCredentials(context.Background(), production, &dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.submit(production, d.ID); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, production, d.ID, storage.DDSSubmitted)
	r.b.Clock.Advance(schedules[storage.Production][0])
	r.waitStatus(t, production, d.ID, storage.DDSValidated)
	r.b.Clock.Advance(closes.Sub(*v.Poll.SubmitAttemptAt))
	if _, err := r.amend(production, d.ID, kg("1100", nil)); err != nil {
		t.Errorf("production, within the EU's 72 hours: %v", err)
	}
}

// refusedAs reports whether err is the EU system's fault for reason.
func refusedAs(err error, reason string) bool {
	var f *euis.Fault
	return errors.As(err, &f) && slices.Contains(f.Reasons, reason)
}

// TestService_AmendWindowFromAttempt: the amendment period counts from
// the filing attempt the statement came from, not from when it was
// recorded SUBMITTED (a filing adopted after a crash is recorded late);
// a statement whose submission time is not known is not amended.
func TestService_AmendWindowFromAttempt(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	attempt := *v.Poll.SubmitAttemptAt
	late := attempt.Add(10 * time.Hour)
	r.b.Update(t, func(tx *storage.Tx) error {
		d, err := tx.FindDDS(sandbox, v.ID)
		if err != nil {
			return err
		}
		d.SubmittedAt = &late
		return tx.PutDDS(sandbox, d)
	})
	window, _ := euis.EUWindows.Period(attempt)
	r.b.Clock.Set(window.Add(time.Minute))
	_, err := r.amend(sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1100")}}})
	e := wantError(t, "72 hours after the attempt", err, 409, apierr.DetailDDSNotAmendable)
	if len(e.Details) == 1 && (e.Details[0].Field != "justification" || !strings.Contains(e.Details[0].Issue, storage.FormatTime(window))) {
		t.Errorf("72 hours after the attempt: %+v, want the window to end at %s", e.Details[0], storage.FormatTime(window))
	}

	r.b.Clock.Set(attempt.Add(time.Hour))
	r.b.Update(t, func(tx *storage.Tx) error {
		d, err := tx.FindDDS(sandbox, v.ID)
		if err != nil {
			return err
		}
		d.SubmittedAt, d.Poll.SubmitAttemptAt = nil, nil
		return tx.PutDDS(sandbox, d)
	})
	_, err = r.amend(sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1150")}}})
	e = wantError(t, "no submission time", err, 409, apierr.DetailDDSNotAmendable)
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "not known") {
		t.Errorf("no submission time: %+v", e.Details[0])
	}
}

// TestService_ConcurrentAmendments: two amendments made from the same
// stored statement both reach the EU system; the first recorded is kept,
// the second is refused with 409 DDS_NOT_AMENDABLE and records nothing.
func TestService_ConcurrentAmendments(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	a1, err := r.s.Amend(context.Background(), sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1100")}}})
	if err != nil {
		t.Fatal(err)
	}
	a2, err := r.s.Amend(context.Background(), sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1200")}}})
	if err != nil {
		t.Fatal(err)
	}
	record := func(a *dds.Amendment) error {
		return r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			_, err := r.s.RecordAmendment(tx, sandbox, a, "key_test")
			return err
		})
	}
	if err := record(a1); err != nil {
		t.Fatal(err)
	}
	entries := len(r.find(t, sandbox, v.ID).DDS.History)
	e := wantError(t, "the second amendment", record(a2), 409, apierr.DetailDDSNotAmendable)
	if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "changed by another request since; read it again") {
		t.Errorf("the second amendment: %+v", e.Details[0])
	}
	if d := r.find(t, sandbox, v.ID).DDS; len(d.History) != entries || netWeight(t, d) != "1100" {
		t.Errorf("the refused amendment changed the statement: %s, %d history entries", netWeight(t, d), len(d.History))
	}
}

// TestService_AmendRetryAfterLoss: an amendment the EU system took but
// that was never recorded (a crash before the commit) is recorded when
// the request is retried after the amendment period closed, since the EU
// system's statement reads as the amendment makes it; another amendment
// is still refused then.
func TestService_AmendRetryAfterLoss(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	req := func(kg string) *dds.AmendRequest {
		return &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal(kg)}}}
	}
	if _, err := r.s.Amend(context.Background(), sandbox, v.ID, req("1100.50")); err != nil { // never recorded
		t.Fatal(err)
	}
	_, closes := euis.EUWindows.Period(*v.Poll.SubmitAttemptAt)
	r.b.Clock.Set(closes.Add(time.Hour))
	wantError(t, "another amendment", func() error { _, err := r.amend(sandbox, v.ID, req("1300")); return err }(), 409, apierr.DetailDDSNotAmendable)
	dcl, err := r.amend(sandbox, v.ID, req("1100.50"))
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if netWeight(t, dcl.DDS) != "1100.50" || !strings.Contains(dcl.DDS.History[len(dcl.DDS.History)-1].Note, "commodities[0].netWeightKg") {
		t.Errorf("recorded %s, %q", netWeight(t, dcl.DDS), dcl.DDS.History[len(dcl.DDS.History)-1].Note)
	}
}

// reprofiling is the sandbox's EU system, except that an amendment is
// answered UPDATED (being profiled again), after which the statement's
// status is REJECTED.
type reprofiling struct {
	euis.Client
	amended atomic.Bool
}

func (c *reprofiling) Amend(ctx context.Context, cr euis.Credentials, uuid string, st euis.Statement) (string, error) {
	if _, err := c.Client.Amend(ctx, cr, uuid, st); err != nil {
		return "", err
	}
	c.amended.Store(true)
	return euis.StatusUpdated, nil
}

func (c *reprofiling) Get(ctx context.Context, cr euis.Credentials, uuids []string) ([]euis.Status, error) {
	st, err := c.Client.Get(ctx, cr, uuids)
	if c.amended.Load() {
		for i := range st {
			st[i].Status, st[i].Reasons = euis.StatusRejected, []string{"EUDR_RISK_PROFILE"}
		}
	}
	return st, err
}

// TestService_AmendReprofiled: an amendment the EU system answers UPDATED
// (profiling the statement again) makes the statement SUBMITTED, its
// ledger entry saying so, with a submission job queued in the same
// transaction; the job then sees the EU system's later REJECTED.
func TestService_AmendReprofiled(t *testing.T) {
	r := newRig(t, func(c euis.Client) euis.Client { return &reprofiling{Client: c} })
	v := r.validated(t, "bat_1")
	dcl, err := r.amend(sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1, NetWeightKg: decimal("1100")}}})
	if err != nil {
		t.Fatal(err)
	}
	last := dcl.DDS.History[len(dcl.DDS.History)-1]
	if dcl.DDS.Status != storage.DDSSubmitted || dcl.Submission == nil || dcl.Submission.Type != work.DDSSubmission ||
		r.ledgerEntry(t, sandbox, *last.LedgerIndex).Status != storage.DDSSubmitted {
		t.Fatalf("amended and UPDATED: %s, job %+v, note %q; want SUBMITTED and a submission job", dcl.DDS.Status, dcl.Submission, last.Note)
	}
	got := r.waitStatus(t, sandbox, v.ID, storage.DDSRejected)
	if len(got.DDS.Reasons) != 1 || got.DDS.Reasons[0] != "EUDR_RISK_PROFILE" {
		t.Errorf("rejected for %v", got.DDS.Reasons)
	}
}

// TestService_AmendSandboxUpdated: in the sandbox, an amendment whose
// description carries the simulator's marker is answered UPDATED; the
// statement is SUBMITTED, then VALIDATED again once the simulator shows it
// AVAILABLE.
func TestService_AmendSandboxUpdated(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	dcl, err := r.amend(sandbox, v.ID, &dds.AmendRequest{Commodities: []dds.CommodityChange{{Position: 1,
		DescriptionOfGoods: str("cocoa, weighed again " + euis.SimMarkerUpdated)}}})
	if err != nil {
		t.Fatal(err)
	}
	if dcl.DDS.Status != storage.DDSSubmitted || dcl.DDS.Poll.EUStatus != euis.StatusUpdated {
		t.Fatalf("amended: %s (EU %s), want SUBMITTED (UPDATED)", dcl.DDS.Status, dcl.DDS.Poll.EUStatus)
	}
	if got := r.waitStatus(t, sandbox, v.ID, storage.DDSValidated); got.DDS.ReferenceNumber != v.ReferenceNumber {
		t.Errorf("validated again with reference number %s, want %s", got.DDS.ReferenceNumber, v.ReferenceNumber)
	}
}
