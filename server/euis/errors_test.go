package euis_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/euis"
)

func TestSOAPClient_Faults(t *testing.T) {
	for _, tc := range []struct {
		name      string
		status    int
		file      string
		body      string
		header    http.Header
		kind      string // for a *Fault
		http      bool   // an *HTTPError
		protocol  bool   // a *ProtocolError
		transient bool
		reasons   []string
	}{
		{name: "BusinessRules", status: 500, file: "fault_business_rules.xml", kind: euis.FaultBusinessRules,
			reasons: []string{"EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY", "EUDR_OPERATOR_EORI_FOR_ACTIVITY_MISSING"}},
		{name: "PermissionDenied", status: 500, file: "fault_permission_denied.xml", kind: euis.FaultPermissionDenied,
			reasons: []string{"EUDR_WEBSERVICE_USER_ACTIVITY_NOT_ALLOWED"}},
		{name: "Unauthenticated", status: 500, file: "fault_unauthenticated.xml", kind: euis.FaultAuthentication},
		{name: "InternalSystemException", status: 500, file: "fault_internal.xml", kind: euis.FaultServer, transient: true},
		{name: "SchemaViolation", status: 500, file: "fault_schema.xml", kind: euis.FaultInvalidRequest},
		{name: "NotFoundOnSubmit", status: 500, file: "fault_not_found.xml", kind: euis.FaultNotFound,
			reasons: []string{"EUDR_WEBSERVICE_STATEMENT_NOT_FOUND"}},
		{name: "HTTP500HTML", status: 500, body: "<html><body>Internal Server Error</body></html>", http: true, transient: true},
		{name: "HTTP502", status: 502, body: "Bad Gateway", http: true, transient: true},
		{name: "HTTP503RetryAfter", status: 503, body: "", header: http.Header{"Retry-After": {"7"}}, http: true, transient: true},
		{name: "HTTP429", status: 429, body: "Too Many Requests", http: true, transient: true},
		{name: "HTTP404", status: 404, body: "<html>Not Found</html>", http: true},
		{name: "HTTP401", status: 401, body: "", http: true},
		{name: "Garbage200", status: 200, body: "<html>maintenance", protocol: true, transient: true},
		{name: "WrongElement200", status: 200, file: "withdraw_response.xml", protocol: true, transient: true},
		{name: "EmptyUUID200", status: 200, body: `<S:Envelope xmlns:S="http://schemas.xmlsoap.org/soap/envelope/"><S:Body><SubmitDdsResponse/></S:Body></S:Envelope>`, protocol: true, transient: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock(t0)
			f, srv := newFakeEU(t, clk.Now)
			c := newClient(srv, clk.Now)
			answer := []byte(tc.body)
			if tc.file != "" {
				answer = readFile(t, tc.file)
			}
			f.setReply(func(call) (int, []byte) { return tc.status, answer }, tc.header)
			_, err := c.Submit(context.Background(), creds(srv), validStatement())
			if err == nil {
				t.Fatal("Submit: no error")
			}
			if got := euis.IsTransient(err); got != tc.transient {
				t.Errorf("IsTransient(%v) = %v, want %v", err, got, tc.transient)
			}
			var fault *euis.Fault
			var he *euis.HTTPError
			var pe *euis.ProtocolError
			switch {
			case tc.kind != "":
				if !errors.As(err, &fault) {
					t.Fatalf("error %v (%T), want *Fault", err, err)
				}
				if fault.Kind != tc.kind || fault.Operation != "submitDds" || fault.HTTPStatus != tc.status {
					t.Errorf("fault %+v, want kind %s, operation submitDds, status %d", fault, tc.kind, tc.status)
				}
				if tc.reasons != nil && strings.Join(fault.Reasons, ",") != strings.Join(tc.reasons, ",") {
					t.Errorf("reasons %v, want %v", fault.Reasons, tc.reasons)
				}
				if fault.Rejected() != (tc.kind == euis.FaultBusinessRules) {
					t.Errorf("Rejected() = %v", fault.Rejected())
				}
			case tc.http:
				if !errors.As(err, &he) || he.StatusCode != tc.status {
					t.Fatalf("error %v (%T), want *HTTPError %d", err, err, tc.status)
				}
				if tc.header != nil && he.RetryAfter != 7*time.Second {
					t.Errorf("RetryAfter %v, want 7s", he.RetryAfter)
				}
			case tc.protocol:
				if !errors.As(err, &pe) {
					t.Fatalf("error %v (%T), want *ProtocolError", err, err)
				}
			}
		})
	}
}

func TestSOAPClient_FaultDetail(t *testing.T) {
	clk := newClock(t0)
	f, srv := newFakeEU(t, clk.Now)
	c := newClient(srv, clk.Now)
	answer := readFile(t, "fault_business_rules.xml")
	f.setReply(func(call) (int, []byte) { return 500, answer }, nil)
	_, err := c.Submit(context.Background(), creds(srv), validStatement())
	var fault *euis.Fault
	if !errors.As(err, &fault) {
		t.Fatalf("Submit: %v", err)
	}
	want := euis.FaultError{
		ID:      "EUDR_COMMODITIES_PRODUCER_GEO_INVALID_GEOMETRY",
		Message: "Each polygon must have at least 4 non-aligned points and cannot have intersections between sides.",
		Field:   "commodities[1].producers[3].geometryGeojson",
	}
	if len(fault.Errors) != 2 || fault.Errors[0] != want {
		t.Errorf("errors %+v, want first %+v", fault.Errors, want)
	}
	if fault.Code != "Client" || fault.Detail != "BusinessRulesValidationException" || fault.Message != "Business rules validation failed" {
		t.Errorf("fault %+v", fault)
	}
	if !strings.Contains(err.Error(), "EUDR_OPERATOR_EORI_FOR_ACTIVITY_MISSING") {
		t.Errorf("Error() = %q lacks the second reason", err)
	}
}

// TestSOAPClient_Timeout: a call the information system does not answer
// in time is a transient error. The server holds each request until the
// test has its client's error: had it answered when the client hung up (an
// empty 200), that answer could reach the client before its own timeout
// did, as an unreadable answer.
func TestSOAPClient_Timeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-release
		panic(http.ErrAbortHandler) // no answer, not even when released
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	defer srv.Close()
	defer close(release)

	c := euis.NewSOAPClient(srv.Client(), euis.SOAPOptions{CallsPerSecond: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	_, err := c.Get(ctx, creds(srv), []string{"071874bd-8c62-4cac-8eb6-b2fbe003410c"})
	if !errors.Is(err, context.DeadlineExceeded) || !euis.IsTransient(err) {
		t.Errorf("Get past its deadline: %v (transient %v), want a transient DeadlineExceeded", err, euis.IsTransient(err))
	}

	hc := srv.Client()
	hc.Timeout = 100 * time.Millisecond
	c = euis.NewSOAPClient(hc, euis.SOAPOptions{CallsPerSecond: -1})
	_, err = c.Get(context.Background(), creds(srv), []string{"071874bd-8c62-4cac-8eb6-b2fbe003410c"})
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() || !euis.IsTransient(err) {
		t.Errorf("Get past the client's timeout: %v, want a transient timeout", err)
	}
}

func TestSOAPClient_ConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	// A relay on the machine: loopback needs AllowPrivate.
	c := euis.NewSOAPClient(euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: true}), euis.SOAPOptions{CallsPerSecond: -1})
	cr := euis.Credentials{Username: testUser, AuthKey: testAuthKey, ClientID: testClientID, Endpoint: "https://" + addr + "/tracesnt"}
	_, err = c.Echo(context.Background(), cr, "ping")
	if err == nil || !euis.IsTransient(err) {
		t.Errorf("Echo to a closed port: %v, want transient", err)
	}
}

func TestSOAPClient_UntrustedCertificate(t *testing.T) {
	clk := newClock(t0)
	f := &fakeEU{t: t, now: clk.Now, nonces: map[string]bool{}}
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake error is the point
	srv.StartTLS()
	defer srv.Close()
	c := euis.NewSOAPClient(&http.Client{}, euis.SOAPOptions{Now: clk.Now, CallsPerSecond: -1}) // does not trust the test CA
	_, err := c.Echo(context.Background(), creds(srv), "ping")
	if err == nil || euis.IsTransient(err) {
		t.Errorf("Echo to an untrusted server: %v, want a permanent error", err)
	}
}

func TestIsTransient(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("something"), false},
		{context.DeadlineExceeded, true},
		{fmt.Errorf("call: %w", context.Canceled), true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}, true},
		{&net.DNSError{Err: "no such host", Name: "example.invalid"}, true},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{x509.UnknownAuthorityError{}, false},
		{euis.Violations{{Code: euis.CodeTooManyCommodities}}, false},
		{fmt.Errorf("x: %w", euis.ErrNotConfigured), false},
		{&euis.Fault{Kind: euis.FaultServer}, true},
		{&euis.Fault{Kind: euis.FaultBusinessRules}, false},
		{&euis.HTTPError{StatusCode: 504}, true},
		{&euis.HTTPError{StatusCode: 408}, true},
		{&euis.HTTPError{StatusCode: 403}, false},
		{&euis.HTTPError{StatusCode: 307, Location: "https://elsewhere.example/"}, false},
		{&url.Error{Op: "Post", URL: "https://127.0.0.1/tracesnt", Err: &net.OpError{Op: "dial", Net: "tcp",
			Err: fmt.Errorf("dial 127.0.0.1:443: %w", netguard.ErrTargetNotAllowed)}}, false},
	} {
		if got := euis.IsTransient(tc.err); got != tc.want {
			t.Errorf("IsTransient(%#v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
