package dds_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/work"
	"github.com/eudr/eudr/storage"
)

// TestService_Submit: a sandbox statement is filed by its job, SUBMITTED
// (dds.submitted), then VALIDATED at a status poll (dds.validated), each
// change anchored in the ledger by the EU system's actor; the job then
// completes and the statement shows no submission.
func TestService_Submit(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	job, err := r.submit(sandbox, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if job.Type != work.DDSSubmission {
		t.Errorf("job type %s", job.Type)
	}
	if got := r.find(t, sandbox, d.ID); got.DDS.Status != storage.DDSDraft || got.Submission == nil || got.Submission.ID != job.ID {
		t.Errorf("queued: %s with submission %+v, want a DRAFT with job %s", got.DDS.Status, got.Submission, job.ID)
	}
	_, err = r.submit(sandbox, d.ID)
	if e := wantError(t, "submitting again while queued", err, 409, apierr.DetailDDSNotDraft); !strings.Contains(e.Message, "being submitted") {
		t.Errorf("submitting again: %q", e.Message)
	}

	// SUBMITTED on the way is in the history: waiting for it as the
	// status could miss it, since the wait moves the clock while the job
	// runs and a slow run may file and see the statement validated at once.
	v := r.waitStatus(t, sandbox, d.ID, storage.DDSValidated)
	if v.DDS.EUUUID == "" || v.DDS.SubmittedAt == nil {
		t.Errorf("validated without its EU UUID or submission time: %+v", v.DDS)
	}
	if !euis.IsReferenceNumber(v.DDS.ReferenceNumber) || v.DDS.VerificationNumber == "" || v.Submission != nil ||
		history(v.DDS) != "DRAFT/key_test SUBMITTED/eu-system VALIDATED/eu-system" {
		t.Errorf("validated: %+v, history %s, submission %+v", v.DDS, history(v.DDS), v.Submission)
	}
	j := r.b.Job(t, sandbox, job.ID)
	want := []int64{*v.DDS.History[1].LedgerIndex, *v.DDS.History[2].LedgerIndex}
	if j.Status != storage.JobCompleted || j.Progress.Succeeded != 1 || len(j.LedgerIndexes) != 2 ||
		j.LedgerIndexes[0] != want[0] || j.LedgerIndexes[1] != want[1] {
		t.Errorf("job: %+v, want COMPLETED listing the ledger entries %v", j, want)
	}
	if n := r.b.WaitPublished(t, 2); n != 2 {
		t.Errorf("%d events published, want 2 (dds.submitted, dds.validated)", n)
	}
	wantFinished(t, r.b.WaitFinished(t, job.ID), map[string]any{"type": work.DDSSubmission, "status": storage.JobCompleted,
		"org": sandbox.Org, "environment": string(sandbox.Env), "dds_id": d.ID, "dds_status": storage.DDSValidated,
		"reference_number": v.DDS.ReferenceNumber, "items_succeeded": 1.0})
	_, err = r.submit(sandbox, v.DDS.ReferenceNumber)
	wantError(t, "submitting a VALIDATED statement", err, 409, apierr.DetailDDSNotDraft)
}

// TestService_SubmitRejected: the simulator rejects a statement whose
// operator is none of the batches' suppliers; the job records REJECTED
// with the reason, fires dds.rejected and counts its item failed.
func TestService_SubmitRejected(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	req := request("bat_1")
	*req.OperatorUUID = euis.ZeroOperatorUUID
	d := r.mustDraft(t, sandbox, req)
	job, err := r.submit(sandbox, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	got := r.waitStatus(t, sandbox, d.ID, storage.DDSRejected)
	if len(got.DDS.Reasons) != 1 || got.DDS.Reasons[0] != euis.ReasonOperatorUUIDMismatch {
		t.Errorf("reasons %v", got.DDS.Reasons)
	}
	if j := r.b.WaitJob(t, sandbox, job.ID); j.Status != storage.JobCompleted || j.Progress.Failed != 1 {
		t.Errorf("job: %+v, want COMPLETED with its item failed", j)
	}
	if n := r.b.WaitPublished(t, 2); n != 2 {
		t.Errorf("%d events published, want 2 (dds.submitted, dds.rejected)", n)
	}
	line := r.b.WaitFinished(t, job.ID)
	wantFinished(t, line, map[string]any{"status": storage.JobCompleted, "dds_id": d.ID, "dds_status": storage.DDSRejected,
		"items_failed": 1.0})
	if reasons, _ := line["reasons"].([]any); len(reasons) != 1 || reasons[0] != euis.ReasonOperatorUUIDMismatch {
		t.Errorf("job finished line: reasons %v, want [%s]", line["reasons"], euis.ReasonOperatorUUIDMismatch)
	}
	// The poll that found it rejected answered last; when depends on the
	// jobs' clock, which the waits advance.
	if got, ok := r.s.LastAnswer(sandbox); !ok || got.Operation != euis.OpGet || got.Outcome != euis.OutcomeOK ||
		got.Message != "" || got.At.Before(start) || got.At.After(r.b.Clock.Now()) {
		t.Errorf("the EU system's last answer: %+v (%v), want getDds answered since %v", got, ok, start)
	}
	// A rejected statement is not in force: there is nothing to revoke.
	_, err = r.revoke(sandbox, d.ID)
	if e := wantError(t, "revoking a REJECTED statement", err, 409, apierr.DetailDDSNotRevocable); !strings.Contains(e.Message, "is REJECTED") {
		t.Errorf("revoking a REJECTED statement: %q", e.Message)
	}
}

func TestService_SubmitRefused(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, production, "bat_1")
	d := r.mustDraft(t, production, request("bat_1"))
	_, err := r.submit(production, d.ID)
	wantError(t, "production without credentials", err, 422, apierr.DetailEUSystemNotConfigured)
	if _, err := r.submit(sandbox, "dds_nope"); !isNotFound(err) {
		t.Errorf("an unknown statement: %v, want apierr.NotFound", err)
	}
	if got := r.find(t, production, d.ID); got.DDS.Poll != nil || got.Submission != nil {
		t.Errorf("a refused submission left %+v", got.DDS.Poll)
	}

	// Credentials stored before the endpoint rules with a plain http URL
	// are refused before anything is queued.
	r.b.Update(t, func(tx *storage.Tx) error {
		return tx.PutEUCredentials(production, &storage.EUCredentials{Username: "op", ClientID: "eudr-test",
			SealedAuthKey: r.sealer.Seal([]byte("k"), production.String()), Endpoint: "http://relay.example/tracesnt", UpdatedAt: tx.Now()})
	})
	_, err = r.submit(production, d.ID)
	if e := wantError(t, "a stored http endpoint", err, 422, apierr.DetailEUSystemNotConfigured); e.Details[0].Field != "credentials.endpoint" {
		t.Errorf("a stored http endpoint: %+v", e.Details)
	}
}

// TestService_SubmitRetries: while the EU system answers 503, the job stays
// RUNNING with the failed attempt recorded and the next one due after the
// schedule's delay; once the EU system takes the statement it is
// SUBMITTED, and polls start at the schedule's first delay again. Every
// call carries the credentials, unsealed.
func TestService_SubmitRetries(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, production, "bat_1")
	user, key, client, endpoint := "op", "s3cret-auth-key", "eudr-test", dds.EndpointAcceptance
	if _, err := r.s.PutCredentials(context.Background(), production,
		&dds.CredentialsRequest{Username: &user, AuthKey: &key, ClientID: &client, Endpoint: &endpoint}); err != nil {
		t.Fatal(err)
	}
	d := r.mustDraft(t, production, request("bat_1"))
	r.eu.failNext(1)
	job, err := r.submit(production, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	sched := schedules[storage.Production]
	j := r.waitJob(t, production, job.ID, func(j *storage.Job) bool { return j.Retry != nil })
	la := j.Retry.LastAttempt
	if j.Status != storage.JobRunning || j.Retry.Attempts != 1 || !j.Retry.NextAttemptAt.Equal(start.Add(sched[0])) ||
		la.Code != apierr.AttemptEUSystemUnavailable || la.Message != "the EU information system answered HTTP 503 (Service Unavailable) to submitDds; trying again" {
		t.Errorf("after a failed attempt: %+v, retry %+v", j, j.Retry)
	}
	if got := r.find(t, production, d.ID); got.DDS.Status != storage.DDSDraft || got.Submission == nil || got.Submission.Retry == nil {
		t.Errorf("the statement after a failed attempt: %s, submission %+v", got.DDS.Status, got.Submission)
	}
	wantLastAnswer(t, r.s, production, dds.LastAnswer{Operation: euis.OpSubmit, Outcome: euis.OutcomeTransient,
		Message: "the EU information system answered HTTP 503 (Service Unavailable) to submitDds", At: start})
	if _, ok := r.s.LastAnswer(sandbox); ok {
		t.Error("the sandbox has a last answer of the EU system, but only production called it")
	}

	r.b.Clock.Advance(sched[0])
	r.waitJob(t, production, job.ID, func(j *storage.Job) bool { return j.Retry == nil })
	got := r.find(t, production, d.ID)
	if got.DDS.Status != storage.DDSSubmitted || got.DDS.Poll.Polls != 1 {
		t.Errorf("after the second attempt: %s, polls %d; want SUBMITTED with one poll counted", got.DDS.Status, got.DDS.Poll.Polls)
	}
	r.b.Clock.Advance(sched[0])
	if j := r.b.WaitJob(t, production, job.ID); j.Status != storage.JobCompleted || r.find(t, production, d.ID).DDS.Status != storage.DDSValidated {
		t.Errorf("at the first poll: job %s, want it COMPLETED and the statement VALIDATED", j.Status)
	}
	wantLastAnswer(t, r.s, production, dds.LastAnswer{Operation: euis.OpGet, Outcome: euis.OutcomeOK, At: start.Add(2 * sched[0])})
	if logs := fmt.Sprint(r.b.Logs.Lines(t)); strings.Contains(logs, key) {
		t.Error("the EU system auth key is in the log")
	}
	r.eu.mu.Lock()
	defer r.eu.mu.Unlock()
	if len(r.eu.creds) != 3 { // submitDds twice, getDds once
		t.Errorf("%d calls, want 3", len(r.eu.creds))
	}
	for _, cr := range r.eu.creds {
		if cr.Username != user || cr.AuthKey != key || cr.ClientID != client || cr.Endpoint != endpoints.Acceptance {
			t.Errorf("called with %v, want the stored credentials at %s", cr, endpoints.Acceptance)
		}
	}
}

// wantLastAnswer fails t unless s's last answer of the EU system to
// tenant is want.
func wantLastAnswer(t *testing.T, s *dds.Service, tenant storage.Tenant, want dds.LastAnswer) {
	t.Helper()
	got, ok := s.LastAnswer(tenant)
	if !ok || got != want {
		t.Errorf("the EU system's last answer to %s: %+v (%v), want %+v", tenant, got, ok, want)
	}
}

// wantFinished fails t unless the "job finished" line has every field of
// want (numbers as JSON decodes them).
func wantFinished(t *testing.T, line map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if line[k] != v {
			t.Errorf("job finished line: %s is %v, want %v; line %v", k, line[k], v, line)
		}
	}
}

// TestService_SubmitFails: an EU system answer that trying again cannot
// mend fails the submission job; the line of its end names the statement.
func TestService_SubmitFails(t *testing.T) {
	r := newRig(t, func(c euis.Client) euis.Client { return brokenSubmit{c} })
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	job, err := r.submit(sandbox, d.ID)
	if err != nil {
		t.Fatal(err)
	}
	r.b.RunJobs(t)
	if j := r.b.WaitJob(t, sandbox, job.ID); j.Status != storage.JobFailed {
		t.Fatalf("job %s, want FAILED", j.Status)
	}
	wantFinished(t, r.b.WaitFinished(t, job.ID), map[string]any{"level": "warn", "type": work.DDSSubmission,
		"status": storage.JobFailed, "error_code": apierr.JobFailed, "dds_id": d.ID})
	wantLastAnswer(t, r.s, sandbox, dds.LastAnswer{Operation: euis.OpSubmit, Outcome: euis.OutcomeError,
		Message: "submitDds failed: the answer is not a submitDds response", At: start})
}

// brokenSubmit is an EU system whose submissions fail for good.
type brokenSubmit struct{ euis.Client }

func (brokenSubmit) Submit(context.Context, euis.Credentials, euis.Statement) (string, error) {
	return "", errors.New("the answer is not a submitDds response")
}

// TestService_SubmitLostAnswer: a job that sent a statement but crashed
// before recording the EU UUID finds the statement by its internal
// reference and does not file it twice. The job is queued as earlier
// versions queued it: the statement's ID is its input.
func TestService_SubmitLostAnswer(t *testing.T) {
	r := newRig(t, nil)
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	sent, err := r.sim.Submit(context.Background(), dds.SandboxCredentials, payloadOf(t, d).Statement())
	if err != nil {
		t.Fatal(err)
	}
	r.b.Update(t, func(tx *storage.Tx) error {
		now := tx.Now()
		job, err := r.b.Jobs.Enqueue(tx, sandbox, work.DDSSubmission, 1, []byte(d.ID))
		if err != nil {
			return err
		}
		d.Poll = &storage.DDSPollState{JobID: job.ID, SubmitAttemptAt: &now}
		return tx.PutDDS(sandbox, d)
	})
	v := r.waitStatus(t, sandbox, d.ID, storage.DDSValidated)
	if v.DDS.EUUUID != sent {
		t.Errorf("EU UUID %s, want the one already filed %s", v.DDS.EUUUID, sent)
	}
}

// revokeOnPoll is the sandbox's EU system, except that its first status
// poll revokes the statement and then fails as a 503 would: a revocation
// that comes in while the submission job is waiting for the EU system.
// The revocation writes to the store, so the job must not hold a
// transaction while it calls.
type revokeOnPoll struct {
	euis.Client
	once   sync.Once
	revoke func()
}

func (c *revokeOnPoll) Get(ctx context.Context, cr euis.Credentials, uuids []string) ([]euis.Status, error) {
	failed := false
	c.once.Do(func() {
		c.revoke()
		failed = true
	})
	if failed {
		return nil, &euis.HTTPError{Operation: "getDds", StatusCode: 503}
	}
	return c.Client.Get(ctx, cr, uuids)
}

// TestService_RetryKeepsRevocation: a transient failure recorded after the
// statement was revoked does not write back the job's older copy of it,
// and the job completes at its next run.
func TestService_RetryKeepsRevocation(t *testing.T) {
	var r *rig
	var id string
	r = newRig(t, func(c euis.Client) euis.Client {
		return &revokeOnPoll{Client: c, revoke: func() {
			if _, err := r.revoke(sandbox, id); err != nil {
				t.Errorf("revoke: %v", err)
			}
		}}
	})
	r.declarable(t, sandbox, "bat_1")
	id = r.mustDraft(t, sandbox, request("bat_1")).ID
	job, err := r.submit(sandbox, id)
	if err != nil {
		t.Fatal(err)
	}
	// Filed at the clock's time, its first poll due a schedule step later:
	// waitStatus would move the clock on while it waits and let the poll
	// (and the revocation) happen before SUBMITTED is seen.
	r.waitJob(t, sandbox, job.ID, func(*storage.Job) bool { return r.find(t, sandbox, id).DDS.Status == storage.DDSSubmitted })
	r.b.Clock.Advance(schedules[storage.Sandbox][0])
	j := r.waitJob(t, sandbox, job.ID, func(j *storage.Job) bool { return j.Retry != nil })
	if j.Retry.LastAttempt.Code != apierr.AttemptEUSystemUnavailable {
		t.Errorf("last attempt %+v", j.Retry.LastAttempt)
	}
	if d := r.find(t, sandbox, id).DDS; d.Status != storage.DDSRevoked || history(d) != "DRAFT/key_test SUBMITTED/eu-system REVOKED/key_test" {
		t.Errorf("after a failed poll that followed a revocation: %s, history %s", d.Status, history(d))
	}
	r.b.Clock.Advance(j.Retry.NextAttemptAt.Sub(r.b.Clock.Now()))
	if j := r.b.WaitJob(t, sandbox, job.ID); j.Status != storage.JobCompleted {
		t.Errorf("job of a revoked statement: %s, want COMPLETED", j.Status)
	}
}

// statusesFirst answers Get with the queued statuses (one a call, in
// place of the status the EU system behind it has) until they run out.
type statusesFirst struct {
	euis.Client
	mu     sync.Mutex
	queued []string
}

func (c *statusesFirst) Get(ctx context.Context, cr euis.Credentials, uuids []string) ([]euis.Status, error) {
	out, err := c.Client.Get(ctx, cr, uuids)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil && len(out) == 1 && len(c.queued) > 0 {
		out[0].Status, out[0].ReferenceNumber, out[0].VerificationNumber = c.queued[0], "", ""
		c.queued = c.queued[1:]
	}
	return out, err
}

// TestService_PollUndecidedStatuses: SUSPENDED and UPDATED, and a status
// no release known here sends, are no decision: the statement stays
// SUBMITTED with the EU system's status recorded, and the job polls on
// until AVAILABLE.
func TestService_PollUndecidedStatuses(t *testing.T) {
	r := newRig(t, func(c euis.Client) euis.Client {
		return &statusesFirst{Client: c, queued: []string{euis.StatusSuspended, euis.StatusUpdated, "FROZEN"}}
	})
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	if _, err := r.submit(sandbox, d.ID); err != nil {
		t.Fatal(err)
	}
	r.waitStatus(t, sandbox, d.ID, storage.DDSSubmitted)
	for _, want := range []string{euis.StatusSuspended, euis.StatusUpdated, "FROZEN"} {
		got := r.waitEUStatus(t, sandbox, d.ID, want)
		if got.DDS.Status != storage.DDSSubmitted || got.Submission == nil {
			t.Errorf("after %s: %s, submission %+v; want SUBMITTED, still polled", want, got.DDS.Status, got.Submission)
		}
	}
	v := r.waitStatus(t, sandbox, d.ID, storage.DDSValidated)
	if history(v.DDS) != "DRAFT/key_test SUBMITTED/eu-system VALIDATED/eu-system" || v.DDS.Poll.EUStatus != euis.StatusAvailable {
		t.Errorf("validated: history %s, euStatus %s", history(v.DDS), v.DDS.Poll.EUStatus)
	}
}

// deniedFinder is the sandbox's EU system, except that while denied is
// set its look-up by internal reference is refused for good (a permission
// fault).
type deniedFinder struct {
	euis.Client
	denied *atomic.Bool
}

func (f deniedFinder) FindByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error) {
	if f.denied.Load() {
		return nil, &euis.Fault{Operation: "getStatementByIdentifiers", Kind: euis.FaultPermissionDenied, Message: "not allowed"}
	}
	return f.Client.(euis.Finder).FindByInternalReference(ctx, cr, ref)
}

// TestService_SubmitLookUpRefused: a job that may have filed already
// (its earlier attempt's answer lost) and cannot look for that filing
// fails, the statement still a DRAFT, rather than file it a second time;
// submitted again, it adopts that filing once the look-up answers.
func TestService_SubmitLookUpRefused(t *testing.T) {
	denied := &atomic.Bool{}
	denied.Store(true)
	r := newRig(t, func(c euis.Client) euis.Client { return deniedFinder{c, denied} })
	r.declarable(t, sandbox, "bat_1")
	d := r.mustDraft(t, sandbox, request("bat_1"))
	st := payloadOf(t, d).Statement()
	sent, err := r.sim.Submit(context.Background(), dds.SandboxCredentials, st)
	if err != nil {
		t.Fatal(err)
	}
	var jobID string
	r.b.Update(t, func(tx *storage.Tx) error {
		now := tx.Now()
		job, err := r.b.Jobs.Enqueue(tx, sandbox, work.DDSSubmission, 1, []byte(d.ID))
		if err != nil {
			return err
		}
		jobID = job.ID
		d.Poll = &storage.DDSPollState{JobID: job.ID, SubmitAttemptAt: &now}
		return tx.PutDDS(sandbox, d)
	})
	if j := r.b.WaitJobAdvancing(t, sandbox, jobID, time.Second, 1000, nil); j.Status != storage.JobFailed {
		t.Errorf("job %s, want FAILED", j.Status)
	}
	if got := r.find(t, sandbox, d.ID); got.DDS.Status != storage.DDSDraft || got.DDS.EUUUID != "" {
		t.Errorf("dds %s with EU UUID %q, want a DRAFT without", got.DDS.Status, got.DDS.EUUUID)
	}
	if filed, _ := r.sim.FindByInternalReference(context.Background(), dds.SandboxCredentials, st.InternalReference); len(filed) != 1 {
		t.Errorf("the EU system holds %d filings of the statement, want the 1 made before", len(filed))
	}

	denied.Store(false)
	if _, err := r.submit(sandbox, d.ID); err != nil {
		t.Fatal(err)
	}
	if v := r.waitStatus(t, sandbox, d.ID, storage.DDSValidated); v.DDS.EUUUID != sent {
		t.Errorf("submitted again: EU UUID %s, want the one filed before %s", v.DDS.EUUUID, sent)
	}
}
