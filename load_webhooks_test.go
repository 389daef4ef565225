//go:build load

package main_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// TestLoadWebhooks is the webhook part of `make bench`: deliveries per
// second to a local HTTPS receiver, and the latency from publish (the
// event's timestamp, set when it is committed) to its arrival at 500
// deliveries/s, with 1 and with 50 subscriptions. It prints figures and
// asserts only that nothing is lost.
func TestLoadWebhooks(t *testing.T) {
	rcv := newCountingReceiver(t)
	srv := startServer(t,
		"EUDR_RATE_LIMIT_PER_SECOND=1000000000", "EUDR_RATE_LIMIT_BURST=1000000000",
		"EUDR_WEBHOOKS_CA_FILE="+rcv.caFile)
	key := srv.createKey(t, "sandbox", "read", "write")

	var report strings.Builder
	fmt.Fprintf(&report, "\n%-15s %12s %14s %12s %10s %10s %10s\n", "subscriptions", "deliveries", "deliveries/s", "events/s", "p50", "p99", "max")
	for _, subs := range []int{1, 50} {
		for i := range subs {
			srv.mustDo(t, "POST", srv.SandboxURL+"/api/v1/enterprise/eudr/webhooks", map[string]string{
				"X-API-Key": key, "Idempotency-Key": fmt.Sprintf("load-wh-%d-%d", subs, i),
			}, fmt.Sprintf(`{"targetUrl":"%s/s%d/%d","eventTypes":["report.ready"]}`, rcv.srv.URL, subs, i), 200)
		}
		eventType := "report.ready"

		// Throughput: publish a burst, then time until every delivery arrived.
		events := 4000 / subs
		if events < 100 {
			events = 100
		}
		rcv.reset()
		start := time.Now()
		publishAt(t, srv, key, eventType, events, 0)
		want := events * subs
		rcv.waitFor(t, want, 2*time.Minute)
		perSecond := float64(want) / time.Since(start).Seconds()

		// Latency: 500 deliveries/s for a few seconds (500 events/s to one
		// subscription, 10 events/s to fifty), publish to arrival.
		rcv.reset()
		const deliveriesPerSecond, seconds = 500, 4
		rate := deliveriesPerSecond / subs
		publishAt(t, srv, key, eventType, rate*seconds, rate)
		rcv.waitFor(t, rate*seconds*subs, 2*time.Minute)
		lat := rcv.latencies()
		fmt.Fprintf(&report, "%-15d %12d %14.0f %12d %10s %10s %10s\n", subs, want, perSecond, rate, pct(lat, 50), pct(lat, 99), pct(lat, 100))

		// Leave the next round a clean slate: delete the subscriptions.
		list := apitest.Do(t, "GET", srv.SandboxURL+"/api/v1/enterprise/eudr/webhooks?limit=1000", map[string]string{"X-API-Key": key}, nil)
		for _, wh := range list.Array(t) {
			srv.mustDo(t, "DELETE", srv.SandboxURL+"/api/v1/enterprise/eudr/webhooks/"+wh["webhookId"].(string),
				map[string]string{"X-API-Key": key}, nil, 204)
		}
	}
	fmt.Fprintf(&report, "(deliveries/s: a burst published as fast as the API takes it, until the last arrives;\n latency: 500 deliveries/s (events/s x subscriptions) for 4s, from the event's timestamp to its arrival)\n")
	t.Log(report.String())
	fmt.Println(report.String())
}

// publishAt publishes n events through the sandbox API, at rate per second
// (0: as fast as 16 clients can).
func publishAt(t *testing.T, srv *serverProc, key, eventType string, n, rate int) {
	t.Helper()
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if rate > 0 {
					if d := time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(rate))); d > 0 {
						time.Sleep(d)
					}
				}
				body := fmt.Sprintf(`{"eventType":%q,"data":{"n":%d}}`, eventType, i)
				req, _ := http.NewRequest("POST", srv.SandboxURL+"/api/v1/enterprise/eudr/sandbox/events", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-API-Key", key)
				req.Header.Set("Idempotency-Key", fmt.Sprintf("load-ev-%d-%d", start.UnixNano(), i))
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("publish: %v", err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusAccepted {
					t.Errorf("publish: status %d", resp.StatusCode)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// countingReceiver is an HTTPS receiver that counts deliveries and records
// each one's latency from the event's timestamp.
type countingReceiver struct {
	srv    *httptest.Server
	caFile string

	mu   sync.Mutex
	seen map[string]bool // eventId + path: a delivery counts once
	lat  []time.Duration
}

func newCountingReceiver(t *testing.T) *countingReceiver {
	c := &countingReceiver{seen: map[string]bool{}}
	c.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		now := time.Now()
		var env struct {
			EventID   string    `json:"eventId"`
			Timestamp time.Time `json:"timestamp"`
		}
		if err := json.NewDecoder(r.Body).Decode(&env); err != nil {
			http.Error(w, "bad body", http.StatusBadRequest)
			return
		}
		c.mu.Lock()
		if k := env.EventID + r.URL.Path; !c.seen[k] {
			c.seen[k] = true
			c.lat = append(c.lat, now.Sub(env.Timestamp))
		}
		c.mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(c.srv.Close)
	c.caFile = apitest.WriteCAFile(t, c.srv)
	return c
}

func (c *countingReceiver) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen, c.lat = map[string]bool{}, nil
}

func (c *countingReceiver) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.lat)
}

func (c *countingReceiver) latencies() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	lat := slices.Clone(c.lat)
	slices.Sort(lat)
	return lat
}

func (c *countingReceiver) waitFor(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for c.count() < n {
		if time.Now().After(deadline) {
			t.Fatalf("received %d of %d deliveries within %s", c.count(), n, timeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
