package sd_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/storage"
)

func (f *flaky) takeFailure() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.failNext
	f.failNext = nil
	return err
}

func (f *flaky) UpdateSD(ctx context.Context, cr euis.Credentials, id string, d euis.SDStatement) (string, error) {
	if err := f.takeFailure(); err != nil {
		return "", err
	}
	st, err := f.Simulator.UpdateSD(ctx, cr, id, d)
	f.mu.Lock()
	defer f.mu.Unlock()
	if err == nil && f.reprofile {
		f.reprofiled = true
		return euis.StatusUpdated, nil
	}
	return st, err
}

// GetSD is the simulator's, except that a declaration updated while
// reprofile was set is REJECTED.
func (f *flaky) GetSD(ctx context.Context, cr euis.Credentials, ids []string) ([]euis.Status, error) {
	st, err := f.Simulator.GetSD(ctx, cr, ids)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.reprofiled {
		for i := range st {
			st[i].Status, st[i].Reasons = euis.StatusRejected, []string{"EUDR_RISK_PROFILE"}
		}
	}
	return st, err
}

func (f *flaky) GetSDByIdentifiers(ctx context.Context, cr euis.Credentials, ref euis.Reference) (*euis.SDStatement, error) {
	if err := f.takeFailure(); err != nil {
		return nil, err
	}
	return f.Simulator.GetSDByIdentifiers(ctx, cr, ref)
}

func (r *rig) update(ref string, req *sd.Request) (sd.View, error) {
	u, err := r.s.Update(context.Background(), sandbox, ref, req)
	if err != nil {
		return sd.View{}, err
	}
	var v sd.View
	err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		v, err = r.s.RecordUpdate(tx, sandbox, u, "key_test")
		return err
	})
	return v, err
}

// TestService_Update: a DRAFT cannot be updated; a VALIDATED declaration
// is updated in the EU system and recorded, status unchanged, with a
// history entry naming the fields changed and an sd.status ledger entry
// holding the new statement's hash; the new internal reference finds it.
// An update that changes nothing or the role is a 400, one the EU system
// refuses a 409 and one it cannot take now a 503, nothing changed; a
// withdrawn declaration cannot be updated.
func TestService_Update(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.update(dcl.SD.ID, request()); apierr.From(err).Status != 409 || apierr.From(err).Details[0].Code != sd.DetailNotUpdatable {
		t.Errorf("updating a DRAFT: %v", err)
	}
	d := r.wait(t, sandbox, dcl).SD

	req := request()
	req.InternalReference = "LOT-2026-B"
	req.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	v, err := r.update(d.ReferenceNumber, req)
	if err != nil {
		t.Fatal(err)
	}
	last := v.History[len(v.History)-1]
	if v.Status != storage.SDValidated || last.Status != storage.SDValidated || last.Actor != "key_test" || last.Note == nil ||
		!strings.Contains(*last.Note, "internalReference, commodities[0]") || v.InternalReference != "LOT-2026-B" ||
		*v.ReferenceNumber != d.ReferenceNumber || !strings.Contains(string(v.Statement), "Oak logs, sawn") {
		t.Fatalf("updated: %+v", v)
	}
	sum := sha256.Sum256(v.Statement)
	var e anchor.SDEntry
	err = r.b.DB.View(context.Background(), func(tx *storage.Tx) error {
		le, err := ledger.ReadEntry(tx.Tx, anchor.Log(sandbox), *last.LedgerIndex)
		if err != nil {
			return err
		}
		return json.Unmarshal(le.Data, &e)
	})
	if err != nil || e.Type != anchor.EntrySDStatus || e.Status != storage.SDValidated || e.StatementSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("ledger entry %+v, %v", e, err)
	}
	got, err := r.eu.Simulator.GetSDByIdentifiers(context.Background(), euis.Credentials{}, euis.Reference{ReferenceNumber: d.ReferenceNumber, VerificationNumber: d.VerificationNumber})
	if err != nil || got == nil || got.Commodities[0].DescriptionOfGoods != "Oak logs, sawn" || got.InternalReference != "LOT-2026-B" {
		t.Errorf("the EU system holds %+v, %v", got, err)
	}
	list, _, err := r.s.List(context.Background(), sandbox, storage.SDFilter{InternalReference: "LOT-2026-B"}, storage.Page{Limit: 10})
	if err != nil || len(list) != 1 || list[0].SD.ID != d.ID {
		t.Errorf("by the new internal reference: %d, %v", len(list), err)
	}

	entries := len(v.History)
	for name, tc := range map[string]struct {
		change func(*sd.Request)
		fail   error
		status int
	}{
		"nothing": {func(q *sd.Request) {
			q.InternalReference = "LOT-2026-B"
			q.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
		}, nil, 400},
		"role":        {func(q *sd.Request) { q.OperatorRole = euis.SDRoleMicroOperator; q.Operator = nil }, nil, 400},
		"refused":     {func(q *sd.Request) {}, &euis.Fault{Operation: euis.OpUpdateSD, Kind: euis.FaultBusinessRules, Message: "customs lock"}, 409},
		"unreachable": {func(q *sd.Request) {}, &euis.HTTPError{Operation: euis.OpUpdateSD, StatusCode: 503}, 503},
	} {
		t.Run(name, func(t *testing.T) {
			q := request()
			tc.change(q)
			r.eu.failNext = tc.fail
			if _, err := r.update(d.ID, q); apierr.From(err).Status != tc.status {
				t.Errorf("%v, want %d", err, tc.status)
			}
			r.eu.failNext = nil
			if now, _ := r.s.Find(context.Background(), sandbox, d.ID); len(now.SD.History) != entries {
				t.Error("a refused update was recorded")
			}
		})
	}

	w, err := r.s.Withdraw(context.Background(), sandbox, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		_, err := r.s.RecordWithdrawal(tx, sandbox, w, "key_test")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.update(d.ID, request()); apierr.From(err).Status != 409 {
		t.Errorf("updating a withdrawn declaration: %v", err)
	}
}

// TestService_Lookup: a declaration is looked up by its numbers and the
// answer stored, its producers' postal addresses included; a wrong
// verification number is stored as not found; numbers of the wrong form
// are a 400 and an EU system that cannot be reached a 503, nothing stored.
func TestService_Lookup(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	lookUp := func(req sd.LookupRequest) (sd.LookupView, error) {
		l, err := r.s.LookUp(context.Background(), sandbox, req)
		if err != nil {
			return sd.LookupView{}, err
		}
		var v sd.LookupView
		err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			var err error
			v, err = r.s.RecordLookup(tx, sandbox, l, "key_test")
			return err
		})
		return v, err
	}
	v, err := lookUp(sd.LookupRequest{ReferenceNumber: d.ReferenceNumber, VerificationNumber: d.VerificationNumber})
	if err != nil || !v.Found || v.Actor != "key_test" {
		t.Fatalf("look-up %+v, %v", v, err)
	}
	var got sd.Request
	if err := json.Unmarshal(v.Declaration, &got); err != nil || got.OperatorRole != euis.SDRoleRepresentative || got.Operator == nil ||
		got.Operator.Name != "Ferme Dupont" || got.Commodities[0].Producers[0].PostalAddresses[0].City != "Dijon" || got.InternalReference != d.InternalReference {
		t.Errorf("declaration %s, %v", v.Declaration, err)
	}
	if stored, err := r.s.FindLookup(context.Background(), sandbox, d.ReferenceNumber); err != nil || !stored.Found || string(stored.Declaration) != string(v.Declaration) {
		t.Errorf("stored %+v, %v", stored, err)
	}

	v, err = lookUp(sd.LookupRequest{ReferenceNumber: d.ReferenceNumber, VerificationNumber: "WRONG999"})
	if err != nil || v.Found || string(v.Declaration) != "null" {
		t.Errorf("a wrong verification number: %+v, %v", v, err)
	}
	if _, err := lookUp(sd.LookupRequest{ReferenceNumber: "S26", VerificationNumber: ""}); apierr.From(err).Status != 400 || len(apierr.From(err).Details) != 2 {
		t.Errorf("numbers of the wrong form: %v", err)
	}
	r.eu.failNext = &euis.HTTPError{Operation: euis.OpGetSDByIdentifiers, StatusCode: 503}
	if _, err := lookUp(sd.LookupRequest{ReferenceNumber: "S26FRAAAAAAAAA", VerificationNumber: "ABCDEFGH"}); apierr.From(err).Status != 503 {
		t.Errorf("unreachable: %v", err)
	}
	if _, err := r.s.FindLookup(context.Background(), sandbox, "S26FRAAAAAAAAA"); apierr.From(err).Status != 404 {
		t.Errorf("a failed look-up was stored: %v", err)
	}
}

// TestService_ConcurrentUpdates: two updates made from the same stored
// declaration both reach the EU system; the first recorded is kept, the
// second is refused with 409 SD_NOT_UPDATABLE and records nothing.
func TestService_ConcurrentUpdates(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	first, second := request(), request()
	first.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	second.Commodities[0].DescriptionOfGoods = "Oak logs, split"
	u1, err := r.s.Update(context.Background(), sandbox, d.ID, first)
	if err != nil {
		t.Fatal(err)
	}
	u2, err := r.s.Update(context.Background(), sandbox, d.ID, second)
	if err != nil {
		t.Fatal(err)
	}
	record := func(u *sd.Update) error {
		return r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			_, err := r.s.RecordUpdate(tx, sandbox, u, "key_test")
			return err
		})
	}
	if err := record(u1); err != nil {
		t.Fatal(err)
	}
	entries := len(r.mustFind(t, d.ID).History)
	err = record(u2)
	if e := apierr.From(err); e.Status != 409 || len(e.Details) != 1 || e.Details[0].Code != sd.DetailNotUpdatable ||
		!strings.Contains(e.Details[0].Issue, "changed by another request since; read it again") {
		t.Errorf("the second update recorded: %v", err)
	}
	if now := r.mustFind(t, d.ID); len(now.History) != entries || !strings.Contains(string(now.Statement), "Oak logs, sawn") {
		t.Errorf("the refused update changed the declaration: %s", now.Statement)
	}
}

func (r *rig) mustFind(tb testing.TB, id string) *storage.SD {
	tb.Helper()
	dcl, err := r.s.Find(context.Background(), sandbox, id)
	if err != nil {
		tb.Fatal(err)
	}
	return dcl.SD
}

// TestService_UpdateRetryAfterLoss: an update the EU system took but that
// was never recorded (a crash before the commit) is recorded when the
// request is retried and the EU system refuses it, since its declaration
// reads as the update makes it; a refused update of other content stays
// refused.
func TestService_UpdateRetryAfterLoss(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	req := request()
	req.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	if _, err := r.s.Update(context.Background(), sandbox, d.ID, req); err != nil { // never recorded
		t.Fatal(err)
	}
	lock := &euis.Fault{Operation: euis.OpUpdateSD, Kind: euis.FaultBusinessRules, Message: "under a customs lock"}
	other := request()
	other.Commodities[0].DescriptionOfGoods = "Oak logs, split"
	r.eu.failNext = lock
	if _, err := r.update(d.ID, other); apierr.From(err).Status != 409 {
		t.Errorf("other content refused by the EU system: %v, want 409", err)
	}
	r.eu.failNext = lock
	retry := request()
	retry.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	v, err := r.update(d.ID, retry)
	if err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if !strings.Contains(string(v.Statement), "Oak logs, sawn") {
		t.Errorf("recorded %s", v.Statement)
	}
}

// TestService_UpdateRefusedContent: content the EU system's rules refuse
// is a 422 EU_SYSTEM_RULE at the request's path, whether the client found
// it before the call (Violations) or the EU system names the field in its
// own words (internalReferenceNumber); nothing is recorded.
func TestService_UpdateRefusedContent(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	for name, tc := range map[string]struct {
		fail  error
		field string
	}{
		"violations": {euis.Violations{{Code: euis.CodeRequired, Path: "commodities[0].producers[0].postalAddresses[0].producerCity",
			Limit: "required", Issue: "empty"}}, "commodities[0].producers[0].postalAddresses[0].producerCity"},
		"fault": {&euis.Fault{Operation: euis.OpUpdateSD, Kind: euis.FaultBusinessRules, Message: "invalid",
			Errors: []euis.FaultError{{ID: "EUDR_INTERNAL_REFERENCE_INVALID", Message: "too long", Field: "internalReferenceNumber"}}}, "internalReference"},
	} {
		t.Run(name, func(t *testing.T) {
			q := request()
			q.Commodities[0].DescriptionOfGoods = "Oak logs, " + name
			r.eu.failNext = tc.fail
			_, err := r.update(d.ID, q)
			r.eu.failNext = nil
			e := apierr.From(err)
			if e.Status != 422 || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailEUSystemRule || e.Details[0].Field != tc.field {
				t.Errorf("%v %+v, want 422 %s at %s", err, e.Details, apierr.DetailEUSystemRule, tc.field)
			}
		})
	}
	if now := r.mustFind(t, d.ID); len(now.History) != len(d.History) {
		t.Error("a refused update was recorded")
	}
}

// TestService_UpdateReprofiled: an update the EU system answers UPDATED
// (profiling the declaration again) makes it SUBMITTED, its ledger entry
// saying so, with a submission job queued in the same transaction; the
// job then sees the EU system's later REJECTED.
func TestService_UpdateReprofiled(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	r.eu.mu.Lock()
	r.eu.reprofile = true
	r.eu.mu.Unlock()
	req := request()
	req.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	v, err := r.update(d.ID, req)
	if err != nil {
		t.Fatal(err)
	}
	if v.Status != storage.SDSubmitted || v.Submission == nil {
		t.Fatalf("updated and UPDATED: %s, job %+v; want SUBMITTED and a submission job", v.Status, v.Submission)
	}
	got := r.wait(t, sandbox, sd.Declaration{SD: &storage.SD{ID: d.ID}, Submission: &storage.Job{ID: v.Submission.JobID}}).SD
	if got.Status != storage.SDRejected || len(got.Reasons) != 1 || got.Reasons[0] != "EUDR_RISK_PROFILE" {
		t.Errorf("%s for %v, want REJECTED for EUDR_RISK_PROFILE", got.Status, got.Reasons)
	}
}
