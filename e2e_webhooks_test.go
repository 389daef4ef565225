package main_test

// End-to-end tests of webhooks (docs/webhooks.md: registration, the
// envelope, signatures, retries, the DLQ, events): a real HTTPS receiver
// (apitest.Receiver) that the appliance trusts through
// EUDR_WEBHOOKS_CA_FILE verifies every delivery with queue/webhooksig,
// records it, and answers as each test programs it.
// Events are published through the sandbox's POST /sandbox/events, with a
// short retry schedule. This file holds what the webhook tests share; the
// tests are in e2e_webhooks_*_test.go.

import (
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"testing"
	"time"

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
