package main_test

// End-to-end tests of webhooks (SPEC.md 2.1-2.3, 3, 4.1, 6; API.md section
// 9): a real HTTPS receiver (apitest.Receiver) that the appliance trusts
// through EUDR_WEBHOOKS_CA_FILE verifies every delivery with
// queue/webhooksig, records it, and answers as each test programs it.
// Events are published through the sandbox's POST /sandbox/events, with a
// short retry schedule.

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apitest"
)

// whSchedule is the sandbox retry schedule of these tests (five attempts in
// all), and whScheduleEnv sets it.
var whSchedule = []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond}

const whScheduleEnv = "EUDR_WEBHOOKS_SANDBOX_RETRY_SCHEDULE=100ms,200ms,300ms,400ms"

var (
	whSecretPattern    = regexp.MustCompile(`^whsec_[A-Za-z0-9_-]{43}$`)
	whRedactedPattern  = regexp.MustCompile(`^whsec_\*\*\*\*[A-Za-z0-9_-]{4}$`)
	webhookIDPattern   = regexp.MustCompile(`^wh_[0-9A-Z]{26}$`)
	eventIDPattern     = regexp.MustCompile(`^evt_[0-9A-Z]{26}$`)
	whEnvelopeKeys     = []string{"attempt", "data", "eventId", "eventType", "nextRetry", "timestamp"}
	whLastEnvelopeKeys = []string{"attempt", "data", "eventId", "eventType", "timestamp"}
)

// waitUntil polls cond every 20ms and fails t when it is still false after
// timeout.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --- API helpers ---

// startWebhookServer starts eudr trusting rc's certificate, with the short
// sandbox retry schedule, then extra settings.
func startWebhookServer(t testing.TB, rc *apitest.Receiver, extra ...string) *serverProc {
	t.Helper()
	env := append([]string{"EUDR_WEBHOOKS_CA_FILE=" + rc.CAFile, whScheduleEnv}, extra...)
	return startServer(t, env...)
}

// webhookReg is the answer to POST /webhooks (and an item of GET /webhooks).
type webhookReg struct {
	WebhookID     string   `json:"webhookId"`
	Status        string   `json:"status"`
	TargetURL     string   `json:"targetUrl"`
	EventTypes    []string `json:"eventTypes"`
	SigningSecret string   `json:"signingSecret"`
	CreatedAt     string   `json:"createdAt"`
}

func webhooksURL(base string) string { return base + eudrAPI + "/webhooks" }

func idem(key string) map[string]string {
	return apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey()))
}

// registerWebhook registers target for types with key on base and returns
// the answer.
func registerWebhook(t testing.TB, base, key, target string, types ...string) webhookReg {
	t.Helper()
	r := apitest.Do(t, "POST", webhooksURL(base), idem(key), map[string]any{"targetUrl": target, "eventTypes": types})
	r.WantStatus(t, http.StatusOK)
	var reg webhookReg
	r.Decode(t, &reg)
	if !webhookIDPattern.MatchString(reg.WebhookID) || !whSecretPattern.MatchString(reg.SigningSecret) {
		t.Fatalf("register: webhookId %q or signingSecret %q malformed: %s", reg.WebhookID, reg.SigningSecret, r.Body)
	}
	return reg
}

// subscribe registers rc's path for types in the sandbox and tells rc the secret.
func subscribe(t testing.TB, p *serverProc, key string, rc *apitest.Receiver, path string, types ...string) webhookReg {
	t.Helper()
	reg := registerWebhook(t, p.SandboxURL, key, rc.URL(path), types...)
	rc.SetSecret(path, reg.SigningSecret)
	return reg
}

// sandboxEvent is the answer to POST /sandbox/events.
type sandboxEvent struct {
	EventID    string `json:"eventId"`
	EventType  string `json:"eventType"`
	Deliveries int    `json:"deliveries"`
}

func eventsURL(base string) string { return base + eudrAPI + "/sandbox/events" }

// publishEvent publishes a sandbox event and checks the 202.
func publishEvent(t testing.TB, p *serverProc, key, eventType string, data any) sandboxEvent {
	t.Helper()
	r := apitest.Do(t, "POST", eventsURL(p.SandboxURL), idem(key), map[string]any{"eventType": eventType, "data": data})
	r.WantStatus(t, http.StatusAccepted)
	var ev sandboxEvent
	r.Decode(t, &ev)
	if !eventIDPattern.MatchString(ev.EventID) || ev.EventType != eventType {
		t.Fatalf("publish: got %s", r.Body)
	}
	return ev
}

// dlqMsg is an entry of GET /webhooks/dlq.
type dlqMsg struct {
	EventType  string          `json:"eventType"`
	EventID    string          `json:"eventId"`
	Attempts   int             `json:"attempts"`
	WebhookID  string          `json:"webhookId"`
	TargetURL  string          `json:"targetUrl"`
	LastStatus *int            `json:"lastStatus"`
	LastError  string          `json:"lastError"`
	FailedAt   string          `json:"failedAt"`
	Timestamp  string          `json:"timestamp"`
	Data       json.RawMessage `json:"data"`
}

type dlqList struct {
	RetrievedCount int      `json:"retrievedCount"`
	Messages       []dlqMsg `json:"messages"`
}

func dlqURL(base string) string { return webhooksURL(base) + "/dlq" }

// getDLQ lists the DLQ of key's environment with query (e.g. "eventType=x").
func getDLQ(t testing.TB, base, key, query string) dlqList {
	t.Helper()
	u := dlqURL(base)
	if query != "" {
		u += "?" + query
	}
	r := apitest.Do(t, "GET", u, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var l dlqList
	r.Decode(t, &l)
	if l.Messages == nil {
		t.Fatalf("GET %s: messages is not an array: %s", u, r.Body)
	}
	if l.RetrievedCount != len(l.Messages) {
		t.Errorf("GET %s: retrievedCount %d, but %d messages", u, l.RetrievedCount, len(l.Messages))
	}
	return l
}

// dlqIDs is the set of event IDs in l.
func dlqIDs(l dlqList) map[string]bool {
	out := map[string]bool{}
	for _, m := range l.Messages {
		out[m.EventID] = true
	}
	return out
}

// waitDLQ polls the DLQ until cond holds for it and returns it.
func waitDLQ(t testing.TB, base, key, query, what string, cond func(dlqList) bool) dlqList {
	t.Helper()
	var l dlqList
	waitUntil(t, 15*time.Second, what, func() bool {
		l = getDLQ(t, base, key, query)
		return cond(l)
	})
	return l
}

// attempt is an item of GET /webhooks/{id}/deliveries.
type attempt struct {
	EventID      string  `json:"eventId"`
	EventType    string  `json:"eventType"`
	Attempt      int     `json:"attempt"`
	Status       int     `json:"status"`
	LatencyMs    float64 `json:"latencyMs"`
	ErrorClass   string  `json:"errorClass"`
	Error        string  `json:"error"`
	ResponseBody string  `json:"responseBody"`
	At           string  `json:"at"`
	NextRetry    *string `json:"nextRetry"`
	DeadLettered bool    `json:"deadLettered"`
}

func getAttempts(t testing.TB, base, key, webhookID string) []attempt {
	t.Helper()
	r := apitest.Do(t, "GET", webhooksURL(base)+"/"+webhookID+"/deliveries", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var out []attempt
	r.Decode(t, &out)
	return out
}

// sameJSON reports whether a and b are the same JSON value.
func sameJSON(t testing.TB, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %s", a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	return reflect.DeepEqual(x, y)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// dataField reads a string member of a delivery's data.
func dataField(r *apitest.Delivery, name string) string {
	var m map[string]any
	json.Unmarshal(r.Env.Data, &m)
	s, _ := m[name].(string)
	return s
}

// --- 1. registration ---

func TestWebhook_Register(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	liveKey := p.createKey(t, production)
	base := webhooksURL(p.SandboxURL)
	target := rc.URL("/reg")
	types := []string{"polygon.verified", "job.failed"}
	idemKey := apitest.NewIdemKey()
	body := map[string]any{"targetUrl": target, "eventTypes": types}

	r := p.mustDo(t, "POST", base, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", idemKey)), body, http.StatusOK)
	if r.Header.Get("X-Trace-Id") == "" {
		t.Errorf("register: no X-Trace-Id header")
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("register: Content-Type %q", ct)
	}
	var reg webhookReg
	r.Decode(t, &reg)
	if !webhookIDPattern.MatchString(reg.WebhookID) {
		t.Errorf("webhookId %q, want wh_ + ULID", reg.WebhookID)
	}
	if reg.Status != "REGISTERED" {
		t.Errorf("status %q, want REGISTERED", reg.Status)
	}
	if reg.TargetURL != target {
		t.Errorf("targetUrl %q, want %q", reg.TargetURL, target)
	}
	if !slices.Equal(reg.EventTypes, types) {
		t.Errorf("eventTypes %q, want %q", reg.EventTypes, types)
	}
	if !whSecretPattern.MatchString(reg.SigningSecret) {
		t.Errorf("signingSecret %q, want whsec_ + 43 base64url characters", reg.SigningSecret)
	}
	if b, err := base64.RawURLEncoding.DecodeString(strings.TrimPrefix(reg.SigningSecret, "whsec_")); err != nil || len(b) != 32 {
		t.Errorf("signingSecret %q does not encode 32 bytes (%d, %v)", reg.SigningSecret, len(b), err)
	}
	apitest.ParseTime(t, reg.CreatedAt)
	secret := reg.SigningSecret
	redacted := "whsec_****" + secret[len(secret)-4:]

	t.Run("Validation", func(t *testing.T) {
		post := func(body any) *apitest.Response {
			return apitest.Do(t, "POST", base, idem(key), body)
		}
		e := apitest.WantError(t, post(map[string]any{"targetUrl": "http://127.0.0.1:9/hook", "eventTypes": []string{"job.failed"}}),
			http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "targetUrl")

		e = apitest.WantError(t, post(map[string]any{"targetUrl": target + "x", "eventTypes": []string{"job.failed", "polygon.exploded"}}),
			http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "eventTypes[1]")

		e = apitest.WantError(t, post(map[string]any{"targetUrl": target + "x", "eventTypes": []string{"webhook.ping"}}),
			http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "eventTypes[0]")

		// Every problem at once.
		e = apitest.WantError(t, post(map[string]any{"targetUrl": "http://example.com/", "eventTypes": []string{"report.ready", "nope", "webhook.ping"}}),
			http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE")
		e.Detail(t, "targetUrl")
		e.Detail(t, "eventTypes[1]")
		e.Detail(t, "eventTypes[2]")

		e = apitest.WantError(t, post(map[string]any{"eventTypes": []string{"job.failed"}}), http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED")
		e.Detail(t, "targetUrl")
		e = apitest.WantError(t, post(map[string]any{"targetUrl": target + "x"}), http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED")
		e.Detail(t, "eventTypes")

		// polygon.failed is subscribable (API.md section 9).
		registerWebhook(t, p.SandboxURL, key, rc.URL("/polyfail"), "polygon.failed")

		r := apitest.Do(t, "POST", base, apitest.WithKey(key), map[string]any{"targetUrl": target + "y", "eventTypes": []string{"job.failed"}})
		e = apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
		e.Detail(t, "headers.Idempotency-Key")
	})

	t.Run("Duplicate", func(t *testing.T) {
		r := apitest.Do(t, "POST", base, idem(key), map[string]any{"targetUrl": target, "eventTypes": []string{"report.ready", "job.failed"}})
		apitest.WantError(t, r, http.StatusConflict, "CONFLICT", "WEBHOOK_DUPLICATE")
		// The same URL for other event types, and another URL for the same
		// ones, are not duplicates.
		registerWebhook(t, p.SandboxURL, key, target, "report.ready")
		registerWebhook(t, p.SandboxURL, key, target+"?other=1", "job.failed")
	})

	t.Run("IdempotentReplayShowsSecret", func(t *testing.T) {
		// A client whose first answer was lost gets it again, secret
		// included: it signs every delivery and was shown nowhere else.
		r := p.mustDo(t, "POST", base, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", idemKey)), body, http.StatusOK)
		if r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
		}
		var again webhookReg
		r.Decode(t, &again)
		if again.WebhookID != reg.WebhookID {
			t.Errorf("replay: webhookId %q, want %q", again.WebhookID, reg.WebhookID)
		}
		if again.SigningSecret != secret {
			t.Errorf("replay: signingSecret %q, want the first answer's %q", again.SigningSecret, secret)
		}
		r = apitest.Do(t, "POST", base, apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", idemKey)),
			map[string]any{"targetUrl": target, "eventTypes": []string{"dds.submitted"}})
		apitest.WantError(t, r, http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
	})

	t.Run("ListRedacts", func(t *testing.T) {
		r := apitest.Do(t, "GET", base, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if bytes.Contains(r.Body, []byte(secret)) {
			t.Errorf("list shows the secret: %s", r.Body)
		}
		items := r.Array(t)
		if len(items) != 4 {
			t.Errorf("list: %d items, want 4: %s", len(items), r.Body)
		}
		var found bool
		for _, it := range items {
			var keys []string
			for k := range it {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if want := []string{"createdAt", "eventTypes", "signingSecret", "status", "targetUrl", "webhookId"}; !slices.Equal(keys, want) {
				t.Errorf("list item members %q, want %q", keys, want)
			}
			s, _ := it["signingSecret"].(string)
			if !whRedactedPattern.MatchString(s) {
				t.Errorf("list item signingSecret %q, want whsec_**** + 4", s)
			}
			if it["webhookId"] == reg.WebhookID {
				found = true
				if s != redacted {
					t.Errorf("list: signingSecret %q, want %q", s, redacted)
				}
				if it["status"] != "REGISTERED" || it["targetUrl"] != target {
					t.Errorf("list item: %v", it)
				}
			}
		}
		if !found {
			t.Errorf("list lacks %s: %s", reg.WebhookID, r.Body)
		}
		// Newest first.
		if len(items) > 0 && items[len(items)-1]["webhookId"] != reg.WebhookID {
			t.Errorf("list not newest first: the first registration is not last: %s", r.Body)
		}
	})

	t.Run("ProductionIsolation", func(t *testing.T) {
		live := webhooksURL(p.ProductionURL)
		r := apitest.Do(t, "GET", live, apitest.WithKey(liveKey), nil).WantStatus(t, http.StatusOK)
		if bytes.Contains(r.Body, []byte(reg.WebhookID)) || len(r.Array(t)) != 0 {
			t.Errorf("production lists sandbox webhooks: %s", r.Body)
		}
		apitest.WantError(t, apitest.Do(t, "DELETE", live+"/"+reg.WebhookID, apitest.WithKey(liveKey), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "POST", live+"/"+reg.WebhookID+"/rotate-secret", apitest.WithKey(liveKey), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "POST", live+"/"+reg.WebhookID+"/ping", apitest.WithKey(liveKey), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "GET", live+"/"+reg.WebhookID+"/deliveries", apitest.WithKey(liveKey), nil), http.StatusNotFound, "NOT_FOUND")
		// A sandbox key on production is refused outright.
		if r := apitest.Do(t, "GET", live, apitest.WithKey(key), nil); r.Status != http.StatusForbidden {
			t.Errorf("sandbox key on production: status %d, want 403", r.Status)
		}
		// Production's own registration of the same URL is not a duplicate
		// of the sandbox's (production refuses loopback: use a public one).
		registerWebhook(t, p.ProductionURL, liveKey, "https://203.0.113.10/hook", "job.failed")
		registerWebhook(t, p.SandboxURL, key, "https://203.0.113.10/hook", "job.failed")
		// Still there in the sandbox.
		r = apitest.Do(t, "GET", base, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if !bytes.Contains(r.Body, []byte(reg.WebhookID)) {
			t.Errorf("sandbox list lost %s", reg.WebhookID)
		}
	})

	assertLogHasNoSecrets(t, p, secret)
}

// --- 2. delivery ---

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
	} else if d := apitest.ParseTime(t, *r.Env.NextRetry).Sub(r.At); d < time.Duration(float64(whSchedule[0])*0.8)-150*time.Millisecond || d > 150*time.Millisecond {
		// The first delay, +-20 %, from the attempt's start, less the
		// request's transit to the receiver (up to 150 ms on a busy machine).
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

// --- 3. retries ---

// checkSchedule checks that each attempt of reqs (one event, in arrival
// order) announces a nextRetry that follows the schedule (+-20 %) and that
// the next attempt arrives at it.
func checkSchedule(t testing.TB, reqs []apitest.Delivery) {
	t.Helper()
	const transitMax, lateMax = 150 * time.Millisecond, 1500 * time.Millisecond
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

// --- 4. dead-letter queue ---

func TestWebhook_DLQ(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	var failing atomic.Bool
	failing.Store(true)
	// While failing: 500, or 410 for events whose data says "gone".
	rc.SetPolicy(func(r *apitest.Delivery) apitest.Answer {
		if !failing.Load() {
			return apitest.Answer{Status: http.StatusOK}
		}
		if strings.Contains(string(r.Env.Data), `"gone":true`) {
			return apitest.Answer{Status: http.StatusGone}
		}
		return apitest.Answer{Status: http.StatusInternalServerError}
	})
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	path := "/dlq"
	sub := subscribe(t, p, key, rc, path, "job.failed", "report.ready")
	base := p.SandboxURL

	data1 := map[string]any{"jobId": "job_dlq1", "n": 1.0}
	e1 := publishEvent(t, p, key, "job.failed", data1)
	l := waitDLQ(t, base, key, "", "E1 in the DLQ", func(l dlqList) bool { return dlqIDs(l)[e1.EventID] })

	t.Run("FiveAttempts", func(t *testing.T) {
		reqs := rc.Requests(path, e1.EventID)
		if len(reqs) != 5 {
			t.Fatalf("receiver got %d requests, want exactly 5", len(reqs))
		}
		for i, r := range reqs {
			if r.SigErr != nil {
				t.Errorf("attempt %d: %v", i, r.SigErr)
			}
			want := whEnvelopeKeys
			if i == 4 {
				want = whLastEnvelopeKeys
			}
			if !slices.Equal(r.Keys, want) {
				t.Errorf("attempt %d envelope members %q, want %q", i, r.Keys, want)
			}
		}
		checkSchedule(t, reqs)
	})

	t.Run("Entry", func(t *testing.T) {
		if l.RetrievedCount != 1 || len(l.Messages) != 1 {
			t.Fatalf("DLQ: %+v, want one entry", l)
		}
		m := l.Messages[0]
		if m.EventType != "job.failed" || m.EventID != e1.EventID || m.Attempts != 5 || m.WebhookID != sub.WebhookID ||
			m.TargetURL != rc.URL(path) || m.LastStatus == nil || *m.LastStatus != 500 || m.LastError == "" {
			t.Errorf("DLQ entry %+v", m)
		}
		if !sameJSON(t, m.Data, mustJSON(t, data1)) {
			t.Errorf("DLQ data %s, want %s", m.Data, mustJSON(t, data1))
		}
		failedAt := apitest.ParseTime(t, m.FailedAt)
		last := rc.Requests(path, e1.EventID)[4]
		if failedAt.Before(last.At.Add(-50*time.Millisecond)) || failedAt.After(last.At.Add(2*time.Second)) {
			t.Errorf("failedAt %s, last attempt arrived %s", failedAt, last.At)
		}
		// The production DLQ is another one.
		live := p.createKey(t, production)
		if l := getDLQ(t, p.ProductionURL, live, ""); l.RetrievedCount != 0 {
			t.Errorf("production DLQ shows sandbox entries: %+v", l.Messages)
		}
		apitest.WantError(t, apitest.Do(t, "POST", dlqURL(p.ProductionURL)+"/"+e1.EventID+"/replay", apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", dlqURL(p.ProductionURL)+"/"+e1.EventID, apitest.WithKey(live), nil), http.StatusNotFound, "NOT_FOUND")
		r := apitest.Do(t, "POST", dlqURL(p.ProductionURL)+"/replay-bulk", apitest.WithKey(live), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "0" {
			t.Errorf("production replay-bulk: X-Replayed-Count %q, want 0", got)
		}

		r = apitest.Do(t, "GET", dlqURL(base), apitest.WithKey(key), nil)
		var raw struct {
			Messages []map[string]any `json:"messages"`
		}
		r.Decode(t, &raw)
		for _, k := range []string{"eventType", "eventId", "attempts", "webhookId", "targetUrl", "lastStatus", "lastError", "failedAt", "data"} {
			if _, ok := raw.Messages[0][k]; !ok {
				t.Errorf("DLQ entry lacks %s: %s", k, r.Body)
			}
		}
	})

	failedAt := apitest.ParseTime(t, l.Messages[0].FailedAt)
	var e2 sandboxEvent

	t.Run("Gone", func(t *testing.T) {
		e2 = publishEvent(t, p, key, "report.ready", map[string]any{"gone": true})
		waitDLQ(t, base, key, "", "E2 in the DLQ", func(l dlqList) bool { return dlqIDs(l)[e2.EventID] })
		if n := len(rc.Requests(path, e2.EventID)); n != 1 {
			t.Errorf("a 410 answer: %d requests, want 1", n)
		}
		l := getDLQ(t, base, key, "eventType=report.ready")
		if len(l.Messages) != 1 || l.Messages[0].EventID != e2.EventID || l.Messages[0].Attempts != 1 ||
			l.Messages[0].LastStatus == nil || *l.Messages[0].LastStatus != 410 {
			t.Errorf("DLQ of report.ready: %+v, want E2 with attempts 1, lastStatus 410", l)
		}
	})

	t.Run("Filters", func(t *testing.T) {
		count := func(q string) int { return getDLQ(t, base, key, q).RetrievedCount }
		rfc := func(t time.Time) string { return url.QueryEscape(t.UTC().Format(time.RFC3339Nano)) }
		for q, want := range map[string]int{
			"":                       2,
			"eventType=job.failed":   1,
			"eventType=report.ready": 1,
			"eventType=dds.rejected": 0,
			"startDate=" + rfc(failedAt.Add(-time.Second)): 2,
			"startDate=" + rfc(failedAt.Add(time.Minute)):  0,
			"endDate=" + rfc(failedAt.Add(-time.Second)):   0,
			"startDate=" + rfc(failedAt.Add(-time.Second)) + "&endDate=" + rfc(failedAt.Add(time.Minute)) + "&eventType=job.failed":   1,
			"startDate=" + failedAt.UTC().Format(time.DateOnly) + "&endDate=" + failedAt.UTC().Add(time.Minute).Format(time.DateOnly): 2,
			"endDate=" + failedAt.UTC().AddDate(0, 0, -1).Format(time.DateOnly):                                                       0,
			"limit=1": 1,
		} {
			if got := count(q); got != want {
				t.Errorf("GET /webhooks/dlq?%s: %d entries, want %d", q, got, want)
			}
		}
		for _, q := range []string{"eventType=nope", "startDate=yesterday", "endDate=2026-13-01",
			"startDate=" + rfc(failedAt) + "&endDate=" + rfc(failedAt.Add(-time.Hour)), "limit=0", "limit=1001"} {
			apitest.WantError(t, apitest.Do(t, "GET", dlqURL(base)+"?"+q, apitest.WithKey(key), nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		}
	})

	t.Run("EndDateInclusive", func(t *testing.T) {
		// endDate is inclusive: the failedAt an entry shows, as endDate,
		// selects that entry.
		q := "eventType=job.failed&endDate=" + url.QueryEscape(l.Messages[0].FailedAt)
		if got := getDLQ(t, base, key, q).RetrievedCount; got != 1 {
			t.Errorf("GET /webhooks/dlq?%s: %d entries, want 1 (the entry whose failedAt is %s)", q, got, l.Messages[0].FailedAt)
		}
	})

	t.Run("ReplayAnswersWithoutBody", func(t *testing.T) {
		// (The single replay's body is checked in ReplayOne.)
		u := dlqURL(base) + "/replay-bulk?eventType=dds.submitted"
		r := apitest.Do(t, "POST", u, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if len(bytes.TrimSpace(r.Body)) != 0 {
			t.Errorf("POST %s: 200 with body %q, want none", u, r.Body)
		}
	})

	t.Run("ReplayOne", func(t *testing.T) {
		failing.Store(false)
		before := len(rc.Requests(path, e1.EventID))
		r := apitest.Do(t, "POST", dlqURL(base)+"/"+e1.EventID+"/replay", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "1" {
			t.Errorf("replay: X-Replayed-Count %q, want 1", got)
		}
		if len(bytes.TrimSpace(r.Body)) != 0 {
			t.Errorf("replay: 200 with body %q, want none", r.Body)
		}
		waitUntil(t, 10*time.Second, "E1 delivered after replay", func() bool { return rc.IsDelivered(path, e1.EventID) })
		reqs := rc.Requests(path, e1.EventID)
		if len(reqs) != before+1 {
			t.Fatalf("after replay: %d requests, want %d", len(reqs), before+1)
		}
		re := reqs[before]
		if re.Env.Attempt != 0 || re.Env.EventID != e1.EventID || re.Env.NextRetry == nil || re.SigErr != nil {
			t.Errorf("replayed delivery: %s (%v), want attempt 0 of the same event with nextRetry", re.Body, re.SigErr)
		}
		if re.Env.Timestamp != reqs[0].Env.Timestamp || !sameJSON(t, re.Env.Data, reqs[0].Env.Data) {
			t.Errorf("replayed delivery %s differs from the original %s", re.Body, reqs[0].Body)
		}
		if dlqIDs(getDLQ(t, base, key, ""))[e1.EventID] {
			t.Errorf("E1 still in the DLQ after a successful replay")
		}
		apitest.WantError(t, apitest.Do(t, "POST", dlqURL(base)+"/"+e1.EventID+"/replay", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "POST", dlqURL(base)+"/evt_01ZZZZZZZZZZZZZZZZZZZZZZZZ/replay", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	})

	t.Run("ReplayBulk", func(t *testing.T) {
		failing.Store(true)
		e3 := publishEvent(t, p, key, "job.failed", map[string]any{"n": 3.0})
		e4 := publishEvent(t, p, key, "job.failed", map[string]any{"n": 4.0})
		e5 := publishEvent(t, p, key, "report.ready", map[string]any{"gone": true, "n": 5.0})
		waitDLQ(t, base, key, "", "E3, E4 and E5 in the DLQ", func(l dlqList) bool {
			ids := dlqIDs(l)
			return ids[e3.EventID] && ids[e4.EventID] && ids[e5.EventID]
		})
		// DLQ: E2, E5 (report.ready), E3, E4 (job.failed).
		failing.Store(false)
		r := apitest.Do(t, "POST", dlqURL(base)+"/replay-bulk?eventType=report.ready", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "2" {
			t.Errorf("replay-bulk by eventType: X-Replayed-Count %q, want 2", got)
		}
		r = apitest.Do(t, "POST", dlqURL(base)+"/replay-bulk", apitest.WithKey(key), map[string]any{"eventIds": []string{e3.EventID}}).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "1" {
			t.Errorf("replay-bulk by eventIds: X-Replayed-Count %q, want 1", got)
		}
		waitUntil(t, 10*time.Second, "E2, E3, E5 delivered after bulk replays", func() bool {
			d := rc.Delivered(path)
			return d[e2.EventID] && d[e3.EventID] && d[e5.EventID]
		})
		left := getDLQ(t, base, key, "")
		if len(left.Messages) != 1 || left.Messages[0].EventID != e4.EventID {
			t.Errorf("DLQ after bulk replays: %+v, want only E4", left.Messages)
		}
		if rc.IsDelivered(path, e4.EventID) {
			t.Errorf("E4 was delivered though not replayed")
		}
		// A filter that matches nothing replays nothing.
		r = apitest.Do(t, "POST", dlqURL(base)+"/replay-bulk?eventType=dds.submitted", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "0" {
			t.Errorf("replay-bulk matching nothing: X-Replayed-Count %q, want 0", got)
		}
	})

	t.Run("Acknowledge", func(t *testing.T) {
		failing.Store(true)
		e6 := publishEvent(t, p, key, "report.ready", map[string]any{"gone": true, "n": 6.0})
		e7 := publishEvent(t, p, key, "report.ready", map[string]any{"gone": true, "n": 7.0})
		l := waitDLQ(t, base, key, "", "E6 and E7 in the DLQ", func(l dlqList) bool {
			ids := dlqIDs(l)
			return ids[e6.EventID] && ids[e7.EventID]
		})
		if len(l.Messages) != 3 {
			t.Fatalf("DLQ: %+v, want E4, E6, E7", l.Messages)
		}
		e4 := ""
		for _, m := range l.Messages {
			if m.EventID != e6.EventID && m.EventID != e7.EventID {
				e4 = m.EventID
			}
		}
		r := apitest.Do(t, "DELETE", dlqURL(base)+"/"+e4, apitest.WithKey(key), nil).WantStatus(t, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("DELETE: 204 with body %q", r.Body)
		}
		if got := r.Header.Get("X-Acknowledged-Count"); got != "" && got != "1" {
			t.Errorf("DELETE one: X-Acknowledged-Count %q", got)
		}
		r = apitest.Do(t, "DELETE", dlqURL(base), apitest.WithKey(key), map[string]any{"eventIds": []string{e6.EventID, e7.EventID, "evt_01ZZZZZZZZZZZZZZZZZZZZZZZZ"}}).
			WantStatus(t, http.StatusNoContent)
		if got := r.Header.Get("X-Acknowledged-Count"); got != "2" {
			t.Errorf("bulk DELETE: X-Acknowledged-Count %q, want 2", got)
		}
		if l := getDLQ(t, base, key, ""); l.RetrievedCount != 0 {
			t.Errorf("DLQ after acknowledging everything: %+v", l.Messages)
		}
		// Gone for good: neither replay nor a second delete finds them.
		before := len(rc.Requests("", ""))
		failing.Store(false)
		apitest.WantError(t, apitest.Do(t, "POST", dlqURL(base)+"/"+e4+"/replay", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", dlqURL(base)+"/"+e6.EventID, apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
		r = apitest.Do(t, "POST", dlqURL(base)+"/replay-bulk", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "0" {
			t.Errorf("replay everything after acknowledging everything: X-Replayed-Count %q, want 0", got)
		}
		apitest.WantError(t, apitest.Do(t, "DELETE", dlqURL(base), apitest.WithKey(key), map[string]any{"eventIds": []string{}}),
			http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED")
		// Acknowledged events never come back (checked after a poll interval).
		time.Sleep(700 * time.Millisecond)
		if after := len(rc.Requests("", "")); after != before {
			t.Errorf("%d requests after acknowledging, want none", after-before)
		}
	})

	t.Run("ReplayEverything", func(t *testing.T) {
		// A bulk replay with neither filter nor body replays every entry.
		failing.Store(true)
		e8 := publishEvent(t, p, key, "report.ready", map[string]any{"gone": true, "n": 8.0})
		e9 := publishEvent(t, p, key, "job.failed", map[string]any{"gone": true, "n": 9.0})
		waitDLQ(t, base, key, "", "E8 and E9 in the DLQ", func(l dlqList) bool {
			ids := dlqIDs(l)
			return ids[e8.EventID] && ids[e9.EventID]
		})
		failing.Store(false)
		r := apitest.Do(t, "POST", dlqURL(base)+"/replay-bulk", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if got := r.Header.Get("X-Replayed-Count"); got != "2" {
			t.Errorf("replay everything: X-Replayed-Count %q, want 2", got)
		}
		waitUntil(t, 10*time.Second, "E8 and E9 delivered", func() bool {
			return rc.IsDelivered(path, e8.EventID) && rc.IsDelivered(path, e9.EventID)
		})
		if l := getDLQ(t, base, key, ""); l.RetrievedCount != 0 {
			t.Errorf("DLQ after replaying everything: %+v", l.Messages)
		}
	})
}

// --- 5. rotation ---

func TestWebhook_Rotation(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	// Events whose data says failTwice fail their first two attempts.
	rc.SetPolicy(func(r *apitest.Delivery) apitest.Answer {
		if strings.Contains(string(r.Env.Data), `"failTwice":true`) && r.Nth <= 2 {
			return apitest.Answer{Status: http.StatusInternalServerError}
		}
		return apitest.Answer{Status: http.StatusOK}
	})
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	path := "/rot"
	sub := subscribe(t, p, key, rc, path, "job.failed")
	oldSecret := sub.SigningSecret

	// An event in its retry cycle when the secret rotates.
	pending := publishEvent(t, p, key, "job.failed", map[string]any{"failTwice": true})
	waitUntil(t, 10*time.Second, "the first attempt of the pending event", func() bool { return len(rc.Requests(path, pending.EventID)) >= 1 })

	r := apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/rotate-secret", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	var rot struct {
		WebhookID     string `json:"webhookId"`
		SigningSecret string `json:"signingSecret"`
	}
	r.Decode(t, &rot)
	rc.SetSecret(path, rot.SigningSecret)
	if !whSecretPattern.MatchString(rot.SigningSecret) || rot.SigningSecret == oldSecret {
		t.Fatalf("rotate: signingSecret %q (old %q)", rot.SigningSecret, oldSecret)
	}
	if rot.WebhookID != sub.WebhookID {
		t.Errorf("rotate: webhookId %q, want %q", rot.WebhookID, sub.WebhookID)
	}
	newSecret := rot.SigningSecret

	ev := publishEvent(t, p, key, "job.failed", map[string]any{"after": "rotation"})
	waitUntil(t, 10*time.Second, "delivery after rotation", func() bool { return rc.IsDelivered(path, ev.EventID) })
	reqs := rc.Requests(path, ev.EventID)
	if len(reqs) != 1 {
		t.Errorf("%d requests for the event after rotation, want 1", len(reqs))
	}
	d := reqs[len(reqs)-1]
	apitest.CheckSignatures(t, d, newSecret)
	if err := webhooksig.Verify(oldSecret, d.Body, d.Header.Get(webhooksig.HeaderSignature)); !errors.Is(err, webhooksig.ErrMismatch) {
		t.Errorf("a delivery after rotation verifies with the old secret (X-Service-Signature): %v", err)
	}
	if err := webhooksig.VerifyStandard(oldSecret, d.Header, d.Body, webhooksig.DefaultTolerance, d.At); !errors.Is(err, webhooksig.ErrMismatch) {
		t.Errorf("a delivery after rotation verifies with the old secret (webhook-signature): %v", err)
	}

	// The retry cycle that began before the rotation: its first attempt
	// was signed with the old secret, its last (delivered) with the new.
	waitUntil(t, 10*time.Second, "the pending event delivered", func() bool { return rc.IsDelivered(path, pending.EventID) })
	preqs := rc.Requests(path, pending.EventID)
	if err := webhooksig.Verify(oldSecret, preqs[0].Body, preqs[0].Header.Get(webhooksig.HeaderSignature)); err != nil {
		t.Errorf("attempt 0 before the rotation does not verify with the old secret: %v", err)
	}
	last := preqs[len(preqs)-1]
	if last.Env.Attempt < 1 {
		t.Errorf("pending event delivered on attempt %d", last.Env.Attempt)
	}
	apitest.CheckSignatures(t, last, newSecret)
	if webhooksig.Verify(oldSecret, last.Body, last.Header.Get(webhooksig.HeaderSignature)) == nil {
		t.Errorf("a retry after rotation verifies with the old secret")
	}

	// The list shows the new secret's last four.
	r = apitest.Do(t, "GET", webhooksURL(p.SandboxURL), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	items := r.Array(t)
	if len(items) != 1 || items[0]["signingSecret"] != "whsec_****"+newSecret[len(newSecret)-4:] {
		t.Errorf("list after rotation: %s", r.Body)
	}
	if bytes.Contains(r.Body, []byte(newSecret)) || bytes.Contains(r.Body, []byte(oldSecret)) {
		t.Errorf("list shows a secret: %s", r.Body)
	}

	// A replayed rotation (same Idempotency-Key) does not rotate again and
	// answers the secret it made.
	ik := apitest.NewIdemKey()
	first := apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/rotate-secret", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), nil).
		WantStatus(t, http.StatusOK)
	var s1, s2 struct {
		SigningSecret string `json:"signingSecret"`
	}
	first.Decode(t, &s1)
	second := apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/rotate-secret", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", ik)), nil).
		WantStatus(t, http.StatusOK)
	second.Decode(t, &s2)
	if second.Header.Get("Idempotent-Replayed") != "true" || s2.SigningSecret != s1.SigningSecret {
		t.Errorf("replayed rotation: %s (first %s)", second.Body, first.Body)
	}

	apitest.WantError(t, apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/wh_01ZZZZZZZZZZZZZZZZZZZZZZZZ/rotate-secret", apitest.WithKey(key), nil),
		http.StatusNotFound, "NOT_FOUND")
	assertLogHasNoSecrets(t, p, oldSecret, newSecret, s1.SigningSecret)
}

// --- 6. deletion ---

func TestWebhook_Deletion(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer { return apitest.Answer{Status: http.StatusInternalServerError} })
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	del := subscribe(t, p, key, rc, "/deleted", "job.failed")
	ctl := subscribe(t, p, key, rc, "/control", "job.failed")

	// An event in its retry cycle when the subscription is deleted.
	e1 := publishEvent(t, p, key, "job.failed", map[string]any{"n": 1.0})
	if e1.Deliveries != 2 {
		t.Fatalf("deliveries %d, want 2", e1.Deliveries)
	}
	waitUntil(t, 10*time.Second, "the first attempt to /deleted", func() bool { return len(rc.Requests("/deleted", e1.EventID)) >= 1 })
	apitest.Do(t, "DELETE", webhooksURL(p.SandboxURL)+"/"+del.WebhookID, apitest.WithKey(key), nil).WantStatus(t, http.StatusNoContent)
	deleted := time.Now()
	// afterDelete counts the requests to /deleted that were not already on
	// their way when the delete returned.
	afterDelete := func() int {
		n := 0
		for _, r := range rc.Requests("/deleted", "") {
			if r.At.After(deleted.Add(100 * time.Millisecond)) {
				n++
			}
		}
		return n
	}

	// The control subscription's retries run the whole schedule; the
	// deleted one's would have come by then.
	waitDLQ(t, p.SandboxURL, key, "", "the control's entry in the DLQ", func(l dlqList) bool { return dlqIDs(l)[e1.EventID] })
	l := getDLQ(t, p.SandboxURL, key, "")
	for _, m := range l.Messages {
		if m.WebhookID == del.WebhookID {
			t.Errorf("a deleted subscription's pending delivery reached the DLQ: %+v", m)
		}
	}
	if len(l.Messages) != 1 || l.Messages[0].WebhookID != ctl.WebhookID {
		t.Errorf("DLQ %+v, want the control's entry only", l.Messages)
	}

	// Published after the delete: only the control gets it.
	e2 := publishEvent(t, p, key, "job.failed", map[string]any{"n": 2.0})
	if e2.Deliveries != 1 {
		t.Errorf("deliveries after delete %d, want 1", e2.Deliveries)
	}
	waitDLQ(t, p.SandboxURL, key, "", "E2 in the control's DLQ", func(l dlqList) bool { return dlqIDs(l)[e2.EventID] })
	if n := afterDelete(); n != 0 {
		t.Errorf("/deleted got %d requests after its deletion", n)
	}
	if n := len(rc.Requests("/deleted", e2.EventID)); n != 0 {
		t.Errorf("/deleted got the event published after its deletion")
	}
	if n := len(rc.Requests("/control", e1.EventID)); n != 5 {
		t.Errorf("control got %d attempts of E1, want 5", n)
	}

	r := apitest.Do(t, "GET", webhooksURL(p.SandboxURL), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if bytes.Contains(r.Body, []byte(del.WebhookID)) || !bytes.Contains(r.Body, []byte(ctl.WebhookID)) {
		t.Errorf("list after delete: %s", r.Body)
	}
	apitest.WantError(t, apitest.Do(t, "DELETE", webhooksURL(p.SandboxURL)+"/"+del.WebhookID, apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "GET", webhooksURL(p.SandboxURL)+"/"+del.WebhookID+"/deliveries", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+del.WebhookID+"/ping", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+del.WebhookID+"/rotate-secret", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	// The URL is free again: registering it is no duplicate.
	registerWebhook(t, p.SandboxURL, key, rc.URL("/deleted"), "job.failed")
}

// --- 7. ping ---

func TestWebhook_Ping(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	p := startWebhookServer(t, rc)
	key := p.createKey(t, sandbox)
	sub := subscribe(t, p, key, rc, "/ping", "report.ready")

	r := apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/ping", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if got := string(bytes.TrimSpace(r.Body)); got != "{}" {
		t.Errorf("ping: body %q, want {}", got)
	}
	// The ping is sent before the answer.
	reqs := rc.Requests("/ping", "")
	if len(reqs) != 1 {
		t.Fatalf("receiver got %d pings, want 1", len(reqs))
	}
	pr := reqs[0]
	if pr.Env.EventType != "webhook.ping" || pr.Env.Attempt != 0 || !eventIDPattern.MatchString(pr.Env.EventID) {
		t.Errorf("ping envelope %s", pr.Body)
	}
	if !slices.Equal(pr.Keys, whLastEnvelopeKeys) {
		t.Errorf("ping envelope members %q, want %q", pr.Keys, whLastEnvelopeKeys)
	}
	apitest.ParseTime(t, pr.Env.Timestamp)
	if got := dataField(&pr, "webhookId"); got != sub.WebhookID {
		t.Errorf("ping data.webhookId %q, want %q: %s", got, sub.WebhookID, pr.Body)
	}
	if pr.SigErr != nil || pr.Status != 200 {
		t.Errorf("ping: %v, answered %d", pr.SigErr, pr.Status)
	}
	apitest.CheckSignatures(t, pr, sub.SigningSecret)
	if pr.Header.Get("X-Service-Event-Type") != "webhook.ping" || pr.Header.Get("X-Service-Event-Id") != pr.Env.EventID ||
		pr.Header.Get("Content-Type") != "application/json" {
		t.Errorf("ping headers %v", pr.Header)
	}
	alog := getAttempts(t, p.SandboxURL, key, sub.WebhookID)
	if len(alog) != 1 || alog[0].EventType != "webhook.ping" || alog[0].Status != 200 {
		t.Errorf("delivery log after ping: %+v", alog)
	}
	// A second ping is a new event.
	apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/ping", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	if reqs := rc.Requests("/ping", ""); len(reqs) != 2 || reqs[1].Env.EventID == pr.Env.EventID {
		t.Errorf("second ping: %d requests", len(reqs))
	}
	// Pings are not retried nor dead-lettered even when the receiver fails.
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer { return apitest.Answer{Status: http.StatusServiceUnavailable} })
	apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/ping", apitest.WithKey(key), nil)
	if l := getDLQ(t, p.SandboxURL, key, ""); l.RetrievedCount != 0 {
		t.Errorf("a failed ping reached the DLQ: %+v", l.Messages)
	}

	apitest.WantError(t, apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/wh_01ZZZZZZZZZZZZZZZZZZZZZZZZ/ping", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/nope/ping", apitest.WithKey(key), nil), http.StatusNotFound, "NOT_FOUND")
}

// --- 8. target guard ---

func TestWebhook_Guard(t *testing.T) {
	t.Parallel()
	rc := apitest.NewReceiver(t)
	port := rc.Port()

	t.Run("ProductionRefusesPrivate", func(t *testing.T) {
		t.Parallel()
		p := startWebhookServer(t, rc)
		live := p.createKey(t, production)
		for _, target := range []string{"https://127.0.0.1:" + port + "/", "https://localhost:" + port + "/", "https://[::1]:" + port + "/",
			"https://0.0.0.0/", "https://169.254.169.254/latest", "https://127.1.2.3/"} {
			r := apitest.Do(t, "POST", webhooksURL(p.ProductionURL), idem(live), map[string]any{"targetUrl": target, "eventTypes": []string{"job.failed"}})
			e := apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", "TARGET_NOT_ALLOWED")
			if len(e.Details) == 1 && e.Details[0].Field != "targetUrl" {
				t.Errorf("%s: detail field %q, want targetUrl", target, e.Details[0].Field)
			}
		}
		// A public address registers (nothing is sent to it here).
		registerWebhook(t, p.ProductionURL, live, "https://203.0.113.10/hook", "job.failed")
		// The sandbox allows private targets by default.
		key := p.createKey(t, sandbox)
		sub := subscribe(t, p, key, rc, "/sandbox-guard", "job.failed")
		apitest.Do(t, "POST", webhooksURL(p.SandboxURL)+"/"+sub.WebhookID+"/ping", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
		if n := len(rc.Requests("/sandbox-guard", "")); n != 1 {
			t.Errorf("sandbox ping to loopback: %d requests, want 1", n)
		}
		// Production has no sandbox/events route.
		apitest.WantError(t, apitest.Do(t, "POST", eventsURL(p.ProductionURL), idem(live), map[string]any{"eventType": "job.failed", "data": map[string]any{}}),
			http.StatusNotFound, "NOT_FOUND")
	})

	t.Run("ProductionAllowPrivate", func(t *testing.T) {
		t.Parallel()
		p := startWebhookServer(t, rc, "EUDR_WEBHOOKS_ALLOW_PRIVATE_TARGETS=true")
		live := p.createKey(t, production)
		reg := registerWebhook(t, p.ProductionURL, live, rc.URL("/prod"), "job.failed")
		rc.SetSecret("/prod", reg.SigningSecret)
		registerWebhook(t, p.ProductionURL, live, "https://localhost:"+port+"/prod-localhost", "job.failed")
		apitest.Do(t, "POST", webhooksURL(p.ProductionURL)+"/"+reg.WebhookID+"/ping", apitest.WithKey(live), nil).WantStatus(t, http.StatusOK)
		reqs := rc.Requests("/prod", "")
		if len(reqs) != 1 || reqs[0].Status != 200 || reqs[0].Env.EventType != "webhook.ping" {
			t.Fatalf("production ping with private targets allowed: %d requests", len(reqs))
		}
		apitest.CheckSignatures(t, reqs[0], reg.SigningSecret)
		apitest.WantError(t, apitest.Do(t, "POST", eventsURL(p.ProductionURL), idem(live), map[string]any{"eventType": "job.failed"}),
			http.StatusNotFound, "NOT_FOUND")
	})

	t.Run("DialTimeGuard", func(t *testing.T) {
		t.Parallel()
		// Registered while allowed; the guard at connection time refuses it
		// after a restart that refuses private targets.
		p := startWebhookServer(t, rc)
		key := p.createKey(t, sandbox)
		sub := subscribe(t, p, key, rc, "/dial", "job.failed")
		p.Stop(t)
		p = startServerIn(t, p.DataDir, "EUDR_WEBHOOKS_CA_FILE="+rc.CAFile, whScheduleEnv, "EUDR_WEBHOOKS_SANDBOX_ALLOW_PRIVATE_TARGETS=false")
		key = p.createKey(t, sandbox)
		ev := publishEvent(t, p, key, "job.failed", map[string]any{})
		l := waitDLQ(t, p.SandboxURL, key, "", "the refused event in the DLQ", func(l dlqList) bool { return dlqIDs(l)[ev.EventID] })
		m := l.Messages[0]
		if m.Attempts != 5 || m.LastStatus != nil || !strings.Contains(m.LastError, "not allowed") || m.WebhookID != sub.WebhookID {
			t.Errorf("DLQ entry of a refused target: %+v", m)
		}
		if n := len(rc.Requests("/dial", "")); n != 0 {
			t.Errorf("the refused target got %d requests", n)
		}
		alog := getAttempts(t, p.SandboxURL, key, sub.WebhookID)
		if len(alog) == 0 || alog[0].ErrorClass != "target_not_allowed" {
			t.Errorf("delivery log: %+v, want errorClass target_not_allowed", alog)
		}
		// A new registration of a loopback target is refused outright.
		r := apitest.Do(t, "POST", webhooksURL(p.SandboxURL), idem(key), map[string]any{"targetUrl": rc.URL("/dial2"), "eventTypes": []string{"job.failed"}})
		apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", "TARGET_NOT_ALLOWED")
	})
}

// --- 9. slow receiver isolation ---

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

// --- 10. crash ---

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
