package webhook_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/storage"
)

func TestDLQQuery_Filters(t *testing.T) {
	for _, tc := range []struct {
		name  string
		q     webhook.DLQQuery
		field string
	}{
		{"EventType", webhook.DLQQuery{EventType: event.WebhookPing}, "query.eventType"},
		{"StartDate", webhook.DLQQuery{StartDate: "20/11/2026"}, "query.startDate"},
		{"EndDate", webhook.DLQQuery{EndDate: "2026-11-20T10:15"}, "query.endDate"},
		{"EndBeforeStart", webhook.DLQQuery{StartDate: "2026-11-21", EndDate: "2026-11-20"}, "query.endDate"},
		{"LimitZero", webhook.DLQQuery{Limit: "0"}, "query.limit"},
		{"LimitTooLarge", webhook.DLQQuery{Limit: "1001"}, "query.limit"},
		{"LimitNotANumber", webhook.DLQQuery{Limit: "ten"}, "query.limit"},
		{"Cursor", webhook.DLQQuery{Cursor: "not-a-cursor"}, "query.cursor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.q.ListFilter()
			e := wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue, tc.field)
			if len(e.Details) != 1 {
				t.Errorf("details %+v, want one", e.Details)
			}
		})
	}

	// Every problem at once.
	_, err := webhook.DLQQuery{EventType: "nope", StartDate: "x", Limit: "-1", Cursor: "!"}.ListFilter()
	if e := wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue, "query.cursor"); len(e.Details) != 4 {
		t.Errorf("details %+v, want eventType, startDate, limit and cursor", e.Details)
	}

	f, err := webhook.DLQQuery{}.ListFilter()
	if err != nil || f.Limit != webhook.DefaultDLQLimit || f.After != nil || !f.Start.IsZero() || !f.End.IsZero() {
		t.Errorf("empty list query: %+v, %v; want the default limit and no bounds", f, err)
	}
	f, err = webhook.DLQQuery{EventType: event.JobFailed, StartDate: "2026-11-20", EndDate: "2026-11-20", Limit: "1000"}.ListFilter()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	if err != nil || f.EventType != event.JobFailed || f.Limit != 1000 || !f.Start.Equal(day) || !f.End.Equal(day.Add(24*time.Hour-time.Nanosecond)) {
		t.Errorf("one day's job.failed: %+v, %v; want the whole day", f, err)
	}

	// A bulk replay has no cursor, and applies to every match unless limited.
	f, err = webhook.DLQQuery{Cursor: "not-a-cursor"}.BulkFilter()
	if err != nil || f.Limit != 0 || f.After != nil {
		t.Errorf("bulk query: %+v, %v; want no limit and the cursor ignored", f, err)
	}

	if err := (&webhook.EventIDsRequest{}).Validate(); err == nil {
		t.Error("an acknowledgement of no events validated")
	} else {
		wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailRequired, "eventIds")
	}
	if err := (&webhook.EventIDsRequest{EventIDs: []string{"evt_1"}}).Validate(); err != nil {
		t.Error(err)
	}
}

// putDeadLetters puts a DLQ entry of t for each event ID and webhook, the
// nth event failing n seconds after start.
func (f *fixture) putDeadLetters(tb testing.TB, t storage.Tenant, typ string, ids []string, subs ...string) {
	f.b.Update(tb, func(tx *storage.Tx) error {
		for i, id := range ids {
			for _, sub := range subs {
				dl := queue.DeadLetter{EventID: id, EventType: typ, SubscriptionID: sub, TargetURL: "https://hooks.example.com/" + sub,
					Attempts: queue.MaxAttempts, LastStatus: 500, LastError: "HTTP 500", FailedAt: start.Add(time.Duration(i) * time.Second),
					Timestamp: start, Data: []byte(`{"n":1}`)}
				if err := queue.PutDeadLetter(tx.Tx, event.Scope(t), &dl); err != nil {
					return err
				}
			}
		}
		return nil
	})
}

// dlq lists all of t's DLQ as eventID/webhookID, newest failure first.
func (f *fixture) dlq(tb testing.TB, t storage.Tenant) []string {
	tb.Helper()
	q, err := webhook.DLQQuery{Limit: "1000"}.ListFilter()
	if err != nil {
		tb.Fatal(err)
	}
	dls, _, err := f.s.DeadLetters(context.Background(), t, q)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, dl := range dls {
		out = append(out, dl.EventID+"/"+dl.SubscriptionID)
	}
	return out
}

func TestService_DeadLetters(t *testing.T) {
	f := newFixture(t)
	f.putDeadLetters(t, tenant, event.JobFailed, []string{"evt_1", "evt_2", "evt_3"}, "wh_a", "wh_b")
	f.putDeadLetters(t, tenant, event.ReportReady, []string{"evt_4"}, "wh_a")
	f.putDeadLetters(t, storage.Tenant{Org: "other", Env: storage.Sandbox}, event.JobFailed, []string{"evt_9"}, "wh_z")

	// Pages of two, each from the cursor of the one before.
	var got []string
	q := webhook.DLQQuery{EventType: event.JobFailed, Limit: "2"}
	for pages := 0; ; pages++ {
		if pages > 3 {
			t.Fatalf("more than 3 pages: %v", got)
		}
		filter, err := q.ListFilter()
		if err != nil {
			t.Fatal(err)
		}
		dls, more, err := f.s.DeadLetters(context.Background(), tenant, filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, dl := range dls {
			got = append(got, dl.EventID+"/"+dl.SubscriptionID)
		}
		if !more {
			break
		}
		q.Cursor = dls[len(dls)-1].Cursor().String()
	}
	want := []string{"evt_3/wh_a", "evt_3/wh_b", "evt_2/wh_a", "evt_2/wh_b", "evt_1/wh_a", "evt_1/wh_b"}
	if !slices.Equal(got, want) {
		t.Errorf("paged job.failed entries %v, want %v", got, want)
	}
	// failedAt bounds are inclusive.
	filter, err := webhook.DLQQuery{StartDate: storage.FormatTime(start.Add(time.Second)), EndDate: storage.FormatTime(start.Add(2 * time.Second))}.ListFilter()
	if err != nil {
		t.Fatal(err)
	}
	dls, more, err := f.s.DeadLetters(context.Background(), tenant, filter)
	if err != nil || more || len(dls) != 4 || dls[0].EventID != "evt_3" || dls[3].EventID != "evt_2" {
		t.Errorf("entries failed from 1 s to 2 s: %+v, %v, %v; want evt_3 and evt_2's", dls, more, err)
	}
}

func TestService_ReplayAndAcknowledge(t *testing.T) {
	f := newFixture(t)
	sub, err := f.register(tenant, "https://hooks.example.com/a", event.JobFailed, event.ReportReady)
	if err != nil {
		t.Fatal(err)
	}
	// evt_1 failed for the webhook and for a deleted one.
	f.putDeadLetters(t, tenant, event.JobFailed, []string{"evt_1", "evt_2", "evt_3"}, sub.ID)
	f.putDeadLetters(t, tenant, event.JobFailed, []string{"evt_1"}, "wh_gone")
	f.putDeadLetters(t, tenant, event.ReportReady, []string{"evt_4", "evt_5"}, sub.ID)
	other := storage.Tenant{Org: "default", Env: storage.Production}
	update := func(fn func(tx *storage.Tx) (int, error)) (int, error) {
		var n int
		err := f.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			var err error
			n, err = fn(tx)
			return err
		})
		return n, err
	}

	// One event: every entry of it, and the dispatcher woken after the commit.
	n, err := update(func(tx *storage.Tx) (int, error) { return f.s.ReplayEvent(tx, tenant, "evt_1") })
	if err != nil || n != 2 || f.wakes != 1 {
		t.Errorf("replay evt_1: %d, %v, %d wakes; want 2 entries and a wake", n, err, f.wakes)
	}
	for _, id := range []string{"evt_1", "evt_404"} {
		_, err = update(func(tx *storage.Tx) (int, error) { return f.s.ReplayEvent(tx, tenant, id) })
		wantNotFound(t, err, "dead-lettered event", id)
	}
	_, err = update(func(tx *storage.Tx) (int, error) { return f.s.ReplayEvent(tx, other, "evt_2") })
	wantNotFound(t, err, "dead-lettered event", "evt_2")
	if f.wakes != 1 {
		t.Errorf("%d wakes after replays of nothing, want 1", f.wakes)
	}

	// A replay that does not commit wakes nobody.
	rollback := errors.New("rolled back")
	_, err = update(func(tx *storage.Tx) (int, error) {
		if _, err := f.s.ReplayEvent(tx, tenant, "evt_2"); err != nil {
			return 0, err
		}
		return 0, rollback
	})
	if !errors.Is(err, rollback) || f.wakes != 1 {
		t.Errorf("rolled-back replay: %v, %d wakes; want no wake", err, f.wakes)
	}

	// By filter: the report.ready entries.
	filter, err := webhook.DLQQuery{EventType: event.ReportReady}.BulkFilter()
	if err != nil {
		t.Fatal(err)
	}
	n, err = update(func(tx *storage.Tx) (int, error) { return f.s.Replay(tx, tenant, filter) })
	if err != nil || n != 2 || f.wakes != 2 {
		t.Errorf("replay report.ready: %d, %v, %d wakes; want 2 entries and a second wake", n, err, f.wakes)
	}
	n, err = update(func(tx *storage.Tx) (int, error) { return f.s.Replay(tx, tenant, filter) })
	if err != nil || n != 0 || f.wakes != 2 {
		t.Errorf("replay of no entries: %d, %v, %d wakes; want 0 and no wake", n, err, f.wakes)
	}
	if got, want := f.dlq(t, tenant), []string{"evt_3/" + sub.ID, "evt_2/" + sub.ID}; !slices.Equal(got, want) {
		t.Errorf("DLQ after the replays: %v, want %v", got, want)
	}

	// Acknowledgements delete for good.
	_, err = update(func(tx *storage.Tx) (int, error) { return f.s.AcknowledgeEvent(tx, other, "evt_3") })
	wantNotFound(t, err, "dead-lettered event", "evt_3")
	n, err = update(func(tx *storage.Tx) (int, error) { return f.s.AcknowledgeEvent(tx, tenant, "evt_3") })
	if err != nil || n != 1 {
		t.Errorf("acknowledge evt_3: %d, %v", n, err)
	}
	n, err = update(func(tx *storage.Tx) (int, error) {
		return f.s.Acknowledge(tx, tenant, queue.DLQFilter{EventIDs: []string{"evt_2", "evt_3", "evt_404"}})
	})
	if err != nil || n != 1 {
		t.Errorf("acknowledge evt_2, evt_3 and evt_404: %d, %v; want 1", n, err)
	}
	if got := f.dlq(t, tenant); len(got) != 0 || f.wakes != 2 {
		t.Errorf("DLQ after the acknowledgements: %v, %d wakes; want it empty, no wake", got, f.wakes)
	}
}

// The DLQ of many events pages through every entry once.
func TestService_DeadLettersManyPages(t *testing.T) {
	f := newFixture(t)
	ids := make([]string, 250)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%03d", i)
	}
	f.putDeadLetters(t, tenant, event.JobFailed, ids, "wh_a")
	seen := map[string]bool{}
	var q webhook.DLQQuery
	for pages := 1; ; pages++ {
		filter, err := q.ListFilter()
		if err != nil {
			t.Fatal(err)
		}
		dls, more, err := f.s.DeadLetters(context.Background(), tenant, filter)
		if err != nil {
			t.Fatal(err)
		}
		for _, dl := range dls {
			if seen[dl.EventID] {
				t.Fatalf("page %d lists %s again", pages, dl.EventID)
			}
			seen[dl.EventID] = true
		}
		if !more {
			if pages != 3 || len(seen) != len(ids) {
				t.Errorf("%d pages of the default %d, %d entries; want 3 pages, %d entries", pages, webhook.DefaultDLQLimit, len(seen), len(ids))
			}
			break
		}
		q.Cursor = dls[len(dls)-1].Cursor().String()
	}
}
