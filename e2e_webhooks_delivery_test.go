package main_test

// End-to-end tests of webhook deliveries: the envelope, headers and both
// signatures of a delivery, fan-out by event type, retries on the
// announced schedule, and a slow receiver that does not hold up another.

import (
	"bytes"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apitest"
)

// --- delivery ---

func TestWebhook_Delivery(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	a := subscribe(t, p, key, rc, "/a", "job.failed")
	b := subscribe(t, p, key, rc, "/b", "report.ready")

	data := map[string]any{"jobId": "job_01TEST", "error": map[string]any{"code": "JOB_FAILED", "message": "boom"}, "n": 1.5, "list": []any{1.0, "x", nil}}
	before := time.Now()
	ev := publishEvent(t, p, key, "job.failed", data)
	after := time.Now()
	if ev.Deliveries != 1 {
		t.Errorf("publish: deliveries %d, want 1 (only /a subscribes to job.failed)", ev.Deliveries)
	}
	waitUntil(t, 10*time.Second, "delivery to /a", func() bool { return rc.IsDelivered("/a", ev.EventID) })
	// Once the log shows the success, no further request can come.
	waitUntil(t, 5*time.Second, "the attempt in the delivery log", func() bool {
		return len(getAttempts(t, p.SandboxURL, key, a.WebhookID)) == 1
	})
	reqs := rc.Requests("/a", "")
	if len(reqs) != 1 {
		t.Fatalf("/a got %d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.Method != http.MethodPost {
		t.Errorf("method %s, want POST", r.Method)
	}
	if ct := r.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	if r.EnvErr != nil {
		t.Fatalf("body is not an envelope: %v: %s", r.EnvErr, r.Body)
	}
	if !slices.Equal(r.Keys, whEnvelopeKeys) {
		t.Errorf("envelope members %q, want exactly %q: %s", r.Keys, whEnvelopeKeys, r.Body)
	}
	if r.Env.EventType != "job.failed" || r.Env.EventID != ev.EventID || r.Env.Attempt != 0 {
		t.Errorf("envelope %s, want job.failed %s attempt 0", r.Body, ev.EventID)
	}
	ts := apitest.ParseTime(t, r.Env.Timestamp)
	if ts.Before(before.Add(-time.Second)) || ts.After(after.Add(time.Second)) {
		t.Errorf("timestamp %s not within the publish call (%s..%s)", ts, before, after)
	}
	if r.Env.NextRetry == nil {
		t.Errorf("attempt 0 without nextRetry: %s", r.Body)
	} else if d := apitest.ParseTime(t, *r.Env.NextRetry).Sub(r.At); d < time.Duration(float64(whSchedule[0])*0.8)-whTransitMax ||
		d > time.Duration(float64(whSchedule[0])*1.2)+5*time.Millisecond {
		// The first delay, +-20 %, from the attempt's start, less the
		// request's transit to the receiver (whTransitMax).
		t.Errorf("nextRetry %s is %s after arrival, want about %s (+-20 %%)", *r.Env.NextRetry, d, whSchedule[0])
	}
	if !sameJSON(t, r.Env.Data, mustJSON(t, data)) {
		t.Errorf("data %s, want %s", r.Env.Data, mustJSON(t, data))
	}
	if r.SigErr != nil {
		t.Errorf("signatures: %v", r.SigErr)
	}
	apitest.CheckSignatures(t, r, a.SigningSecret)
	for h, want := range map[string]string{"X-Service-Event-Id": ev.EventID, "X-Service-Event-Type": "job.failed", "webhook-id": ev.EventID} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("header %s %q, want %q", h, got, want)
		}
	}
	if unix, err := strconv.ParseInt(r.Header.Get("webhook-timestamp"), 10, 64); err != nil {
		t.Errorf("webhook-timestamp %q: %v", r.Header.Get("webhook-timestamp"), err)
	} else if d := r.At.Sub(time.Unix(unix, 0)); d < -time.Second || d > 3*time.Second {
		t.Errorf("webhook-timestamp %d is %s from arrival", unix, d)
	}
	// Another secret does not verify.
	if webhooksig.Verify(b.SigningSecret, r.Body, r.Header.Get(webhooksig.HeaderSignature)) == nil {
		t.Errorf("signature verifies with another subscription's secret")
	}

	alog := getAttempts(t, p.SandboxURL, key, a.WebhookID)
	if at := alog[0]; at.EventID != ev.EventID || at.EventType != "job.failed" || at.Attempt != 0 || at.Status != 200 ||
		at.ErrorClass != "" || at.LatencyMs <= 0 || at.DeadLettered || at.Error != "" {
		t.Errorf("delivery log: %+v", at)
	} else {
		apitest.ParseTime(t, at.At)
	}

	// /b subscribes to report.ready only: it got nothing so far; its own
	// event reaches it and not /a.
	if n := len(rc.Requests("/b", "")); n != 0 {
		t.Errorf("/b (report.ready) got %d requests for a job.failed event", n)
	}
	ev2 := publishEvent(t, p, key, "report.ready", map[string]any{"reportId": "r1"})
	if ev2.Deliveries != 1 {
		t.Errorf("publish report.ready: deliveries %d, want 1", ev2.Deliveries)
	}
	waitUntil(t, 10*time.Second, "delivery to /b", func() bool { return rc.IsDelivered("/b", ev2.EventID) })
	if n := len(rc.Requests("/a", "")); n != 1 {
		t.Errorf("/a got %d requests, want still 1", n)
	}
	// A retried publish (same Idempotency-Key) answers the same event and
	// publishes nothing more.
	ik := apitest.NewIdemKey()
	pub := func() *apitest.Response {
		return apitest.Do(t, "POST", eventsURL(p.SandboxURL), apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)),
			map[string]any{"eventType": "report.ready", "data": map[string]any{"once": true}})
	}
	var first, again sandboxEvent
	pub().WantStatus(t, http.StatusAccepted).Decode(t, &first)
	r2 := pub().WantStatus(t, http.StatusAccepted)
	r2.Decode(t, &again)
	if again != first || r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed publish: %+v (replayed %q), first %+v", again, r2.Header.Get("Idempotent-Replayed"), first)
	}
	waitUntil(t, 10*time.Second, "the published-once event", func() bool { return rc.IsDelivered("/b", first.EventID) })
	waitUntil(t, 5*time.Second, "its attempt in the log", func() bool {
		return len(getAttempts(t, p.SandboxURL, key, b.WebhookID)) == 2
	})
	for _, r := range rc.Requests("/b", "") {
		if r.Env.EventID != ev2.EventID && r.Env.EventID != first.EventID {
			t.Errorf("/b got an unexpected event: %s", r.Body)
		}
	}
	if n := len(rc.Requests("/b", first.EventID)); n != 1 {
		t.Errorf("an event published once with a retried request was delivered %d times", n)
	}

	// Nobody subscribes to dds.validated: no delivery.
	if ev3 := publishEvent(t, p, key, "dds.validated", map[string]any{}); ev3.Deliveries != 0 {
		t.Errorf("publish dds.validated: deliveries %d, want 0", ev3.Deliveries)
	}

	// The sandbox events endpoint validates and needs an Idempotency-Key.
	apitest.WantError(t, apitest.Do(t, "POST", eventsURL(p.SandboxURL), apitest.WithKey(key), map[string]any{"eventType": "job.failed"}),
		http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	apitest.WantError(t, apitest.Do(t, "POST", eventsURL(p.SandboxURL), idem(key), map[string]any{"eventType": "webhook.ping"}),
		http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	apitest.WantError(t, apitest.Do(t, "POST", eventsURL(p.SandboxURL), idem(key), map[string]any{"eventType": "job.failed", "data": []int{1}}),
		http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
}

// --- retries ---

// whTransitMax bounds how long a delivery takes from its attempt's start
// to the receiver: milliseconds, but seconds on a two-core machine busy
// with race-detector builds, so the bound is loose. What it leaves
// unchecked the arrival check does: each retry comes at the time its
// predecessor announced.
const whTransitMax = 1500 * time.Millisecond

// checkSchedule checks that each attempt of reqs (one event, in arrival
// order) announces a nextRetry that follows the schedule (+-20 %) and that
// the next attempt arrives at it.
func checkSchedule(t testing.TB, reqs []apitest.Delivery) {
	t.Helper()
	const transitMax, lateMax = whTransitMax, 1500 * time.Millisecond
	for i, r := range reqs {
		if r.Env.Attempt != i {
			t.Errorf("request %d has attempt %d, want %d", i, r.Env.Attempt, i)
		}
		if r.Env.NextRetry == nil {
			if i != len(reqs)-1 || i != len(whSchedule) {
				t.Errorf("attempt %d without nextRetry", i)
			}
			continue
		}
		next := apitest.ParseTime(t, *r.Env.NextRetry)
		d := whSchedule[i]
		// The delay counts from the attempt's start, which the receiver
		// sees later by the request's transit (up to transitMax on a busy
		// machine): the gap from arrival is the delay less that.
		if gap := next.Sub(r.At); gap < time.Duration(float64(d)*0.8)-transitMax || gap > time.Duration(float64(d)*1.2)+5*time.Millisecond {
			t.Errorf("attempt %d announces nextRetry %s after arrival, want %s +-20 %%", i, gap, d)
		}
		if i+1 < len(reqs) {
			late := reqs[i+1].At.Sub(next)
			if late < -10*time.Millisecond {
				t.Errorf("attempt %d arrived %s before its announced nextRetry", i+1, -late)
			}
			// On time is milliseconds; the bound is for a loaded machine.
			if late > lateMax {
				t.Errorf("attempt %d arrived %s after its announced nextRetry", i+1, late)
			}
			t.Logf("attempt %d: announced +%s, arrived %s after the announced time", i+1, next.Sub(r.At).Round(time.Millisecond), late.Round(time.Millisecond))
		}
	}
}

func TestWebhook_Retries(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	rc.SetPolicy(apitest.FailFirst(2))
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/retry", "job.failed")

	ev := publishEvent(t, p, key, "job.failed", map[string]any{"jobId": "job_retry"})
	waitUntil(t, 10*time.Second, "delivery on the third attempt", func() bool { return rc.IsDelivered("/retry", ev.EventID) })
	var alog []attempt
	waitUntil(t, 5*time.Second, "3 attempts in the delivery log", func() bool {
		alog = getAttempts(t, p.SandboxURL, key, sub.WebhookID)
		return len(alog) >= 3
	})
	reqs := rc.Requests("/retry", ev.EventID)
	if len(reqs) != 3 {
		t.Fatalf("receiver got %d requests, want 3 (two failures, then 200)", len(reqs))
	}
	for i, r := range reqs {
		if r.SigErr != nil {
			t.Errorf("attempt %d: %v", i, r.SigErr)
		}
		if !slices.Equal(r.Keys, whEnvelopeKeys) {
			t.Errorf("attempt %d envelope members %q, want %q (nextRetry on every attempt but the fifth)", i, r.Keys, whEnvelopeKeys)
		}
		if r.Env.EventID != ev.EventID || r.Env.Timestamp != reqs[0].Env.Timestamp || !bytes.Equal(r.Env.Data, reqs[0].Env.Data) {
			t.Errorf("attempt %d differs from attempt 0 in more than attempt/nextRetry: %s vs %s", i, r.Body, reqs[0].Body)
		}
		if r.Header.Get("webhook-id") != ev.EventID {
			t.Errorf("attempt %d: webhook-id %q", i, r.Header.Get("webhook-id"))
		}
	}
	checkSchedule(t, reqs)

	if len(alog) != 3 {
		t.Fatalf("delivery log has %d attempts, want 3: %+v", len(alog), alog)
	}
	// Newest first.
	for i, at := range alog {
		n := 2 - i
		if at.Attempt != n || at.EventID != ev.EventID || at.EventType != "job.failed" {
			t.Errorf("log[%d] = %+v, want attempt %d", i, at, n)
		}
		if at.LatencyMs <= 0 {
			t.Errorf("log[%d]: latencyMs %v", i, at.LatencyMs)
		}
		apitest.ParseTime(t, at.At)
		if n < 2 {
			if at.Status != 500 || at.ErrorClass != "http_status" || at.Error == "" || at.NextRetry == nil || at.DeadLettered {
				t.Errorf("failed attempt %d logged as %+v", n, at)
			} else if *at.NextRetry != *reqs[n].Env.NextRetry {
				t.Errorf("attempt %d: log nextRetry %s, envelope %s", n, *at.NextRetry, *reqs[n].Env.NextRetry)
			}
		} else if at.Status != 200 || at.ErrorClass != "" || at.Error != "" || at.DeadLettered {
			t.Errorf("successful attempt logged as %+v", at)
		}
	}
	if l := getDLQ(t, p.SandboxURL, key, ""); l.RetrievedCount != 0 {
		t.Errorf("DLQ has %d entries after a delivery on the third attempt: %+v", l.RetrievedCount, l.Messages)
	}
}

// --- slow receiver isolation ---

func TestWebhook_SlowReceiverIsolation(t *testing.T) {
	t.Parallel()
	slow := apitest.NewReceiver(t)
	fast := apitest.NewReceiver(t)
	const hang = 2 * time.Second
	slow.SetPolicy(func(*apitest.Delivery) apitest.Answer { return apitest.Answer{Status: http.StatusOK, Delay: hang} })
	p := startWebhookServer(t, slow, "EUDR_WEBHOOKS_TIMEOUT=3s")
	key := p.createKey(t, sandbox)
	subscribe(t, p, key, slow, "/slow", "job.failed")
	subscribe(t, p, key, fast, "/fast", "job.failed")

	const n = 8 // more than the 4 sends per subscription at once
	var ids []string
	hanging := 0
	for i := range n {
		start := time.Now()
		ev := publishEvent(t, p, key, "job.failed", map[string]any{"i": i})
		ids = append(ids, ev.EventID)
		waitUntil(t, 5*time.Second, "the fast receiver", func() bool { return fast.IsDelivered("/fast", ev.EventID) })
		if d := time.Since(start); d > time.Second {
			t.Errorf("event %d reached the fast receiver after %s while the slow one hangs, want within 1s", i, d)
		}
		if i > 0 && slow.InFlight() > 0 {
			hanging++
		}
	}
	if hanging == 0 {
		t.Errorf("the slow receiver was never hanging while the fast one was served")
	}
	// The slow receiver answers within the timeout: every event is
	// delivered to it too, once.
	waitUntil(t, 20*time.Second, "the slow receiver to accept every event", func() bool {
		return len(slow.Delivered("/slow")) == n
	})
	for _, id := range ids {
		if reqs := slow.Requests("/slow", id); len(reqs) != 1 {
			t.Errorf("slow receiver got %d requests for %s, want 1", len(reqs), id)
		}
	}
}
