package euis_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/euis"
)

// This file is a fake of the information system's V3 services: an
// httptest TLS server that checks every request as TRACES NT would
// (WS-Security digest, 16-byte nonces never reused, Created within 5
// minutes, SOAPAction, the XSD sequences of the body) and answers with the
// recorded shapes in testdata/. It is written from the WSDL and XSD, not
// from the client's code.

const (
	nsSOAP   = "http://schemas.xmlsoap.org/soap/envelope/"
	nsWSSE   = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd"
	nsWSU    = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd"
	nsBase   = "http://ec.europa.eu/sanco/tracesnt/base/v4"
	nsDDS    = "http://ec.europa.eu/tracesnt/certificate/eudr/due-diligence-statement/v3"
	nsCommon = "http://ec.europa.eu/tracesnt/certificate/eudr/common/v3"
	nsVerify = "http://ec.europa.eu/tracesnt/certificate/eudr/verify-declaration/v3"
	nsEcho   = "http://ec.europa.eu/tracesnt/eudr/echo"

	digestType = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0#PasswordDigest"
	base64Type = "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary"

	testUser     = "n00ihxdy"
	testAuthKey  = "s3cr3t-Authentication-Key-0123456789"
	testClientID = "eudr-test"
)

func soapN(l string) xml.Name   { return xml.Name{Space: nsSOAP, Local: l} }
func wsse(l string) xml.Name    { return xml.Name{Space: nsWSSE, Local: l} }
func wsu(l string) xml.Name     { return xml.Name{Space: nsWSU, Local: l} }
func dds(l string) xml.Name     { return xml.Name{Space: nsDDS, Local: l} }
func common(l string) xml.Name  { return xml.Name{Space: nsCommon, Local: l} }
func verifyN(l string) xml.Name { return xml.Name{Space: nsVerify, Local: l} }
func echoN(l string) xml.Name   { return xml.Name{Space: nsEcho, Local: l} }

// elem is an element of an XSD sequence with its occurrences; max -1 is
// unbounded.
type elem struct {
	name     xml.Name
	min, max int
}

// sequences are the XSD sequences of what the client sends: V3
// due-diligence-statement and common schemas (release 8.2.1), the
// verify-declaration schema, the echo sample, SOAP 1.1 and WS-Security.
// An element not listed here must be a leaf.
var sequences = map[xml.Name][]elem{
	soapN("Envelope"): {{soapN("Header"), 1, 1}, {soapN("Body"), 1, 1}},
	soapN("Header"): {{wsse("Security"), 1, 1}, {xml.Name{Space: nsBase, Local: "WebServiceClientId"}, 1, 1},
		{xml.Name{Space: euis.NSBody, Local: "BodyIdentity"}, 0, 1}},
	{Space: euis.NSBody, Local: "BodyIdentity"}: {{xml.Name{Local: "OperatorAccessIdentifier"}, 1, 1}},
	wsse("Security"):      {{wsu("Timestamp"), 1, 1}, {wsse("UsernameToken"), 1, 1}},
	wsu("Timestamp"):      {{wsu("Created"), 1, 1}, {wsu("Expires"), 1, 1}},
	wsse("UsernameToken"): {{wsse("Username"), 1, 1}, {wsse("Password"), 1, 1}, {wsse("Nonce"), 1, 1}, {wsu("Created"), 1, 1}},

	dds("SubmitDdsRequest"): {{dds("operatorRole"), 1, 1}, {dds("statement"), 1, 1}},
	dds("statement"): { // DueDiligenceStatementBaseType
		{dds("internalReferenceNumber"), 0, 1}, {dds("activityType"), 1, 1}, {dds("representedOperator"), 0, 1},
		{dds("countryOfActivity"), 0, 1}, {dds("borderCrossCountry"), 0, 1}, {dds("comment"), 0, 1},
		{dds("commodities"), 1, 200}, {dds("geoLocationConfidential"), 1, 1}, {dds("groupedDeclarations"), 0, 2000},
	},
	dds("representedOperator"): { // EconomicOperatorIdentificationType
		{common("operatorReferenceNumber"), 0, 12}, {common("operatorAddress"), 0, 1}, {common("operatorEmail"), 0, 1},
		{common("operatorPhone"), 0, 1}, {common("operatorName"), 1, 1},
	},
	common("operatorReferenceNumber"): {{common("identifierType"), 1, 1}, {common("identifierValue"), 1, 1}},
	common("operatorAddress"): {
		{common("country"), 1, 1}, {common("street"), 1, 1}, {common("postalCode"), 1, 1}, {common("city"), 1, 1}, {common("fullAddress"), 0, 1},
	},
	dds("commodities"): { // DdsCommodityType
		{dds("position"), 0, 1}, {dds("descriptors"), 1, 1}, {dds("hsHeading"), 1, 1}, {dds("speciesInfo"), 0, 500}, {dds("producers"), 0, 1000},
	},
	dds("descriptors"):         {{common("descriptionOfGoods"), 1, 1}, {common("goodsMeasure"), 1, 1}},
	common("goodsMeasure"):     {{common("percentageEstimationOrDeviation"), 0, 1}, {common("netWeight"), 0, 1}, {common("supplementaryUnit"), 0, 1}, {common("supplementaryUnitQualifier"), 0, 1}},
	dds("speciesInfo"):         {{dds("scientificName"), 0, 1}, {dds("commonName"), 0, 1}},
	dds("producers"):           {{dds("position"), 0, 1}, {dds("country"), 1, 1}, {dds("name"), 0, 1}, {dds("geometryGeojson"), 1, 1}},
	dds("groupedDeclarations"): {{common("groupedDeclaration"), 1, 1}},

	dds("WithdrawDdsRequest"):               {{dds("uuid"), 1, 1}},
	dds("AmendDdsRequest"):                  {{dds("uuid"), 1, 1}, {dds("statement"), 1, 1}},
	dds("GetDdsRequest"):                    {{dds("uuidList"), 1, 100}},
	dds("GetDdsByInternalReferenceRequest"): {{dds("internalReference"), 1, 1}},
	dds("GetDdsByIdentifiersRequest"):       {{dds("referenceAndVerificationNumber"), 1, 1}},
	dds("referenceAndVerificationNumber"):   {{common("referenceNumber"), 1, 1}, {common("verificationNumber"), 1, 1}},
	verifyN("VerifyDeclarationRequest"):     {{verifyN("referenceNumber"), 1, 1}, {verifyN("verificationNumber"), 1, 1}},
	echoN("EudrEchoRequest"):                {{echoN("query"), 1, 1}},
}

// operations maps a request's body element to its operation, the service
// path that serves it and the SOAPAction of the WSDL binding.
var operations = map[xml.Name]struct{ op, path, action string }{
	dds("SubmitDdsRequest"):                 {"submitDds", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/submitDds"},
	dds("WithdrawDdsRequest"):               {"withdrawDds", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/withdrawDds"},
	dds("AmendDdsRequest"):                  {"amendDds", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/amendDds"},
	dds("GetDdsRequest"):                    {"getDds", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/getDds"},
	dds("GetDdsByInternalReferenceRequest"): {"getDdsByInternalReference", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/getDdsByInternalReference"},
	dds("GetDdsByIdentifiersRequest"):       {"getDdsByIdentifiers", "/tracesnt/ws/EUDRDueDiligenceStatementServiceV3", nsDDS + "/getDdsByIdentifiers"},
	verifyN("VerifyDeclarationRequest"):     {"verifyDeclaration", "/tracesnt/ws/EUDRVerifyDeclarationServiceV3", "http://ec.europa.eu/tracesnt/certificate/eudr/verification/v3/verify-declaration"},
	echoN("EudrEchoRequest"):                {"testEcho", "/tracesnt/ws/EudrEchoService", nsEcho},
}

// node is an element of a parsed request, names resolved to namespaces.
type node struct {
	name     xml.Name
	attrs    []xml.Attr
	children []*node
	text     string
}

func parseTree(b []byte) (*node, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []*node
	var root *node
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			n := &node{name: t.Name, attrs: t.Attr}
			if len(stack) > 0 {
				p := stack[len(stack)-1]
				p.children = append(p.children, n)
			} else {
				root = n
			}
			stack = append(stack, n)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				stack[len(stack)-1].text += string(t)
			}
		}
	}
	if root == nil {
		return nil, fmt.Errorf("no root element")
	}
	return root, nil
}

// child returns the first child named name, or nil.
func (n *node) child(name xml.Name) *node {
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			return c
		}
	}
	return nil
}

// all returns the children named name.
func (n *node) all(name xml.Name) []*node {
	var out []*node
	if n == nil {
		return nil
	}
	for _, c := range n.children {
		if c.name == name {
			out = append(out, c)
		}
	}
	return out
}

// path follows children by name; nil when one is missing.
func (n *node) path(names ...xml.Name) *node {
	for _, name := range names {
		if n == nil {
			return nil
		}
		n = n.child(name)
	}
	return n
}

func (n *node) attr(name xml.Name) string {
	if n == nil {
		return ""
	}
	for _, a := range n.attrs {
		if a.Name == name {
			return a.Value
		}
	}
	return ""
}

func (n *node) value() string {
	if n == nil {
		return "<missing>"
	}
	return strings.TrimSpace(n.text)
}

// checkSequences checks n and its descendants against the XSD sequences:
// children in sequence order, each within its occurrences, every required
// one present, no children under a leaf.
func checkSequences(n *node, at string) []string {
	at += "/" + n.name.Local
	if n.name == soapN("Body") {
		if len(n.children) != 1 {
			return []string{fmt.Sprintf("%s: %d body elements, want 1", at, len(n.children))}
		}
		if _, ok := operations[n.children[0].name]; !ok {
			return []string{fmt.Sprintf("%s: unknown body element {%s}%s", at, n.children[0].name.Space, n.children[0].name.Local)}
		}
		return checkSequences(n.children[0], at)
	}
	seq, ok := sequences[n.name]
	if !ok {
		if len(n.children) > 0 {
			return []string{fmt.Sprintf("%s: leaf {%s}%s has child {%s}%s", at, n.name.Space, n.name.Local, n.children[0].name.Space, n.children[0].name.Local)}
		}
		return nil
	}
	var problems []string
	counts := make([]int, len(seq))
	pos := 0
	for _, c := range n.children {
		for pos < len(seq) && seq[pos].name != c.name {
			pos++
		}
		if pos == len(seq) {
			problems = append(problems, fmt.Sprintf("%s: {%s}%s unexpected or out of the XSD order", at, c.name.Space, c.name.Local))
			break
		}
		counts[pos]++
		if seq[pos].max >= 0 && counts[pos] > seq[pos].max {
			problems = append(problems, fmt.Sprintf("%s: more than %d %s", at, seq[pos].max, c.name.Local))
		}
		problems = append(problems, checkSequences(c, at)...)
	}
	for i, e := range seq {
		if counts[i] < e.min {
			problems = append(problems, fmt.Sprintf("%s: missing %s", at, e.name.Local))
		}
	}
	return problems
}

// call is a request the fake received.
type call struct {
	op     string
	action string
	raw    []byte
	tree   *node
	body   *node // the operation element
}

// fakeEU is the fake information system.
type fakeEU struct {
	t   *testing.T
	now func() time.Time

	mu     sync.Mutex
	nonces map[string]bool
	calls  []call
	// reply, when set, answers instead of the testdata file of the
	// operation: status and body; header is added to the answer.
	reply  func(c call) (int, []byte)
	header http.Header
}

// setReply makes reply answer the next requests, with header.
func (f *fakeEU) setReply(reply func(c call) (int, []byte), header http.Header) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply, f.header = reply, header
}

// newFakeEU starts a fake whose clock is now and returns it with its
// server; credentials for it come from creds(srv).
func newFakeEU(t *testing.T, now func() time.Time) (*fakeEU, *httptest.Server) {
	f := &fakeEU{t: t, now: now, nonces: map[string]bool{}}
	srv := httptest.NewTLSServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

func creds(srv *httptest.Server) euis.Credentials {
	return euis.Credentials{Username: testUser, AuthKey: testAuthKey, ClientID: testClientID, Endpoint: srv.URL + "/tracesnt"}
}

func (f *fakeEU) recorded() []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]call(nil), f.calls...)
}

func (f *fakeEU) last() call {
	f.t.Helper()
	calls := f.recorded()
	if len(calls) == 0 {
		f.t.Fatal("no request reached the fake information system")
	}
	return calls[len(calls)-1]
}

func (f *fakeEU) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		f.t.Errorf("read request: %v", err)
		return
	}
	if r.Method != http.MethodPost {
		f.t.Errorf("method %s, want POST", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/xml") {
		f.t.Errorf("Content-Type %q, want text/xml", ct)
	}
	tree, err := parseTree(raw)
	if err != nil {
		f.t.Errorf("request is not XML: %v", err)
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	for _, p := range checkSequences(tree, "") {
		f.t.Errorf("XSD: %s", p)
	}
	body := tree.child(soapN("Body"))
	if body == nil || len(body.children) != 1 {
		http.Error(w, "no body", http.StatusBadRequest)
		return
	}
	c := call{raw: raw, tree: tree, body: body.children[0], action: strings.Trim(r.Header.Get("SOAPAction"), `"`)}
	o, ok := operations[c.body.name]
	if !ok {
		http.Error(w, "unknown operation", http.StatusBadRequest)
		return
	}
	c.op = o.op
	if r.URL.Path != o.path {
		f.t.Errorf("%s posted to %s, want %s", o.op, r.URL.Path, o.path)
	}
	if c.action != o.action {
		f.t.Errorf("%s: SOAPAction %q, want %q", o.op, c.action, o.action)
	}
	if !strings.HasPrefix(r.Header.Get("SOAPAction"), `"`) {
		f.t.Errorf("%s: SOAPAction %s not quoted", o.op, r.Header.Get("SOAPAction"))
	}

	if problem := f.authenticate(tree); problem != "" {
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.mu.Unlock()
		writeFile(w, http.StatusInternalServerError, "fault_unauthenticated.xml", f.t)
		f.t.Logf("fake refused %s: %s", o.op, problem)
		return
	}

	f.mu.Lock()
	f.calls = append(f.calls, c)
	reply, header := f.reply, f.header
	f.mu.Unlock()
	for k, v := range header {
		w.Header()[k] = v
	}
	if reply != nil {
		status, b := reply(c)
		w.Header().Set("Content-Type", "text/xml;charset=utf-8")
		w.WriteHeader(status)
		w.Write(b)
		return
	}
	files := map[string]string{
		"submitDds": "submit_response.xml", "withdrawDds": "withdraw_response.xml", "amendDds": "amend_response.xml", "getDds": "get_dds_response.xml",
		"getDdsByInternalReference": "get_dds_by_internal_reference_response.xml",
		"getDdsByIdentifiers":       "get_dds_by_identifiers_response.xml", "verifyDeclaration": "verify_response.xml", "testEcho": "echo_response.xml",
	}
	writeFile(w, http.StatusOK, files[o.op], f.t)
}

// authenticate checks the WS-Security header as the information system
// does, and returns what is wrong, or "".
func (f *fakeEU) authenticate(tree *node) string {
	header := tree.child(soapN("Header"))
	if id := header.child(xml.Name{Space: nsBase, Local: "WebServiceClientId"}); id.value() != testClientID {
		return fmt.Sprintf("WebServiceClientId %q", id.value())
	}
	sec := header.child(wsse("Security"))
	ts, tok := sec.child(wsu("Timestamp")), sec.child(wsse("UsernameToken"))
	if ts.attr(wsu("Id")) == "" || tok.attr(wsu("Id")) == "" {
		return "no wsu:Id on Timestamp or UsernameToken"
	}
	if u := tok.child(wsse("Username")).value(); u != testUser {
		return "username " + u
	}
	pw := tok.child(wsse("Password"))
	if pw.attr(xml.Name{Local: "Type"}) != digestType {
		return "password type " + pw.attr(xml.Name{Local: "Type"})
	}
	nonceEl := tok.child(wsse("Nonce"))
	if nonceEl.attr(xml.Name{Local: "EncodingType"}) != base64Type {
		return "nonce encoding " + nonceEl.attr(xml.Name{Local: "EncodingType"})
	}
	nonce, err := base64.StdEncoding.DecodeString(nonceEl.value())
	if err != nil || len(nonce) != 16 {
		return fmt.Sprintf("nonce %q: %d bytes, err %v; want 16", nonceEl.value(), len(nonce), err)
	}
	f.mu.Lock()
	reused := f.nonces[string(nonce)]
	f.nonces[string(nonce)] = true
	f.mu.Unlock()
	if reused {
		return "nonce reused"
	}
	createdText := tok.child(wsu("Created")).value()
	created, err := time.Parse(time.RFC3339Nano, createdText)
	if err != nil {
		return "created " + createdText
	}
	if skew := f.now().Sub(created); skew > 5*time.Minute || skew < -5*time.Minute {
		return fmt.Sprintf("created %s is %v from the server's clock", createdText, skew)
	}
	tsCreated, err1 := time.Parse(time.RFC3339Nano, ts.child(wsu("Created")).value())
	tsExpires, err2 := time.Parse(time.RFC3339Nano, ts.child(wsu("Expires")).value())
	if err1 != nil || err2 != nil || !tsExpires.After(tsCreated) || f.now().After(tsExpires) {
		return "timestamp expired or unreadable"
	}
	h := sha1.New()
	h.Write(nonce)
	h.Write([]byte(createdText))
	h.Write([]byte(testAuthKey))
	if want := base64.StdEncoding.EncodeToString(h.Sum(nil)); pw.value() != want {
		return fmt.Sprintf("digest %s, want %s", pw.value(), want)
	}
	return ""
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(w http.ResponseWriter, status int, name string, t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Errorf("testdata: %v", err)
		http.Error(w, "no testdata", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/xml;charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// TestFakeEU_ChecksSequences shows that the fake's XSD check is not idle:
// requests with elements out of order, missing or unknown fail it.
func TestFakeEU_ChecksSequences(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	s := validStatement()
	s.OperatorRole = euis.RoleRepresentativeOperator
	s.Operator.Street, s.Operator.PostalCode, s.Operator.City = "Rue Royale 1", "1000", "Bruxelles"
	if _, err := euisSubmit(c, srv, s); err != nil {
		t.Fatal(err)
	}
	good := string(f.last().raw)
	tree, err := parseTree([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if p := checkSequences(tree, ""); len(p) > 0 {
		t.Fatalf("the client's request fails the check: %v", p)
	}
	cut := func(s, start, end string) (string, string) {
		i := strings.Index(s, start)
		j := strings.Index(s[i:], end) + i + len(end)
		return s[:i] + s[j:], s[i:j]
	}
	for name, mutate := range map[string]func(string) string{
		"HSHeadingBeforeDescriptors": func(s string) string {
			rest, hs := cut(s, "<dds:hsHeading>", "</dds:hsHeading>")
			return strings.Replace(rest, "<dds:descriptors>", hs+"<dds:descriptors>", 1)
		},
		"OperatorNameFirst": func(s string) string {
			rest, name := cut(s, "<eudrCommon:operatorName>", "</eudrCommon:operatorName>")
			return strings.Replace(rest, "<dds:representedOperator>", "<dds:representedOperator>"+name, 1)
		},
		"NoActivityType": func(s string) string {
			rest, _ := cut(s, "<dds:activityType>", "</dds:activityType>")
			return rest
		},
		"GroupedInStatementNamespace": func(s string) string {
			return strings.Replace(s, "<eudrCommon:groupedDeclaration>26FRYUI34JTQKB</eudrCommon:groupedDeclaration>", "<dds:groupedDeclaration>26FRYUI34JTQKB</dds:groupedDeclaration>", 1)
		},
		"UnknownElement": func(s string) string {
			return strings.Replace(s, "<dds:geoLocationConfidential>", "<dds:volume>3</dds:volume><dds:geoLocationConfidential>", 1)
		},
		"NonceAfterCreated": func(s string) string {
			rest, nonce := cut(s, "<wsse:Nonce ", "</wsse:Nonce>")
			return strings.Replace(rest, "</wsse:UsernameToken>", nonce+"</wsse:UsernameToken>", 1)
		},
	} {
		tree, err := parseTree([]byte(mutate(good)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p := checkSequences(tree, ""); len(p) == 0 {
			t.Errorf("%s: the check finds nothing wrong", name)
		}
	}
}

func euisSubmit(c *euis.SOAPClient, srv *httptest.Server, s euis.Statement) (string, error) {
	return c.Submit(context.Background(), creds(srv), s)
}
