package server

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// mapRepresented maps V-1 to the operator an authorised representative
// files for, with the address and identifiers given in extra (JSON
// members after the name and country).
func (ta *testApp) mapRepresented(key, extra string) {
	ta.tb.Helper()
	w := ta.do("POST", eudrPrefix+"/suppliers", `{"erpVendorId":"V-1","euOperatorUuid":"`+supplierOperator+`","name":"Cacao Import GmbH","country":"DE"`+extra+`}`,
		"X-API-Key", key, "Idempotency-Key", "sup-V-1-"+randomHex(4))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("POST /suppliers: %d %s", w.Code, w.Body)
	}
}

// TestDDS_DraftRepresentative: a statement drafted with operatorRole
// REPRESENTATIVE_OPERATOR is filed for the operator of operatorUuid's
// supplier mapping, sent as the represented operator with its name,
// country, reference numbers and address; its submitDds body passes the
// EU schema and the sandbox validates it. A mapping without an address
// is refused at the statement's paths, an operatorUuid of no batch's
// mapping at operatorUuid, a role of neither kind at operatorRole.
func TestDDS_DraftRepresentative(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	batch := ta.linkedBatch(key, -1.6)
	body := func(role, operator string) string {
		return `{"batchIds":["` + batch + `"],"activityType":"IMPORT","operatorUuid":"` + operator + `","operatorRole":"` + role + `"}`
	}
	post := func(b string) *httptest.ResponseRecorder {
		return ta.do("POST", eudrPrefix+"/declarations/dds", b, "X-API-Key", key, "Idempotency-Key", "dds-"+randomHex(4))
	}

	ta.mapRepresented(key, `,"eori":"DE123456789012345"`)
	e := wantError(t, post(body(euis.RoleRepresentativeOperator, supplierOperator)), http.StatusUnprocessableEntity, apierr.CodeBusinessRule, apierr.DetailEUSystemRule)
	var fields []string
	for _, d := range e.Details {
		fields = append(fields, d.Field)
	}
	if want := []string{"statement.operator.street", "statement.operator.postalCode", "statement.operator.city"}; !slices.Equal(fields, want) {
		t.Errorf("a represented operator without an address: fields %v, want %v", fields, want)
	}
	e = wantError(t, post(body(euis.RoleRepresentativeOperator, "0b9e1c2a-5d4f-4a3b-8c7d-6e5f4a3b2c1d")), http.StatusUnprocessableEntity, apierr.CodeBusinessRule, apierr.DetailInvalidValue)
	if e.Details[0].Field != "operatorUuid" {
		t.Errorf("an operator of no batch's mapping: %+v", e.Details)
	}
	e = wantError(t, post(body("TRADER", supplierOperator)), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	if e.Details[0].Field != "operatorRole" {
		t.Errorf("role TRADER: %+v", e.Details)
	}

	ta.mapRepresented(key, `,"eori":"DE123456789012345","identifiers":[{"type":"vat","value":"DE811234567"}],`+
		`"street":"Hafenstraße 1","postalCode":"20457","city":"Hamburg","fullAddress":"Hafenstraße 1, 20457 Hamburg"`)
	d := ta.draft(key, body(euis.RoleRepresentativeOperator, supplierOperator))
	var p dds.Payload
	if err := json.Unmarshal(d.Statement, &p); err != nil {
		t.Fatal(err)
	}
	want := dds.PayloadOperator{Name: "Cacao Import GmbH", Country: "DE", EORI: "DE123456789012345", Identifiers: []dds.Identifier{{Type: "vat", Value: "DE811234567"}},
		Street: "Hafenstraße 1", PostalCode: "20457", City: "Hamburg", FullAddress: "Hafenstraße 1, 20457 Hamburg"}
	if p.OperatorRole != euis.RoleRepresentativeOperator || !slices.Equal(p.Operator.Identifiers, want.Identifiers) ||
		p.Operator.Name != want.Name || p.Operator.EORI != want.EORI || p.Operator.Street != want.Street || p.Operator.FullAddress != want.FullAddress {
		t.Fatalf("payload: %s, want the represented operator %+v", d.Statement, want)
	}

	// The payload read back is what the submission job files.
	eu := newFakeEUSystem(t, map[string][]soapReply{"submitDds": {{200, euTestdata(t, "submit_response.xml")}}})
	c := euis.NewSOAPClient(eu.srv.Client(), euis.SOAPOptions{CallsPerSecond: -1})
	cr := euis.Credentials{Username: "op", AuthKey: "k", ClientID: euis.AcceptanceClientID, Endpoint: eu.srv.URL + "/tracesnt"}
	if _, err := c.Submit(context.Background(), cr, p.Statement()); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	sent := string(eu.lastBody("submitDds"))
	for _, part := range []string{"operatorRole>REPRESENTATIVE_OPERATOR<", "representedOperator>", "identifierValue>DE811234567<",
		"street>Hafenstraße 1<", "operatorName>Cacao Import GmbH<"} {
		if !strings.Contains(sent, part) {
			t.Errorf("submitDds body without %q: %s", part, sent)
		}
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, []byte(sent))

	w := ta.do("POST", eudrPrefix+"/declarations/dds/"+d.DDSID+"/submit", "", "X-API-Key", key, "Idempotency-Key", "sub-rep")
	if w.Code != http.StatusAccepted {
		t.Fatalf("submit: %d %s", w.Code, w.Body)
	}
	ta.waitDDS(key, d.DDSID, storage.DDSValidated)
}
