package queue_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/netguard"
)

// TestNewClient_Guard: the delivery client is netguard's: loopback is
// refused, by address and by name, unless AllowPrivate; the receiver's
// certificate is checked against RootCAs; a redirect is the answer; and
// no proxy is used.
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
			if !errors.Is(err, netguard.ErrTargetNotAllowed) {
				t.Errorf("GET %s: got %v, want ErrTargetNotAllowed", u, err)
			}
		}
	})
	t.Run("AllowPrivate", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: 5 * time.Second})
		for path, want := range map[string]int{"/": http.StatusNoContent, "/redirect": http.StatusFound} {
			resp, err := c.Get(srv.URL + path)
			if err != nil {
				t.Fatalf("GET %s: %v", path, err)
			}
			resp.Body.Close()
			if resp.StatusCode != want {
				t.Errorf("GET %s: status %d, want %d", path, resp.StatusCode, want)
			}
		}
	})
	t.Run("NoProxy", func(t *testing.T) {
		c := queue.NewClient(queue.ClientOptions{Timeout: 5 * time.Second})
		if tr, ok := c.Transport.(*http.Transport); !ok || tr.Proxy != nil {
			t.Errorf("transport %T has a proxy function; deliveries must go direct, through the guard", c.Transport)
		}
	})
}
