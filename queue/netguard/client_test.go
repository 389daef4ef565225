package netguard_test

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// TestNewClient: the client refuses loopback, by address and by name,
// unless AllowPrivate; trusts RootCAs and nothing else; and answers a
// redirect with the 3xx itself.
func TestNewClient(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	guarded := netguard.NewClient(netguard.Options{RootCAs: roots, Timeout: 5 * time.Second})
	for _, u := range []string{srv.URL, byName} {
		resp, err := guarded.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, netguard.ErrTargetNotAllowed) {
			t.Errorf("GET %s: got %v, want ErrTargetNotAllowed", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Fatalf("the server received %d requests through the guard", n)
	}

	relay := netguard.NewClient(netguard.Options{AllowPrivate: true, RootCAs: roots, Timeout: 5 * time.Second})
	for path, want := range map[string]int{"/": http.StatusNoContent, "/redirect": http.StatusFound} {
		resp, err := relay.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("GET %s with private targets allowed: %v", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: status %d, want %d", path, resp.StatusCode, want)
		}
	}

	systemRoots := netguard.NewClient(netguard.Options{AllowPrivate: true, Timeout: 5 * time.Second})
	resp, err := systemRoots.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	var unknownCA x509.UnknownAuthorityError
	if !errors.As(err, &unknownCA) {
		t.Errorf("GET with the system roots only: got %v, want an unknown-authority certificate error", err)
	}
}

// TestNewClient_Transport pins what a test against a server cannot see:
// no proxy (with one, the guard would judge the proxy's address and the
// proxy would connect to the target unchecked: every other test passes
// with http.ProxyFromEnvironment, as loopback targets are never proxied),
// TLS 1.2 or later, and a timeout when none is given.
func TestNewClient_Transport(t *testing.T) {
	for _, o := range []netguard.Options{{}, {AllowPrivate: true, IdleConnsPerHost: 32}} {
		c := netguard.NewClient(o)
		tr, ok := c.Transport.(*http.Transport)
		if !ok {
			t.Fatalf("%+v: transport is %T, want *http.Transport", o, c.Transport)
		}
		if tr.Proxy != nil {
			t.Errorf("%+v: the transport has a Proxy function; requests must go direct, through the guard", o)
		}
		if tr.TLSClientConfig == nil || tr.TLSClientConfig.MinVersion < tls.VersionTLS12 {
			t.Errorf("%+v: TLS config %+v, want MinVersion TLS 1.2 or later", o, tr.TLSClientConfig)
		}
		if c.Timeout <= 0 || c.Timeout > 5*time.Minute {
			t.Errorf("%+v: client timeout %s, want a bound", o, c.Timeout)
		}
		if tr.MaxIdleConnsPerHost != o.IdleConnsPerHost {
			t.Errorf("%+v: MaxIdleConnsPerHost %d", o, tr.MaxIdleConnsPerHost)
		}
	}
}

// TestNewClient_HeaderBound: an answer whose headers pass
// MaxResponseHeaderBytes is an error, not 10 MB read into memory; one
// under it is read.
func TestNewClient_HeaderBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("X-Padding", strings.Repeat("a", n))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	c := netguard.NewClient(netguard.Options{AllowPrivate: true, Timeout: 5 * time.Second})
	get := func(n int) (*http.Response, error) {
		resp, err := c.Get(srv.URL + "/?n=" + strconv.Itoa(n))
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}
	if resp, err := get(netguard.MaxResponseHeaderBytes / 2); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("headers of half the bound: %v", err)
	}
	if _, err := get(2 * netguard.MaxResponseHeaderBytes); err == nil || !strings.Contains(err.Error(), "exceeded") {
		t.Errorf("headers of twice the bound: got %v, want a headers-exceeded error", err)
	}
}
