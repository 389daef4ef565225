package listen_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/listen"
)

const (
	testKey   = "sk_test_0123456789abcdefghijABCDEFGHIJ"
	testSubID = "wh_01JD3R7F5G6H7J8K9M0N1P2Q3R"
	eudrAPI   = "/api/v1/enterprise/eudr"
)

// fakeSandbox answers the three calls the command makes as the sandbox
// does, issuing real listener certificates from a development CA.
type fakeSandbox struct {
	t      *testing.T
	srv    *httptest.Server
	ca     *devca.CA
	secret string
	// certStatus, when set, is the status the certificate call is
	// refused with (404: a production listener).
	certStatus int

	mu      sync.Mutex
	target  string   // the subscription's targetUrl
	events  []string // its event types
	deleted []string // the subscriptions deleted
}

func newFakeSandbox(t *testing.T) *fakeSandbox {
	t.Helper()
	ca, err := devca.Open(t.TempDir(), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	secret, err := webhooksig.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	fs := &fakeSandbox{t: t, ca: ca, secret: secret}
	fs.srv = httptest.NewServer(http.HandlerFunc(fs.serve))
	t.Cleanup(fs.srv.Close)
	return fs
}

func (fs *fakeSandbox) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("X-API-Key") != testKey {
		http.Error(w, `{"code":"UNAUTHORIZED","message":"Missing or invalid API key","details":[]}`, http.StatusUnauthorized)
		return
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.Method == "POST" && r.URL.Path == eudrAPI+"/sandbox/webhook-listener-certificate":
		if fs.certStatus != 0 {
			w.WriteHeader(fs.certStatus)
			io.WriteString(w, `{"code":"NOT_FOUND","message":"route not found","details":[]}`)
			return
		}
		var req devca.Request
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fs.t.Errorf("certificate request: %v", err)
		}
		leaf, err := fs.ca.Issue(req)
		if err != nil {
			fs.t.Errorf("Issue: %v", err)
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"certificate": string(leaf.CertificatePEM), "privateKey": string(leaf.PrivateKeyPEM)})
	case r.Method == "POST" && r.URL.Path == eudrAPI+"/webhooks":
		if r.Header.Get("Idempotency-Key") == "" {
			fs.t.Error("POST /webhooks without an Idempotency-Key")
		}
		var req struct {
			TargetURL  string   `json:"targetUrl"`
			EventTypes []string `json:"eventTypes"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			fs.t.Errorf("webhook request: %v", err)
		}
		fs.target, fs.events = req.TargetURL, req.EventTypes
		json.NewEncoder(w).Encode(map[string]any{"webhookId": testSubID, "eventTypes": req.EventTypes, "signingSecret": fs.secret,
			"targetUrl": req.TargetURL, "status": "REGISTERED"})
	case r.Method == "DELETE" && strings.HasPrefix(r.URL.Path, eudrAPI+"/webhooks/"):
		fs.deleted = append(fs.deleted, strings.TrimPrefix(r.URL.Path, eudrAPI+"/webhooks/"))
		w.WriteHeader(http.StatusNoContent)
	default:
		fs.t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
		w.WriteHeader(http.StatusNotFound)
	}
}

// output is a writer whose content a test can wait on.
type output struct {
	mu    sync.Mutex
	b     strings.Builder
	wrote chan struct{} // closed and replaced at every Write
}

func newOutput() *output { return &output{wrote: make(chan struct{})} }

func (o *output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.b.Write(p)
	close(o.wrote)
	o.wrote = make(chan struct{})
	return len(p), nil
}

func (o *output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.b.String()
}

// waitFor waits until re matches what was written and returns the match.
// The bound only ends a test that would otherwise hang.
func (o *output) waitFor(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	bound := time.After(30 * time.Second)
	for {
		o.mu.Lock()
		s, ch := o.b.String(), o.wrote
		o.mu.Unlock()
		if m := re.FindStringSubmatch(s); m != nil {
			return m
		}
		select {
		case <-ch:
		case <-bound:
			t.Fatalf("no %s in %q", re, s)
		}
	}
}

var readyLine = regexp.MustCompile(`Ready: listening on (https://127\.0\.0\.1:\d+), subscription (wh_\w+), events (\S+)\n`)

// running is a listen.Run in progress.
type running struct {
	target         string
	stdout, stderr *output
	cancel         context.CancelFunc
	done           chan error
	client         *http.Client // trusts the development CA
}

func start(t *testing.T, fs *fakeSandbox, o listen.Options) *running {
	t.Helper()
	rn := &running{stdout: newOutput(), stderr: newOutput(), done: make(chan error, 1)}
	o.BaseURL, o.APIKey, o.Stdout, o.Stderr = fs.srv.URL, testKey, rn.stdout, rn.stderr
	if err := o.Check(); err != nil {
		t.Fatalf("Check: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rn.cancel = cancel
	go func() { rn.done <- listen.Run(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		<-rn.done
	})
	m := rn.stderr.waitFor(t, readyLine)
	rn.target = m[1]
	roots := x509.NewCertPool()
	roots.AddCert(fs.ca.Certificate())
	rn.client = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	t.Cleanup(rn.client.CloseIdleConnections)
	return rn
}

// stop ends the run as Ctrl-C does and returns what Run returned.
func (rn *running) stop(t *testing.T) error {
	t.Helper()
	rn.cancel()
	select {
	case err := <-rn.done:
		rn.done <- err // for the cleanup
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return after its context ended")
		return nil
	}
}

// deliver POSTs body to the listener as the appliance does, signed with
// secret at ts, and returns the status.
func (rn *running) deliver(t *testing.T, body []byte, signedBody []byte, secret string, ts time.Time) int {
	t.Helper()
	req, _ := http.NewRequest("POST", rn.target+"/", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooksig.HeaderSignature, webhooksig.Sign(secret, signedBody))
	req.Header.Set(webhooksig.HeaderEventID, "evt_01JD3T0A1B2C3D4E5F6G7H8J9K")
	req.Header.Set(webhooksig.HeaderEventType, event.PolygonVerified)
	req.Header.Set(webhooksig.HeaderWebhookID, "evt_01JD3T0A1B2C3D4E5F6G7H8J9K")
	req.Header.Set(webhooksig.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(webhooksig.HeaderWebhookSignature, webhooksig.SignStandard(secret, "evt_01JD3T0A1B2C3D4E5F6G7H8J9K", ts, signedBody))
	resp, err := rn.client.Do(req)
	if err != nil {
		t.Fatalf("deliver: %v", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

var testBody = []byte(`{"eventType":"polygon.verified","eventId":"evt_01JD3T0A1B2C3D4E5F6G7H8J9K","timestamp":"2026-11-20T10:15:30.123Z","attempt":0,"data":{"jobId":"job_01JD3R7F5G6H7J8K9M0N1P2Q3R","polygonIds":["pol_01JD3R7F5G6H7J8K9M0N1P2Q3R_000000"]}}`)

// forwarded is what the local app behind --forward-to received.
type forwarded struct {
	header http.Header
	body   []byte
}

func TestRun_VerifiesPrintsForwardsAndUnsubscribes(t *testing.T) {
	fs := newFakeSandbox(t)
	var mu sync.Mutex
	var got []forwarded
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, forwarded{r.Header.Clone(), body})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer app.Close()
	rn := start(t, fs, listen.Options{JSON: true, ForwardTo: app.URL + "/hooks", Events: []string{event.PolygonVerified, event.JobFailed}})

	fs.mu.Lock()
	target, events := fs.target, fs.events
	fs.mu.Unlock()
	if target != rn.target || !slices.Equal(events, []string{event.PolygonVerified, event.JobFailed}) {
		t.Errorf("subscribed %s for %v; want %s (the Ready line's) for the --events", target, events, rn.target)
	}

	if status := rn.deliver(t, testBody, testBody, fs.secret, time.Now()); status != http.StatusNoContent {
		t.Fatalf("a verified delivery: got %d, want 204", status)
	}
	line := rn.stdout.waitFor(t, regexp.MustCompile(`^(.*)\n$`))[1]
	var printed struct {
		EventType string `json:"eventType"`
		EventID   string `json:"eventId"`
		Verified  bool   `json:"verified"`
		Forward   struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
		} `json:"forward"`
		Event json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal([]byte(line), &printed); err != nil {
		t.Fatalf("stdout %q is not one JSON line: %v", line, err)
	}
	if printed.EventType != event.PolygonVerified || !printed.Verified || !bytes.Equal(printed.Event, testBody) ||
		printed.Forward.URL != app.URL+"/hooks" || printed.Forward.Status != http.StatusAccepted {
		t.Errorf("printed %s; want the verified polygon.verified with its body and the app's 202", line)
	}
	mu.Lock()
	if len(got) != 1 || !bytes.Equal(got[0].body, testBody) || got[0].header.Get(webhooksig.HeaderSignature) != webhooksig.Sign(fs.secret, testBody) ||
		got[0].header.Get(webhooksig.HeaderWebhookSignature) == "" || got[0].header.Get(webhooksig.HeaderEventType) != event.PolygonVerified {
		t.Errorf("forwarded %d requests; want the body with its signature headers", len(got))
	}
	mu.Unlock()

	// A body changed on the way: refused, said why, neither printed nor
	// forwarded.
	tampered := bytes.Replace(testBody, []byte("_000000"), []byte("_000001"), 1)
	if status := rn.deliver(t, tampered, testBody, fs.secret, time.Now()); status != http.StatusUnauthorized {
		t.Errorf("a tampered body: got %d, want 401", status)
	}
	rn.stderr.waitFor(t, regexp.MustCompile(`refused a delivery .*X-Service-Signature does not match the body`))
	if n := strings.Count(rn.stdout.String(), "\n"); n != 1 {
		t.Errorf("stdout has %d lines after a refused delivery, want the first delivery's only", n)
	}
	mu.Lock()
	if len(got) != 1 {
		t.Errorf("the tampered delivery was forwarded (%d forwards)", len(got))
	}
	mu.Unlock()

	if err := rn.stop(t); err != nil {
		t.Fatalf("Run after Ctrl-C: %v, want nil", err)
	}
	fs.mu.Lock()
	if !slices.Equal(fs.deleted, []string{testSubID}) {
		t.Errorf("deleted %v, want the subscription %s", fs.deleted, testSubID)
	}
	fs.mu.Unlock()
	if !strings.Contains(rn.stderr.String(), "Deleted subscription "+testSubID) {
		t.Errorf("stderr %q does not say the subscription was deleted", rn.stderr.String())
	}
	rn.client.CloseIdleConnections()
	if _, err := rn.client.Post(rn.target+"/", "application/json", bytes.NewReader(testBody)); err == nil {
		t.Error("the receiver still answers after Run returned")
	}
}

func TestRun_ReadableOutputForwardFailureAndStaleTimestamp(t *testing.T) {
	fs := newFakeSandbox(t)
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close() // a local app that is not running
	rn := start(t, fs, listen.Options{ForwardTo: gone.URL})
	if m := readyLine.FindStringSubmatch(rn.stderr.String()); m[3] != strings.Join(event.Subscribable, ",") {
		t.Errorf("events %s, want every subscribable type by default", m[3])
	}
	if status := rn.deliver(t, testBody, testBody, fs.secret, time.Now()); status != http.StatusNoContent {
		t.Fatalf("a verified delivery: got %d, want 204", status)
	}
	out := rn.stdout.waitFor(t, regexp.MustCompile(`(?s)^\d\d:\d\d:\d\d  polygon\.verified  evt_01JD3T0A1B2C3D4E5F6G7H8J9K  attempt 0  verified  -> `+regexp.QuoteMeta(gone.URL)+` failed: dial tcp [^\n]*refused\n(\{\n  "eventType": "polygon\.verified",.*\n\})\n\n$`))
	var indented bytes.Buffer
	json.Indent(&indented, testBody, "", "  ")
	if out[1] != indented.String() {
		t.Errorf("body printed as\n%s\nwant\n%s", out[1], indented.String())
	}

	// Signed right, but ten minutes ago: a replay, refused.
	if status := rn.deliver(t, testBody, testBody, fs.secret, time.Now().Add(-10*time.Minute)); status != http.StatusUnauthorized {
		t.Errorf("a stale delivery: got %d, want 401", status)
	}
	rn.stderr.waitFor(t, regexp.MustCompile(`webhook-signature cannot be checked: webhook-timestamp`))
	// Signed with another secret.
	if status := rn.deliver(t, testBody, testBody, "whsec_other", time.Now()); status != http.StatusUnauthorized {
		t.Errorf("a delivery signed with another secret: got %d, want 401", status)
	}
}

// Pointed at the production listener, where the certificate route does
// not exist, it says so and subscribes nothing.
func TestRun_NotASandbox(t *testing.T) {
	fs := newFakeSandbox(t)
	fs.certStatus = http.StatusNotFound
	o := listen.Options{BaseURL: fs.srv.URL, APIKey: testKey, Stdout: io.Discard, Stderr: io.Discard}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	err := listen.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "404 NOT_FOUND") || !strings.Contains(err.Error(), "not a sandbox listener") {
		t.Errorf("Run against production: %v, want the 404 and what it means", err)
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if fs.target != "" {
		t.Error("it subscribed anyway")
	}
}

func TestOptions_Check(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    listen.Options
		want string
	}{
		{"no key", listen.Options{}, "an API key is needed"},
		{"live key", listen.Options{APIKey: "sk_live_0123456789abcdefghijABCDEFGHIJ"}, "production key"},
		{"other key", listen.Options{APIKey: "whsec_x"}, "must start with sk_test_"},
		{"bad event", listen.Options{APIKey: testKey, Events: []string{"polygon.verified", "polygon.*"}}, `"polygon.*" is not an event type`},
		{"ping", listen.Options{APIKey: testKey, Events: []string{event.WebhookPing}}, "is not an event type"},
		{"bad url", listen.Options{APIKey: testKey, BaseURL: "127.0.0.1:8081"}, "--url"},
		{"bad forward", listen.Options{APIKey: testKey, ForwardTo: "localhost:3000/hooks"}, "--forward-to"},
		{"bad listen", listen.Options{APIKey: testKey, Listen: "8443"}, "--listen"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.o.Check(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Check: %v, want an error saying %q", err, tc.want)
			}
		})
	}
	o := listen.Options{APIKey: testKey, BaseURL: "http://sandbox.internal:8081/"}
	if err := o.Check(); err != nil {
		t.Fatal(err)
	}
	if o.BaseURL != "http://sandbox.internal:8081" || o.Listen != listen.DefaultListen || !slices.Equal(o.Events, event.Subscribable) || o.Now == nil {
		t.Errorf("defaults: %+v", o)
	}
	if o := (listen.Options{APIKey: testKey}); o.Check() != nil || o.BaseURL != listen.DefaultURL {
		t.Errorf("default URL %q, want %s", o.BaseURL, listen.DefaultURL)
	}
}
