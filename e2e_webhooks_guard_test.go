package main_test

// End-to-end tests of the webhook target guard: private targets refused
// in production unless allowed, allowed in the sandbox, and refused again
// at connection time after a restart that forbids them.

import (
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

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
