package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
)

func TestSubscriptions(t *testing.T) {
	db := whMustOpenDB(t)
	whUpdate(t, db, func(tx *bolt.Tx) error {
		for _, s := range []*queue.Subscription{
			whSub("wh_01", "org/sandbox", "https://a.example/hook", "polygon.verified"),
			whSub("wh_02", "org/sandbox", "https://b.example/hook", "job.failed"),
			whSub("wh_03", "org/production", "https://c.example/hook", "job.failed"),
			whSub("wh_04", "org/sandbox", "https://d.example/hook", "job.failed"),
			whSub("wh_05", "org/sandboxes", "https://e.example/hook", "job.failed"), // a scope sharing a prefix
		} {
			if err := queue.PutSubscription(tx, s); err != nil {
				return err
			}
		}
		return nil
	})

	t.Run("FindSubscriptions", func(t *testing.T) {
		whView(t, db, func(tx *bolt.Tx) error {
			subs, err := queue.FindSubscriptions(tx, "org/sandbox")
			if err != nil {
				return err
			}
			var ids []string
			for _, s := range subs {
				ids = append(ids, s.ID)
			}
			if want := []string{"wh_04", "wh_02", "wh_01"}; !reflect.DeepEqual(ids, want) {
				t.Errorf("org/sandbox: got %v, want %v (newest first)", ids, want)
			}
			if subs, _ := queue.FindSubscriptions(tx, "nobody"); len(subs) != 0 {
				t.Errorf("unknown scope: got %d subscriptions, want 0", len(subs))
			}
			return nil
		})
	})
	t.Run("FindSubscription", func(t *testing.T) {
		whView(t, db, func(tx *bolt.Tx) error {
			s, err := queue.FindSubscription(tx, "org/sandbox", "wh_02")
			if err != nil {
				return err
			}
			if want := whSub("wh_02", "org/sandbox", "https://b.example/hook", "job.failed"); !reflect.DeepEqual(s, want) {
				t.Errorf("got %+v, want %+v", s, want)
			}
			if _, err := queue.FindSubscription(tx, "org/sandbox", "wh_03"); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("wh_03 of another scope: got %v, want ErrNotFound", err)
			}
			if _, err := queue.FindSubscription(tx, "org/sandbox", "wh_99"); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("wh_99: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})
	t.Run("Rotate", func(t *testing.T) {
		whUpdate(t, db, func(tx *bolt.Tx) error {
			s, err := queue.FindSubscription(tx, "org/sandbox", "wh_01")
			if err != nil {
				return err
			}
			s.Secret = "whsec_new"
			if err := queue.PutSubscription(tx, s); err != nil {
				return err
			}
			s, err = queue.FindSubscription(tx, "org/sandbox", "wh_01")
			if err != nil || s.Secret != "whsec_new" {
				t.Errorf("after rotation: got %+v, %v", s, err)
			}
			subs, _ := queue.FindSubscriptions(tx, "org/sandbox")
			if len(subs) != 3 {
				t.Errorf("after rotation: got %d subscriptions, want 3", len(subs))
			}
			return nil
		})
	})
	t.Run("Delete", func(t *testing.T) {
		whUpdate(t, db, func(tx *bolt.Tx) error {
			if err := queue.DeleteSubscription(tx, "org/production", "wh_02"); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("delete from another scope: got %v, want ErrNotFound", err)
			}
			if err := queue.DeleteSubscription(tx, "org/sandbox", "wh_02"); err != nil {
				return err
			}
			if err := queue.DeleteSubscription(tx, "org/sandbox", "wh_02"); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("second delete: got %v, want ErrNotFound", err)
			}
			if subs, _ := queue.FindSubscriptions(tx, "org/sandbox"); len(subs) != 2 {
				t.Errorf("after delete: got %d subscriptions, want 2", len(subs))
			}
			return nil
		})
	})
	t.Run("Invalid", func(t *testing.T) {
		whUpdate(t, db, func(tx *bolt.Tx) error {
			for _, s := range []*queue.Subscription{whSub("", "s", "https://x"), whSub("wh_x", "", "https://x"), whSub("wh_x", "a\x00b", "https://x")} {
				if err := queue.PutSubscription(tx, s); err == nil {
					t.Errorf("PutSubscription(id %q, scope %q): got nil, want an error", s.ID, s.Scope)
				}
			}
			return nil
		})
	})
}

func TestPublish(t *testing.T) {
	db := whMustOpenDB(t)
	subs := []*queue.Subscription{
		whSub("wh_1", "org/sandbox", "https://a.example", "polygon.verified", "job.failed"),
		whSub("wh_2", "org/sandbox", "https://b.example", "polygon.verified"),
		whSub("wh_3", "org/sandbox", "https://c.example", "dds.submitted"),
		whSub("wh_4", "org/production", "https://d.example", "polygon.verified"),
	}
	publish := func(ev queue.Event) (n int, err error) {
		err = db.Update(func(tx *bolt.Tx) error {
			n, err = queue.Publish(tx, ev)
			return err
		})
		return n, err
	}
	whPublish(t, db, subs)

	t.Run("FanOut", func(t *testing.T) {
		n, err := publish(whEvent("evt_1", "org/sandbox", "polygon.verified", whT0))
		if err != nil || n != 2 {
			t.Fatalf("Publish: got %d, %v; want 2 deliveries (wh_1, wh_2)", n, err)
		}
		if n := whCount(t, db, "webhook_deliveries"); n != 2 {
			t.Errorf("deliveries: got %d, want 2", n)
		}
		if n := whCount(t, db, "webhook_due"); n != 2 {
			t.Errorf("due keys: got %d, want 2", n)
		}
		if n := whCount(t, db, "webhook_events"); n != 1 {
			t.Errorf("events: got %d, want 1 (written once)", n)
		}
	})
	t.Run("Duplicate", func(t *testing.T) {
		if _, err := publish(whEvent("evt_1", "org/sandbox", "polygon.verified", whT0)); err == nil {
			t.Error("second Publish of evt_1: got nil, want an error")
		}
	})
	t.Run("NoSubscriber", func(t *testing.T) {
		n, err := publish(whEvent("evt_2", "org/sandbox", "report.ready", whT0))
		if err != nil || n != 0 {
			t.Fatalf("Publish: got %d, %v; want 0", n, err)
		}
		if n := whCount(t, db, "webhook_events"); n != 1 {
			t.Errorf("events: got %d, want 1 (an event nobody gets is not kept)", n)
		}
	})
	t.Run("Invalid", func(t *testing.T) {
		for name, ev := range map[string]queue.Event{
			"no id":        whEvent("", "org/sandbox", "job.failed", whT0),
			"no scope":     whEvent("evt_x", "", "job.failed", whT0),
			"no type":      whEvent("evt_x", "org/sandbox", "", whT0),
			"no timestamp": whEvent("evt_x", "org/sandbox", "job.failed", time.Time{}),
			"bad data":     {ID: "evt_x", Scope: "org/sandbox", Type: "job.failed", Timestamp: whT0, Data: json.RawMessage(`{`)},
		} {
			if _, err := publish(ev); err == nil {
				t.Errorf("Publish with %s: got nil, want an error", name)
			}
		}
	})
	t.Run("DeleteSubscription", func(t *testing.T) {
		whUpdate(t, db, func(tx *bolt.Tx) error { return queue.DeleteSubscription(tx, "org/sandbox", "wh_2") })
		if n := whCount(t, db, "webhook_deliveries"); n != 1 {
			t.Errorf("deliveries after deleting wh_2: got %d, want 1", n)
		}
		if n := whCount(t, db, "webhook_due"); n != 1 {
			t.Errorf("due keys after deleting wh_2: got %d, want 1", n)
		}
		whUpdate(t, db, func(tx *bolt.Tx) error { return queue.DeleteSubscription(tx, "org/sandbox", "wh_1") })
		for _, b := range []string{"webhook_deliveries", "webhook_due", "webhook_events"} {
			if n := whCount(t, db, b); n != 0 {
				t.Errorf("%s after deleting every subscriber: got %d keys, want 0", b, n)
			}
		}
	})
}

// whDLQFixture returns a store whose scope "s" has five DLQ entries, all
// answered 410 at the time of their event:
//
//	evt_1 (a) at T0+1h: wh_1, wh_2
//	evt_2 (b) at T0+2h: wh_1
//	evt_3 (a) at T0+3h: wh_1, wh_2
//
// and scope "other" one entry (evt_9).
func whDLQFixture(t *testing.T) *bolt.DB {
	t.Helper()
	db := whMustOpenDB(t)
	sink := whNewSink(t, whStatus(http.StatusGone))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	stop := whRunUntil(t, d)
	defer stop()
	whPublish(t, db, []*queue.Subscription{
		whSub("wh_1", "s", sink.URL(), "a", "b"),
		whSub("wh_2", "s", sink.URL(), "a"),
		whSub("wh_9", "other", sink.URL(), "a"),
	})
	for i, ev := range []queue.Event{
		whEvent("evt_1", "s", "a", whT0.Add(time.Hour)),
		whEvent("evt_2", "s", "b", whT0.Add(2*time.Hour)),
		whEvent("evt_3", "s", "a", whT0.Add(3*time.Hour)),
		whEvent("evt_9", "other", "a", whT0.Add(4*time.Hour)),
	} {
		clock.Set(ev.Timestamp)
		whPublish(t, db, nil, ev)
		d.Wake()
		want := []int{2, 3, 5, 6}[i]
		whEventually(t, "DLQ entries of "+ev.ID, func() bool {
			return len(whDLQ(t, db, "s", queue.DLQFilter{}))+len(whDLQ(t, db, "other", queue.DLQFilter{})) == want
		})
	}
	return db
}

// whRunUntil starts d.Run and returns a function that stops it and waits.
func whRunUntil(t *testing.T, d *queue.Dispatcher) func() {
	t.Helper()
	stopped := false
	var stop func()
	t.Cleanup(func() {
		if !stopped {
			stop()
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stop = func() {
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: got %v, want nil", err)
		}
	}
	return stop
}

func whKeys(dls []queue.DeadLetter) []string {
	var ks []string
	for _, dl := range dls {
		ks = append(ks, dl.EventID+"/"+dl.SubscriptionID)
	}
	return ks
}

func TestFindDeadLetterPage(t *testing.T) {
	db := whDLQFixture(t)
	h := time.Hour
	for _, tc := range []struct {
		name string
		f    queue.DLQFilter
		want []string
	}{
		{"All", queue.DLQFilter{}, []string{"evt_3/wh_1", "evt_3/wh_2", "evt_2/wh_1", "evt_1/wh_1", "evt_1/wh_2"}},
		{"EventType", queue.DLQFilter{EventType: "b"}, []string{"evt_2/wh_1"}},
		{"Start", queue.DLQFilter{Start: whT0.Add(2 * h)}, []string{"evt_3/wh_1", "evt_3/wh_2", "evt_2/wh_1"}},
		{"End", queue.DLQFilter{End: whT0.Add(2 * h)}, []string{"evt_2/wh_1", "evt_1/wh_1", "evt_1/wh_2"}},
		{"StartEqualsEnd", queue.DLQFilter{Start: whT0.Add(2 * h), End: whT0.Add(2 * h)}, []string{"evt_2/wh_1"}},
		{"TypeAndRange", queue.DLQFilter{EventType: "a", End: whT0.Add(2 * h)}, []string{"evt_1/wh_1", "evt_1/wh_2"}},
		{"EventIDs", queue.DLQFilter{EventIDs: []string{"evt_1", "evt_2", "evt_9", "nope"}}, []string{"evt_2/wh_1", "evt_1/wh_1", "evt_1/wh_2"}},
		{"EmptyEventIDs", queue.DLQFilter{EventIDs: []string{}}, nil},
		{"Limit", queue.DLQFilter{Limit: 2}, []string{"evt_3/wh_1", "evt_3/wh_2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := whKeys(whDLQ(t, db, "s", tc.f)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("Fields", func(t *testing.T) {
		dl := whDLQ(t, db, "s", queue.DLQFilter{EventType: "b"})[0]
		if dl.Attempts != 1 || dl.LastStatus != 410 || dl.LastError != "HTTP 410" || !dl.FailedAt.Equal(whT0.Add(2*time.Hour)) ||
			!dl.Timestamp.Equal(whT0.Add(2*time.Hour)) || string(dl.Data) != `{"polygonIds":["p1"]}` {
			t.Errorf("got %+v", dl)
		}
	})
	t.Run("OtherScope", func(t *testing.T) {
		if got := whKeys(whDLQ(t, db, "other", queue.DLQFilter{})); !reflect.DeepEqual(got, []string{"evt_9/wh_9"}) {
			t.Errorf("got %v, want [evt_9/wh_9]", got)
		}
	})
}

func TestReplayDeadLetters(t *testing.T) {
	now := whT0.Add(10 * time.Hour)
	replay := func(t *testing.T, db *bolt.DB, f queue.DLQFilter) int {
		t.Helper()
		var n int
		whUpdate(t, db, func(tx *bolt.Tx) (err error) {
			n, err = queue.ReplayDeadLetters(tx, "s", f, now)
			return err
		})
		return n
	}
	t.Run("OneEvent", func(t *testing.T) {
		db := whDLQFixture(t)
		if n := replay(t, db, queue.DLQFilter{EventIDs: []string{"evt_1"}}); n != 2 {
			t.Errorf("replayed: got %d, want 2 (one per subscription)", n)
		}
		if got := whKeys(whDLQ(t, db, "s", queue.DLQFilter{})); !reflect.DeepEqual(got, []string{"evt_3/wh_1", "evt_3/wh_2", "evt_2/wh_1"}) {
			t.Errorf("DLQ after replay: got %v", got)
		}
		if n := whCount(t, db, "webhook_deliveries"); n != 2 {
			t.Errorf("deliveries: got %d, want 2", n)
		}
		if n := whCount(t, db, "webhook_events"); n != 1 {
			t.Errorf("events: got %d, want 1", n)
		}
	})
	t.Run("ByFilter", func(t *testing.T) {
		db := whDLQFixture(t)
		if n := replay(t, db, queue.DLQFilter{EventType: "a", Start: whT0.Add(2 * time.Hour), End: whT0.Add(5 * time.Hour)}); n != 2 {
			t.Errorf("replayed: got %d, want 2 (evt_3)", n)
		}
		if got := whKeys(whDLQ(t, db, "s", queue.DLQFilter{})); !reflect.DeepEqual(got, []string{"evt_2/wh_1", "evt_1/wh_1", "evt_1/wh_2"}) {
			t.Errorf("DLQ after replay: got %v", got)
		}
		if n := whCount(t, db, "webhook_due"); n != 2 {
			t.Errorf("due keys: got %d, want 2", n)
		}
	})
	t.Run("All", func(t *testing.T) {
		db := whDLQFixture(t)
		if n := replay(t, db, queue.DLQFilter{}); n != 5 {
			t.Errorf("replayed: got %d, want 5", n)
		}
		if n := len(whDLQ(t, db, "other", queue.DLQFilter{})); n != 1 {
			t.Errorf("other scope's DLQ: got %d entries, want 1 (untouched)", n)
		}
		if n := whCount(t, db, "webhook_deliveries"); n != 5 {
			t.Errorf("deliveries: got %d, want 5", n)
		}
		if n := replay(t, db, queue.DLQFilter{}); n != 0 {
			t.Errorf("second replay: got %d, want 0", n)
		}
	})
	t.Run("DeletedSubscription", func(t *testing.T) {
		db := whDLQFixture(t)
		whUpdate(t, db, func(tx *bolt.Tx) error { return queue.DeleteSubscription(tx, "s", "wh_2") })
		if n := replay(t, db, queue.DLQFilter{EventIDs: []string{"evt_1"}}); n != 2 {
			t.Errorf("replayed: got %d, want 2 (both taken off the DLQ)", n)
		}
		if n := len(whDLQ(t, db, "s", queue.DLQFilter{EventIDs: []string{"evt_1"}})); n != 0 {
			t.Errorf("evt_1 entries left: got %d, want 0", n)
		}
		if n := whCount(t, db, "webhook_deliveries"); n != 1 {
			t.Errorf("deliveries: got %d, want 1 (none for the deleted wh_2)", n)
		}
	})
}

func TestAckDeadLetters(t *testing.T) {
	db := whDLQFixture(t)
	ack := func(f queue.DLQFilter) int {
		var n int
		whUpdate(t, db, func(tx *bolt.Tx) (err error) {
			n, err = queue.AckDeadLetters(tx, "s", f)
			return err
		})
		return n
	}
	if n := ack(queue.DLQFilter{EventIDs: []string{"evt_3"}}); n != 2 {
		t.Errorf("ack evt_3: got %d, want 2", n)
	}
	if n := ack(queue.DLQFilter{EventIDs: []string{"evt_3"}}); n != 0 {
		t.Errorf("ack evt_3 again: got %d, want 0", n)
	}
	if n := ack(queue.DLQFilter{EventType: "b"}); n != 1 {
		t.Errorf("ack type b: got %d, want 1", n)
	}
	if got := whKeys(whDLQ(t, db, "s", queue.DLQFilter{})); !reflect.DeepEqual(got, []string{"evt_1/wh_1", "evt_1/wh_2"}) {
		t.Errorf("DLQ after acks: got %v", got)
	}
	if n := whCount(t, db, "webhook_deliveries"); n != 0 {
		t.Errorf("deliveries: got %d, want 0 (ack does not deliver)", n)
	}
}

func TestFindAttempts_NotFound(t *testing.T) {
	db := whMustOpenDB(t)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", "https://a.example", "a")})
	whView(t, db, func(tx *bolt.Tx) error {
		if as, err := queue.FindAttempts(tx, "s", "wh_1", 10); err != nil || len(as) != 0 {
			t.Errorf("empty log: got %v, %v", as, err)
		}
		if _, err := queue.FindAttempts(tx, "other", "wh_1", 10); !errors.Is(err, queue.ErrNotFound) {
			t.Errorf("another scope: got %v, want ErrNotFound", err)
		}
		return nil
	})
}
