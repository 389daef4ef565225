package dds_test

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/dds"
	"github.com/eudr/eudr/server/euis"
)

// testdata reads a recorded answer of the EU system (server/euis/testdata).
func testdata(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join("..", "euis", "testdata", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestAttemptOf_SOAPClient: the transient failures of the real SOAP client
// become the code and message a job shows as its last attempt.
func TestAttemptOf_SOAPClient(t *testing.T) {
	answer := func(status int, body []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.WriteHeader(status)
			w.Write(body)
		}
	}
	hangUp := func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		panic(http.ErrAbortHandler) // closes the connection without an answer
	}
	closedPort := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return "http://" + l.Addr().String()
	}()
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc // nil: nothing listens
		silent  bool             // no answer: the request is held until the client gave up
		timeout time.Duration    // of the HTTP client; 0: none
		ctx     time.Duration    // deadline of the call; 0: none
		code    string
		message string
	}{
		{name: "HTTP500", handler: answer(500, []byte("<html>Internal Server Error</html>")), code: apierr.AttemptEUSystemUnavailable,
			message: "the EU information system answered HTTP 500 (Internal Server Error) to submitDds; trying again"},
		{name: "ServerFault", handler: answer(500, testdata(t, "fault_internal.xml")), code: apierr.AttemptEUSystemUnavailable,
			message: "the EU information system answered submitDds with a server fault (An internal error occurred. Please try again later.); trying again"},
		{name: "HTTP503", handler: answer(503, nil), code: apierr.AttemptEUSystemUnavailable,
			message: "the EU information system answered HTTP 503 (Service Unavailable) to submitDds; trying again"},
		{name: "HTTP504", handler: answer(504, []byte("Gateway Timeout")), code: apierr.AttemptEUSystemTimeout,
			message: "the EU information system answered HTTP 504 (Gateway Timeout) to submitDds; trying again"},
		{name: "HTTP429", handler: answer(429, nil), code: apierr.AttemptEUSystemRateLimited,
			message: "the EU information system answered HTTP 429 (Too Many Requests) to submitDds; trying again"},
		{name: "Maintenance200", handler: answer(200, []byte("<html><body>Down for maintenance</body></html>")), code: apierr.AttemptEUSystemUnreadableAnswer,
			message: "the EU information system's answer to submitDds could not be read (no soap body element); trying again"},
		{name: "ClientTimeout", silent: true, timeout: 100 * time.Millisecond, code: apierr.AttemptEUSystemTimeout,
			message: "the EU information system did not answer in time; trying again"},
		{name: "Deadline", silent: true, ctx: 100 * time.Millisecond, code: apierr.AttemptEUSystemTimeout,
			message: "the EU information system did not answer in time; trying again"},
		{name: "HungUp", handler: hangUp, code: apierr.AttemptEUSystemUnreachable,
			message: "the EU information system could not be reached (the connection closed before the answer); trying again"},
		{name: "Refused", code: apierr.AttemptEUSystemUnreachable,
			message: "the EU information system could not be reached (connection refused); trying again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			endpoint := closedPort
			if tc.handler != nil || tc.silent {
				release := make(chan struct{})
				srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if !tc.silent {
						tc.handler(w, r)
						return
					}
					io.Copy(io.Discard, r.Body)
					<-release // answering when the client hangs up could race its timeout
					panic(http.ErrAbortHandler)
				}))
				srv.Config.ErrorLog = log.New(io.Discard, "", 0)
				srv.Start()
				defer srv.Close()
				defer close(release) // before Close, which waits for the handler
				endpoint = srv.URL
			}
			c := euis.NewSOAPClient(&http.Client{Timeout: tc.timeout}, euis.SOAPOptions{CallsPerSecond: -1})
			ctx := context.Background()
			if tc.ctx > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tc.ctx)
				defer cancel()
			}
			cr := euis.Credentials{Username: "op", AuthKey: "k", ClientID: "eudr-test", Endpoint: endpoint + "/tracesnt"}
			_, err := c.Submit(ctx, cr, apitest.EUStatement(t, operator))
			if !euis.IsTransient(err) {
				t.Fatalf("Submit: %v, want a transient error", err)
			}
			if got := dds.AttemptOf(err); got.Code != tc.code || got.Message != tc.message {
				t.Errorf("dds.AttemptOf(%v) = %s %q, want %s %q", err, got.Code, got.Message, tc.code, tc.message)
			}
		})
	}
	if got := dds.AttemptOf(&net.DNSError{Err: "no such host", Name: "eu.invalid", IsNotFound: true}); got.Code != apierr.AttemptEUSystemUnreachable ||
		!strings.Contains(got.Message, "host name could not be resolved") {
		t.Errorf("AttemptOf of a DNS error: %+v", got)
	}
	if got := dds.AttemptOf(&euis.HTTPError{Operation: "getDds", StatusCode: 599}); got.Code != apierr.AttemptEUSystemUnavailable ||
		got.Message != "the EU information system answered HTTP 599 to getDds; trying again" {
		t.Errorf("AttemptOf of an HTTP status without a name: %+v", got)
	}
	if got := dds.AttemptOf(errors.New("eu information system getDds: something")); got.Code != apierr.AttemptEUSystemUnreachable {
		t.Errorf("AttemptOf of another error: %+v", got)
	}
}

// maxFaultText is how much of a fault's text AttemptOf shows.
const maxFaultText = 200

// TestAttemptOf_LongFault: a fault's text is shown on one line, cut short.
func TestAttemptOf_LongFault(t *testing.T) {
	text := "java.lang.IllegalStateException: boom\n\tat eu.europa.Foo.bar(Foo.java:1)\n" + strings.Repeat("\tat x.y.Z.z(Z.java:2)\n", 50)
	got := dds.AttemptOf(&euis.Fault{Operation: "submitDds", Kind: euis.FaultServer, Code: "Server", Message: text})
	want := "the EU information system answered submitDds with a server fault (java.lang.IllegalStateException: boom at eu.europa.Foo.bar(Foo.java:1) at "
	if got.Code != apierr.AttemptEUSystemUnavailable || !strings.HasPrefix(got.Message, want) || strings.Contains(got.Message, "\n") ||
		len([]rune(got.Message)) > len(want)+maxFaultText || !strings.HasSuffix(got.Message, "…); trying again") {
		t.Errorf("AttemptOf of a long fault: %s %q", got.Code, got.Message)
	}
}
