package euis_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// TestSOAPClient_UpdateSDAndLookUp: updateSd sends the sdIdentifier and the
// whole declaration in the schema's shape, with the WSDL's SOAPAction, and
// returns the status answered; getSdByIdentifiers sends the pair and reads
// the declaration answered (postal address, cadastral identifier,
// represented operator, the quantity exactly). A declaration that breaks a
// rule and a UUID that is none are refused before anything is sent.
func TestSOAPClient_UpdateSDAndLookUp(t *testing.T) {
	clk := newClock(t0)
	f := &sdFake{}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	c := newClient(srv, clk.Now)
	cr := euis.Credentials{Username: "u", AuthKey: "k", ClientID: euis.AcceptanceClientID, Endpoint: srv.URL + "/tracesnt"}
	ctx := context.Background()
	id := "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21"

	d := validSD()
	d.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	status, err := c.UpdateSD(ctx, cr, id, d)
	if err != nil || status != euis.StatusAvailable {
		t.Fatalf("UpdateSD = %q, %v", status, err)
	}
	sent := f.last(t)
	apitest.CheckEUSchema(t, apitest.SDSchema, sent.raw)
	if sent.path != "/tracesnt/"+euis.ServiceSD || sent.action != euis.NSSD+"/updateSd" {
		t.Errorf("posted to %s with SOAPAction %s", sent.path, sent.action)
	}
	for _, want := range []string{`<sd:sdIdentifier>` + id + `</sd:sdIdentifier>`, `Oak logs, sawn`, `<sd:producerPostalCode>21200</sd:producerPostalCode>`, `<sd:representedOperator>`} {
		if !strings.Contains(string(sent.raw), want) {
			t.Errorf("update lacks %s", want)
		}
	}
	if strings.Contains(string(sent.raw), "operatorRole") {
		t.Error("the update sends an operator role; UpdateSdRequestType has none")
	}

	n := len(f.calls)
	bad := validSD()
	bad.Commodities[0].Producers[1].CadastralIdentifiers = nil
	var vs euis.Violations
	if _, err := c.UpdateSD(ctx, cr, id, bad); !errors.As(err, &vs) {
		t.Errorf("UpdateSD of a declaration without location: %v, want Violations", err)
	}
	if _, err := c.UpdateSD(ctx, cr, "not-a-uuid", validSD()); err == nil {
		t.Error("UpdateSD of a UUID that is none: no error")
	}
	if len(f.calls) != n {
		t.Error("a refused update was sent")
	}

	got, err := c.GetSDByIdentifiers(ctx, cr, euis.Reference{ReferenceNumber: "S26FRNMNBSA96Q", VerificationNumber: "SFFCB4Y3"})
	if err != nil || got == nil {
		t.Fatalf("GetSDByIdentifiers = %+v, %v", got, err)
	}
	sent = f.last(t)
	apitest.CheckEUSchema(t, apitest.SDSchema, sent.raw)
	if sent.action != euis.NSDDS+"/getSdByIdentifiers" || !strings.Contains(string(sent.raw), "<eudrCommon:referenceNumber>S26FRNMNBSA96Q</eudrCommon:referenceNumber>") {
		t.Errorf("look-up sent with SOAPAction %s: %s", sent.action, sent.raw)
	}
	if got.OperatorRole != euis.SDRoleRepresentative || got.Operator.Name != "Ferme Dupont" || len(got.Operator.Identifiers) != 1 ||
		got.Operator.Identifiers[0].Value != "FR40303265045" || got.InternalReference != "SD-2026-0007" || got.CountryOfActivity != "FR" {
		t.Errorf("head read %+v", got)
	}
	if len(got.Commodities) != 1 || got.Commodities[0].NetWeightKg != "9999999999.999999" || len(got.Commodities[0].Producers) != 2 {
		t.Fatalf("commodities read %+v", got.Commodities)
	}
	p0, p1 := got.Commodities[0].Producers[0], got.Commodities[0].Producers[1]
	if len(p0.PostalAddresses) != 1 || p0.PostalAddresses[0] != (euis.PostalAddress{Street: "1 Chemin des Vignes", PostalCode: "21000", City: "Dijon"}) ||
		len(p1.CadastralIdentifiers) != 1 || p1.CadastralIdentifiers[0] != "21054000AB0123" {
		t.Errorf("producers read %+v, %+v", p0, p1)
	}
	if err := euis.ValidateSD(*got); err != nil {
		t.Errorf("the declaration read back breaks a rule: %v", err)
	}
	n = len(f.calls)
	if _, err := c.GetSDByIdentifiers(ctx, cr, euis.Reference{ReferenceNumber: "S26", VerificationNumber: "SFFCB4Y3"}); err == nil || len(f.calls) != n {
		t.Errorf("a reference number that is none: %v, %d calls", err, len(f.calls)-n)
	}
}

// TestSOAPClient_UpdateSDFaults: the EU system's faults to updateSd and
// getSdByIdentifiers are told apart as the other operations' are: a
// business-rules refusal is not transient, a NotFoundException to the
// look-up is no declaration, an internal fault may go away.
func TestSOAPClient_UpdateSDFaults(t *testing.T) {
	clk := newClock(t0)
	reply := "fault_business_rules.xml"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/xml;charset=utf-8")
		w.WriteHeader(http.StatusInternalServerError)
		w.Write(readFile(t, reply))
	}))
	t.Cleanup(srv.Close)
	c := newClient(srv, clk.Now)
	cr := euis.Credentials{Username: "u", AuthKey: "k", ClientID: euis.AcceptanceClientID, Endpoint: srv.URL + "/tracesnt"}
	ctx, id := context.Background(), "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21"
	pair := euis.Reference{ReferenceNumber: "S26FRNMNBSA96Q", VerificationNumber: "SFFCB4Y3"}

	_, err := c.UpdateSD(ctx, cr, id, validSD())
	var fault *euis.Fault
	if !errors.As(err, &fault) || !fault.Rejected() || euis.IsTransient(err) || fault.Operation != euis.OpUpdateSD {
		t.Errorf("business-rules fault to updateSd: %v, want a refusal of updateSd", err)
	}
	reply = "fault_not_found.xml"
	if got, err := c.GetSDByIdentifiers(ctx, cr, pair); err != nil || got != nil {
		t.Errorf("NotFoundException to getSdByIdentifiers: %+v, %v; want none found", got, err)
	}
	if _, err := c.UpdateSD(ctx, cr, id, validSD()); !errors.As(err, &fault) || fault.Kind != euis.FaultNotFound {
		t.Errorf("NotFoundException to updateSd: %v, want a not-found fault", err)
	}
	reply = "fault_internal.xml"
	if _, err := c.UpdateSD(ctx, cr, id, validSD()); !euis.IsTransient(err) {
		t.Errorf("internal fault to updateSd: %v, want transient", err)
	}
	if _, err := c.GetSDByIdentifiers(ctx, cr, pair); !euis.IsTransient(err) {
		t.Errorf("internal fault to getSdByIdentifiers: %v, want transient", err)
	}
}

// TestSimulator_UpdateSD: an update is refused while the declaration is
// SUBMITTED, replaces an AVAILABLE one's content (its numbers kept, its
// new internal reference found), and is refused once it is withdrawn; the
// look-up by numbers answers the content as last updated, only with the
// right verification number, and survives a restart.
func TestSimulator_UpdateSD(t *testing.T) {
	clk := newClock(t0)
	store := euis.NewMemSimStore()
	sim := euis.NewSimulator(store, euis.SimOptions{Delay: 3 * time.Second, Now: clk.Now})
	ctx, cr := context.Background(), euis.Credentials{}

	id, err := sim.SubmitSD(ctx, cr, validSD())
	if err != nil {
		t.Fatal(err)
	}
	changed := validSD()
	changed.InternalReference = "SD-2026-0008"
	changed.Commodities[0].DescriptionOfGoods = "Oak logs, sawn"
	_, err = sim.UpdateSD(ctx, cr, id, changed)
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonSDUpdateNotAllowed)

	clk.Advance(3 * time.Second)
	st, _ := sim.GetSD(ctx, cr, []string{id})
	pair := euis.Reference{ReferenceNumber: st[0].ReferenceNumber, VerificationNumber: st[0].VerificationNumber}
	if got, err := sim.UpdateSD(ctx, cr, id, changed); err != nil || got != euis.StatusAvailable {
		t.Fatalf("UpdateSD of an AVAILABLE declaration = %q, %v", got, err)
	}
	after, _ := sim.GetSD(ctx, cr, []string{id})
	if after[0].Status != euis.StatusAvailable || after[0].ReferenceNumber != pair.ReferenceNumber || after[0].VerificationNumber != pair.VerificationNumber {
		t.Errorf("after the update %+v, want AVAILABLE with the same numbers", after[0])
	}
	if found, _ := sim.FindSDByInternalReference(ctx, cr, "SD-2026-0008"); len(found) != 1 || found[0].UUID != id {
		t.Errorf("by the new internal reference %+v", found)
	}

	sim = euis.NewSimulator(store, euis.SimOptions{Delay: 3 * time.Second, Now: clk.Now})
	got, err := sim.GetSDByIdentifiers(ctx, cr, pair)
	if err != nil || got == nil || got.Commodities[0].DescriptionOfGoods != "Oak logs, sawn" || got.Operator.Name != "Ferme Dupont" ||
		len(got.Commodities[0].Producers[0].PostalAddresses) != 2 {
		t.Fatalf("GetSDByIdentifiers = %+v, %v", got, err)
	}
	if got, err := sim.GetSDByIdentifiers(ctx, cr, euis.Reference{ReferenceNumber: pair.ReferenceNumber, VerificationNumber: "WRONG123"}); err != nil || got != nil {
		t.Errorf("a wrong verification number: %+v, %v; want none", got, err)
	}

	bad := changed
	bad.Commodities = nil
	var f *euis.Fault
	if _, err := sim.UpdateSD(ctx, cr, id, bad); !errors.As(err, &f) || !f.Rejected() {
		t.Errorf("an update that breaks a rule: %v", err)
	}
	_, err = sim.UpdateSD(ctx, cr, "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21", changed)
	wantFault(t, err, euis.FaultNotFound, euis.ReasonStatementNotFound)
	if _, err := sim.WithdrawSD(ctx, cr, id); err != nil {
		t.Fatal(err)
	}
	_, err = sim.UpdateSD(ctx, cr, id, changed)
	wantFault(t, err, euis.FaultBusinessRules, euis.ReasonSDUpdateNotAllowed)
}
