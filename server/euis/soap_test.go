package euis_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/euis"
)

// newClient returns a client of the fake, with the clock now and no rate
// limit.
func newClient(srv *httptest.Server, now func() time.Time) *euis.SOAPClient {
	return euis.NewSOAPClient(srv.Client(), euis.SOAPOptions{Now: now, CallsPerSecond: -1})
}

func TestSOAPClient_Submit(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	s := validStatement()
	s.Comment = "Shipment 3 of contract 2026/17"
	s.GeoLocationConfidential = true

	uuid, err := c.Submit(context.Background(), creds(srv), s)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	if want := "071874bd-8c62-4cac-8eb6-b2fbe003410c"; uuid != want {
		t.Errorf("uuid %q, want %q", uuid, want)
	}

	req := f.last()
	if req.op != "submitDds" {
		t.Fatalf("operation %s, want submitDds", req.op)
	}
	b := req.body
	if got := b.child(dds("operatorRole")).value(); got != "OPERATOR" {
		t.Errorf("operatorRole %q, want OPERATOR", got)
	}
	st := b.child(dds("statement"))
	for name, want := range map[string]string{
		"internalReferenceNumber": "PO-4711", "activityType": "IMPORT", "countryOfActivity": "BE",
		"borderCrossCountry": "NL", "comment": "Shipment 3 of contract 2026/17", "geoLocationConfidential": "true",
	} {
		if got := st.child(dds(name)).value(); got != want {
			t.Errorf("statement/%s %q, want %q", name, got, want)
		}
	}
	if st.child(dds("representedOperator")) != nil {
		t.Error("representedOperator sent for an OPERATOR")
	}
	commodities := st.all(dds("commodities"))
	if len(commodities) != 2 {
		t.Fatalf("%d commodities, want 2", len(commodities))
	}
	for i, cm := range commodities {
		if got, want := cm.child(dds("position")).value(), fmt.Sprint(i+1); got != want {
			t.Errorf("commodities[%d]/position %s, want %s", i, got, want)
		}
		for j, p := range cm.all(dds("producers")) {
			if got, want := p.child(dds("position")).value(), fmt.Sprint(j+1); got != want {
				t.Errorf("commodities[%d]/producers[%d]/position %s, want %s", i, j, got, want)
			}
			geom, err := base64.StdEncoding.DecodeString(p.child(dds("geometryGeojson")).value())
			if err != nil {
				t.Fatalf("geometryGeojson not base64: %v", err)
			}
			if want := s.Commodities[i].Producers[j].GeometryGeoJSON; !bytes.Equal(geom, want) {
				t.Errorf("commodities[%d]/producers[%d] geometry %s, want %s", i, j, geom, want)
			}
		}
	}
	gm := commodities[0].path(dds("descriptors"), common("goodsMeasure"))
	if got := gm.child(common("netWeight")).value(); got != "1250.5" {
		t.Errorf("netWeight %q, want 1250.5", got)
	}
	if gm.child(common("supplementaryUnit")) != nil || gm.child(common("percentageEstimationOrDeviation")) != nil {
		t.Error("cocoa: supplementary unit or percentage sent")
	}
	wood := commodities[1]
	gm = wood.path(dds("descriptors"), common("goodsMeasure"))
	for name, want := range map[string]string{"netWeight": "300", "supplementaryUnit": "12.345678", "supplementaryUnitQualifier": "MTQ"} {
		if got := gm.child(common(name)).value(); got != want {
			t.Errorf("wood goodsMeasure/%s %q, want %q", name, got, want)
		}
	}
	if got := wood.path(dds("descriptors"), common("descriptionOfGoods")).value(); got != "Particle board of wood" {
		t.Errorf("descriptionOfGoods %q", got)
	}
	if got := wood.path(dds("speciesInfo"), dds("scientificName")).value(); got != "Fagus sylvatica" {
		t.Errorf("scientificName %q", got)
	}
	if got := wood.path(dds("producers"), dds("country")).value(); got != "FR" {
		t.Errorf("producer country %q, want FR (upper case)", got)
	}
	grouped := st.all(dds("groupedDeclarations"))
	if len(grouped) != 2 {
		t.Fatalf("%d groupedDeclarations, want one wrapper per reference (2)", len(grouped))
	}
	for i, g := range grouped {
		if got, want := g.child(common("groupedDeclaration")).value(), s.ReferencedStatements[i].ReferenceNumber; got != want {
			t.Errorf("groupedDeclarations[%d] %q, want %q", i, got, want)
		}
	}
	for _, secret := range []string{testAuthKey, "SEKUYXPP", s.OperatorUUID} {
		if bytes.Contains(req.raw, []byte(secret)) {
			t.Errorf("request contains %q", secret)
		}
	}
}

func TestSOAPClient_SubmitRepresentative(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	s := validStatement()
	s.OperatorRole = euis.RoleRepresentativeOperator
	s.Operator = euis.Operator{
		Name: "Cacao Import GmbH", Country: "DE", EORI: "DE123456789012345",
		Street: "Hafenstraße 1", PostalCode: "20457", City: "Hamburg", Email: "eudr@example.de", Phone: "+49 40 123456",
	}
	if _, err := c.Submit(context.Background(), creds(srv), s); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	op := f.last().body.path(dds("statement"), dds("representedOperator"))
	if op == nil {
		t.Fatal("no representedOperator")
	}
	// The XSD order (name last) is checked by the fake; the values here.
	for _, tc := range []struct {
		path []string
		want string
	}{
		{[]string{"operatorReferenceNumber", "identifierType"}, "eori"},
		{[]string{"operatorReferenceNumber", "identifierValue"}, "DE123456789012345"},
		{[]string{"operatorAddress", "country"}, "DE"},
		{[]string{"operatorAddress", "street"}, "Hafenstraße 1"},
		{[]string{"operatorAddress", "postalCode"}, "20457"},
		{[]string{"operatorAddress", "city"}, "Hamburg"},
		{[]string{"operatorEmail"}, "eudr@example.de"},
		{[]string{"operatorPhone"}, "+49 40 123456"},
		{[]string{"operatorName"}, "Cacao Import GmbH"},
	} {
		n := op
		for _, p := range tc.path {
			n = n.child(common(p))
		}
		if got := n.value(); got != tc.want {
			t.Errorf("representedOperator/%s %q, want %q", strings.Join(tc.path, "/"), got, tc.want)
		}
	}
	if last := op.children[len(op.children)-1]; last.name != common("operatorName") {
		t.Errorf("last child of representedOperator %s, want operatorName", last.name.Local)
	}
}

// submitGoodsMeasure files a DOMESTIC statement of one commodity with a
// fake EU system and answers the goodsMeasure element its body carried,
// and the raw body.
func submitGoodsMeasure(t *testing.T, c euis.Commodity) (*node, []byte) {
	t.Helper()
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	s := validStatement()
	s.ActivityType = euis.ActivityDomestic
	s.Commodities = []euis.Commodity{c}
	if _, err := newClient(srv, clk.Now).Submit(context.Background(), creds(srv), s); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	last := f.last()
	return last.body.path(dds("statement"), dds("commodities"), dds("descriptors"), common("goodsMeasure")), last.raw
}

func TestSOAPClient_SubmitDomesticUnits(t *testing.T) {
	gm, _ := submitGoodsMeasure(t, euis.Commodity{
		HSHeading: "090111", DescriptionOfGoods: "Coffee, not roasted", NetWeightKg: "0.000001",
		PercentageEstimation: ptr(12.5), SupplementaryUnit: dec("1000"), SupplementaryUnitType: "NAR",
		Producers: producers("ET", 0, 1),
	})
	var order []string
	for _, ch := range gm.children {
		order = append(order, ch.name.Local+"="+ch.value())
	}
	want := "percentageEstimationOrDeviation=12.5 netWeight=0.000001 supplementaryUnit=1000 supplementaryUnitQualifier=NAR"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("goodsMeasure %s, want %s", got, want)
	}
}

func TestSOAPClient_SubmitInvalid(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	s := validStatement()
	s.Commodities[0].HSHeading = "18O1"
	_, err := c.Submit(context.Background(), creds(srv), s)
	var vs euis.Violations
	if !errors.As(err, &vs) {
		t.Fatalf("Submit: %v, want Violations", err)
	}
	if vs[0].Code != euis.CodeInvalidFormat || vs[0].Path != "commodities[0].hsHeading" {
		t.Errorf("violation %v, want INVALID_FORMAT at commodities[0].hsHeading", vs[0])
	}
	if euis.IsTransient(err) {
		t.Error("IsTransient(Violations) = true")
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("%d requests sent for an invalid statement", n)
	}
}

func TestSOAPClient_Security(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	cr := creds(srv)
	// Many calls in the same millisecond: the fake checks each digest and
	// refuses a nonce it has seen.
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Echo(context.Background(), cr, fmt.Sprint("ping ", i))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("Echo: %v", err)
		}
	}
	calls := f.recorded()
	if len(calls) != 40 {
		t.Fatalf("%d calls, want 40", len(calls))
	}
	seen := map[string]bool{}
	for _, cl := range calls {
		nonce := cl.tree.path(soapN("Header"), wsse("Security"), wsse("UsernameToken"), wsse("Nonce")).value()
		if seen[nonce] {
			t.Errorf("nonce %s used twice", nonce)
		}
		seen[nonce] = true
		created := cl.tree.path(soapN("Header"), wsse("Security"), wsse("UsernameToken"), wsu("Created")).value()
		if want := "2026-05-20T09:50:00.000Z"; created != want {
			t.Errorf("Created %s, want %s", created, want)
		}
		if expires := cl.tree.path(soapN("Header"), wsse("Security"), wsu("Timestamp"), wsu("Expires")).value(); expires != "2026-05-20T09:55:00.000Z" {
			t.Errorf("Expires %s, want Created + 5 minutes", expires)
		}
		if bytes.Contains(cl.raw, []byte(testAuthKey)) {
			t.Error("request contains the authentication key")
		}
	}
}

func TestSOAPClient_ClockSkew(t *testing.T) {
	server := newClock(t0)
	for _, tc := range []struct {
		skew time.Duration
		ok   bool
	}{
		{-4 * time.Minute, true}, {4 * time.Minute, true}, {-6 * time.Minute, false}, {6 * time.Minute, false},
	} {
		t.Run(tc.skew.String(), func(t *testing.T) {
			_, srv := newFakeEU(t, server.Now)
			c := newClient(srv, func() time.Time { return t0.Add(tc.skew) })
			_, err := c.Echo(context.Background(), creds(srv), "ping")
			if tc.ok {
				if err != nil {
					t.Fatalf("Echo with the clock %v off: %v", tc.skew, err)
				}
				return
			}
			var f *euis.Fault
			if !errors.As(err, &f) || f.Kind != euis.FaultAuthentication {
				t.Fatalf("Echo with the clock %v off: %v, want an authentication fault", tc.skew, err)
			}
			if euis.IsTransient(err) {
				t.Error("authentication fault is transient")
			}
		})
	}
}

func TestSOAPClient_WrongKey(t *testing.T) {
	clk := newClock(t0)
	_, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	cr := creds(srv)
	cr.AuthKey = "not-the-key"
	_, err := c.Echo(context.Background(), cr, "ping")
	var f *euis.Fault
	if !errors.As(err, &f) || f.Kind != euis.FaultAuthentication || f.HTTPStatus != 500 {
		t.Fatalf("Echo with a wrong key: %v, want an authentication fault with HTTP 500", err)
	}
}

func TestSOAPClient_Get(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	uuids := []string{"071874bd-8c62-4cac-8eb6-b2fbe003410c", "5e5ad1ff-a735-4eec-8588-b164a79738d1", "64d46f0a-d5a3-422f-a7bc-fb9cbf6bff2e", "a3c1e5f2-0b4d-4e8f-9a1b-2c3d4e5f6a7b"}
	got, err := c.Get(context.Background(), creds(srv), uuids)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	var sent []string
	for _, n := range f.last().body.all(dds("uuidList")) {
		sent = append(sent, n.value())
	}
	if strings.Join(sent, ",") != strings.Join(uuids, ",") {
		t.Errorf("uuidList %v, want %v", sent, uuids)
	}
	want := []euis.Status{
		{UUID: uuids[0], InternalReference: "PO-4711", Status: euis.StatusAvailable, ReferenceNumber: "26BE7XTVCZAQ2S", VerificationNumber: "SFFCB4Y3", Date: time.Date(2026, 5, 20, 9, 55, 1, 0, time.UTC)},
		{UUID: uuids[1], InternalReference: "PO-4712", Status: euis.StatusRejected,
			Reasons:       []string{"EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY: each polygon must have at least 4 non-aligned points"},
			Communication: "Please correct the geolocation of producer 3 and file again.", Date: time.Date(2026, 5, 20, 8, 0, 0, 0, time.UTC)},
		{UUID: uuids[2], InternalReference: "26HRBELAQMZQ9C", Status: euis.StatusSubmitted, Date: time.Date(2026, 5, 20, 9, 56, 0, 0, time.UTC)},
		{UUID: uuids[3], InternalReference: "PO-4714", Status: "UNDER_CUSTOMS_LOCK", ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "SEKUYXPP"},
	}
	if len(got) != len(want) {
		t.Fatalf("%d statuses, want %d", len(got), len(want))
	}
	for i := range want {
		if g, w := fmt.Sprintf("%+v", got[i]), fmt.Sprintf("%+v", want[i]); g != w {
			t.Errorf("status %d:\n got %s\nwant %s", i, g, w)
		}
	}
}

func TestSOAPClient_GetLimits(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	cr := creds(srv)
	got, err := c.Get(context.Background(), cr, nil)
	if err != nil || got != nil {
		t.Errorf("Get(nil) = %v, %v; want nil, nil", got, err)
	}
	many := make([]string, euis.MaxUUIDsPerGet+1)
	for i := range many {
		many[i] = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
	}
	if _, err := c.Get(context.Background(), cr, many); err == nil {
		t.Error("Get of 101 uuids: no error")
	}
	if _, err := c.Get(context.Background(), cr, []string{"not-a-uuid"}); err == nil {
		t.Error("Get of a malformed uuid: no error")
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
	answer := readFile(t, "get_dds_empty_response.xml")
	f.setReply(func(call) (int, []byte) { return 200, answer }, nil)
	if got, err := c.Get(context.Background(), cr, many[:euis.MaxUUIDsPerGet]); err != nil || len(got) != 0 {
		t.Errorf("Get of 100 uuids = %v, %v; want none, nil", got, err)
	}
}

func TestSOAPClient_GetNotFound(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	answer := readFile(t, "fault_not_found.xml")
	f.setReply(func(call) (int, []byte) { return 500, answer }, nil)
	got, err := c.Get(context.Background(), creds(srv), []string{"071874bd-8c62-4cac-8eb6-b2fbe003410c"})
	if err != nil || len(got) != 0 {
		t.Errorf("Get answered NotFoundException: %v, %v; want nothing, nil", got, err)
	}
	got, err = c.FindByInternalReference(context.Background(), creds(srv), "PO-1")
	if err != nil || len(got) != 0 {
		t.Errorf("FindByInternalReference answered NotFoundException: %v, %v; want nothing, nil", got, err)
	}
}

func TestSOAPClient_FindByInternalReference(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	got, err := c.FindByInternalReference(context.Background(), creds(srv), "PO-4711")
	if err != nil {
		t.Fatalf("FindByInternalReference: %v", err)
	}
	if len(got) != 2 || got[0].InternalReference != "PO-4711" || got[1].InternalReference != "PO-4711-2" || got[1].Status != euis.StatusSubmitted {
		t.Errorf("got %+v", got)
	}
	if v := f.last().body.child(dds("internalReference")).value(); v != "PO-4711" {
		t.Errorf("internalReference %q", v)
	}
	if _, err := c.FindByInternalReference(context.Background(), creds(srv), strings.Repeat("x", 36)); err == nil {
		t.Error("36-character reference: no error")
	}
}

func TestSOAPClient_Withdraw(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	uuid := "071874bd-8c62-4cac-8eb6-b2fbe003410c"
	if err := c.Withdraw(context.Background(), creds(srv), uuid); err != nil {
		t.Fatalf("Withdraw: %v", err)
	}
	if got := f.last().body.child(dds("uuid")).value(); got != uuid {
		t.Errorf("uuid %q, want %q", got, uuid)
	}
	if err := c.Withdraw(context.Background(), creds(srv), "26BE7XTVCZAQ2S"); err == nil {
		t.Error("Withdraw of a reference number: no error")
	}
}

func TestSOAPClient_VerifyDeclaration(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	got, err := c.VerifyDeclaration(context.Background(), creds(srv), euis.Reference{ReferenceNumber: "26HRBELAQMZQ9C", VerificationNumber: "7QSWSSRD"})
	if err != nil || got != euis.VerifyExistingUsable {
		t.Fatalf("VerifyDeclaration = %q, %v; want EXISTING_USABLE", got, err)
	}
	b := f.last().body
	if b.child(verifyN("referenceNumber")).value() != "26HRBELAQMZQ9C" || b.child(verifyN("verificationNumber")).value() != "7QSWSSRD" {
		t.Errorf("request body %s", f.last().raw)
	}
	_, err = c.VerifyDeclaration(context.Background(), creds(srv), euis.Reference{ReferenceNumber: "26HR", VerificationNumber: "7QSWSSRD"})
	var vs euis.Violations
	if !errors.As(err, &vs) {
		t.Errorf("VerifyDeclaration of a malformed number: %v, want Violations", err)
	}
}

func TestSOAPClient_Echo(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	cr := creds(srv)
	cr.Endpoint += "/" // a trailing slash changes nothing
	got, err := c.Echo(context.Background(), cr, "Hello EUDR")
	if err != nil || got != "OK" {
		t.Fatalf("Echo = %q, %v; want OK", got, err)
	}
	if q := f.last().body.child(echoN("query")).value(); q != "Hello EUDR" {
		t.Errorf("query %q", q)
	}
}

func TestSOAPClient_NotConfigured(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	for name, mutate := range map[string]func(*euis.Credentials){
		"NoUsername": func(cr *euis.Credentials) { cr.Username = "" },
		"NoAuthKey":  func(cr *euis.Credentials) { cr.AuthKey = "" },
		"NoClientID": func(cr *euis.Credentials) { cr.ClientID = "" },
		"NoEndpoint": func(cr *euis.Credentials) { cr.Endpoint = "" },
		"FTP":        func(cr *euis.Credentials) { cr.Endpoint = "ftp://example.org/tracesnt" },
		"Relative":   func(cr *euis.Credentials) { cr.Endpoint = "/tracesnt" },
	} {
		t.Run(name, func(t *testing.T) {
			cr := creds(srv)
			mutate(&cr)
			_, err := c.Submit(context.Background(), cr, validStatement())
			if !errors.Is(err, euis.ErrNotConfigured) {
				t.Errorf("Submit: %v, want ErrNotConfigured", err)
			}
			if euis.IsTransient(err) {
				t.Error("ErrNotConfigured is transient")
			}
			if strings.Contains(fmt.Sprint(err), testAuthKey) {
				t.Error("error shows the authentication key")
			}
		})
	}
	if n := len(f.recorded()); n != 0 {
		t.Errorf("%d requests sent", n)
	}
}

func TestSOAPClient_RateLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("takes a second")
	}
	clk := newClock(t0)
	_, srv := newFakeEU(t, clk.Now)
	c := euis.NewSOAPClient(srv.Client(), euis.SOAPOptions{Now: clk.Now}) // MaxCallsPerSecond
	start := time.Now()
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Echo(context.Background(), creds(srv), "ping"); err != nil {
				t.Errorf("Echo: %v", err)
			}
		}()
	}
	wg.Wait()
	// 5 calls per second, no burst: the 6th call starts 1 s after the 1st.
	if elapsed := time.Since(start); elapsed < 950*time.Millisecond {
		t.Errorf("6 calls in %v, want at least 1s at 5 calls per second", elapsed)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	c.Echo(ctx, creds(srv), "ping") // takes the token
	_, err := c.Echo(ctx, creds(srv), "ping")
	if err == nil || !euis.IsTransient(err) {
		t.Errorf("Echo that cannot get a token before its deadline: %v, want transient", err)
	}
}

func TestSOAPClient_OnExchange(t *testing.T) {
	clk := newClock(t0)
	_, srv := newFakeEU(t, clk.Now)
	var got []euis.Exchange
	c := euis.NewSOAPClient(srv.Client(), euis.SOAPOptions{Now: clk.Now, CallsPerSecond: -1, OnExchange: func(x euis.Exchange) {
		x.Request, x.Response = bytes.Clone(x.Request), bytes.Clone(x.Response)
		got = append(got, x)
	}})
	if _, err := c.Submit(context.Background(), creds(srv), validStatement()); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Fatalf("%d exchanges, want 1", len(got))
	}
	x := got[0]
	if x.Operation != "submitDds" || x.StatusCode != 200 || x.Err != nil || !strings.HasSuffix(x.URL, "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3") {
		t.Errorf("exchange %s %s %d %v", x.Operation, x.URL, x.StatusCode, x.Err)
	}
	if !bytes.Contains(x.Request, []byte("SubmitDdsRequest")) || !bytes.Contains(x.Response, []byte("SubmitDdsResponse")) {
		t.Error("exchange lacks the request or the answer")
	}
	if bytes.Contains(x.Request, []byte(testAuthKey)) {
		t.Error("exchange holds the authentication key")
	}
}

func TestSOAPClient_EchoPath(t *testing.T) {
	answer := readFile(t, "echo_response.xml")
	paths := make(chan string, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		w.Write(answer)
	}))
	defer srv.Close()
	c := euis.NewSOAPClient(srv.Client(), euis.SOAPOptions{CallsPerSecond: -1, EchoPath: "/ws/eudr/echo"})
	if _, err := c.Echo(context.Background(), creds(srv), "ping"); err != nil {
		t.Fatal(err)
	}
	if path := <-paths; path != "/tracesnt/ws/eudr/echo" {
		t.Errorf("echo posted to %s", path)
	}
}

func TestCredentials_String(t *testing.T) {
	cr := euis.Credentials{Username: testUser, AuthKey: testAuthKey, ClientID: testClientID, Endpoint: euis.AcceptanceEndpoint}
	for _, format := range []string{"%v", "%+v", "%#v", "%s"} {
		if s := fmt.Sprintf(format, cr); strings.Contains(s, testAuthKey) || !strings.Contains(s, testUser) {
			t.Errorf("Sprintf(%s) = %s", format, s)
		}
	}
	if err := cr.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

// TestSOAPClient_SubmitExactQuantities: quantities go out as given, to
// the last of their 16 digits (through a float64, 9999999999.999999
// became 9999999999.999998), and the body is one the EU schema accepts.
func TestSOAPClient_SubmitExactQuantities(t *testing.T) {
	gm, raw := submitGoodsMeasure(t, euis.Commodity{
		HSHeading: "090111", DescriptionOfGoods: "Coffee, not roasted", NetWeightKg: "9999999999.999999",
		PercentageEstimation: ptr(12.5), SupplementaryUnit: dec("1234567890.123457"), SupplementaryUnitType: "MTK",
		Producers: producers("ET", 0, 1),
	})
	got := map[string]string{}
	for _, ch := range gm.children {
		got[ch.name.Local] = ch.value()
	}
	if got["netWeight"] != "9999999999.999999" || got["supplementaryUnit"] != "1234567890.123457" {
		t.Errorf("goodsMeasure %v, want netWeight 9999999999.999999 and supplementaryUnit 1234567890.123457", got)
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, raw)
}

// TestSOAPClient_SubmitOperatorIdentifiers: a represented operator goes
// with every reference number it has, of each of the schema's ten types,
// up to twelve with its EORI (not repeated when also listed), and with its
// full address beside the structured one; the body passes the EU schema.
// More than twelve are refused before anything is sent.
func TestSOAPClient_SubmitOperatorIdentifiers(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	s := validStatement()
	s.OperatorRole = euis.RoleRepresentativeOperator
	s.Operator = euis.Operator{Name: "Cacao Import GmbH", Country: "DE", EORI: "DE123456789012345",
		Street: "Hafenstraße 1", PostalCode: "20457", City: "Hamburg", FullAddress: "Hafenstraße 1, 20457 Hamburg, Deutschland"}
	s.Operator.Identifiers = append(s.Operator.Identifiers, euis.OperatorIdentifier{Type: "eori", Value: "DE123456789012345"})
	for _, typ := range euis.IdentifierTypes {
		s.Operator.Identifiers = append(s.Operator.Identifiers, euis.OperatorIdentifier{Type: typ, Value: strings.ToUpper(typ) + "-4711"})
	}
	s.Operator.Identifiers = append(s.Operator.Identifiers, euis.OperatorIdentifier{Type: "oni", Value: strings.Repeat("9", euis.MaxIdentifierValueLen)})
	if _, err := c.Submit(context.Background(), creds(srv), s); err != nil {
		t.Fatalf("Submit: %v", err)
	}
	op := f.last().body.path(dds("statement"), dds("representedOperator"))
	var refs []string
	for _, ch := range op.children {
		if ch.name == common("operatorReferenceNumber") {
			refs = append(refs, ch.child(common("identifierType")).value()+"="+ch.child(common("identifierValue")).value())
		}
	}
	want := "eori=DE123456789012345 eori=EORI-4711 vat=VAT-4711 gln=GLN-4711 tin=TIN-4711 cbr=CBR-4711 cin=CIN-4711 duns=DUNS-4711 " +
		"comp_num=COMP_NUM-4711 comp_reg=COMP_REG-4711 oni=ONI-4711 oni=" + strings.Repeat("9", euis.MaxIdentifierValueLen)
	if got := strings.Join(refs, " "); got != want {
		t.Errorf("reference numbers %s, want %s", got, want)
	}
	if got := op.child(common("operatorAddress")).child(common("fullAddress")).value(); got != s.Operator.FullAddress {
		t.Errorf("fullAddress %q", got)
	}
	apitest.CheckEUSchema(t, apitest.DDSSchema, f.last().raw)

	sent := len(f.recorded())
	s.Operator.Identifiers = append(s.Operator.Identifiers, euis.OperatorIdentifier{Type: "vat", Value: "DE999"})
	_, err := c.Submit(context.Background(), creds(srv), s)
	var vs euis.Violations
	if !errors.As(err, &vs) || vs[0].Path != "operator.identifiers" || len(f.recorded()) != sent {
		t.Errorf("Submit with 13 reference numbers: %v, want a violation at operator.identifiers and nothing sent", err)
	}
}

// TestSOAPClient_BodyIdentity: credentials with an operator access
// identifier send it in the BodyIdentity header of every call to the
// statement service, which declares the header (release 8.2.1), and not to
// the verification and echo services, which do not; the header is one the
// EU schema accepts. Without the identifier no header is sent.
func TestSOAPClient_BodyIdentity(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	cr := creds(srv)
	cr.OperatorAccessIdentifier = "OP-0042"
	ctx := context.Background()
	uuid := "071874bd-8c62-4cac-8eb6-b2fbe003410c"
	c.Submit(ctx, cr, validStatement())
	c.Get(ctx, cr, []string{uuid})
	c.FindByInternalReference(ctx, cr, "PO-4711")
	c.Withdraw(ctx, cr, uuid)
	c.VerifyDeclaration(ctx, cr, euis.Reference{ReferenceNumber: "26BE7XTVCZAQ2S", VerificationNumber: "SFFCB4Y3"})
	c.Echo(ctx, cr, "ping")
	body := xml.Name{Space: euis.NSBody, Local: "BodyIdentity"}
	want := map[string]bool{"submitDds": true, "getDds": true, "getDdsByInternalReference": true, "withdrawDds": true,
		"verifyDeclaration": false, "testEcho": false}
	calls := f.recorded()
	if len(calls) != len(want) {
		t.Fatalf("%d calls recorded, want %d", len(calls), len(want))
	}
	for _, call := range calls {
		h := call.tree.path(soapN("Header"), body)
		if (h != nil) != want[call.op] {
			t.Errorf("%s: BodyIdentity header %v, want %v", call.op, h != nil, want[call.op])
			continue
		}
		if h == nil {
			continue
		}
		if got := h.child(xml.Name{Local: "OperatorAccessIdentifier"}).value(); got != "OP-0042" {
			t.Errorf("%s: OperatorAccessIdentifier %q, want OP-0042", call.op, got)
		}
		raw := string(call.raw)
		start, end := strings.Index(raw, "<body:BodyIdentity"), strings.Index(raw, "</body:BodyIdentity>")
		if err := apitest.ValidateEUSchema(t, apitest.BodySchema, []byte(raw[start:end+len("</body:BodyIdentity>")])); err != nil {
			t.Errorf("%s: %v", call.op, err)
		}
	}

	cr.OperatorAccessIdentifier = ""
	c.Submit(ctx, cr, validStatement())
	if h := f.last().tree.path(soapN("Header"), body); h != nil {
		t.Error("BodyIdentity sent without an operator access identifier")
	}
}
