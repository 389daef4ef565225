package dds_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

func (e *recordingEU) GetByIdentifiers(ctx context.Context, cr euis.Credentials, ref euis.Reference) (*euis.Statement, error) {
	if err := e.call(cr, euis.OpGetByIdentifiers); err != nil {
		return nil, err
	}
	return e.Client.GetByIdentifiers(ctx, cr, ref)
}

// lookUp looks the pair up and records the answer by key_test.
func (r *rig) lookUp(t storage.Tenant, ref, verification string) (dds.ReferenceLookup, error) {
	l, err := r.s.LookUp(context.Background(), t, dds.LookupRequest{ReferenceNumber: ref, VerificationNumber: verification})
	if err != nil {
		return dds.ReferenceLookup{}, err
	}
	var out dds.ReferenceLookup
	err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		out, err = r.s.RecordLookup(tx, t, l, "key_test")
		return err
	})
	return out, err
}

// stored is the look-up of a reference number kept in the store.
func (r *rig) stored(tb testing.TB, t storage.Tenant, ref string) *storage.ReferenceLookup {
	tb.Helper()
	var l *storage.ReferenceLookup
	err := r.b.DB.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		l, err = tx.FindReferenceLookup(t, ref)
		return err
	})
	if err != nil {
		tb.Fatalf("look-up of %s: %v", ref, err)
	}
	return l
}

// TestService_LookUp: a statement the sandbox's EU system validated is
// found by its numbers, usable, summarised and stored with who asked and
// when; withdrawn, it is found but no longer usable; a wrong verification
// number is an answer too (found false), stored in place of the one
// before.
func TestService_LookUp(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	got, err := r.lookUp(sandbox, v.ReferenceNumber, v.VerificationNumber)
	if err != nil {
		t.Fatal(err)
	}
	st := got.Statement
	if !got.Found || st == nil || got.Usability == nil || *got.Usability != euis.VerifyExistingUsable || got.Actor != "key_test" || got.LookedUpAt != storage.FormatTime(r.b.Clock.Now()) {
		t.Fatalf("look-up %+v", got)
	}
	if st.ActivityType != euis.ActivityImport || len(st.Commodities) != 1 || st.Commodities[0].Producers != 1 ||
		len(st.Commodities[0].ProducerCountries) != 1 || st.Commodities[0].ProducerCountries[0] != "GH" || st.Operator != nil {
		b, _ := json.Marshal(st)
		t.Errorf("statement %s", b)
	}
	l := r.stored(t, sandbox, v.ReferenceNumber)
	var kept dds.ReferencedStatement
	if err := json.Unmarshal(l.Statement, &kept); err != nil || !l.Found || l.Usability != euis.VerifyExistingUsable ||
		kept.ActivityType != euis.ActivityImport || l.Actor != "key_test" {
		t.Errorf("stored %+v (%v)", l, err)
	}

	// Withdrawn, it is still found, and can no longer be referenced.
	if _, err := r.revoke(sandbox, v.ID); err != nil {
		t.Fatal(err)
	}
	got, err = r.lookUp(sandbox, v.ReferenceNumber, v.VerificationNumber)
	if err != nil || !got.Found || got.Usability == nil || *got.Usability != euis.VerifyExistingNonUsable {
		t.Errorf("a withdrawn statement: %+v %v, want found and %s", got, err, euis.VerifyExistingNonUsable)
	}

	got, err = r.lookUp(sandbox, v.ReferenceNumber, "WRONG123")
	if err != nil || got.Found || got.Statement != nil || got.Usability != nil {
		t.Errorf("a wrong verification number: %+v %v, want found false", got, err)
	}
	if l := r.stored(t, sandbox, v.ReferenceNumber); l.Found || l.VerificationNumber != "WRONG123" || l.Statement != nil || l.Usability != "" {
		t.Errorf("stored after a miss: %+v", l)
	}
}

// TestService_LookUpRefused: numbers of the wrong form are a 400 naming
// each field, before anything is asked; production needs credentials; an
// EU system that cannot be reached is 503 with nothing stored.
func TestService_LookUpRefused(t *testing.T) {
	r := newRig(t, nil)
	_, err := r.lookUp(production, "26BE", "")
	wantError(t, "bad numbers", err, 400, apierr.DetailInvalidValue, apierr.DetailRequired)
	if e := apierr.From(err); len(e.Details) == 2 && (e.Details[0].Field != "referenceNumber" || e.Details[1].Field != "verificationNumber") {
		t.Errorf("details %+v", e.Details)
	}

	_, err = r.lookUp(production, "26BE7XTVCZAQ2S", "SFFCB4Y3")
	wantError(t, "production without credentials", err, 422, apierr.DetailEUSystemNotConfigured)
	if r.eu.calls() != 0 {
		t.Errorf("the EU system was called without credentials")
	}

	user, key, client := "op", "k", "eudr-test"
	if _, err := r.s.PutCredentials(context.Background(), production, &dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client}); err != nil {
		t.Fatal(err)
	}
	r.eu.failNext(1)
	_, err = r.lookUp(production, "26BE7XTVCZAQ2S", "SFFCB4Y3")
	if e := wantError(t, "the EU system unreachable", err, 503); e.RetryAfter != 30 {
		t.Errorf("the EU system unreachable: %+v, want Retry-After 30", e)
	}
	r.b.DB.View(context.Background(), func(tx *storage.Tx) error {
		if _, err := tx.FindReferenceLookup(production, "26BE7XTVCZAQ2S"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("stored after a failed call: %v", err)
		}
		return nil
	})
	if got, err := r.lookUp(production, "26BE7XTVCZAQ2S", "SFFCB4Y3"); err != nil || got.Found {
		t.Errorf("once the EU system answers: %+v %v, want found false", got, err)
	}
	if r.eu.calls() != 2 {
		t.Errorf("%d calls to the EU system, want 2", r.eu.calls())
	}
}
