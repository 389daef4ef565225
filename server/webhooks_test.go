package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/storage"
)

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
			sub, err = queue.FindSubscription(tx.Tx, event.Scope(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}), id)
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

// The DLQ list pages like the other lists: following Link from the first
// page gives every entry once, in order, with the filters kept, however
// many there are (they used to stop at 1,000, the largest limit).
func TestDLQList_Pages(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	scope := event.Scope(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox})
	// 1,050 entries: two events a second, and every third event
	// dead-lettered for two subscriptions, so pages split event groups.
	var all []queue.DeadLetter
	ta.update(func(tx *storage.Tx) error {
		for i := range 700 {
			typ := event.PolygonVerified
			if i%4 == 0 {
				typ = event.JobFailed
			}
			subs := []string{"wh_a"}
			if i%3 == 0 {
				subs = append(subs, "wh_b")
			}
			for _, sub := range subs {
				dl := queue.DeadLetter{EventID: fmt.Sprintf("evt_%04d", i), EventType: typ, SubscriptionID: sub,
					TargetURL: "https://hooks.example.com/" + sub, Attempts: queue.MaxAttempts, LastStatus: 503, LastError: "HTTP 503",
					FailedAt: testStart.Add(time.Duration(i/2) * time.Second), Timestamp: testStart, Data: json.RawMessage(`{}`)}
				if err := queue.PutDeadLetter(tx.Tx, scope, &dl); err != nil {
					return err
				}
				all = append(all, dl)
			}
		}
		return nil
	})
	if len(all) != 934 {
		t.Fatalf("fixture: %d entries", len(all))
	}
	ta.update(func(tx *storage.Tx) error {
		for i := range 116 {
			dl := queue.DeadLetter{EventID: fmt.Sprintf("evt_x%03d", i), EventType: event.ReportReady, SubscriptionID: "wh_c",
				FailedAt: testStart.Add(-time.Duration(i) * time.Millisecond), Timestamp: testStart}
			if err := queue.PutDeadLetter(tx.Tx, scope, &dl); err != nil {
				return err
			}
			all = append(all, dl)
		}
		return nil
	})
	// The list order: newest failedAt first, then eventId descending,
	// then webhookId ascending.
	slices.SortFunc(all, func(a, b queue.DeadLetter) int {
		if c := b.FailedAt.Compare(a.FailedAt); c != 0 {
			return c
		}
		if c := strings.Compare(b.EventID, a.EventID); c != 0 {
			return c
		}
		return strings.Compare(a.SubscriptionID, b.SubscriptionID)
	})
	keyOf := func(eventID, webhookID string) string { return eventID + "/" + webhookID }
	want := func(keep func(queue.DeadLetter) bool) []string {
		var out []string
		for _, dl := range all {
			if keep(dl) {
				out = append(out, keyOf(dl.EventID, dl.SubscriptionID))
			}
		}
		return out
	}
	walk := func(t *testing.T, first string, wantPages int) []string {
		t.Helper()
		var got []string
		next, pages := first, 0
		for next != "" {
			at := next
			ta.clock.Advance(20 * time.Millisecond) // within the key's rate limit
			w := ta.do("GET", at, "", "X-API-Key", key)
			if w.Code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", at, w.Code, w.Body)
			}
			var page dlqListResponse
			mustDecode(t, w, &page)
			if page.RetrievedCount != len(page.Messages) {
				t.Errorf("GET %s: retrievedCount %d, %d messages", at, page.RetrievedCount, len(page.Messages))
			}
			for _, m := range page.Messages {
				got = append(got, keyOf(m.EventID, m.WebhookID))
			}
			pages++
			link, cursor := w.Header().Get("Link"), w.Header().Get("X-Next-Cursor")
			next = ""
			if link != "" {
				target, ok := strings.CutPrefix(link, "<")
				target, rel, ok2 := strings.Cut(target, ">")
				if !ok || !ok2 || rel != `; rel="next"` || !strings.Contains(target, "cursor="+url.QueryEscape(cursor)) || cursor == "" {
					t.Fatalf("GET %s: Link %q, X-Next-Cursor %q", at, link, cursor)
				}
				next = target
			} else if cursor != "" {
				t.Errorf("last page: X-Next-Cursor %q without Link", cursor)
			}
			if pages > 1000 {
				t.Fatal("more than 1,000 pages")
			}
		}
		if pages != wantPages {
			t.Errorf("%s: %d pages, want %d", first, pages, wantPages)
		}
		return got
	}
	dlq := eudrPrefix + "/webhooks/dlq"
	for _, tc := range []struct {
		name, query string
		limit       int
		keep        func(queue.DeadLetter) bool
	}{
		{"Default", "", webhook.DefaultDLQLimit, func(queue.DeadLetter) bool { return true }},
		{"Limit1000", "?limit=1000", 1000, func(queue.DeadLetter) bool { return true }},
		{"Limit7", "?limit=7", 7, func(queue.DeadLetter) bool { return true }},
		{"Filtered", "?eventType=polygon.verified&startDate=" + url.QueryEscape(storage.FormatTime(testStart.Add(10*time.Second))) +
			"&endDate=" + url.QueryEscape(storage.FormatTime(testStart.Add(300*time.Second))) + "&limit=9", 9,
			func(dl queue.DeadLetter) bool {
				return dl.EventType == event.PolygonVerified && !dl.FailedAt.Before(testStart.Add(10*time.Second)) &&
					!dl.FailedAt.After(testStart.Add(300*time.Second))
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := want(tc.keep)
			pages := (len(w) + tc.limit - 1) / tc.limit
			if got := walk(t, dlq+tc.query, pages); !slices.Equal(got, w) {
				t.Errorf("walked %d entries, want %d in list order; first difference at %d", len(got), len(w), firstDiff(got, w))
			}
		})
	}

	wantError(t, ta.do("GET", dlq+"?cursor=not-a-cursor", "", "X-API-Key", key), http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
}

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
