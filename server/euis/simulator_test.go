package euis_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

var (
	uuidV4RE          = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	referenceBERE     = regexp.MustCompile(`^26BE[0-9A-Z]{10}$`)
	verificationRE    = regexp.MustCompile(`^[0-9A-Z]{8}$`)
	noCreds           = euis.Credentials{}
	ctx               = context.Background()
	externalStatement = euis.Reference{ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "SEKUYXPP"}
)

// newSim returns a simulator with a 3 s delay on store (a new one when
// nil) and its clock.
func newSim(t *testing.T, store euis.SimStore) (*euis.Simulator, *apitest.Clock, euis.SimStore) {
	t.Helper()
	if store == nil {
		store = euis.NewMemSimStore()
	}
	clk := newClock(t0)
	return euis.NewSimulator(store, euis.SimOptions{Now: clk.Now}), clk, store
}

func get(t *testing.T, c euis.Client, uuid string) euis.Status {
	t.Helper()
	st, err := c.Get(ctx, noCreds, []string{uuid})
	if err != nil {
		t.Fatalf("Get(%s): %v", uuid, err)
	}
	if len(st) != 1 {
		t.Fatalf("Get(%s): %d statuses, want 1", uuid, len(st))
	}
	return st[0]
}

func submit(t *testing.T, c euis.Client, s euis.Statement) string {
	t.Helper()
	uuid, err := c.Submit(ctx, noCreds, s)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return uuid
}

func wantFault(t *testing.T, err error, kind, reason string) {
	t.Helper()
	var f *euis.Fault
	if !errors.As(err, &f) {
		t.Fatalf("error %v, want a %s fault", err, kind)
	}
	if f.Kind != kind || len(f.Reasons) == 0 || f.Reasons[0] != reason {
		t.Errorf("fault %v (kind %s, reasons %v), want kind %s, reason %s", f, f.Kind, f.Reasons, kind, reason)
	}
}

func TestSimulator_Accept(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	s := validStatement()
	uuid := submit(t, sim, s)
	if !uuidV4RE.MatchString(uuid) {
		t.Errorf("uuid %q is not a version 4 UUID", uuid)
	}
	st := get(t, sim, uuid)
	if st.Status != euis.StatusSubmitted || st.ReferenceNumber != "" || st.VerificationNumber != "" || st.InternalReference != "PO-4711" || !st.Date.Equal(t0) {
		t.Errorf("right after submission: %+v, want SUBMITTED without numbers", st)
	}
	clk.Advance(euis.DefaultSimDelay - time.Millisecond)
	if st := get(t, sim, uuid); st.Status != euis.StatusSubmitted {
		t.Errorf("just before the delay: %s, want SUBMITTED", st.Status)
	}
	clk.Advance(time.Millisecond)
	st = get(t, sim, uuid)
	if st.Status != euis.StatusAvailable {
		t.Fatalf("after the delay: %+v, want AVAILABLE", st)
	}
	if !referenceBERE.MatchString(st.ReferenceNumber) || !euis.IsReferenceNumber(st.ReferenceNumber) {
		t.Errorf("reference number %q, want 26BE + 10", st.ReferenceNumber)
	}
	if !verificationRE.MatchString(st.VerificationNumber) || !euis.IsVerificationNumber(st.VerificationNumber) {
		t.Errorf("verification number %q, want 8 digits or capitals", st.VerificationNumber)
	}
	if !st.Date.Equal(t0.Add(euis.DefaultSimDelay)) || len(st.Reasons) != 0 {
		t.Errorf("status %+v", st)
	}
	got, err := sim.VerifyDeclaration(ctx, noCreds, euis.Reference{ReferenceNumber: st.ReferenceNumber, VerificationNumber: st.VerificationNumber})
	if err != nil || got != euis.VerifyExistingUsable {
		t.Errorf("VerifyDeclaration = %q, %v; want EXISTING_USABLE", got, err)
	}
}

func TestSimulator_ReferenceCountry(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	s := validStatement()
	s.CountryOfActivity = ""
	s.Operator.Country = "DE"
	uuid := submit(t, sim, s)
	s.Operator.Country = "CH"
	other := submit(t, sim, s)
	clk.Advance(euis.DefaultSimDelay)
	if n := get(t, sim, uuid).ReferenceNumber; n[:4] != "26DE" {
		t.Errorf("reference number %s, want the operator's country DE", n)
	}
	if n := get(t, sim, other).ReferenceNumber; n[:4] != "26EU" {
		t.Errorf("reference number %s, want EU for a non-EU operator without a country of activity", n)
	}
}

func TestSimulator_Reject(t *testing.T) {
	for _, tc := range []struct {
		name      string
		operator  string
		suppliers []string
	}{
		{"NotASupplier", "6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a11", []string{"6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a10"}},
		{"NoSuppliers", "6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a10", nil},
		{"NoOperator", "", []string{"6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a10"}},
		{"ZeroUUID", euis.ZeroOperatorUUID, []string{euis.ZeroOperatorUUID, "6f1d0c1e-8a4b-4c3a-9e57-2b1f7e0d9a10"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, clk, _ := newSim(t, nil)
			s := validStatement()
			s.OperatorUUID, s.SupplierOperatorUUIDs = tc.operator, tc.suppliers
			uuid := submit(t, sim, s) // the rejection is asynchronous
			if st := get(t, sim, uuid); st.Status != euis.StatusSubmitted {
				t.Errorf("right after submission: %s, want SUBMITTED", st.Status)
			}
			clk.Advance(euis.DefaultSimDelay)
			st := get(t, sim, uuid)
			if st.Status != euis.StatusRejected || len(st.Reasons) != 1 || st.Reasons[0] != euis.ReasonOperatorUUIDMismatch {
				t.Errorf("after the delay: %+v, want REJECTED for OPERATOR_UUID_MISMATCH", st)
			}
			if st.ReferenceNumber != "" || st.VerificationNumber != "" {
				t.Errorf("a rejected statement has numbers: %+v", st)
			}
		})
	}
}

func TestSimulator_Delay(t *testing.T) {
	clk := newClock(t0)
	sim := euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Now: clk.Now, Delay: 10 * time.Second})
	uuid := submit(t, sim, validStatement())
	clk.Advance(9 * time.Second)
	if st := get(t, sim, uuid); st.Status != euis.StatusSubmitted {
		t.Errorf("after 9 s: %s, want SUBMITTED", st.Status)
	}
	clk.Advance(time.Second)
	if st := get(t, sim, uuid); st.Status != euis.StatusAvailable {
		t.Errorf("after 10 s: %s, want AVAILABLE", st.Status)
	}
}

func TestSimulator_Withdraw(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  time.Duration
		reason string // "" for success
	}{
		{"Submitted", time.Second, ""},
		{"Available", time.Hour, ""},
		{"At72Hours", euis.AmendWindow, ""},
		{"After72Hours", euis.AmendWindow + time.Second, euis.ReasonWithdrawNotPossible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, clk, _ := newSim(t, nil)
			uuid := submit(t, sim, validStatement())
			clk.Advance(tc.after)
			before := get(t, sim, uuid)
			err := sim.Withdraw(ctx, noCreds, uuid)
			if tc.reason != "" {
				wantFault(t, err, euis.FaultBusinessRules, tc.reason)
				if st := get(t, sim, uuid); st.Status != euis.StatusAvailable {
					t.Errorf("after a refused withdrawal: %s, want AVAILABLE", st.Status)
				}
				return
			}
			if err != nil {
				t.Fatalf("Withdraw: %v", err)
			}
			st := get(t, sim, uuid)
			if st.Status != euis.StatusWithdrawn || !st.Date.Equal(t0.Add(tc.after)) {
				t.Errorf("after withdrawal: %+v, want WITHDRAWN at %v", st, t0.Add(tc.after))
			}
			if st.ReferenceNumber != before.ReferenceNumber {
				t.Errorf("reference number %q, want %q as before", st.ReferenceNumber, before.ReferenceNumber)
			}
			clk.Advance(time.Hour)
			if st := get(t, sim, uuid); st.Status != euis.StatusWithdrawn {
				t.Errorf("an hour later: %s, want WITHDRAWN", st.Status)
			}
			wantFault(t, sim.Withdraw(ctx, noCreds, uuid), euis.FaultBusinessRules, euis.ReasonNotAllowedForStatus)
		})
	}
}

func TestSimulator_WithdrawRefused(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	s := validStatement()
	s.OperatorUUID = euis.ZeroOperatorUUID
	rejected := submit(t, sim, s)
	clk.Advance(euis.DefaultSimDelay)
	wantFault(t, sim.Withdraw(ctx, noCreds, rejected), euis.FaultBusinessRules, euis.ReasonNotAllowedForStatus)
	wantFault(t, sim.Withdraw(ctx, noCreds, "071874bd-8c62-4cac-8eb6-b2fbe003410c"), euis.FaultNotFound, euis.ReasonStatementNotFound)
}

func TestSimulator_Grouped(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	a := submit(t, sim, validStatement())
	clk.Advance(euis.DefaultSimDelay)
	stA := get(t, sim, a)
	refA := euis.Reference{ReferenceNumber: stA.ReferenceNumber, VerificationNumber: stA.VerificationNumber}

	s := validStatement()
	s.InternalReference = "PO-GROUP"
	s.ReferencedStatements = []euis.Reference{refA, externalStatement}
	b := submit(t, sim, s)
	if st := get(t, sim, a); st.Status != euis.StatusGrouped || st.ReferenceNumber != refA.ReferenceNumber {
		t.Errorf("referenced statement: %+v, want GROUPED with its numbers", st)
	}
	if got, _ := sim.VerifyDeclaration(ctx, noCreds, refA); got != euis.VerifyExistingNonUsable {
		t.Errorf("VerifyDeclaration of a GROUPED statement = %s, want EXISTING_NON_USABLE", got)
	}
	wantFault(t, sim.Withdraw(ctx, noCreds, a), euis.FaultBusinessRules, euis.ReasonWithdrawNotPossible)

	// A second grouping of A is refused: it is not AVAILABLE.
	_, err := sim.Submit(ctx, noCreds, s)
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonReferencedNotAvailable)

	// Withdrawing the grouping statement frees A.
	if err := sim.Withdraw(ctx, noCreds, b); err != nil {
		t.Fatalf("Withdraw of the grouping statement: %v", err)
	}
	if st := get(t, sim, a); st.Status != euis.StatusAvailable {
		t.Errorf("after the grouping statement's withdrawal: %s, want AVAILABLE", st.Status)
	}

	// A grouping statement that ends REJECTED frees A too.
	s.OperatorUUID = euis.ZeroOperatorUUID
	submit(t, sim, s)
	if st := get(t, sim, a); st.Status != euis.StatusGrouped {
		t.Errorf("while the grouping statement is SUBMITTED: %s, want GROUPED", st.Status)
	}
	clk.Advance(euis.DefaultSimDelay)
	if st := get(t, sim, a); st.Status != euis.StatusAvailable {
		t.Errorf("after the grouping statement's rejection: %s, want AVAILABLE", st.Status)
	}

	// A WITHDRAWN statement cannot be grouped.
	d := submit(t, sim, validStatement())
	clk.Advance(euis.DefaultSimDelay)
	stD := get(t, sim, d)
	if err := sim.Withdraw(ctx, noCreds, d); err != nil {
		t.Fatal(err)
	}
	s = validStatement()
	s.ReferencedStatements = []euis.Reference{{ReferenceNumber: stD.ReferenceNumber, VerificationNumber: stD.VerificationNumber}}
	_, err = sim.Submit(ctx, noCreds, s)
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonReferencedNotAvailable)
}

func TestSimulator_Restart(t *testing.T) {
	store := euis.NewMemSimStore()
	sim, clk, _ := newSim(t, store)
	accepted := submit(t, sim, validStatement())
	s := validStatement()
	s.OperatorUUID = euis.ZeroOperatorUUID
	rejected := submit(t, sim, s)
	clk.Advance(euis.DefaultSimDelay)
	before := get(t, sim, accepted)

	// A new simulator on the same store, with another delay: what was
	// filed keeps its state and numbers.
	restarted := euis.NewSimulator(store, euis.SimOptions{Now: clk.Now, Delay: time.Hour})
	if st := get(t, restarted, accepted); st.Status != euis.StatusAvailable || st.ReferenceNumber != before.ReferenceNumber || st.VerificationNumber != before.VerificationNumber {
		t.Errorf("after the restart: %+v, want %+v", st, before)
	}
	if st := get(t, restarted, rejected); st.Status != euis.StatusRejected {
		t.Errorf("after the restart: %s, want REJECTED", st.Status)
	}
	if err := restarted.Withdraw(ctx, noCreds, accepted); err != nil {
		t.Fatal(err)
	}
	again := euis.NewSimulator(store, euis.SimOptions{Now: clk.Now})
	if st := get(t, again, accepted); st.Status != euis.StatusWithdrawn {
		t.Errorf("after a second restart: %s, want WITHDRAWN", st.Status)
	}
	if got, _ := again.VerifyDeclaration(ctx, noCreds, euis.Reference{ReferenceNumber: before.ReferenceNumber, VerificationNumber: before.VerificationNumber}); got != euis.VerifyExistingNonUsable {
		t.Errorf("VerifyDeclaration of a WITHDRAWN statement = %s, want EXISTING_NON_USABLE", got)
	}
}

func TestSimulator_Invalid(t *testing.T) {
	sim, _, _ := newSim(t, nil)
	s := validStatement()
	for len(s.Commodities) < 101 {
		s.Commodities = append(s.Commodities, cocoa(1))
	}
	s.Operator.EORI = ""
	_, err := sim.Submit(ctx, noCreds, s)
	var f *euis.Fault
	if !errors.As(err, &f) || !f.Rejected() {
		t.Fatalf("Submit of an invalid statement: %v, want a business-rules fault", err)
	}
	if len(f.Reasons) != 2 || f.Reasons[0] != euis.CodeEORIRequired || f.Reasons[1] != euis.CodeTooManyCommodities {
		t.Errorf("reasons %v, want [EORI_REQUIRED TOO_MANY_COMMODITIES]", f.Reasons)
	}
	if f.Errors[0].Field != "operator.eori" {
		t.Errorf("first error %+v", f.Errors[0])
	}
	if euis.IsTransient(err) {
		t.Error("a rejection is transient")
	}
}

func TestSimulator_VerifyDeclaration(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	uuid := submit(t, sim, validStatement())
	clk.Advance(euis.DefaultSimDelay)
	st := get(t, sim, uuid)
	for _, tc := range []struct {
		ref  euis.Reference
		want string
	}{
		{euis.Reference{ReferenceNumber: st.ReferenceNumber, VerificationNumber: st.VerificationNumber}, euis.VerifyExistingUsable},
		{euis.Reference{ReferenceNumber: st.ReferenceNumber, VerificationNumber: "WRONG123"}, euis.VerifyNonExistent},
		{externalStatement, euis.VerifyNonExistent},
	} {
		if got, err := sim.VerifyDeclaration(ctx, noCreds, tc.ref); err != nil || got != tc.want {
			t.Errorf("VerifyDeclaration(%+v) = %q, %v; want %s", tc.ref, got, err, tc.want)
		}
	}
	var vs euis.Violations
	if _, err := sim.VerifyDeclaration(ctx, noCreds, euis.Reference{ReferenceNumber: "26BE", VerificationNumber: "X"}); !errors.As(err, &vs) {
		t.Errorf("VerifyDeclaration of malformed numbers: %v, want Violations", err)
	}
}

func TestSimulator_Get(t *testing.T) {
	sim, _, _ := newSim(t, nil)
	a := submit(t, sim, validStatement())
	b := submit(t, sim, validStatement())
	got, err := sim.Get(ctx, noCreds, []string{b, "071874bd-8c62-4cac-8eb6-b2fbe003410c", a})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].UUID != b || got[1].UUID != a {
		t.Errorf("Get = %+v, want b and a, the unknown one left out", got)
	}
	many := make([]string, euis.MaxUUIDsPerGet+1)
	for i := range many {
		many[i] = a
	}
	if _, err := sim.Get(ctx, noCreds, many); err == nil {
		t.Error("Get of 101 uuids: no error")
	}
	if got, err := sim.Get(ctx, noCreds, nil); got != nil || err != nil {
		t.Errorf("Get(nil) = %v, %v", got, err)
	}
	if got, err := sim.Echo(ctx, noCreds, "ping"); got != "OK" || err != nil {
		t.Errorf("Echo = %q, %v", got, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sim.Submit(cancelled, noCreds, validStatement()); !errors.Is(err, context.Canceled) {
		t.Errorf("Submit with a cancelled context: %v", err)
	}
}

func TestSimulator_Deterministic(t *testing.T) {
	run := func() (string, string) {
		clk := newClock(t0)
		sim := euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Now: clk.Now, Rand: rand.NewChaCha8([32]byte{7})})
		uuid := submit(t, sim, validStatement())
		clk.Advance(euis.DefaultSimDelay)
		return uuid, get(t, sim, uuid).ReferenceNumber
	}
	u1, r1 := run()
	u2, r2 := run()
	if u1 != u2 || r1 != r2 {
		t.Errorf("same seed, different results: %s %s / %s %s", u1, r1, u2, r2)
	}
}

func TestSimulator_Concurrent(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	const n = 50
	uuids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := validStatement()
			s.InternalReference = fmt.Sprint("PO-", i%5)
			u, err := sim.Submit(ctx, noCreds, s)
			if err != nil {
				t.Error(err)
			}
			uuids[i] = u
		}()
	}
	wg.Wait()
	clk.Advance(euis.DefaultSimDelay)
	got, err := sim.Get(ctx, noCreds, uuids)
	if err != nil {
		t.Fatal(err)
	}
	refs := map[string]bool{}
	for _, st := range got {
		if st.Status != euis.StatusAvailable || refs[st.ReferenceNumber] {
			t.Errorf("status %+v: not AVAILABLE or its reference number twice", st)
		}
		refs[st.ReferenceNumber] = true
	}
	if len(refs) != n {
		t.Errorf("%d reference numbers, want %d", len(refs), n)
	}
	found, err := sim.FindByInternalReference(ctx, noCreds, "PO-3")
	if err != nil || len(found) != n/5 {
		t.Errorf("FindByInternalReference(PO-3) = %d statements, %v; want %d", len(found), err, n/5)
	}
}

// failingStore fails every Put.
type failingStore struct{ euis.SimStore }

func (failingStore) Put(string, []byte) error { return errors.New("disk full") }

func TestSimulator_StoreError(t *testing.T) {
	sim, _, _ := newSim(t, failingStore{euis.NewMemSimStore()})
	if _, err := sim.Submit(ctx, noCreds, validStatement()); err == nil {
		t.Error("Submit with a failing store: no error")
	}
}
