package main_test

// End-to-end tests of webhook subscriptions: registration and its
// validation, duplicates, replays and redacted lists; secret rotation,
// also in the middle of a retry cycle; deletion, which stops pending
// retries; and pings.

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apitest"
)

// --- registration ---

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

		// polygon.failed is subscribable, as is every type but webhook.ping.
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

// --- rotation ---

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

// --- deletion ---

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

// --- ping ---

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
