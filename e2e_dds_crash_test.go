package main_test

// End-to-end test of a statement that is being followed when the
// appliance is killed with SIGKILL.

import (
	"net/http"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func TestDDS_CrashKill9(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc, append([]string{jobsLeaseEnv, "EUDR_EU_SYSTEM_SANDBOX_DELAY=4s",
		"EUDR_EU_SYSTEM_SANDBOX_POLL_SCHEDULE=200ms,500ms,1s"}, noRateLimit...)...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	reg := subscribe(t, p, key, rc, ddsReceiver, "dds.submitted", "dds.validated", "dds.rejected")
	ddsMapOperator(t, base, key, "V-CRASH", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-CRASH", ddsPlots(2, -1.2, 6.6, "V-CRASH")...)

	// First a statement revoked while SUBMITTED: it stays REVOKED, and
	// is never validated.
	early := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	earlyJob := ddsSubmit(t, base, key, early.DDSID)
	ddsWaitEvent(t, rc, reg.SigningSecret, "dds.submitted", early.DDSID)
	r := ddsPost(t, base, key, early.DDSID, "revoke").WantStatus(t, http.StatusOK)
	if rv := ddsDecode(t, r, r.Body); rv.Status != "REVOKED" || ddsHistory(rv) != "DRAFT SUBMITTED REVOKED" {
		t.Errorf("revoke while SUBMITTED: %s", r.Body)
	}

	d := ddsDraft(t, base, key, ddsBody(ddsOperatorUUID, batch))
	jobID := ddsSubmit(t, base, key, d.DDSID)

	// Killed while the EU system still processes the statement and the
	// job polls it.
	sub := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.submitted", d.DDSID)
	euUUID := dataField(&sub, "euUuid")
	p.Kill(t)
	if !ddsUUIDPattern.MatchString(euUUID) {
		t.Fatalf("dds.submitted data %s", sub.Env.Data)
	}

	p = p.Restart(t)
	base = p.SandboxURL
	v := ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")
	if polStr(v.EUUUID) != euUUID || ddsHistory(v) != "DRAFT SUBMITTED VALIDATED" {
		t.Errorf("after the restart: euUuid %s (dds.submitted named %s), history %s", polStr(v.EUUUID), euUUID, ddsHistory(v))
	}
	if pat := ddsReferencePattern(t, v.SubmittedAt, "NL"); !pat.MatchString(polStr(v.ReferenceNumber)) {
		t.Errorf("referenceNumber %q, want %s", polStr(v.ReferenceNumber), pat)
	}
	// The EU system kept the statement SUBMITTED for its 4 seconds.
	if at := apitest.ParseTime(t, v.History[2].At); at.Sub(apitest.ParseTime(t, *v.SubmittedAt)) < 3500*time.Millisecond {
		t.Errorf("VALIDATED at %s, well before 4s after submission at %s", v.History[2].At, *v.SubmittedAt)
	}
	val := ddsWaitEvent(t, rc, reg.SigningSecret, "dds.validated", d.DDSID)
	if dataField(&val, "referenceNumber") != polStr(v.ReferenceNumber) || dataField(&val, "verificationNumber") != polStr(v.VerificationNumber) {
		t.Errorf("dds.validated data %s, want %s %s", val.Env.Data, polStr(v.ReferenceNumber), polStr(v.VerificationNumber))
	}
	if j := ledWaitJob(t, base, key, jobID, ddsJobType); j.Status != "COMPLETED" {
		t.Errorf("submission job after the restart: %s %+v", j.Status, j.Error)
	}
	// One event each (a delivery may be repeated after the kill, never
	// with another event ID), and one filing.
	for _, typ := range []string{"dds.submitted", "dds.validated"} {
		ids := map[string]bool{}
		for _, r := range ddsDeliveries(rc, typ, d.DDSID) {
			ids[r.Env.EventID] = true
			if typ == "dds.submitted" && dataField(&r, "euUuid") != euUUID {
				t.Errorf("a dds.submitted names EU UUID %s, not %s: the statement was filed twice", dataField(&r, "euUuid"), euUUID)
			}
		}
		if len(ids) != 1 {
			t.Errorf("%d %s events, want 1", len(ids), typ)
		}
	}
	if n := len(ddsDeliveries(rc, "dds.rejected", d.DDSID)); n != 0 {
		t.Errorf("%d dds.rejected deliveries", n)
	}
	ddsCheckLedger(t, base, key, v, v.Statement)

	// By now the EU system would have validated the revoked one.
	if e := ddsGet(t, base, key, early.DDSID); e.Status != "REVOKED" || ddsHistory(e) != "DRAFT SUBMITTED REVOKED" ||
		e.ReferenceNumber != nil || len(ddsDeliveries(rc, "dds.validated", early.DDSID)) != 0 {
		t.Errorf("the statement revoked while SUBMITTED: %s, reference %v, %d dds.validated", ddsHistory(e),
			polStr(e.ReferenceNumber), len(ddsDeliveries(rc, "dds.validated", early.DDSID)))
	} else {
		ddsCheckLedger(t, base, key, e, e.Statement)
	}
	if j := ledWaitJob(t, base, key, earlyJob, ddsJobType); j.Status != "COMPLETED" {
		t.Errorf("the revoked statement's job: %s %+v", j.Status, j.Error)
	}
	entries := ledWalk(t, base, key)
	p.Stop(t)
	ledVerifyOK(t, p.DataDir, len(entries))
}
