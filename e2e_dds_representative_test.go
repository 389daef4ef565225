package main_test

// End-to-end test of a statement an authorised representative files
// (operatorRole REPRESENTATIVE_OPERATOR) in the sandbox.

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// TestDDS_Representative: a statement drafted as REPRESENTATIVE_OPERATOR
// names the operator of operatorUuid's supplier mapping, its address and
// identifiers, and is VALIDATED by the sandbox; while the mapping has no
// address the draft is refused at the statement's paths.
func TestDDS_Representative(t *testing.T) {
	t.Parallel()
	p := startServer(t, ddsFast...)
	key, base := p.createKey(t, sandbox), p.SandboxURL
	ddsMapOperator(t, base, key, "V-REP", ddsOperatorUUID, ddsEORI)
	batch, _ := ddsLinkedBatch(t, base, key, "V-REP", ddsPlots(1, -1.2, 6.2, "V-REP")...)
	body := ddsBody(ddsOperatorUUID, batch)
	body["operatorRole"] = "REPRESENTATIVE_OPERATOR"

	e := apitest.WantError(t, ddsCreate(t, base, key, body), http.StatusUnprocessableEntity, "BUSINESS_RULE", "EU_SYSTEM_RULE", "EU_SYSTEM_RULE", "EU_SYSTEM_RULE")
	if len(e.Details) == 3 && e.Details[0].Field != "statement.operator.street" {
		t.Errorf("a represented operator without an address: %+v", e.Details)
	}

	postSupplier(t, base, key, apitest.NewIdemKey(), map[string]any{"erpVendorId": "V-REP", "euOperatorUuid": ddsOperatorUUID,
		"name": "Importer V-REP BV", "country": "NL", "eori": ddsEORI, "identifiers": []map[string]string{{"type": "vat", "value": "NL001234567B01"}},
		"street": "Havenstraat 1", "postalCode": "3011 AA", "city": "Rotterdam"}).WantStatus(t, http.StatusOK)
	d := ddsDraft(t, base, key, body)
	var st struct {
		OperatorRole string `json:"operatorRole"`
		Operator     struct {
			Name, City  string
			Identifiers []struct{ Type, Value string }
		} `json:"operator"`
	}
	if err := json.Unmarshal(d.Statement, &st); err != nil {
		t.Fatal(err)
	}
	if st.OperatorRole != "REPRESENTATIVE_OPERATOR" || st.Operator.Name != "Importer V-REP BV" || st.Operator.City != "Rotterdam" ||
		len(st.Operator.Identifiers) != 1 || st.Operator.Identifiers[0].Value != "NL001234567B01" {
		t.Errorf("the statement: %s", d.Statement)
	}
	ddsSubmit(t, base, key, d.DDSID)
	v := ddsWaitStatus(t, base, key, d.DDSID, "VALIDATED")
	if v.ReferenceNumber == nil || v.VerificationNumber == nil {
		t.Errorf("validated without its numbers: %+v", v)
	}
}
