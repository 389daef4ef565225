package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/storage"
)

func TestCanonicalTarget(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"https://Hooks.Example.com/x", "https://hooks.example.com/x"},
		{"https://hooks.example.com:443/x", "https://hooks.example.com/x"},
		{"https://[::1]:443/x", "https://[::1]/x"},
	} {
		if canonicalTarget(tc.a) != canonicalTarget(tc.b) {
			t.Errorf("canonicalTarget(%s) = %s, want it equal to canonicalTarget(%s) = %s", tc.a, canonicalTarget(tc.a), tc.b, canonicalTarget(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"https://hooks.example.com/X", "https://hooks.example.com/x"},
		{"https://hooks.example.com:8443/x", "https://hooks.example.com/x"},
	} {
		if canonicalTarget(tc.a) == canonicalTarget(tc.b) {
			t.Errorf("canonicalTarget(%s) == canonicalTarget(%s), want them different", tc.a, tc.b)
		}
	}
}

// A registration or rotation whose answer was lost is retried with the same
// Idempotency-Key: the replay is the first answer whole, secret included,
// since that secret signs every delivery and the client saw it nowhere else.
func TestWebhooks_ReplayShowsSecret(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	body := `{"targetUrl":"https://hooks.example.com/eudr","eventTypes":["job.failed"]}`
	post := func(path, body, idemKey string) *httptest.ResponseRecorder {
		t.Helper()
		w := ta.do("POST", eudrPrefix+path, body, "X-API-Key", key, "Idempotency-Key", idemKey)
		if w.Code != http.StatusOK {
			t.Fatalf("POST %s: got %d %s, want 200", path, w.Code, w.Body)
		}
		return w
	}
	stored := func(id string) string {
		var sub *queue.Subscription
		ta.view(func(tx *storage.Tx) error {
			var err error
			sub, err = queue.FindSubscription(tx.Tx, scopeOf(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}), id)
			return err
		})
		return sub.Secret
	}

	first := post("/webhooks", body, "reg-1")
	again := post("/webhooks", body, "reg-1")
	var reg webhookResponse
	mustDecode(t, first, &reg)
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Errorf("replayed registration: Idempotent-Replayed %q, body %s; want true and the first answer %s",
			again.Header().Get("Idempotent-Replayed"), again.Body, first.Body)
	}
	if got := stored(reg.WebhookID); got != reg.SigningSecret || strings.Contains(got, "*") {
		t.Errorf("subscription secret %q, want the one answered, %q", got, reg.SigningSecret)
	}

	path := "/webhooks/" + reg.WebhookID + "/rotate-secret"
	first = post(path, "", "rot-1")
	again = post(path, "", "rot-1")
	var rot secretResponse
	mustDecode(t, first, &rot)
	if again.Header().Get("Idempotent-Replayed") != "true" || again.Body.String() != first.Body.String() {
		t.Errorf("replayed rotation: Idempotent-Replayed %q, body %s; want true and the first answer %s",
			again.Header().Get("Idempotent-Replayed"), again.Body, first.Body)
	}
	if got := stored(reg.WebhookID); got != rot.SigningSecret || got == reg.SigningSecret {
		t.Errorf("subscription secret after one rotation and its replay: %q, want the rotated %q", got, rot.SigningSecret)
	}
}
