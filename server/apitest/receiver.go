package apitest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
)

// Envelope is a delivery's body (docs/webhooks.md).
type Envelope struct {
	EventType string          `json:"eventType"`
	EventID   string          `json:"eventId"`
	Timestamp string          `json:"timestamp"`
	Attempt   int             `json:"attempt"`
	NextRetry *string         `json:"nextRetry"`
	Data      json.RawMessage `json:"data"`
}

// Delivery is one request a Receiver got.
type Delivery struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time // arrival
	Env    Envelope
	Keys   []string // the envelope's member names, sorted
	EnvErr error    // the body is not an envelope
	SigErr error    // verification with the path's secret at arrival; nil: both schemes verify
	Nth    int      // 1 for the first request of this path and eventId
	Status int      // what the receiver answered; 0 while it is still answering
}

// Answer is how a Receiver answers one request.
type Answer struct {
	Status int
	Delay  time.Duration // before answering (a hanging receiver)
	Body   string        // written after the status: the appliance logs it as the attempt's responseBody
}

// Receiver is a webhook receiver: one HTTPS server, subscriptions told apart
// by path, each verified with its own secret. It records every request. A
// delivery whose body is not an envelope or whose signatures do not both
// verify with its path's secret is answered 401, as a receiver rejects a
// signature mismatch; others as the policy says, 200 by default.
type Receiver struct {
	// CAFile is the PEM file of the server's certificate, for
	// EUDR_WEBHOOKS_CA_FILE.
	CAFile string

	srv  *httptest.Server
	stop chan struct{} // closed at cleanup: releases hanging answers

	mu        sync.Mutex
	now       func() time.Time  // the clock signatures are checked at
	secrets   map[string]string // path -> signing secret
	policy    func(d *Delivery) Answer
	reqs      []*Delivery
	count     map[string]int             // path + " " + eventId -> requests
	delivered map[string]map[string]bool // path -> eventId -> answered 2xx with valid signatures
	inflight  int
}

// NewReceiver starts a Receiver on 127.0.0.1, closed when t ends.
func NewReceiver(t testing.TB) *Receiver {
	t.Helper()
	rc := &Receiver{stop: make(chan struct{}), now: time.Now, secrets: map[string]string{},
		count: map[string]int{}, delivered: map[string]map[string]bool{}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes cut by kill -9
	rc.srv.StartTLS()
	t.Cleanup(func() {
		close(rc.stop)
		rc.srv.Close()
	})
	rc.CAFile = WriteCAFile(t, rc.srv)
	return rc
}

// WriteCAFile writes the certificate of srv, a TLS server of httptest, to a
// PEM file in t's temporary directory and returns its path: a client
// configured with it (EUDR_WEBHOOKS_CA_FILE) trusts srv.
func WriteCAFile(t testing.TB, srv *httptest.Server) string {
	t.Helper()
	f := filepath.Join(t.TempDir(), "receiver-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(f, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	return f
}

// URL is the target URL of path on the receiver (https://127.0.0.1:port/path).
func (rc *Receiver) URL(path string) string { return rc.srv.URL + path }

// Port is the port the receiver listens on.
func (rc *Receiver) Port() string {
	_, port, _ := net.SplitHostPort(rc.srv.Listener.Addr().String())
	return port
}

// SetSecret makes the receiver verify deliveries to path with secret.
func (rc *Receiver) SetSecret(path, secret string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets[path] = secret
}

// SetClock makes the receiver check the Standard Webhooks timestamp of
// each delivery against now rather than the wall clock: for an appliance
// running on a fake clock in the test process.
func (rc *Receiver) SetClock(now func() time.Time) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.now = now
}

// SetPolicy programs the answers to deliveries that verify; nil answers 200.
// p runs on the receiver's goroutines, and sees the Delivery before its
// Status is set.
func (rc *Receiver) SetPolicy(p func(d *Delivery) Answer) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.policy = p
}

// FailFirst is a policy that answers 500 to the first n requests of each
// path and event, then 200.
func FailFirst(n int) func(d *Delivery) Answer {
	return func(d *Delivery) Answer {
		if d.Nth <= n {
			return Answer{Status: http.StatusInternalServerError}
		}
		return Answer{Status: http.StatusOK}
	}
}

// ErrNoSecret is VerifyDelivery's error for a path the receiver has no
// secret for.
var ErrNoSecret = errors.New("receiver: no secret for this path")

// VerifyDelivery checks both signatures of a delivery with secret, with
// queue/webhooksig: X-Service-Signature, and the Standard Webhooks
// signature with its timestamp within webhooksig.DefaultTolerance of at.
func VerifyDelivery(secret string, h http.Header, body []byte, at time.Time) error {
	if secret == "" {
		return ErrNoSecret
	}
	var errs []error
	if err := webhooksig.Verify(secret, body, h.Get(webhooksig.HeaderSignature)); err != nil {
		errs = append(errs, fmt.Errorf("X-Service-Signature: %w", err))
	}
	if err := webhooksig.VerifyStandard(secret, h, body, webhooksig.DefaultTolerance, at); err != nil {
		errs = append(errs, fmt.Errorf("webhook-signature: %w", err))
	}
	return errors.Join(errs...)
}

func (rc *Receiver) serve(w http.ResponseWriter, r *http.Request) {
	rc.mu.Lock()
	at := rc.now()
	rc.mu.Unlock()
	body, _ := io.ReadAll(r.Body)
	d := &Delivery{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: at}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(body, &keys); err != nil {
		d.EnvErr = err
	} else {
		for k := range keys {
			d.Keys = append(d.Keys, k)
		}
		sort.Strings(d.Keys)
		d.EnvErr = json.Unmarshal(body, &d.Env)
	}
	rc.mu.Lock()
	secret := rc.secrets[d.Path]
	rc.mu.Unlock()
	d.SigErr = VerifyDelivery(secret, d.Header, body, at)

	// Fields other than Status are set before d is shared.
	rc.mu.Lock()
	ck := d.Path + " " + d.Env.EventID
	rc.count[ck]++
	d.Nth = rc.count[ck]
	policy := rc.policy
	rc.reqs = append(rc.reqs, d)
	rc.inflight++
	rc.mu.Unlock()

	act := Answer{Status: http.StatusOK}
	if policy != nil {
		act = policy(d)
	}
	if d.SigErr != nil || d.EnvErr != nil {
		act = Answer{Status: http.StatusUnauthorized, Delay: act.Delay} // a receiver rejects a mismatch with 401
	}
	if act.Delay > 0 {
		select {
		case <-time.After(act.Delay):
		case <-rc.stop:
		}
	}
	rc.mu.Lock()
	d.Status = act.Status
	rc.inflight--
	if act.Status/100 == 2 {
		if rc.delivered[d.Path] == nil {
			rc.delivered[d.Path] = map[string]bool{}
		}
		rc.delivered[d.Path][d.Env.EventID] = true
	}
	rc.mu.Unlock()
	w.WriteHeader(act.Status)
	io.WriteString(w, act.Body)
}

// Requests is a snapshot of the requests to path ("" for all) of event
// eventID ("" for all), in arrival order.
func (rc *Receiver) Requests(path, eventID string) []Delivery {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []Delivery
	for _, d := range rc.reqs {
		if (path == "" || d.Path == path) && (eventID == "" || d.Env.EventID == eventID) {
			out = append(out, *d)
		}
	}
	return out
}

// IsDelivered reports whether path accepted eventID (a 2xx answer to a
// delivery whose signatures verified).
func (rc *Receiver) IsDelivered(path, eventID string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.delivered[path][eventID]
}

// Delivered is the set of events path accepted, a copy.
func (rc *Receiver) Delivered(path string) map[string]bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := make(map[string]bool, len(rc.delivered[path]))
	for k := range rc.delivered[path] {
		out[k] = true
	}
	return out
}

// InFlight is the number of requests being answered now.
func (rc *Receiver) InFlight() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.inflight
}

// CheckSignatures verifies d's signature headers with secret independently
// of webhooksig (docs/webhooks.md): hex HMAC-SHA256 of the raw body keyed
// by the secret string, and the Standard Webhooks signature keyed by the
// secret's bytes; then with webhooksig, at d's arrival.
func CheckSignatures(t testing.TB, d Delivery, secret string) {
	t.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(d.Body)
	if got, want := d.Header.Get("X-Service-Signature"), hex.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("X-Service-Signature %q, want %q", got, want)
	}
	keyBytes, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		t.Fatal(err)
	}
	m = hmac.New(sha256.New, keyBytes)
	fmt.Fprintf(m, "%s.%s.", d.Header.Get("webhook-id"), d.Header.Get("webhook-timestamp"))
	m.Write(d.Body)
	if got, want := d.Header.Get("webhook-signature"), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)); got != want {
		t.Errorf("webhook-signature %q, want %q", got, want)
	}
	if err := webhooksig.Verify(secret, d.Body, d.Header.Get(webhooksig.HeaderSignature)); err != nil {
		t.Errorf("webhooksig.Verify: %v", err)
	}
	if err := webhooksig.VerifyStandard(secret, d.Header, d.Body, webhooksig.DefaultTolerance, d.At); err != nil {
		t.Errorf("webhooksig.VerifyStandard: %v", err)
	}
}
