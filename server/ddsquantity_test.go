package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// TestDDS_QuantityExact: a net mass with all 16 digits the EU system takes
// goes from POST /batches to the statement's SOAP body unchanged: the
// batch shows it, the statement's payload holds it, and the submitDds body
// carries it and passes the EU schema. Through a float64 it became
// 9999999999.999998.
func TestDDS_QuantityExact(t *testing.T) {
	const mass = "9999999999.999999"
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	ta.runQueues()
	ta.mapSupplier(key, "V-1")
	ids := ta.screen(key, countryPlot("cocoa", "GH", -1.6, 6))
	body := strings.Replace(batchBody("REF-EXACT", ids...), `"netMassKg":12500.5`, `"netMassKg":`+mass, 1)
	b := ta.assessBatch(key, body)
	if b.Status != storage.BatchVerified || b.Quantity.NetMassKg.String() != mass {
		t.Fatalf("batch: %s, net mass %s; want VERIFIED with %s", b.Status, b.Quantity.NetMassKg, mass)
	}
	w := ta.do("GET", eudrPrefix+"/batches/"+b.BatchID, "", "X-API-Key", key)
	if !strings.Contains(w.Body.String(), `"netMassKg":`+mass+`,`) {
		t.Errorf("GET batch: %s, want netMassKg %s as a JSON number", w.Body, mass)
	}
	l := ta.link(key, "lnk-exact", b.BatchID, "SHP-EXACT")
	var acc shipmentLinkAccepted
	mustDecode(t, l, &acc)
	ta.waitJob(key, acc.JobID, storage.JobCompleted)
	ta.mapEUOperator(key)

	d := ta.draft(key, ddsBody(supplierOperator, b.BatchID))
	var p dds.Payload
	if err := json.Unmarshal(d.Statement, &p); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(d.Statement), `"netWeightKg":`+mass+`,`) || p.Commodities[0].NetWeightKg != mass {
		t.Fatalf("statement payload: %s, want netWeightKg %s", d.Statement, mass)
	}

	// The payload read back is what the submission job files.
	eu := newFakeEUSystem(t, map[string][]soapReply{"submitDds": {{200, euTestdata(t, "submit_response.xml")}}})
	c := euis.NewSOAPClient(eu.srv.Client(), euis.SOAPOptions{CallsPerSecond: -1})
	cr := euis.Credentials{Username: "op", AuthKey: "k", ClientID: euis.AcceptanceClientID, Endpoint: eu.srv.URL + "/tracesnt"}
	if _, err := c.Submit(context.Background(), cr, p.Statement()); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	sent := eu.lastBody("submitDds")
	if !strings.Contains(string(sent), ":netWeight>"+mass+"</") {
		t.Errorf("submitDds body: %s, want netWeight %s", sent, mass)
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, sent)
}
