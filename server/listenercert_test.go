package server

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/devca"
	"github.com/eudr/eudr/storage"
)

const listenerCertPath = sandboxOnlyPrefix + "/webhook-listener-certificate"

// issueListenerCert asks the sandbox for a listener certificate with key
// and fails t unless it answers 200.
func (ta *testApp) issueListenerCert(key, body string, hdr ...string) listenerCertificateResponse {
	ta.tb.Helper()
	w := ta.do("POST", listenerCertPath, body, append([]string{"X-API-Key", key}, hdr...)...)
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("POST %s: got %d %s, want 200", listenerCertPath, w.Code, w.Body)
	}
	if cc := w.Header().Get("Cache-Control"); cc != "no-store" {
		ta.tb.Errorf("Cache-Control %q, want no-store: the answer holds a private key", cc)
	}
	var resp listenerCertificateResponse
	mustDecode(ta.tb, w, &resp)
	return resp
}

func pemCert(tb testing.TB, s string) *x509.Certificate {
	tb.Helper()
	b, _ := pem.Decode([]byte(s))
	if b == nil {
		tb.Fatalf("no PEM block in %q", s)
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestListenerCertificate_Issue(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	resp := ta.issueListenerCert(key, `{"hostnames":["receiver.internal"]}`)

	if _, err := tls.X509KeyPair([]byte(resp.Certificate), []byte(resp.PrivateKey)); err != nil {
		t.Fatalf("certificate and privateKey do not make a pair: %v", err)
	}
	if resp.CACertificate != string(ta.devCA.CertificatePEM()) {
		t.Error("caCertificate is not the development CA's")
	}
	roots := x509.NewCertPool()
	roots.AddCert(pemCert(t, resp.CACertificate))
	leaf := pemCert(t, resp.Certificate)
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "receiver.internal"} {
		if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host}); err != nil {
			t.Errorf("the certificate does not verify for %s: %v", host, err)
		}
	}
	if want := "localhost receiver.internal 127.0.0.1 ::1"; strings.Join(resp.Hostnames, " ") != want {
		t.Errorf("hostnames %v, want %s", resp.Hostnames, want)
	}
	notAfter, err := time.Parse(time.RFC3339, resp.NotAfter)
	if err != nil || !notAfter.Equal(leaf.NotAfter) || leaf.NotAfter.Sub(leaf.NotBefore) < devca.LeafValidity {
		t.Errorf("notAfter %q (%v), certificate valid %v to %v, want %v", resp.NotAfter, err, leaf.NotBefore, leaf.NotAfter, devca.LeafValidity)
	}

	// No state, no stored answer: an Idempotency-Key is not taken, and the
	// same request twice gets two keys.
	first := ta.issueListenerCert(key, `{}`, "Idempotency-Key", "cert-1")
	again := ta.issueListenerCert(key, `{}`, "Idempotency-Key", "cert-1")
	if first.PrivateKey == again.PrivateKey {
		t.Error("a repeated request got the same private key: it was stored and replayed")
	}
	ta.view(func(tx *storage.Tx) error {
		if _, err := tx.FindIdempotency(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, "cert-1"); err == nil {
			t.Error("an idempotent reply (holding the private key) was stored")
		}
		return nil
	})
}

func TestListenerCertificate_Refusals(t *testing.T) {
	ta := newTestApp(t)
	_, sandboxKey := ta.newKey(storage.Sandbox)
	_, readKey := ta.newKey(storage.Sandbox, account.ScopeRead)
	_, liveKey := ta.newKey(storage.Production)

	for _, tc := range []struct {
		name   string
		env    storage.Environment
		key    string
		body   string
		status int
		detail string
	}{
		{"production listener, production key", storage.Production, liveKey, `{}`, http.StatusNotFound, ""},
		{"production listener, sandbox key", storage.Production, sandboxKey, `{}`, http.StatusNotFound, ""},
		{"live key on the sandbox", storage.Sandbox, liveKey, `{}`, http.StatusForbidden, apierr.DetailWrongEnvironment},
		{"read-only key", storage.Sandbox, readKey, `{}`, http.StatusForbidden, apierr.DetailScopeRequired},
		{"no key", storage.Sandbox, "", `{}`, http.StatusUnauthorized, ""},
		{"empty body", storage.Sandbox, sandboxKey, ``, http.StatusBadRequest, apierr.DetailMalformedJSON},
		{"unknown member", storage.Sandbox, sandboxKey, `{"hosts":["a.test"]}`, http.StatusBadRequest, apierr.DetailUnknownField},
		{"public hostname", storage.Sandbox, sandboxKey, `{"hostnames":["bank.example.com"]}`, http.StatusBadRequest, apierr.DetailInvalidValue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ta.serve(tc.env, newRequest("POST", listenerCertPath, tc.body, "X-API-Key", tc.key))
			e := envelope(t, w)
			if w.Code != tc.status {
				t.Fatalf("got %d %s, want %d", w.Code, w.Body, tc.status)
			}
			if tc.detail != "" && (len(e.Details) == 0 || e.Details[0].Code != tc.detail) {
				t.Errorf("details %+v, want %s", e.Details, tc.detail)
			}
			if strings.Contains(w.Body.String(), "PRIVATE KEY") {
				t.Error("a refusal carries a private key")
			}
		})
	}
}

// A receiver with a listener certificate gets the sandbox's deliveries;
// production, which never trusts the development CA, refuses its
// certificate as of an unknown authority (private targets allowed there
// for the test, so the certificate is what decides).
func TestWebhookDelivery_DevCATrustedBySandboxOnly(t *testing.T) {
	ta := newTestApp(t, "EUDR_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true")
	_, sandboxKey := ta.newKey(storage.Sandbox)
	_, liveKey := ta.newKey(storage.Production)
	issued := ta.issueListenerCert(sandboxKey, `{}`)
	pair, err := tls.X509KeyPair([]byte(issued.Certificate), []byte(issued.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	var received atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // production's refused handshake
	srv.StartTLS()
	t.Cleanup(srv.Close)

	ping := func(env storage.Environment, key string) attemptResponse {
		t.Helper()
		body := `{"targetUrl":"` + srv.URL + `/` + string(env) + `","eventTypes":["job.failed"]}`
		w := ta.serve(env, newRequest("POST", eudrPrefix+"/webhooks", body, "X-API-Key", key, "Idempotency-Key", "reg-"+string(env)))
		if w.Code != http.StatusOK {
			t.Fatalf("%s: register: %d %s", env, w.Code, w.Body)
		}
		var reg webhookResponse
		mustDecode(t, w, &reg)
		if w := ta.serve(env, newRequest("POST", eudrPrefix+"/webhooks/"+reg.WebhookID+"/ping", "", "X-API-Key", key)); w.Code != http.StatusOK {
			t.Fatalf("%s: ping: %d %s", env, w.Code, w.Body)
		}
		w = ta.serve(env, newRequest("GET", eudrPrefix+"/webhooks/"+reg.WebhookID+"/deliveries", "", "X-API-Key", key))
		var attempts []attemptResponse
		if err := json.Unmarshal(w.Body.Bytes(), &attempts); err != nil || len(attempts) != 1 {
			t.Fatalf("%s: deliveries %s (%v), want one attempt", env, w.Body, err)
		}
		return attempts[0]
	}

	if a := ping(storage.Sandbox, sandboxKey); a.Status != http.StatusNoContent || a.ErrorClass != "" {
		t.Errorf("sandbox ping: status %d, %s %s; want 204: the sandbox trusts the development CA", a.Status, a.ErrorClass, a.Error)
	}
	if got := received.Load(); got != 1 {
		t.Fatalf("the receiver got %d requests after the sandbox ping, want 1", got)
	}
	a := ping(storage.Production, liveKey)
	if a.ErrorClass != "tls" || !strings.Contains(a.Error, "certificate signed by unknown authority") {
		t.Errorf("production ping: status %d, %s %q; want a tls error, certificate signed by unknown authority", a.Status, a.ErrorClass, a.Error)
	}
	if got := received.Load(); got != 1 {
		t.Errorf("the receiver got a production request (%d in all): production trusted the development CA", got)
	}
}
