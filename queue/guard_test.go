package queue_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/netguard"
)

// TestNewClient_Guard: the delivery client is netguard's guarded client
// (whose own tests cover the guard, redirects, TLS and proxies) with a
// connection per worker to a busy receiver. One request to loopback shows
// the guard is on.
func TestNewClient_Guard(t *testing.T) {
	var hits atomic.Int32
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	roots := srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs

	c := queue.NewClient(queue.ClientOptions{RootCAs: roots, Timeout: 5 * time.Second})
	resp, err := c.Get(srv.URL)
	if err == nil {
		resp.Body.Close()
	}
	if !errors.Is(err, netguard.ErrTargetNotAllowed) || hits.Load() != 0 {
		t.Errorf("GET %s: got %v with %d requests received, want ErrTargetNotAllowed and none", srv.URL, err, hits.Load())
	}
	tr, ok := c.Transport.(*http.Transport)
	if !ok || tr.Proxy != nil || tr.MaxIdleConnsPerHost != 32 || tr.MaxResponseHeaderBytes != netguard.MaxResponseHeaderBytes {
		t.Errorf("transport %T %+v: want netguard's, with 32 idle connections per host", c.Transport, tr)
	}
}
