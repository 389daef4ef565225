package euis_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// TestSOAPClient_GetByIdentifiers: the look-up sends the pair in the
// shape the EU schema requires, to the statement service with its
// SOAPAction, and reads the whole statement of the answer (itself valid
// against the schema); NotFoundException is no statement and no error; a
// server fault is a transient error; numbers that cannot be valid are
// refused before anything is sent.
func TestSOAPClient_GetByIdentifiers(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	ref := euis.Reference{ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "SEKUYXPP"}

	s, err := c.GetByIdentifiers(context.Background(), creds(srv), ref)
	if err != nil {
		t.Fatalf("GetByIdentifiers: %v", err)
	}
	sent := f.last()
	if sent.op != "getDdsByIdentifiers" {
		t.Fatalf("operation %s", sent.op)
	}
	pair := sent.body.child(dds("referenceAndVerificationNumber"))
	if got := pair.child(common("referenceNumber")).value() + "/" + pair.child(common("verificationNumber")).value(); got != "26FRYUI34JTQKB/SEKUYXPP" {
		t.Errorf("pair sent %s", got)
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, sent.raw)
	answer := apitest.SOAPBody(t, readFile(t, "get_dds_by_identifiers_response.xml"))
	if err := apitest.ValidateEUSchema(t, apitest.DDSSchema, answer); err != nil {
		t.Errorf("the recorded answer fails the EU schema: %v", err)
	}

	if s == nil {
		t.Fatal("no statement")
	}
	if s.InternalReference != "SUP-2026-0042" || s.ActivityType != euis.ActivityImport || s.CountryOfActivity != "FR" || !s.GeoLocationConfidential {
		t.Errorf("statement %+v", s)
	}
	op := s.Operator
	if op.Name != "Cacao Négoce SAS" || op.Country != "FR" || op.City != "Nantes" || len(op.Identifiers) != 1 ||
		op.Identifiers[0] != (euis.OperatorIdentifier{Type: "eori", Value: "FR12345678901"}) {
		t.Errorf("operator %+v", op)
	}
	if len(s.Commodities) != 2 {
		t.Fatalf("%d commodities, want 2", len(s.Commodities))
	}
	if wood := s.Commodities[1]; wood.SupplementaryUnit == nil || *wood.SupplementaryUnit != "12.345678" || wood.SupplementaryUnitType != "MTQ" ||
		len(wood.SpeciesInfo) != 1 || wood.SpeciesInfo[0] != (euis.Species{ScientificName: "Fagus sylvatica", CommonName: "European beech"}) {
		t.Errorf("wood commodity %+v", wood)
	}
	cm := s.Commodities[0]
	if cm.HSHeading != "1801" || cm.NetWeightKg != "9999999999.999999" || len(cm.Producers) != 1 ||
		cm.Producers[0].Country != "CI" || string(cm.Producers[0].GeometryGeoJSON) != `{"type":"Point","coordinates":[-4.012345,5.312345]}` {
		t.Errorf("commodity %+v", cm)
	}
	if len(s.ReferencedStatements) != 1 || s.ReferencedStatements[0].ReferenceNumber != "26CIAB12CD34EF" {
		t.Errorf("grouped declarations %+v", s.ReferencedStatements)
	}

	f.setReply(func(call) (int, []byte) { return http.StatusInternalServerError, readFile(t, "fault_not_found.xml") }, nil)
	if s, err := c.GetByIdentifiers(context.Background(), creds(srv), ref); s != nil || err != nil {
		t.Errorf("not found: %v, %v; want nil, nil", s, err)
	}
	f.setReply(func(call) (int, []byte) { return http.StatusInternalServerError, readFile(t, "fault_internal.xml") }, nil)
	if s, err := c.GetByIdentifiers(context.Background(), creds(srv), ref); s != nil || !euis.IsTransient(err) {
		t.Errorf("internal fault: %v, %v; want a transient error", s, err)
	}

	calls := len(f.recorded())
	_, err = c.GetByIdentifiers(context.Background(), creds(srv), euis.Reference{ReferenceNumber: "26FR", VerificationNumber: "SEKUYXPP"})
	var vs euis.Violations
	if !errors.As(err, &vs) || vs[0].Path != "referenceNumber" || len(f.recorded()) != calls {
		t.Errorf("a reference number that is none: %v, want a violation at referenceNumber and nothing sent", err)
	}
}

// TestSimulator_GetByIdentifiers: the simulator finds a statement it
// validated by its two numbers, in the shape the information system
// answers (no role, none of the simulator's own fields), after a restart
// too; a wrong verification number, an unknown reference number and a
// statement still SUBMITTED are not found, which is no error.
func TestSimulator_GetByIdentifiers(t *testing.T) {
	sim, clk, store := newSim(t, nil)
	s := validStatement()
	s.OperatorRole = euis.RoleRepresentativeOperator
	s.Operator.Street, s.Operator.PostalCode, s.Operator.City = "Rue Royale 1", "1000", "Bruxelles"
	uuid := submit(t, sim, s)
	clk.Advance(euis.DefaultSimDelay + time.Second)
	st := get(t, sim, uuid)
	if st.Status != euis.StatusAvailable {
		t.Fatalf("status %s", st.Status)
	}
	ref := euis.Reference{ReferenceNumber: st.ReferenceNumber, VerificationNumber: st.VerificationNumber}

	sim2 := euis.NewSimulator(store, euis.SimOptions{Now: clk.Now})
	got, err := sim2.GetByIdentifiers(ctx, noCreds, ref)
	if err != nil || got == nil {
		t.Fatalf("GetByIdentifiers: %v, %v", got, err)
	}
	if got.InternalReference != "PO-4711" || got.Operator.Name != s.Operator.Name || len(got.Commodities) != 2 ||
		got.Commodities[1].SupplementaryUnit == nil || *got.Commodities[1].SupplementaryUnit != "12.345678" ||
		got.OperatorRole != "" || got.OperatorUUID != "" || got.SupplierOperatorUUIDs != nil {
		t.Errorf("statement %+v", got)
	}

	for name, r := range map[string]euis.Reference{
		"WrongVerification": {ReferenceNumber: ref.ReferenceNumber, VerificationNumber: "WRONG123"},
		"Unknown":           externalStatement,
	} {
		if got, err := sim.GetByIdentifiers(ctx, noCreds, r); got != nil || err != nil {
			t.Errorf("%s: %v, %v; want nil, nil", name, got, err)
		}
	}

	// A statement filed for itself comes back without the operator.
	own := validStatement()
	own.ReferencedStatements = nil
	uuid = submit(t, sim, own)
	clk.Advance(euis.DefaultSimDelay + time.Second)
	st = get(t, sim, uuid)
	got, err = sim.GetByIdentifiers(ctx, noCreds, euis.Reference{ReferenceNumber: st.ReferenceNumber, VerificationNumber: st.VerificationNumber})
	if err != nil || got == nil || got.Operator.Name != "" {
		t.Errorf("own statement: %+v, %v; want it without operator", got, err)
	}
}

// TestObserve_GetByIdentifiers: an observed client looks up through the
// client it wraps and reports the call.
func TestObserve_GetByIdentifiers(t *testing.T) {
	sim, _, _ := newSim(t, nil)
	var ops []string
	c := euis.Observe(sim, func(op string, _ time.Time, _ error) { ops = append(ops, op) })
	if got, err := c.GetByIdentifiers(ctx, noCreds, externalStatement); got != nil || err != nil {
		t.Errorf("GetByIdentifiers: %v, %v", got, err)
	}
	if len(ops) != 1 || ops[0] != euis.OpGetByIdentifiers {
		t.Errorf("observed %v", ops)
	}
}
