package event_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

func mustOpenDB(tb testing.TB) *storage.DB {
	tb.Helper()
	db, err := storage.Open(tb.TempDir(), storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	if err := db.Update(context.Background(), func(tx *storage.Tx) error { return queue.Init(tx.Tx) }); err != nil {
		tb.Fatal(err)
	}
	return db
}

func TestPublisher_Publish(t *testing.T) {
	db := mustOpenDB(t)
	tenant := storage.Tenant{Org: "default", Env: storage.Sandbox}
	other := storage.Tenant{Org: "other", Env: storage.Sandbox}
	ctx := context.Background()
	err := db.Update(ctx, func(tx *storage.Tx) error {
		for _, s := range []*queue.Subscription{
			{ID: "wh_1", Scope: event.Scope(tenant), TargetURL: "https://a.example/", EventTypes: []string{event.JobFailed}},
			{ID: "wh_2", Scope: event.Scope(tenant), TargetURL: "https://b.example/", EventTypes: []string{event.ReportReady}},
			{ID: "wh_3", Scope: event.Scope(other), TargetURL: "https://c.example/", EventTypes: []string{event.JobFailed}},
		} {
			if err := queue.PutSubscription(tx.Tx, s); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	woken := 0
	p := event.NewPublisher(func() { woken++ })
	var ev queue.Event
	var n int
	err = db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		ev, n, err = p.Publish(tx, tenant, event.JobFailed, event.JobFailedData{JobID: "job_1", Type: "x"})
		if woken != 0 {
			t.Error("the dispatcher was woken before the event was committed")
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 || ev.Type != event.JobFailed || ev.Scope != event.Scope(tenant) || string(ev.Data) != `{"jobId":"job_1","type":"x","error":{"code":"","message":""}}` {
		t.Errorf("got %d deliveries of %+v (data %s), want 1 job.failed delivery in the tenant's scope", n, ev, ev.Data)
	}
	if woken != 1 {
		t.Errorf("woken %d times after commit, want 1", woken)
	}

	// A rolled-back publish wakes no one.
	boom := errors.New("roll back")
	err = db.Update(ctx, func(tx *storage.Tx) error {
		if _, _, err := p.Publish(tx, tenant, event.JobFailed, event.JobFailedData{}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) || woken != 1 {
		t.Errorf("rolled back: got %v and %d wakes, want the error and still 1", err, woken)
	}

	// Data that cannot be encoded is refused before anything is recorded.
	err = db.Update(ctx, func(tx *storage.Tx) error {
		_, _, err := p.Publish(tx, tenant, event.JobFailed, func() {})
		return err
	})
	if err == nil {
		t.Error("Publish of a func: got no error")
	}
}

func TestScope(t *testing.T) {
	for _, tenant := range []storage.Tenant{{Org: "default", Env: storage.Sandbox}, {Org: "acme/eu", Env: storage.Production}} {
		if got := event.EnvOfScope(event.Scope(tenant)); got != tenant.Env {
			t.Errorf("EnvOfScope(Scope(%v)): got %s, want %s", tenant, got, tenant.Env)
		}
	}
}

func TestIsSubscribable(t *testing.T) {
	if event.IsSubscribable(event.WebhookPing) || event.IsSubscribable("polygon.*") {
		t.Error("webhook.ping and unknown types must not be subscribable")
	}
	if !slices.ContainsFunc(event.Subscribable, event.IsSubscribable) || len(event.Subscribable) != 10 {
		t.Errorf("got %v, want the ten types other than webhook.ping", event.Subscribable)
	}
}
