package queue_test

import (
	"context"
	"crypto/x509"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
)

func TestNewClient_Guard(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "/elsewhere", http.StatusFound)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	// "localhost" resolves to 127.0.0.1: the check is on the resolved address.
	byName := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)

	t.Run("RefusesLoopback", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{RootCAs: roots, Timeout: 5 * time.Second})
		for _, u := range []string{srv.URL, byName} {
			resp, err := c.Get(u)
			if err == nil {
				resp.Body.Close()
			}
			if !errors.Is(err, queue.ErrTargetNotAllowed) {
				t.Errorf("GET %s: got %v, want ErrTargetNotAllowed", u, err)
			}
		}
	})
	t.Run("AllowPrivate", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: 5 * time.Second})
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatalf("GET %s: %v", srv.URL, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("status: got %d, want 204", resp.StatusCode)
		}
	})
	t.Run("NoRedirects", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: 5 * time.Second})
		resp, err := c.Get(srv.URL + "/redirect")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("status: got %d, want the 302 itself", resp.StatusCode)
		}
	})
	t.Run("UntrustedCertificate", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{AllowPrivate: true, Timeout: 5 * time.Second})
		resp, err := c.Get(srv.URL)
		if err == nil {
			resp.Body.Close()
		}
		var unknownCA x509.UnknownAuthorityError
		if !errors.As(err, &unknownCA) {
			t.Errorf("GET with the system roots only: got %v, want an unknown-authority certificate error", err)
		}
	})
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"https://127.0.0.1/x", true},
		{"https://localhost:8443/x", true},
		{"https://[::1]/x", true},
		{"https://169.254.169.254/latest", true},
		{"https://0.0.0.0/", true},
		{"https://224.0.0.1/", true},
		{"https://[::ffff:127.0.0.1]/", true},
		{"https://10.1.2.3/hook", false},
		{"https://192.168.1.10/hook", false},
		{"https://203.0.113.7/hook", false},
		{"https://no-such-host.invalid/hook", false},
	} {
		err := queue.CheckTarget(context.Background(), tc.url)
		if got := errors.Is(err, queue.ErrTargetNotAllowed); got != tc.refused {
			t.Errorf("CheckTarget(%s): got %v, want refused=%v", tc.url, err, tc.refused)
		}
	}
}
