package euis_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/euis"
)

// recorder counts the requests that reach it and answers 503.
type recorder struct {
	srv  *httptest.Server
	hits atomic.Int32
}

func newRecorder(t *testing.T) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.hits.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func credsAt(endpoint string) euis.Credentials {
	return euis.Credentials{Username: testUser, AuthKey: testAuthKey, ClientID: testClientID, Endpoint: endpoint}
}

// TestNewHTTPClient_Guard: the production client connects to nothing on
// loopback, by address or by a name that resolves to it, and says so with
// a permanent error; nothing reaches the recorder. With AllowPrivate (a
// relay on the machine) it does.
func TestNewHTTPClient_Guard(t *testing.T) {
	rec := newRecorder(t)
	c := euis.NewSOAPClient(euis.NewHTTPClient(euis.HTTPOptions{}), euis.SOAPOptions{CallsPerSecond: -1})
	byName := strings.Replace(rec.srv.URL, "127.0.0.1", "localhost", 1)
	for _, endpoint := range []string{rec.srv.URL + "/tracesnt", byName + "/tracesnt"} {
		_, err := c.Submit(context.Background(), credsAt(endpoint), validStatement())
		if !errors.Is(err, netguard.ErrTargetNotAllowed) || euis.IsTransient(err) {
			t.Errorf("Submit to %s: %v (transient %v), want a permanent ErrTargetNotAllowed", endpoint, err, euis.IsTransient(err))
		}
	}
	if n := rec.hits.Load(); n != 0 {
		t.Fatalf("the recorder received %d requests through the guard", n)
	}
	// nil is the production client too.
	_, err := euis.NewSOAPClient(nil, euis.SOAPOptions{CallsPerSecond: -1}).Echo(context.Background(), credsAt(rec.srv.URL), "ping")
	if !errors.Is(err, netguard.ErrTargetNotAllowed) || rec.hits.Load() != 0 {
		t.Errorf("Echo with the default client: %v, %d requests received", err, rec.hits.Load())
	}

	relay := euis.NewSOAPClient(euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: true}), euis.SOAPOptions{CallsPerSecond: -1})
	_, err = relay.Submit(context.Background(), credsAt(rec.srv.URL+"/tracesnt"), validStatement())
	var h *euis.HTTPError
	if !errors.As(err, &h) || h.StatusCode != http.StatusServiceUnavailable || rec.hits.Load() != 1 {
		t.Errorf("Submit with private endpoints allowed: %v, %d requests received; want the recorder's 503", err, rec.hits.Load())
	}
}

// TestNewHTTPClient_Transport: the answer's headers are bounded (an
// endpoint could otherwise send 10 MB of them, read into memory whole) and
// no proxy is used (it would connect where the guard cannot see).
func TestNewHTTPClient_Transport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Padding", strings.Repeat("a", 2*netguard.MaxResponseHeaderBytes))
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	hc := euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: true})
	resp, err := hc.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Errorf("answer with %d bytes of headers: status %d, want an error", 2*netguard.MaxResponseHeaderBytes, resp.StatusCode)
	}
	if tr, ok := hc.Transport.(*http.Transport); !ok || tr.Proxy != nil {
		t.Errorf("transport %T has a proxy function; requests must go direct, through the guard", hc.Transport)
	}
}

// TestSOAPClient_NoRedirects: an endpoint that answers 307 does not get the
// UsernameToken posted on to the Location, whichever client the SOAPClient
// was given (httptest's follows redirects); the 307 is a permanent error
// that names the Location.
func TestSOAPClient_NoRedirects(t *testing.T) {
	rec := newRecorder(t)
	to := rec.srv.URL + "/tracesnt/services/EUDRSubmissionServiceV3"
	redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	}))
	defer redirecting.Close()
	for name, hc := range map[string]*http.Client{
		"following client": redirecting.Client(),
		"relay client":     euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: true}),
	} {
		c := euis.NewSOAPClient(hc, euis.SOAPOptions{CallsPerSecond: -1})
		_, err := c.Submit(context.Background(), credsAt(redirecting.URL+"/tracesnt"), validStatement())
		var h *euis.HTTPError
		if !errors.As(err, &h) || h.StatusCode != http.StatusTemporaryRedirect || h.Location != to || euis.IsTransient(err) {
			t.Errorf("%s: Submit answered 307: %v (transient %v), want a permanent HTTPError 307 to %s", name, err, euis.IsTransient(err), to)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, "redirect not followed") || !strings.Contains(msg, to) {
			t.Errorf("%s: error %q does not say the redirect to %s was not followed", name, msg, to)
		}
	}
	if n := rec.hits.Load(); n != 0 {
		t.Errorf("the Location received %d requests", n)
	}
	if hc := redirecting.Client(); hc.CheckRedirect != nil {
		t.Error("NewSOAPClient changed the redirect policy of the client it was given")
	}
}
