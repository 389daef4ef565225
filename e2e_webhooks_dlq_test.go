package main_test

// End-to-end tests of the webhook dead-letter queue: five attempts then an
// entry (one on 410 Gone), its filters, single and bulk replays, and
// acknowledgement.

import (
	"bytes"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

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
