package sd_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/server/sd"
	"github.com/eudr/eudr/storage"
)

var (
	sandbox    = storage.Tenant{Org: "default", Env: storage.Sandbox}
	production = storage.Tenant{Org: "default", Env: storage.Production}
	start      = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
)

// flaky is the sandbox simulator behind a client that fails as told: the
// next failSubmit filings fail with HTTP 503 before reaching it, and with
// lose set a filing reaches it but its answer is lost (a transient error
// after the filing).
type flaky struct {
	*euis.Simulator
	mu         sync.Mutex
	failSubmit int
	lose       bool
	submits    int
	// failNext, when set, is the error of the next update or look-up,
	// which does not reach the simulator.
	failNext error
	// failFind, when set, is the error of every look-up by internal
	// reference.
	failFind error
	// reprofile makes the EU system answer an update UPDATED, and then
	// the declaration REJECTED (reprofiled).
	reprofile, reprofiled bool
}

func (f *flaky) FindSDByInternalReference(ctx context.Context, cr euis.Credentials, ref string) ([]euis.Status, error) {
	f.mu.Lock()
	err := f.failFind
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	return f.Simulator.FindSDByInternalReference(ctx, cr, ref)
}

func (f *flaky) SubmitSD(ctx context.Context, cr euis.Credentials, d euis.SDStatement) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.failSubmit > 0 {
		f.failSubmit--
		return "", &euis.HTTPError{Operation: euis.OpSubmitSD, StatusCode: 503}
	}
	f.submits++
	id, err := f.Simulator.SubmitSD(ctx, cr, d)
	if err == nil && f.lose {
		f.lose = false
		return "", &euis.HTTPError{Operation: euis.OpSubmitSD, StatusCode: 504}
	}
	return id, err
}

type rig struct {
	b  *apitest.Bench
	s  *sd.Service
	eu *flaky
}

func newRig(tb testing.TB) *rig {
	b := apitest.NewBench(tb, start)
	eu := &flaky{Simulator: euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Delay: 3 * time.Second, Now: b.Clock.Now})}
	s := sd.New(sd.Options{DB: b.DB, Jobs: b.Jobs, Ledger: b.Ledger, Logger: zerolog.Nop(),
		Clients:       map[storage.Environment]euis.SDClient{storage.Sandbox: eu, storage.Production: eu},
		PollSchedules: map[storage.Environment][]time.Duration{storage.Sandbox: {time.Second}, storage.Production: {time.Minute}},
		Credentials: func(_ *storage.Tx, t storage.Tenant) (euis.Credentials, error) {
			if t.Env == storage.Production {
				return euis.Credentials{}, apierr.BusinessRule(apierr.DetailEUSystemNotConfigured, "credentials", "none")
			}
			return euis.Credentials{}, nil
		},
		AttemptOf: func(err error) storage.JobAttempt {
			return storage.JobAttempt{Code: "EU_SYSTEM_UNAVAILABLE", Message: err.Error()}
		}})
	return &rig{b: b, s: s, eu: eu}
}

// request is a representative's declaration of cocoa from a producer
// located by postal address.
func request() *sd.Request {
	var r sd.Request
	if err := json.Unmarshal([]byte(`{"operatorRole":"REPRESENTATIVE_MSPO","activityType":"DOMESTIC","countryOfActivity":"FR",
		"operator":{"name":"Ferme Dupont","country":"FR","identifiers":[{"type":"vat","value":"FR40303265045"}]},
		"commodities":[{"hsHeading":"4403","descriptionOfGoods":"Oak logs","netWeightKg":1200.5,"percentageEstimation":5,
		  "producers":[{"country":"FR","name":"Ferme Dupont","postalAddresses":[{"producerStreet":"1 Chemin des Vignes","producerPostalCode":"21000","producerCity":"Dijon"}]}]}]}`), &r); err != nil {
		panic(err)
	}
	return &r
}

func (r *rig) create(t storage.Tenant, req *sd.Request) (sd.Declaration, error) {
	if err := req.Validate(); err != nil {
		return sd.Declaration{}, err
	}
	var acc sd.Accepted
	err := r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		acc, err = r.s.Create(tx, t, req, "key_test")
		return err
	})
	if err != nil {
		return sd.Declaration{}, err
	}
	dcl, err := r.s.Find(context.Background(), t, acc.SDID)
	if err == nil && (dcl.Submission == nil || dcl.Submission.ID != acc.JobID) {
		err = errors.New("the created declaration does not show its job")
	}
	return dcl, err
}

// wait runs the jobs, the clock moving a second at a time, until the
// declaration's job has ended, and returns the declaration; it fails the
// test when the job has not ended after ten simulated minutes.
func (r *rig) wait(tb testing.TB, t storage.Tenant, dcl sd.Declaration) sd.Declaration {
	tb.Helper()
	r.b.WaitJobAdvancing(tb, t, dcl.Submission.ID, time.Second, 600, nil)
	got, err := r.s.Find(context.Background(), t, dcl.SD.ID)
	if err != nil {
		tb.Fatal(err)
	}
	return got
}

func history(d *storage.SD) string {
	var out []string
	for _, h := range d.History {
		out = append(out, h.Status+"/"+h.Actor)
	}
	return strings.Join(out, " ")
}

// TestService_File: a declaration with a postal address is recorded
// DRAFT, filed by its job, SUBMITTED, then VALIDATED with its sdIdentifier
// and a declaration number, each change an sd.status ledger entry; the job
// completes listing the entries it made; the declaration is found by its
// ID, sdIdentifier and reference number.
func TestService_File(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	if dcl.SD.Status != storage.SDDraft || len(dcl.SD.InternalReference) != 14 || !strings.HasPrefix(dcl.SD.InternalReference, "SD") {
		t.Errorf("created %+v", dcl.SD)
	}
	v := r.wait(t, sandbox, dcl)
	d := v.SD
	if d.Status != storage.SDValidated || !euis.IsUUID(d.SDIdentifier) || !strings.HasPrefix(d.ReferenceNumber, "S26FR") ||
		d.VerificationNumber == "" || v.Submission != nil {
		t.Fatalf("validated: %+v, submission %+v", d, v.Submission)
	}
	if got := history(d); got != "DRAFT/key_test SUBMITTED/eu-system VALIDATED/eu-system" {
		t.Errorf("history %s", got)
	}
	job := r.b.Job(t, sandbox, dcl.Submission.ID)
	if job.Progress.Succeeded != 1 || len(job.LedgerIndexes) != 2 || job.LedgerIndexes[1] != *d.History[2].LedgerIndex {
		t.Errorf("job %+v", job)
	}
	var e anchor.SDEntry
	err = r.b.DB.View(context.Background(), func(tx *storage.Tx) error {
		le, err := ledger.ReadEntry(tx.Tx, anchor.Log(sandbox), *d.History[2].LedgerIndex)
		if err != nil {
			return err
		}
		return json.Unmarshal(le.Data, &e)
	})
	if err != nil || e.Type != anchor.EntrySDStatus || e.SDID != d.ID || e.Status != storage.SDValidated || e.SDIdentifier != d.SDIdentifier ||
		e.ReferenceNumber != d.ReferenceNumber {
		t.Errorf("ledger entry %+v, %v", e, err)
	}
	for _, ref := range []string{d.SDIdentifier, d.ReferenceNumber} {
		if got, err := r.s.Find(context.Background(), sandbox, ref); err != nil || got.SD.ID != d.ID {
			t.Errorf("Find(%s) = %v", ref, err)
		}
	}
	if _, err := r.s.Find(context.Background(), production, d.ID); !errors.As(err, new(apierr.NotFound)) {
		t.Errorf("from production: %v", err)
	}
}

// TestService_Rejected: the EU system's rejection is recorded with its
// reason and fails the job's item.
func TestService_Rejected(t *testing.T) {
	r := newRig(t)
	req := request()
	req.Operator.Identifiers = nil
	dcl, err := r.create(sandbox, req)
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	if d.Status != storage.SDRejected || len(d.Reasons) != 1 || d.Reasons[0] != euis.ReasonSDOperatorNotIdentified {
		t.Errorf("rejected %+v", d)
	}
	if j := r.b.Job(t, sandbox, dcl.Submission.ID); j.Status != storage.JobCompleted || j.Progress.Failed != 1 {
		t.Errorf("job %+v", j)
	}
}

// TestService_RetryAndRecover: a filing that fails transiently is tried
// again, the job showing the attempt meanwhile; a filing whose answer was
// lost is found by its internal reference and adopted, not filed twice.
func TestService_RetryAndRecover(t *testing.T) {
	r := newRig(t)
	r.eu.failSubmit, r.eu.lose = 1, true
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	// The first filing fails at once: the clock stands still until the
	// job shows it is retrying.
	j := r.b.WaitJobAdvancing(t, sandbox, dcl.Submission.ID, 0, 10000, func(j *storage.Job) bool { return j.Retry != nil })
	if j.Retry.LastAttempt.Code != "EU_SYSTEM_UNAVAILABLE" || j.Status != storage.JobRunning && j.Status != storage.JobQueued {
		t.Errorf("retrying job %+v", j)
	}
	d := r.wait(t, sandbox, dcl).SD
	r.eu.mu.Lock()
	submits := r.eu.submits
	r.eu.mu.Unlock()
	if d.Status != storage.SDValidated || submits != 1 {
		t.Errorf("%s after %d filings, want VALIDATED after 1", d.Status, submits)
	}
	found, _ := r.eu.FindSDByInternalReference(context.Background(), euis.Credentials{}, d.InternalReference)
	if len(found) != 1 || found[0].UUID != d.SDIdentifier {
		t.Errorf("the EU system holds %+v, want the one filing adopted", found)
	}
}

// TestService_RecoverLookUpRefused: a filing whose answer was lost, and
// that cannot be looked for (the look-up refused for good), fails the job,
// the declaration still a DRAFT, rather than be filed a second time.
func TestService_RecoverLookUpRefused(t *testing.T) {
	r := newRig(t)
	r.eu.lose = true
	r.eu.failFind = &euis.Fault{Operation: euis.OpFindSDByReference, Kind: euis.FaultPermissionDenied, Message: "not allowed"}
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	d := r.wait(t, sandbox, dcl).SD
	r.eu.mu.Lock()
	submits := r.eu.submits
	r.eu.mu.Unlock()
	if j := r.b.Job(t, sandbox, dcl.Submission.ID); j.Status != storage.JobFailed || d.Status != storage.SDDraft || submits != 1 {
		t.Errorf("job %s, declaration %s after %d filings; want FAILED, DRAFT after 1", j.Status, d.Status, submits)
	}
}

// TestService_Withdraw: a validated declaration is withdrawn in the EU
// system and recorded WITHDRAWN by the caller; a second withdrawal, and
// one of a DRAFT, are 409 SD_NOT_WITHDRAWABLE.
func TestService_Withdraw(t *testing.T) {
	r := newRig(t)
	dcl, err := r.create(sandbox, request())
	if err != nil {
		t.Fatal(err)
	}
	_, err = r.s.Withdraw(context.Background(), sandbox, dcl.SD.ID)
	if e := apierr.From(err); e.Status != 409 || len(e.Details) != 1 || e.Details[0].Code != sd.DetailNotWithdrawable {
		t.Errorf("withdrawing a DRAFT: %v", err)
	}
	v := r.wait(t, sandbox, dcl)
	w, err := r.s.Withdraw(context.Background(), sandbox, v.SD.ReferenceNumber)
	if err != nil {
		t.Fatal(err)
	}
	var got sd.View
	err = r.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		got, err = r.s.RecordWithdrawal(tx, sandbox, w, "key_test")
		return err
	})
	last := got.History[len(got.History)-1]
	if err != nil || got.Status != storage.SDWithdrawn || last.Status != storage.SDWithdrawn || last.Actor != "key_test" || got.Statement != nil {
		t.Fatalf("withdrawn: %+v, %v", got, err)
	}
	if st, _ := r.eu.GetSD(context.Background(), euis.Credentials{}, []string{*got.SDIdentifier}); st[0].Status != euis.StatusWithdrawn {
		t.Errorf("the EU system shows %s", st[0].Status)
	}
	_, err = r.s.Withdraw(context.Background(), sandbox, dcl.SD.ID)
	if e := apierr.From(err); e.Status != 409 {
		t.Errorf("withdrawing again: %v", err)
	}
}

// TestService_Refusals: production without credentials writes nothing;
// a missing field is a 400, a broken EU rule a 422 at its path; an unknown
// status filter is a 400.
func TestService_Refusals(t *testing.T) {
	r := newRig(t)
	_, err := r.create(production, request())
	if e := apierr.From(err); e.Status != 422 || e.Details[0].Code != apierr.DetailEUSystemNotConfigured {
		t.Errorf("production without credentials: %v", err)
	}
	if list, _, _ := r.s.List(context.Background(), production, storage.SDFilter{}, storage.Page{Limit: 10}); len(list) != 0 {
		t.Errorf("%d declarations recorded", len(list))
	}

	req := request()
	req.Commodities[0].Producers[0].PostalAddresses[0].City = ""
	if e := apierr.From(req.Validate()); e.Status != 400 || e.Details[0].Field != "commodities[0].producers[0].postalAddresses[0].producerCity" {
		t.Errorf("no city: %+v", e)
	}
	req = request()
	req.Commodities[0].Producers[0].CadastralIdentifiers = []string{"21054000AB0123"}
	req.InternalReference = "FIFTEEN-CHARS-X"
	e := apierr.From(req.Validate())
	fields := []string{}
	for _, d := range e.Details {
		fields = append(fields, d.Field)
	}
	if e.Status != 422 || strings.Join(fields, " ") != "internalReference commodities[0].producers[0]" {
		t.Errorf("two broken rules: %d %v", e.Status, fields)
	}
	if _, _, err := r.s.List(context.Background(), sandbox, storage.SDFilter{Status: "AVAILABLE"}, storage.Page{Limit: 10}); apierr.From(err).Status != 400 {
		t.Errorf("status filter AVAILABLE: %v", err)
	}
}
