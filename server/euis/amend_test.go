package euis_test

import (
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// TestSOAPClient_Amend: the amendment sends the UUID and the whole
// statement in the shape the EU schema requires, to the statement service
// with its SOAPAction, and returns the status answered; a business-rules
// fault is a refusal (not transient); a UUID that is none and a statement
// that breaks a rule are refused before anything is sent.
func TestSOAPClient_Amend(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	uuid := "071874bd-8c62-4cac-8eb6-b2fbe003410c"
	s := validStatement()
	s.Commodities[0].NetWeightKg = "9999999999.999999"
	s.Commodities[0].DescriptionOfGoods = "Cocoa beans, whole, raw, corrected"

	status, err := c.Amend(ctx, creds(srv), uuid, s)
	if err != nil || status != euis.StatusAvailable {
		t.Fatalf("Amend: %q, %v; want AVAILABLE", status, err)
	}
	sent := f.last()
	if sent.op != "amendDds" {
		t.Fatalf("operation %s", sent.op)
	}
	if got := sent.body.child(dds("uuid")).value(); got != uuid {
		t.Errorf("uuid %q, want %q", got, uuid)
	}
	measure := sent.body.child(dds("statement")).child(dds("commodities")).child(dds("descriptors"))
	if got := measure.child(common("descriptionOfGoods")).value(); got != "Cocoa beans, whole, raw, corrected" {
		t.Errorf("description sent %q", got)
	}
	if got := measure.child(common("goodsMeasure")).child(common("netWeight")).value(); got != "9999999999.999999" {
		t.Errorf("net weight sent %q, want it exactly as given", got)
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, sent.raw)
	if err := apitest.ValidateEUSchema(t, apitest.DDSSchema, apitest.SOAPBody(t, readFile(t, "amend_response.xml"))); err != nil {
		t.Errorf("the recorded answer fails the EU schema: %v", err)
	}

	f.setReply(func(call) (int, []byte) {
		return http.StatusInternalServerError, readFile(t, "fault_business_rules.xml")
	}, nil)
	_, err = c.Amend(ctx, creds(srv), uuid, s)
	var fault *euis.Fault
	if !errors.As(err, &fault) || fault.Kind != euis.FaultBusinessRules || euis.IsTransient(err) || fault.Operation != "amendDds" {
		t.Errorf("business-rules fault: %v, want a FaultBusinessRules fault of amendDds", err)
	}
	f.setReply(func(call) (int, []byte) { return http.StatusInternalServerError, readFile(t, "fault_internal.xml") }, nil)
	if _, err := c.Amend(ctx, creds(srv), uuid, s); !euis.IsTransient(err) {
		t.Errorf("internal fault: %v, want a transient error", err)
	}

	calls := len(f.recorded())
	if _, err := c.Amend(ctx, creds(srv), "26BE7XTVCZAQ2S", s); err == nil {
		t.Error("Amend of a reference number: no error")
	}
	bad := validStatement()
	bad.Commodities = nil
	var vs euis.Violations
	if _, err := c.Amend(ctx, creds(srv), uuid, bad); !errors.As(err, &vs) {
		t.Errorf("a statement without commodities: %v, want Violations", err)
	}
	if n := len(f.recorded()); n != calls {
		t.Errorf("%d calls sent for refused amendments", n-calls)
	}
}

// TestSimulator_Amend: an AVAILABLE statement is amended within 72 hours
// and within the 8 days after them (the simulator cannot tell whether the
// request was justified), keeping its UUID, numbers and status, and the
// look-up answers the new content; after that the amendment is refused
// and nothing changes.
func TestSimulator_Amend(t *testing.T) {
	for _, tc := range []struct {
		name   string
		after  time.Duration
		reason string // "" for success
	}{
		{"Within72Hours", time.Hour, ""},
		{"AtTheExtensionsEnd", euis.AmendWindow + euis.AmendExtension, ""},
		{"AfterTheExtension", euis.AmendWindow + euis.AmendExtension + time.Second, euis.ReasonAmendNotPossible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, clk, _ := newSim(t, nil)
			uuid := submit(t, sim, validStatement())
			clk.Advance(tc.after)
			before := get(t, sim, uuid)
			amended := validStatement()
			amended.Commodities[0].NetWeightKg = "1300"
			status, err := sim.Amend(ctx, noCreds, uuid, amended)
			after := get(t, sim, uuid)
			found, ferr := sim.GetByIdentifiers(ctx, noCreds, euis.Reference{ReferenceNumber: before.ReferenceNumber, VerificationNumber: before.VerificationNumber})
			if ferr != nil || found == nil {
				t.Fatalf("GetByIdentifiers: %v, %v", found, ferr)
			}
			if after.Status != euis.StatusAvailable || after.ReferenceNumber != before.ReferenceNumber || after.VerificationNumber != before.VerificationNumber {
				t.Errorf("after the amendment: %+v, want AVAILABLE with the numbers of before %+v", after, before)
			}
			if tc.reason != "" {
				wantFault(t, err, euis.FaultBusinessRules, tc.reason)
				if found.Commodities[0].NetWeightKg != "1250.5" {
					t.Errorf("a refused amendment changed the statement: %s", found.Commodities[0].NetWeightKg)
				}
				return
			}
			if err != nil || status != euis.StatusAvailable {
				t.Fatalf("Amend: %q, %v", status, err)
			}
			if found.Commodities[0].NetWeightKg != "1300" {
				t.Errorf("looked up after the amendment: net weight %s, want 1300", found.Commodities[0].NetWeightKg)
			}
		})
	}
}

// TestSimulator_AmendRefused: only an AVAILABLE statement it knows is
// amended, and only with a statement that passes the checks.
func TestSimulator_AmendRefused(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	submitted := submit(t, sim, validStatement())
	_, err := sim.Amend(ctx, noCreds, submitted, validStatement())
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonAmendNotAllowedForStatus)

	clk.Advance(time.Minute)
	withdrawn := submit(t, sim, validStatement())
	clk.Advance(time.Minute)
	if err := sim.Withdraw(ctx, noCreds, withdrawn); err != nil {
		t.Fatal(err)
	}
	_, err = sim.Amend(ctx, noCreds, withdrawn, validStatement())
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonAmendNotAllowedForStatus)

	_, err = sim.Amend(ctx, noCreds, "3f2504e0-4f89-11d3-9a0c-0305e82c3301", validStatement())
	wantFault(t, err, euis.FaultNotFound, euis.ReasonStatementNotFound)

	bad := validStatement()
	bad.Commodities = nil
	_, err = sim.Amend(ctx, noCreds, submitted, bad)
	var f *euis.Fault
	if !errors.As(err, &f) || f.Kind != euis.FaultBusinessRules {
		t.Errorf("an invalid statement: %v, want a business-rules fault", err)
	}
}

// TestSimulator_Windows: a simulator given shorter windows (the sandbox's
// configured ones) withdraws and amends by them; with no extension the
// amendment period ends with the window.
func TestSimulator_Windows(t *testing.T) {
	for _, tc := range []struct {
		name            string
		w               euis.Windows
		after           time.Duration
		withdraw, amend string // the refusal's reason, "" for success
	}{
		{"WithinTheWindow", euis.Windows{Amend: 3 * time.Second, Extension: 3 * time.Second}, 3 * time.Second, "", ""},
		{"InTheExtension", euis.Windows{Amend: 3 * time.Second, Extension: 3 * time.Second}, 4 * time.Second, euis.ReasonWithdrawNotPossible, ""},
		{"AfterTheExtension", euis.Windows{Amend: 3 * time.Second, Extension: 3 * time.Second}, 7 * time.Second, euis.ReasonWithdrawNotPossible, euis.ReasonAmendNotPossible},
		{"NoExtension", euis.Windows{Amend: 3 * time.Second}, 4 * time.Second, euis.ReasonWithdrawNotPossible, euis.ReasonAmendNotPossible},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock(t0)
			sim := euis.NewSimulator(euis.NewMemSimStore(), euis.SimOptions{Now: clk.Now, Delay: time.Second, Windows: tc.w})
			uuid := submit(t, sim, validStatement())
			clk.Advance(tc.after)
			amended := validStatement()
			amended.Commodities[0].NetWeightKg = "1300"
			_, err := sim.Amend(ctx, noCreds, uuid, amended)
			if tc.amend != "" {
				wantFault(t, err, euis.FaultBusinessRules, tc.amend)
			} else if err != nil {
				t.Errorf("Amend after %s: %v", tc.after, err)
			}
			err = sim.Withdraw(ctx, noCreds, uuid)
			if tc.withdraw != "" {
				wantFault(t, err, euis.FaultBusinessRules, tc.withdraw)
			} else if err != nil {
				t.Errorf("Withdraw after %s: %v", tc.after, err)
			}
		})
	}
}

// TestSimulator_AmendUpdated: an amendment whose description of goods
// carries SimMarkerUpdated is answered UPDATED; the statement shows
// UPDATED, with its numbers, for the simulator's delay, then AVAILABLE.
func TestSimulator_AmendUpdated(t *testing.T) {
	sim, clk, _ := newSim(t, nil)
	uuid := submit(t, sim, validStatement())
	clk.Advance(time.Hour)
	before := get(t, sim, uuid)
	amended := validStatement()
	amended.Commodities[0].DescriptionOfGoods += " " + euis.SimMarkerUpdated
	if status, err := sim.Amend(ctx, noCreds, uuid, amended); err != nil || status != euis.StatusUpdated {
		t.Fatalf("Amend: %q, %v; want UPDATED", status, err)
	}
	if st := get(t, sim, uuid); st.Status != euis.StatusUpdated || st.ReferenceNumber != before.ReferenceNumber {
		t.Errorf("right after: %+v, want UPDATED with its numbers", st)
	}
	clk.Advance(euis.DefaultSimDelay)
	if st := get(t, sim, uuid); st.Status != euis.StatusAvailable {
		t.Errorf("after the delay: %s, want AVAILABLE", st.Status)
	}
}
