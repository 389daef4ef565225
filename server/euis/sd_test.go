package euis_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// validSD is a representative's simplified declaration of cocoa from two
// producers, one located by postal address, one by cadastral identifier,
// and coffee from a plot given as GeoJSON.
func validSD() euis.SDStatement {
	return euis.SDStatement{
		OperatorRole:      euis.SDRoleRepresentative,
		InternalReference: "SD-2026-0007",
		ActivityType:      euis.ActivityDomestic,
		Operator: euis.Operator{Name: "Ferme Dupont", Country: "FR", Identifiers: []euis.OperatorIdentifier{{Type: "vat", Value: "FR40303265045"}},
			Street: "1 Chemin des Vignes", PostalCode: "21000", City: "Dijon"},
		CountryOfActivity: "FR",
		Commodities: []euis.SDCommodity{
			{HSHeading: "4403", DescriptionOfGoods: "Oak logs", NetWeightKg: "9999999999.999999", PercentageEstimation: ptr(5),
				Producers: []euis.SDProducer{
					{Country: "fr", Name: "Ferme Dupont", PostalAddresses: []euis.PostalAddress{{Street: "1 Chemin des Vignes", PostalCode: "21000", City: "Dijon"}, {PostalCode: "21200", City: "Beaune"}}},
					{Country: "FR", CadastralIdentifiers: []string{"21054000AB0123"}},
				}},
			{HSHeading: "0901", DescriptionOfGoods: "Coffee", SupplementaryUnit: dec("12"), SupplementaryUnitType: "NAR",
				Producers: []euis.SDProducer{{Country: "FR", GeometryGeoJSON: point(1)}}},
		},
	}
}

// sdFake answers the simplified-declaration service's operations with
// bodies of the schema's shapes and records what it was sent.
type sdFake struct {
	mu    sync.Mutex
	calls []sdCall
}

type sdCall struct {
	path, action string
	raw          []byte
}

const sdAnswerHead = `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body>`

var sdAnswers = map[string]string{
	"SubmitSdRequest": `<ns2:SubmitSdResponse xmlns:ns2="` + euis.NSSD + `"><ns2:sdIdentifier>0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21</ns2:sdIdentifier></ns2:SubmitSdResponse>`,
	"GetSdRequest": `<ns2:GetSdResponse xmlns:ns2="` + euis.NSSD + `" xmlns:c="` + euis.NSCommon + `"><ns2:sdOverviewList><c:uuid>0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21</c:uuid>` +
		`<c:internalReferenceNumber>SD-2026-0007</c:internalReferenceNumber><c:referenceNumber>S26FRNMNBSA96Q</c:referenceNumber>` +
		`<c:verificationNumber>SFFCB4Y3</c:verificationNumber><c:status>AVAILABLE</c:status><c:date>2026-05-20T09:51:00Z</c:date></ns2:sdOverviewList></ns2:GetSdResponse>`,
	"WithdrawSdRequest":               `<ns2:WithdrawSdResponse xmlns:ns2="` + euis.NSSD + `"><ns2:uuid>0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21</ns2:uuid><ns2:status>WITHDRAWN</ns2:status></ns2:WithdrawSdResponse>`,
	"GetSdByInternalReferenceRequest": `<ns2:GetSdByInternalReferenceResponse xmlns:ns2="` + euis.NSSD + `"/>`,
	"UpdateSdRequest":                 `<ns2:UpdateSdResponse xmlns:ns2="` + euis.NSSD + `"><ns2:uuid>0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21</ns2:uuid><ns2:version>2</ns2:version><ns2:status>AVAILABLE</ns2:status></ns2:UpdateSdResponse>`,
	"GetSdByIdentifiersRequest": `<ns2:GetSdByIdentifiersResponse xmlns:ns2="` + euis.NSSD + `" xmlns:c="` + euis.NSCommon + `"><ns2:statement>` +
		`<ns2:internalReferenceNumber>SD-2026-0007</ns2:internalReferenceNumber><ns2:activityType>DOMESTIC</ns2:activityType>` +
		`<ns2:representedOperator><c:operatorReferenceNumber><c:identifierType>vat</c:identifierType><c:identifierValue>FR40303265045</c:identifierValue></c:operatorReferenceNumber>` +
		`<c:operatorName>Ferme Dupont</c:operatorName></ns2:representedOperator><ns2:countryOfActivity>FR</ns2:countryOfActivity>` +
		`<ns2:commodities><ns2:position>1</ns2:position><ns2:descriptors><c:descriptionOfGoods>Oak logs</c:descriptionOfGoods>` +
		`<c:goodsMeasure><c:percentageEstimationOrDeviation>5</c:percentageEstimationOrDeviation><c:netWeight>9999999999.999999</c:netWeight></c:goodsMeasure></ns2:descriptors><ns2:hsHeading>4403</ns2:hsHeading>` +
		`<ns2:producers><ns2:producerPosition>1</ns2:producerPosition><ns2:producerCountry>FR</ns2:producerCountry><ns2:producerName>Ferme Dupont</ns2:producerName>` +
		`<ns2:producerLocation><ns2:postalAddress><ns2:producerStreet>1 Chemin des Vignes</ns2:producerStreet><ns2:producerPostalCode>21000</ns2:producerPostalCode>` +
		`<ns2:producerCity>Dijon</ns2:producerCity></ns2:postalAddress></ns2:producerLocation></ns2:producers>` +
		`<ns2:producers><ns2:producerCountry>FR</ns2:producerCountry><ns2:producerLocation><ns2:cadastralIdentifier>21054000AB0123</ns2:cadastralIdentifier></ns2:producerLocation></ns2:producers>` +
		`</ns2:commodities><ns2:geoLocationConfidential>false</ns2:geoLocationConfidential></ns2:statement></ns2:GetSdByIdentifiersResponse>`,
}

func (f *sdFake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.calls = append(f.calls, sdCall{path: r.URL.Path, action: strings.Trim(r.Header.Get("SOAPAction"), `"`), raw: raw})
	f.mu.Unlock()
	for req, answer := range sdAnswers {
		if strings.Contains(string(raw), "<sd:"+req+">") {
			w.Header().Set("Content-Type", "text/xml;charset=utf-8")
			io.WriteString(w, sdAnswerHead+answer+`</S:Body></S:Envelope>`)
			return
		}
	}
	http.Error(w, "unknown operation", http.StatusBadRequest)
}

func (f *sdFake) last(t *testing.T) sdCall {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.calls) == 0 {
		t.Fatal("nothing sent")
	}
	return f.calls[len(f.calls)-1]
}

// TestSOAPClient_SD: each operation's body is valid against the EU's
// simplified-declaration schema (producers by postal address, cadastral
// identifier and geometry; a micro operator's declaration without
// represented operator), goes to the service's path with the WSDL's
// SOAPAction and the BodyIdentity header when configured, and the
// answers of the schema's shapes are read.
func TestSOAPClient_SD(t *testing.T) {
	clk := newClock(t0)
	f := &sdFake{}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	c := newClient(srv, clk.Now)
	cr := euis.Credentials{Username: "u", AuthKey: "k", ClientID: euis.AcceptanceClientID, Endpoint: srv.URL + "/tracesnt", OperatorAccessIdentifier: "OP-42"}
	ctx := context.Background()

	id, err := c.SubmitSD(ctx, cr, validSD())
	if err != nil || id != "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21" {
		t.Fatalf("SubmitSD = %q, %v", id, err)
	}
	sent := f.last(t)
	apitest.CheckEUSchema(t, apitest.SDSchema, sent.raw)
	if sent.path != "/tracesnt/"+euis.ServiceSD || sent.action != euis.NSSD+"/submitSd" {
		t.Errorf("posted to %s with SOAPAction %s", sent.path, sent.action)
	}
	for _, want := range []string{`<sd:producerPostalCode>21200</sd:producerPostalCode>`, `<sd:producerStreet>1 Chemin des Vignes</sd:producerStreet>`,
		`<sd:cadastralIdentifier>21054000AB0123</sd:cadastralIdentifier>`, `<sd:producerCountry>FR</sd:producerCountry>`,
		`<eudrCommon:netWeight>9999999999.999999</eudrCommon:netWeight>`, `<sd:operatorRole>REPRESENTATIVE_MSPO</sd:operatorRole>`,
		`<OperatorAccessIdentifier>OP-42</OperatorAccessIdentifier>`, `<sd:representedOperator>`} {
		if !strings.Contains(string(sent.raw), want) {
			t.Errorf("request lacks %s", want)
		}
	}

	micro := validSD()
	micro.OperatorRole, micro.Operator = euis.SDRoleMicroOperator, euis.Operator{}
	if _, err := c.SubmitSD(ctx, cr, micro); err != nil {
		t.Fatal(err)
	}
	sent = f.last(t)
	apitest.CheckEUSchema(t, apitest.SDSchema, sent.raw)
	if strings.Contains(string(sent.raw), "representedOperator") {
		t.Error("a micro operator's own declaration names a represented operator")
	}

	st, err := c.GetSD(ctx, cr, []string{id})
	if err != nil || len(st) != 1 || st[0].Status != euis.StatusAvailable || st[0].ReferenceNumber != "S26FRNMNBSA96Q" || st[0].VerificationNumber != "SFFCB4Y3" {
		t.Fatalf("GetSD = %+v, %v", st, err)
	}
	sent = f.last(t)
	apitest.CheckEUSchema(t, apitest.SDSchema, sent.raw)
	if sent.action != euis.NSDDS+"/getSd" {
		t.Errorf("getSd SOAPAction %s, want the WSDL binding's", sent.action)
	}

	if got, err := c.WithdrawSD(ctx, cr, id); err != nil || got != euis.StatusWithdrawn {
		t.Fatalf("WithdrawSD = %q, %v", got, err)
	}
	apitest.CheckEUSchema(t, apitest.SDSchema, f.last(t).raw)

	if found, err := c.FindSDByInternalReference(ctx, cr, "SD-2026-0007"); err != nil || len(found) != 0 {
		t.Fatalf("FindSDByInternalReference = %+v, %v", found, err)
	}
	apitest.CheckEUSchema(t, apitest.SDSchema, f.last(t).raw)
	// A declaration's internal reference has at most 14 characters: a
	// longer one is refused here, not sent for the schema to refuse.
	calls := len(f.calls)
	if _, err := c.FindSDByInternalReference(ctx, cr, strings.Repeat("R", euis.MaxSDInternalReferenceLen+1)); err == nil || len(f.calls) != calls {
		t.Errorf("a 15-character internal reference: %v, %d calls made", err, len(f.calls)-calls)
	}

	// The answers the fake gives are the schema's shapes.
	for req, answer := range sdAnswers {
		if err := apitest.ValidateEUSchema(t, apitest.SDSchema, []byte(answer)); err != nil {
			t.Errorf("answer to %s: %v", req, err)
		}
	}

	n := len(f.calls)
	bad := validSD()
	bad.Commodities[0].Producers[0].PostalAddresses[1].City = ""
	var vs euis.Violations
	if _, err := c.SubmitSD(ctx, cr, bad); !errors.As(err, &vs) {
		t.Fatalf("SubmitSD of a bad declaration: %v, want Violations", err)
	}
	if len(f.calls) != n {
		t.Error("a declaration that breaks a rule was sent")
	}
}

// TestValidateSD: the declaration's own rules, each reported at its path.
func TestValidateSD(t *testing.T) {
	if err := euis.ValidateSD(validSD()); err != nil {
		t.Fatalf("valid declaration: %v", err)
	}
	for name, tc := range map[string]struct {
		change func(d *euis.SDStatement)
		code   string
		path   string
	}{
		"role":               {func(d *euis.SDStatement) { d.OperatorRole = euis.RoleOperator }, euis.CodeInvalidValue, "operatorRole"},
		"reference required": {func(d *euis.SDStatement) { d.InternalReference = "" }, euis.CodeRequired, "internalReference"},
		"reference 14":       {func(d *euis.SDStatement) { d.InternalReference = "SD-2026-000007" + "X" }, euis.CodeTooLong, "internalReference"},
		"represented name":   {func(d *euis.SDStatement) { d.Operator.Name = "" }, euis.CodeRequired, "operator.name"},
		"no location":        {func(d *euis.SDStatement) { d.Commodities[0].Producers[1].CadastralIdentifiers = nil }, euis.CodeLocationRequired, "commodities[0].producers[1]"},
		"two kinds": {func(d *euis.SDStatement) { d.Commodities[0].Producers[1].GeometryGeoJSON = point(2) },
			euis.CodeOneLocationKind, "commodities[0].producers[1]"},
		"postal code": {func(d *euis.SDStatement) { d.Commodities[0].Producers[0].PostalAddresses[0].PostalCode = " " }, euis.CodeRequired, "commodities[0].producers[0].postalAddresses[0].producerPostalCode"},
		"cadastral 80": {func(d *euis.SDStatement) {
			d.Commodities[0].Producers[1].CadastralIdentifiers[0] = strings.Repeat("1", 81)
		}, euis.CodeTooLong, "commodities[0].producers[1].cadastralIdentifiers[0]"},
		"geometry type": {func(d *euis.SDStatement) {
			d.Commodities[1].Producers[0].GeometryGeoJSON = []byte(`{"type":"LineString","coordinates":[[1,2],[3,4]]}`)
		}, euis.CodeGeometryNotAllowed, "commodities[1].producers[0].geometryGeoJSON"},
		"hs heading":     {func(d *euis.SDStatement) { d.Commodities[0].HSHeading = "44x" }, euis.CodeInvalidFormat, "commodities[0].hsHeading"},
		"no commodities": {func(d *euis.SDStatement) { d.Commodities = nil }, euis.CodeRequired, "commodities"},
	} {
		t.Run(name, func(t *testing.T) {
			d := validSD()
			tc.change(&d)
			var vs euis.Violations
			if !errors.As(euis.ValidateSD(d), &vs) {
				t.Fatal("no violation")
			}
			for _, v := range vs {
				if v.Code == tc.code && v.Path == tc.path {
					return
				}
			}
			t.Errorf("violations %v, want %s at %s", vs, tc.code, tc.path)
		})
	}
}

// TestSimulator_SD: a declaration is SUBMITTED, then AVAILABLE with a
// declaration number of the simplified form after the delay; found by its
// internal reference; withdrawn; a representative's declaration of an
// operator without reference numbers ends REJECTED; a restart (a new
// simulator over the same store) keeps them.
func TestSimulator_SD(t *testing.T) {
	clk := newClock(t0)
	store := euis.NewMemSimStore()
	sim := euis.NewSimulator(store, euis.SimOptions{Delay: 3 * time.Second, Now: clk.Now})
	ctx, cr := context.Background(), euis.Credentials{}

	id, err := sim.SubmitSD(ctx, cr, validSD())
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := sim.GetSD(ctx, cr, []string{id}); len(st) != 1 || st[0].Status != euis.StatusSubmitted || st[0].ReferenceNumber != "" {
		t.Fatalf("right after submission %+v", st)
	}
	clk.Advance(3 * time.Second)
	sim = euis.NewSimulator(store, euis.SimOptions{Delay: 3 * time.Second, Now: clk.Now})
	st, err := sim.GetSD(ctx, cr, []string{id})
	if err != nil || len(st) != 1 || st[0].Status != euis.StatusAvailable || !strings.HasPrefix(st[0].ReferenceNumber, "S26FR") ||
		!euis.IsReferenceNumber(st[0].ReferenceNumber) || len(st[0].VerificationNumber) != 8 {
		t.Fatalf("after the delay %+v, %v", st, err)
	}
	if found, _ := sim.FindSDByInternalReference(ctx, cr, "SD-2026-0007"); len(found) != 1 || found[0].UUID != id {
		t.Errorf("by internal reference %+v", found)
	}
	if got, err := sim.WithdrawSD(ctx, cr, id); err != nil || got != euis.StatusWithdrawn {
		t.Fatalf("WithdrawSD = %q, %v", got, err)
	}
	if st, _ := sim.GetSD(ctx, cr, []string{id}); st[0].Status != euis.StatusWithdrawn {
		t.Errorf("after withdrawal %s", st[0].Status)
	}
	var f *euis.Fault
	if _, err := sim.WithdrawSD(ctx, cr, id); !errors.As(err, &f) || !f.Rejected() {
		t.Errorf("second withdrawal: %v", err)
	}

	anon := validSD()
	anon.Operator.Identifiers = nil
	id2, err := sim.SubmitSD(ctx, cr, anon)
	if err != nil {
		t.Fatal(err)
	}
	clk.Advance(3 * time.Second)
	if st, _ := sim.GetSD(ctx, cr, []string{id2}); st[0].Status != euis.StatusRejected || len(st[0].Reasons) != 1 || st[0].Reasons[0] != euis.ReasonSDOperatorNotIdentified {
		t.Errorf("unidentified operator %+v", st[0])
	}

	bad := validSD()
	bad.InternalReference = ""
	if _, err := sim.SubmitSD(ctx, cr, bad); !errors.As(err, &f) || !f.Rejected() {
		t.Errorf("a declaration that breaks a rule: %v, want a business-rules fault", err)
	}
}
