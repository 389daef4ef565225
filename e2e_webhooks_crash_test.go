package main_test

// End-to-end tests of webhooks across kill -9 and SIGTERM: every event
// accepted while the appliance goes down and comes back is delivered or
// dead-lettered, and nothing else is sent.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// crashPublisher publishes events while the appliance is stopped and
// restarted under it: a request without an answer is sent again with the
// same Idempotency-Key once the appliance is back.
type crashPublisher struct {
	mu       sync.Mutex
	base     string
	accepted map[string]string // eventId -> Idempotency-Key
	retried  int               // requests sent again after a transport error
}

func (c *crashPublisher) url() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base
}

func (c *crashPublisher) setURL(u string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.base = u
}

func (c *crashPublisher) acceptedCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.accepted)
}

// publish sends one event until it is accepted (202) or deadline passes.
func (c *crashPublisher) publish(t testing.TB, key string, i int, deadline time.Time) {
	ik := fmt.Sprintf("crash-%d-%s", i, apitest.RandHex(6))
	body := map[string]any{"eventType": "job.failed", "data": map[string]any{"i": i}}
	for attempt := 0; ; attempt++ {
		if time.Now().After(deadline) {
			t.Errorf("event %d: not accepted before the deadline", i)
			return
		}
		r, err := apitest.TryDo(t, "POST", eventsURL(c.url()), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), body)
		if err != nil || r.Status == http.StatusServiceUnavailable || r.Status == http.StatusLocked {
			c.mu.Lock()
			c.retried++
			c.mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			continue
		}
		if r.Status != http.StatusAccepted {
			t.Errorf("event %d: status %d: %s", i, r.Status, r.Body)
			return
		}
		var ev sandboxEvent
		if err := json.Unmarshal(r.Body, &ev); err != nil || !eventIDPattern.MatchString(ev.EventID) || ev.Deliveries != 1 {
			t.Errorf("event %d: 202 body %s", i, r.Body)
			return
		}
		c.mu.Lock()
		if prev, dup := c.accepted[ev.EventID]; dup && prev != ik {
			t.Errorf("event id %s accepted for two Idempotency-Keys", ev.EventID)
		}
		c.accepted[ev.EventID] = ik
		c.mu.Unlock()
		return
	}
}

// runCrash publishes 300 events from several goroutines to a receiver that
// fails 30 % of the time, interrupts the appliance with interrupt (kill -9
// or SIGTERM) while deliveries are in flight, restarts it on the same data
// dir, and checks that every accepted event was delivered or dead-lettered
// and nothing else was sent.
func runCrash(t *testing.T, interrupt func(*serverProc), quiet time.Duration, env ...string) {
	rc := apitest.NewReceiver(t)
	var rngMu sync.Mutex
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer {
		rngMu.Lock()
		defer rngMu.Unlock()
		act := apitest.Answer{Status: http.StatusOK, Delay: time.Duration(5+rng.IntN(30)) * time.Millisecond}
		if rng.Float64() < 0.3 {
			act.Status = http.StatusInternalServerError
		}
		return act
	})
	p := startWebhookServer(t, rc, append(env, "EUDR_RATE_LIMIT_PER_SECOND=100000", "EUDR_RATE_LIMIT_BURST=100000")...)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/crash", "job.failed")

	const total, workers = 300, 6
	pub := &crashPublisher{base: p.SandboxURL, accepted: map[string]string{}}
	deadline := time.Now().Add(60 * time.Second)
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				pub.publish(t, key, i, deadline)
			}
		})
	}

	// Interrupt mid-way, while deliveries are in flight.
	waitUntil(t, 30*time.Second, "half the events accepted and a delivery in flight", func() bool {
		return pub.acceptedCount() >= total/2 && rc.InFlight() > 0
	})
	beforeInterrupt := len(rc.Requests("", ""))
	acceptedBefore := pub.acceptedCount()
	interrupt(p)
	t.Logf("interrupted with %d events accepted and %d requests received", acceptedBefore, beforeInterrupt)
	p = p.Restart(t)
	pub.setURL(p.SandboxURL)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	pub.mu.Lock()
	accepted := pub.accepted
	retried := pub.retried
	pub.mu.Unlock()
	if len(accepted) != total {
		t.Fatalf("%d events accepted, want %d", len(accepted), total)
	}

	// Wait until every accepted event is delivered or dead-lettered.
	var missing []string
	var dlq dlqList
	start := time.Now()
	waitUntil(t, quiet, "every accepted event delivered or in the DLQ", func() bool {
		delivered := rc.Delivered("/crash")
		missing = missing[:0]
		for id := range accepted {
			if !delivered[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) == 0 {
			return true
		}
		dlq = getDLQ(t, p.SandboxURL, key, "limit=1000")
		in := dlqIDs(dlq)
		for _, id := range missing {
			if !in[id] {
				return false
			}
		}
		return true
	})
	t.Logf("quiet %s after the restart", time.Since(start).Round(100*time.Millisecond))

	dlq = getDLQ(t, p.SandboxURL, key, "limit=1000")
	delivered := rc.Delivered("/crash")
	for id := range accepted {
		if !delivered[id] && !dlqIDs(dlq)[id] {
			t.Errorf("event %s was accepted but neither delivered nor dead-lettered", id)
		}
	}
	for _, m := range dlq.Messages {
		if _, ok := accepted[m.EventID]; !ok {
			t.Errorf("DLQ holds event %s that was never accepted", m.EventID)
		}
		if m.WebhookID != sub.WebhookID || m.Attempts != 5 || m.LastStatus == nil || *m.LastStatus != 500 {
			t.Errorf("DLQ entry %+v, want 5 attempts ending in 500", m)
		}
	}
	reqs := rc.Requests("", "")
	perEvent := map[string]int{}
	for _, r := range reqs {
		if _, ok := accepted[r.Env.EventID]; !ok {
			t.Errorf("receiver got event %q that was never accepted: %s", r.Env.EventID, r.Body)
		}
		if r.SigErr != nil || r.EnvErr != nil {
			t.Errorf("request for %s: signature %v, envelope %v", r.Env.EventID, r.SigErr, r.EnvErr)
		}
		if r.Path != "/crash" || r.Env.EventType != "job.failed" {
			t.Errorf("unexpected request %s %s", r.Path, r.Body)
		}
		perEvent[r.Env.EventID]++
	}
	dups := 0
	for id := range delivered {
		n := 0
		for _, r := range reqs {
			if r.Env.EventID == id && r.Status/100 == 2 {
				n++
			}
		}
		if n > 1 {
			dups++
		}
	}
	t.Logf("%d events accepted (%d requests sent again after the interruption), %d requests received, %d delivered, %d delivered more than once, %d in the DLQ",
		len(accepted), retried, len(reqs), len(delivered), dups, len(dlq.Messages))
}

func TestWebhookCrash_Kill9(t *testing.T) {
	t.Parallel()
	// A delivery claimed when the process dies is sent again once its
	// lease (webhooks.lease, 15 s here) runs out.
	runCrash(t, func(p *serverProc) { p.Kill(t) }, deliveryLease+30*time.Second, deliveryLeaseEnv)
}

func TestWebhookCrash_SIGTERM(t *testing.T) {
	t.Parallel()
	runCrash(t, func(p *serverProc) { p.Stop(t) }, 30*time.Second)
}
