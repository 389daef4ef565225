package dds_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// validated drafts, files and validates a sandbox statement.
func (r *rig) validated(tb testing.TB, batch string) *storage.DDS {
	tb.Helper()
	r.declarable(tb, sandbox, batch)
	d := r.mustDraft(tb, sandbox, request(batch))
	if _, err := r.submit(sandbox, d.ID); err != nil {
		tb.Fatal(err)
	}
	return r.waitStatus(tb, sandbox, d.ID, storage.DDSValidated).DDS
}

// TestService_Revoke: a VALIDATED statement, named by its reference
// number, is withdrawn in the EU system and recorded REVOKED, once.
func TestService_Revoke(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	dcl, err := r.revoke(sandbox, v.ReferenceNumber)
	if err != nil {
		t.Fatal(err)
	}
	if d := dcl.DDS; d.ID != v.ID || d.Status != storage.DDSRevoked ||
		history(d) != "DRAFT/key_test SUBMITTED/eu-system VALIDATED/eu-system REVOKED/key_test" || d.History[3].LedgerIndex == nil {
		t.Errorf("revoked: %+v, history %s", d, history(d))
	}
	if st, err := r.sim.Get(context.Background(), dds.SandboxCredentials, []string{v.EUUUID}); err != nil || len(st) != 1 || st[0].Status != euis.StatusWithdrawn {
		t.Errorf("in the EU system: %+v %v, want WITHDRAWN", st, err)
	}
	_, err = r.revoke(sandbox, v.ID)
	if e := wantError(t, "revoking again", err, 409, apierr.DetailDDSNotRevocable); !strings.Contains(e.Message, "is REVOKED") {
		t.Errorf("revoking again: %q", e.Message)
	}
}

// TestService_RevokeAfterLostAnswer: a statement withdrawn in the EU system
// whose revocation was not recorded (a crash between the two) is revoked
// when asked again, not refused.
func TestService_RevokeAfterLostAnswer(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	if err := r.sim.Withdraw(context.Background(), dds.SandboxCredentials, v.EUUUID); err != nil {
		t.Fatal(err)
	}
	if dcl, err := r.revoke(sandbox, v.ID); err != nil || dcl.DDS.Status != storage.DDSRevoked {
		t.Errorf("revoke after a lost answer: %v", err)
	}
}

// TestService_RevokeRefused: what the EU system would not withdraw is
// refused before it is asked, and what it refuses is refused; nothing is
// recorded either way.
func TestService_RevokeRefused(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	draft := r.mustDraft(t, sandbox, request("bat_1"))
	record := func(id string, change func(d *storage.DDS)) {
		r.b.Update(t, func(tx *storage.Tx) error {
			d := &storage.DDS{ID: id, Statement: draft.Statement, EUUUID: "1d0c4b2e-0f64-4a4e-9a8e-7b1a2c3d4e5f", CreatedAt: tx.Now(),
				Poll: &storage.DDSPollState{}}
			now := tx.Now()
			d.SubmittedAt = &now
			change(d)
			return r.s.Record(tx, sandbox, d, storage.DDSSubmitted, dds.ActorEUSystem, "accepted by the EU system")
		})
	}
	record("dds_late", func(d *storage.DDS) { *d.SubmittedAt = d.SubmittedAt.Add(-euis.AmendWindow - time.Minute) })
	record("dds_grouped", func(d *storage.DDS) { d.Poll.EUStatus = euis.StatusGrouped })
	record("dds_unknown", func(*storage.DDS) {}) // the EU system does not know its UUID
	for _, tc := range []struct {
		ref   string
		issue string
	}{
		{draft.ID, "is DRAFT; only a SUBMITTED or VALIDATED statement can be revoked"},
		{"dds_late", "allows a withdrawal within 72h0m0s of submission only"},
		{"dds_grouped", "is grouped into another statement"},
		{"dds_unknown", "the EU system refused to withdraw it"},
	} {
		t.Run(tc.ref, func(t *testing.T) {
			_, err := r.revoke(sandbox, tc.ref)
			if e := wantError(t, tc.ref, err, 409, apierr.DetailDDSNotRevocable); !strings.Contains(e.Message, tc.issue) {
				t.Errorf("%s: %q, want it to say %q", tc.ref, e.Message, tc.issue)
			}
			if d := r.find(t, sandbox, tc.ref).DDS; d.Status == storage.DDSRevoked {
				t.Errorf("%s recorded REVOKED", tc.ref)
			}
		})
	}
	if _, err := r.revoke(sandbox, "dds_nope"); !isNotFound(err) {
		t.Errorf("an unknown statement: %v, want apierr.NotFound", err)
	}
}

// TestService_RevokeProduction: production needs credentials; an EU system
// that cannot be reached is 503 with nothing changed, and the revocation
// goes through once it answers. The submission job then completes.
func TestService_RevokeProduction(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, production, "bat_1")
	d := r.mustDraft(t, production, request("bat_1"))
	user, key, client := "op", "k", "eudr-test"
	creds := &dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client}
	if _, err := r.s.PutCredentials(context.Background(), production, creds); err != nil {
		t.Fatal(err)
	}
	job, err := r.submit(production, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, production, d.ID, storage.DDSSubmitted)

	r.eu.failNext(1)
	_, err = r.revoke(production, d.ID)
	if e := wantError(t, "the EU system unreachable", err, 503); e.RetryAfter != 30 {
		t.Errorf("the EU system unreachable: %+v, want Retry-After 30", e)
	}
	if got := r.find(t, production, d.ID).DDS; got.Status != storage.DDSSubmitted {
		t.Errorf("after a revocation that could not reach the EU system: %s", got.Status)
	}
	if dcl, err := r.revoke(production, d.ID); err != nil || dcl.DDS.Status != storage.DDSRevoked || dcl.Submission == nil {
		t.Errorf("revoke: %+v %v, want REVOKED with its submission job still shown", dcl.DDS, err)
	}
	r.b.Clock.Advance(schedules[storage.Production][0])
	if j := r.b.WaitJob(t, production, job.ID); j.Status != storage.JobCompleted {
		t.Errorf("the submission job of a revoked statement: %s", j.Status)
	}

	// Without credentials nothing is asked.
	acme := storage.Tenant{Org: "acme", Env: storage.Production}
	r.b.Update(t, func(tx *storage.Tx) error {
		now := tx.Now()
		return r.s.Record(tx, acme, &storage.DDS{ID: "dds_acme", Statement: d.Statement, EUUUID: d.EUUUID, CreatedAt: now, SubmittedAt: &now},
			storage.DDSSubmitted, dds.ActorEUSystem, "accepted by the EU system")
	})
	calls := r.eu.calls()
	_, err = r.revoke(acme, "dds_acme")
	wantError(t, "production without credentials", err, 422, apierr.DetailEUSystemNotConfigured)
	if r.eu.calls() != calls {
		t.Errorf("the EU system was called without credentials")
	}
}
