package euis_test

import (
	"testing"
	"time"

	"github.com/eudr/eudr/server/euis"
)

// TestObserveSD: an observed simplified-declaration client calls through
// the client it wraps and reports each call by its operation, with its
// error.
func TestObserveSD(t *testing.T) {
	sim, _, _ := newSim(t, nil)
	var ops []string
	var errs []error
	c := euis.ObserveSD(sim, func(op string, _ time.Time, err error) { ops, errs = append(ops, op), append(errs, err) })
	id, err := c.SubmitSD(ctx, noCreds, validSD())
	if err != nil {
		t.Fatal(err)
	}
	_, _ = c.GetSD(ctx, noCreds, []string{id})
	_, _ = c.FindSDByInternalReference(ctx, noCreds, validSD().InternalReference)
	_, _ = c.GetSDByIdentifiers(ctx, noCreds, euis.Reference{ReferenceNumber: "S26FRAAAAAAAAA", VerificationNumber: "ABCDEFGH"})
	_, updErr := c.UpdateSD(ctx, noCreds, id, validSD()) // not AVAILABLE yet: refused
	_, _ = c.WithdrawSD(ctx, noCreds, id)
	want := []string{euis.OpSubmitSD, euis.OpGetSD, euis.OpFindSDByReference, euis.OpGetSDByIdentifiers, euis.OpUpdateSD, euis.OpWithdrawSD}
	if len(ops) != len(want) {
		t.Fatalf("observed %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Errorf("call %d observed as %s, want %s", i, ops[i], want[i])
		}
	}
	if updErr == nil || errs[4] != updErr {
		t.Errorf("the refused update was observed with %v, want its error %v", errs[4], updErr)
	}
}
