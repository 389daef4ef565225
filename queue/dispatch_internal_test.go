package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// These tests drive the dispatcher's pass directly, without Run or HTTP:
// the sends in flight are given as counts, and outcomes are made up.

var itT0 = time.Date(2026, 11, 20, 10, 15, 30, 123e6, time.UTC)

func itDB(t *testing.T) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "queue.db"), 0o600, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	itUpdate(t, db, Init)
	return db
}

func itUpdate(t *testing.T, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

// itCheck fails t if the webhook indexes are inconsistent after what.
func itCheck(t *testing.T, db *bolt.DB, what string) {
	t.Helper()
	if err := db.View(checkWebhookIndexes); err != nil {
		t.Fatalf("after %s: %v", what, err)
	}
}

// itNext is webhook_next as NextEntries shows it.
func itNext(t *testing.T, db *bolt.DB) []string {
	t.Helper()
	var out []string
	if err := db.View(func(tx *bolt.Tx) error { out = NextEntries(tx, itT0); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func itWantNext(t *testing.T, db *bolt.DB, what string, want ...string) {
	t.Helper()
	if got := itNext(t, db); !reflect.DeepEqual(got, want) {
		t.Errorf("webhook_next after %s:\n got %v\nwant %v", what, got, want)
	}
}

func itTxID(t *testing.T, db *bolt.DB) int {
	t.Helper()
	var id int
	if err := db.View(func(tx *bolt.Tx) error { id = tx.ID(); return nil }); err != nil {
		t.Fatal(err)
	}
	return id
}

// itClock is the dispatcher's clock; tests set it between passes.
type itClock struct{ t time.Time }

func (c *itClock) Now() time.Time { return c.t }

func itDispatcher(db *bolt.DB, c *itClock) *Dispatcher {
	return NewDispatcher(DispatcherOptions{DB: db, Workers: 16, PerTarget: 4, Lease: time.Minute, Now: c.Now, Logger: zerolog.Nop()})
}

func itSub(id, scope string, types ...string) *Subscription {
	return &Subscription{ID: id, Scope: scope, TargetURL: "https://" + id + ".example/hook", EventTypes: types, Secret: "whsec_x", CreatedAt: itT0}
}

func itEvent(id, scope, typ string, at time.Time) Event {
	return Event{ID: id, Scope: scope, Type: typ, Timestamp: at, Data: json.RawMessage(`{}`)}
}

func itPublish(t *testing.T, db *bolt.DB, evs ...Event) {
	t.Helper()
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, ev := range evs {
			if _, err := Publish(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// itClaim runs a pass that only claims, with counts in flight.
func itClaim(t *testing.T, d *Dispatcher, free int, counts map[string]int) ([]*deliveryClaim, passResult) {
	t.Helper()
	claims, res, err := d.pass(nil, free, counts, nil)
	if err != nil {
		t.Fatal(err)
	}
	return claims, res
}

// itRecord runs a pass that only records outcomes.
func itRecord(t *testing.T, d *Dispatcher, outs ...*outcome) {
	t.Helper()
	if _, _, err := d.pass(outs, 0, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func itKeys(claims []*deliveryClaim) []string {
	var ks []string
	for _, c := range claims {
		ks = append(ks, c.sub.ID+"/"+c.event.ID)
	}
	return ks
}

// itFind returns the claim of sub/event.
func itFind(t *testing.T, claims []*deliveryClaim, key string) *deliveryClaim {
	t.Helper()
	for _, c := range claims {
		if c.sub.ID+"/"+c.event.ID == key {
			return c
		}
	}
	t.Fatalf("no claim of %s in %v", key, itKeys(claims))
	return nil
}

func itSuccess(c *deliveryClaim, at time.Time) *outcome {
	return &outcome{c: c, a: Attempt{EventID: c.event.ID, Attempt: c.rec.Attempt, Status: 200, At: at}, kind: outcomeDelivered, failedAt: at}
}

func itRetry(c *deliveryClaim, at, next time.Time) *outcome {
	return &outcome{c: c, a: Attempt{EventID: c.event.ID, Attempt: c.rec.Attempt, Status: 503, ErrorClass: ErrorClassHTTPStatus,
		At: at, NextRetry: &next}, kind: outcomeRetry, failedAt: at}
}

func itDeadLetter(c *deliveryClaim, at time.Time) *outcome {
	return &outcome{c: c, a: Attempt{EventID: c.event.ID, Attempt: c.rec.Attempt, Status: http.StatusGone, ErrorClass: ErrorClassHTTPStatus,
		At: at, DeadLettered: true}, kind: outcomeDeadLetter, failedAt: at}
}

// A receiver at its PerTarget limit with a backlog of 20,000 due
// deliveries costs a claim one step: another subscription's delivery, due
// after the whole backlog, is claimed in one pass that reads a handful of
// index entries.
func TestClaim_CostIndependentOfBacklog(t *testing.T) {
	const backlog = 20000
	db := itDB(t)
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, s := range []*Subscription{itSub("wh_a", "s", "a"), itSub("wh_b", "s", "b")} {
			if err := PutSubscription(tx, s); err != nil {
				return err
			}
		}
		for i := range backlog {
			at := itT0.Add(-time.Hour + time.Duration(i)*time.Millisecond)
			if _, err := Publish(tx, itEvent(fmt.Sprintf("evt_a%05d", i), "s", "a", at)); err != nil {
				return err
			}
		}
		_, err := Publish(tx, itEvent("evt_b", "s", "b", itT0))
		return err
	})
	itCheck(t, db, "publish")
	d := itDispatcher(db, &itClock{t: itT0})

	claims, res := itClaim(t, d, 12, map[string]int{"wh_a": 4})
	t.Logf("wh_a at its cap: %d index entries read", res.steps)
	if got := itKeys(claims); !reflect.DeepEqual(got, []string{"wh_b/evt_b"}) {
		t.Fatalf("wh_a at its cap: got claims %v, want [wh_b/evt_b]", got)
	}
	if res.steps > 8 {
		t.Errorf("wh_a at its cap: the pass read %d index entries, want at most 8 (backlog %d)", res.steps, backlog)
	}
	itCheck(t, db, "claim of wh_b")

	// Below its cap, wh_a gets its four earliest, still in a few steps.
	claims, res = itClaim(t, d, 16, map[string]int{"wh_b": 1})
	if got, want := itKeys(claims), []string{"wh_a/evt_a00000", "wh_a/evt_a00001", "wh_a/evt_a00002", "wh_a/evt_a00003"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("wh_a below its cap: got claims %v, want %v", got, want)
	}
	if res.steps > 16 {
		t.Errorf("wh_a below its cap: the pass read %d index entries, want at most 16", res.steps)
	}
	itCheck(t, db, "claim of wh_a")

	// With wh_a full again nothing can be claimed: the pass reads a few
	// entries, writes nothing, and names wh_b's lease as the next due time
	// (wh_a's backlog waits for a finished send, not for a time).
	before := itTxID(t, db)
	claims, res = itClaim(t, d, 11, map[string]int{"wh_a": 4, "wh_b": 1})
	if len(claims) != 0 || res.steps > 8 {
		t.Errorf("idle pass: got %d claims in %d steps, want none in at most 8", len(claims), res.steps)
	}
	if !res.next.Equal(itT0.Add(time.Minute)) {
		t.Errorf("idle pass: next due %v, want wh_b's lease at T0+1m", res.next.Sub(itT0))
	}
	if after := itTxID(t, db); after != before {
		t.Errorf("idle pass committed: tx id %d -> %d, want no write", before, after)
	}
}

// webhook_next follows every change of a subscription's earliest due time:
// publish, claim, success, retry, DLQ, replay, an expired lease, a stale
// outcome and subscription delete.
func TestIndexes_FollowEveryOperation(t *testing.T) {
	db := itDB(t)
	s := time.Second
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, sub := range []*Subscription{itSub("wh_1", "s", "a", "b"), itSub("wh_2", "s", "a"), itSub("wh_3", "other", "a")} {
			if err := PutSubscription(tx, sub); err != nil {
				return err
			}
		}
		return nil
	})
	itWantNext(t, db, "subscribing")

	itPublish(t, db,
		itEvent("evt_1", "s", "a", itT0.Add(2*s)),
		itEvent("evt_2", "s", "b", itT0.Add(s)),
		itEvent("evt_3", "s", "a", itT0.Add(-s)),
		itEvent("evt_x", "s", "c", itT0), // nobody subscribed: not stored
		itEvent("evt_9", "other", "a", itT0))
	itCheck(t, db, "publish")
	itWantNext(t, db, "publish", "wh_1@-1s", "wh_2@-1s", "wh_3@0s")

	clock := &itClock{t: itT0}
	d := itDispatcher(db, clock)
	claims, res := itClaim(t, d, 16, nil)
	if got, want := itKeys(claims), []string{"wh_1/evt_3", "wh_2/evt_3", "wh_3/evt_9"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("first claim: got %v, want %v", got, want)
	}
	if !res.next.Equal(itT0.Add(s)) {
		t.Errorf("first claim: next due %v, want 1s", res.next.Sub(itT0))
	}
	itCheck(t, db, "claim")
	itWantNext(t, db, "claim", "wh_1@1s", "wh_2@2s", "wh_3@1m0s")
	first := claims

	clock.t = itT0.Add(100 * time.Millisecond)
	itRecord(t, d,
		itSuccess(itFind(t, first, "wh_1/evt_3"), clock.t),
		itRetry(itFind(t, first, "wh_2/evt_3"), clock.t, itT0.Add(5*s)),
		itDeadLetter(itFind(t, first, "wh_3/evt_9"), clock.t))
	itCheck(t, db, "success, retry and DLQ")
	itWantNext(t, db, "success, retry and DLQ", "wh_1@1s", "wh_2@2s")

	itUpdate(t, db, func(tx *bolt.Tx) error {
		n, err := ReplayDeadLetters(tx, "other", DLQFilter{}, itT0.Add(3*s))
		if n != 1 {
			t.Errorf("replay: got %d, want 1", n)
		}
		return err
	})
	itCheck(t, db, "replay")
	itWantNext(t, db, "replay", "wh_1@1s", "wh_2@2s", "wh_3@3s")

	// Everything due: wh_2's retry (5s) comes after its evt_1 (2s).
	clock.t = itT0.Add(10 * s)
	claims, _ = itClaim(t, d, 16, nil)
	if got, want := itKeys(claims), []string{"wh_1/evt_2", "wh_1/evt_1", "wh_2/evt_1", "wh_2/evt_3", "wh_3/evt_9"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("second claim: got %v, want %v", got, want)
	}
	if c := itFind(t, claims, "wh_2/evt_3"); c.rec.Attempt != 1 {
		t.Errorf("retried delivery: got attempt %d, want 1", c.rec.Attempt)
	}
	itCheck(t, db, "second claim")
	itWantNext(t, db, "second claim", "wh_1@1m10s", "wh_2@1m10s", "wh_3@1m10s")

	// An outcome of a claim whose lease another claim took over changes
	// nothing (but is logged).
	itRecord(t, d, itSuccess(itFind(t, first, "wh_2/evt_3"), clock.t))
	itCheck(t, db, "stale outcome")
	itWantNext(t, db, "stale outcome", "wh_1@1m10s", "wh_2@1m10s", "wh_3@1m10s")

	// The process "dies": nothing is recorded, and the leases run out.
	clock.t = itT0.Add(10*s + time.Minute)
	again, _ := itClaim(t, d, 16, nil)
	// The same five, now in event order within a subscription: their keys
	// all share the lease's due time.
	if got, want := itKeys(again), []string{"wh_1/evt_1", "wh_1/evt_2", "wh_2/evt_1", "wh_2/evt_3", "wh_3/evt_9"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("after the leases: got %v, want %v", got, want)
	}
	itCheck(t, db, "claim after the leases")
	itWantNext(t, db, "claim after the leases", "wh_1@2m10s", "wh_2@2m10s", "wh_3@2m10s")

	itUpdate(t, db, func(tx *bolt.Tx) error { return DeleteSubscription(tx, "s", "wh_1") })
	itCheck(t, db, "delete subscription")
	itWantNext(t, db, "delete subscription", "wh_2@2m10s", "wh_3@2m10s")

	var outs []*outcome
	for _, c := range again {
		if c.sub.ID == "wh_2" && c.event.ID == "evt_1" {
			outs = append(outs, itRetry(c, clock.t, clock.t.Add(time.Hour)))
		} else {
			outs = append(outs, itSuccess(c, clock.t)) // wh_1's: deleted, a no-op
		}
	}
	itRecord(t, d, outs...)
	itCheck(t, db, "last outcomes")
	itWantNext(t, db, "last outcomes", "wh_2@1h1m10s")
	itUpdate(t, db, func(tx *bolt.Tx) error { return DeleteSubscription(tx, "s", "wh_2") })
	itCheck(t, db, "deleting the last subscription with deliveries")
	for _, b := range [][]byte{bucketDeliveries, bucketDue, bucketNext, bucketEvents} {
		if err := db.View(func(tx *bolt.Tx) error {
			if n := countKeys(tx.Bucket(b)); n != 0 {
				t.Errorf("%s at the end: got %d keys, want 0", b, n)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// A pass repairs what a bug or a hand-edited store might leave: entries of
// webhook_next at the wrong time or of nobody, and deliveries of a
// subscription that is gone.
func TestClaim_Repairs(t *testing.T) {
	db := itDB(t)
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, sub := range []*Subscription{itSub("wh_1", "s", "a"), itSub("wh_2", "s", "a")} {
			if err := PutSubscription(tx, sub); err != nil {
				return err
			}
		}
		return nil
	})
	itPublish(t, db, itEvent("evt_1", "s", "a", itT0.Add(-time.Second)), itEvent("evt_2", "s", "a", itT0.Add(time.Hour)))
	itUpdate(t, db, func(tx *bolt.Tx) error {
		next := tx.Bucket(bucketNext)
		// wh_1's entry at -5s instead of -1s, one of a ghost, and wh_2
		// deleted behind the package's back.
		if err := next.Delete(dueKey(itT0.Add(-time.Second), "wh_1")); err != nil {
			return err
		}
		if err := next.Put(dueKey(itT0.Add(-5*time.Second), "wh_1"), nil); err != nil {
			return err
		}
		if err := next.Put(dueKey(itT0.Add(-3*time.Second), "wh_ghost"), nil); err != nil {
			return err
		}
		return tx.Bucket(bucketSubs).Delete([]byte("wh_2"))
	})
	d := itDispatcher(db, &itClock{t: itT0})
	claims, _ := itClaim(t, d, 16, nil)
	if got := itKeys(claims); !reflect.DeepEqual(got, []string{"wh_1/evt_1"}) {
		t.Errorf("claims: got %v, want [wh_1/evt_1]", got)
	}
	itCheck(t, db, "repairs")
	itWantNext(t, db, "repairs", "wh_1@1m0s") // its lease, before evt_2 at 1h
}

func TestCapError(t *testing.T) {
	short := "HTTP 302: redirect not followed (to https://x/)"
	if got := capError(short); got != short {
		t.Errorf("capError(short): got %q, want it unchanged", got)
	}
	long := "HTTP 302: redirect not followed (to https://x/" + strings.Repeat("é", 4<<20) + ")"
	got := capError(long)
	if len(got) > errorMax+3 || !strings.HasSuffix(got, "...") || !utf8.ValidString(got) {
		t.Errorf("capError(4 MiB): got %d bytes (valid UTF-8: %v), want at most %d ending in ...", len(got), utf8.ValidString(got), errorMax+3)
	}
}

// itLoop plays Run's loop on the fake clock, without HTTP: each pass
// claims what is due, the pass takes passCost of clock, and the loop then
// sleeps for sleepAfter; the next pass is at the end of that sleep or at
// the next of wakes (another send finishing), whichever comes first. The
// claims stay in flight, as do inFlight: nothing is recorded. It runs
// until end and returns the clock reading of the pass that claimed each
// delivery ("sub/event").
func itLoop(t *testing.T, d *Dispatcher, clock *itClock, end time.Time, passCost time.Duration, inFlight []*deliveryClaim, wakes ...time.Time) map[string]time.Time {
	t.Helper()
	counts := map[string]int{}
	sending := map[string]bool{}
	for _, c := range inFlight {
		counts[c.sub.ID]++
		sending[string(c.key)] = true
	}
	sent := map[string]time.Time{}
	for clock.t.Before(end) {
		claims, res, err := d.pass(nil, d.workers-len(sending), counts, sending)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range claims {
			sent[c.sub.ID+"/"+c.event.ID] = clock.t
			counts[c.sub.ID]++
			sending[string(c.key)] = true
		}
		clock.t = clock.t.Add(passCost)
		next := clock.t.Add(d.sleepAfter(res))
		if len(wakes) > 0 && wakes[0].Before(next) {
			// A wake during the pass is kept (the channel holds one)
			// and ends the sleep at once.
			next = wakes[0]
			if next.Before(clock.t) {
				next = clock.t
			}
			wakes = wakes[1:]
		}
		clock.t = next
	}
	return sent
}

// itRetryDue is when each delivery of claims is due again after failing at
// their claim: the schedule's first delay with the dispatcher's jitter,
// in milliseconds, as deliver announces it.
func itRetryDue(d *Dispatcher, claims []*deliveryClaim, at time.Time) map[string]time.Time {
	due := map[string]time.Time{}
	for _, c := range claims {
		due[c.sub.ID+"/"+c.event.ID] = time.UnixMilli(at.Add(d.retryDelay([]time.Duration{time.Second}, 0)).UnixMilli()).UTC()
	}
	return due
}

// 50 subscriptions fail at once and their retries fall due over the
// jitter's 0.8-1.2 s. A send finishing elsewhere wakes the loop just
// before one of them is due, and by the time the pass has run it is due:
// the loop must look again at once. Sleeping PollInterval instead would
// hold every retry due in the next 5 s until the poll fired.
func TestLoop_RetryDueDuringPassGoesOut(t *testing.T) {
	const subs = 50
	const passCost = time.Millisecond
	db := itDB(t)
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for i := range subs {
			if err := PutSubscription(tx, itSub(fmt.Sprintf("wh_%02d", i), "s", "a")); err != nil {
				return err
			}
		}
		_, err := Publish(tx, itEvent("evt_1", "s", "a", itT0))
		return err
	})
	clock := &itClock{t: itT0}
	rng := rand.New(rand.NewPCG(1, 2))
	d := NewDispatcher(DispatcherOptions{DB: db, Workers: 256, PerTarget: 4, PollInterval: 5 * time.Second,
		Now: clock.Now, Rand: rng.Float64, Logger: zerolog.Nop()})
	first, _ := itClaim(t, d, d.workers, nil)
	if len(first) != subs {
		t.Fatalf("first pass: got %d claims, want %d", len(first), subs)
	}
	due := itRetryDue(d, first, itT0)
	clock.t = itT0.Add(10 * time.Millisecond)
	var outs []*outcome
	for _, c := range first {
		outs = append(outs, itRetry(c, itT0, due[c.sub.ID+"/"+c.event.ID]))
	}
	itRecord(t, d, outs...)

	// The tenth retry to fall due: a send finishes 300 µs before it.
	order := slices.SortedFunc(maps.Values(due), time.Time.Compare)
	wake := order[9].Add(-300 * time.Microsecond)
	sent := itLoop(t, d, clock, itT0.Add(10*time.Second), passCost, nil, wake)

	var worst time.Duration
	for k, at := range due {
		got, ok := sent[k]
		if !ok {
			t.Errorf("%s: retry due at +%v never claimed", k, at.Sub(itT0))
			continue
		}
		late := got.Sub(at)
		worst = max(worst, late)
		if late < 0 || late > passCost {
			t.Errorf("%s: retry due at +%v claimed at +%v (%v late), want within one pass (%v)", k, at.Sub(itT0), got.Sub(itT0), late, passCost)
		}
	}
	t.Logf("worst lateness %v", worst)
	itCheck(t, db, "the loop")
}

// A delivery still in flight when its lease runs out (a client whose
// timeout outlasts the lease) is due and cannot be claimed; the loop
// waits for another subscription's retry due a second later, not for
// PollInterval.
func TestLoop_InFlightPastLeaseDoesNotDelayOthers(t *testing.T) {
	db := itDB(t)
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, s := range []*Subscription{itSub("wh_hung", "s", "a"), itSub("wh_retry", "s", "a")} {
			if err := PutSubscription(tx, s); err != nil {
				return err
			}
		}
		_, err := Publish(tx, itEvent("evt_1", "s", "a", itT0))
		return err
	})
	clock := &itClock{t: itT0}
	d := NewDispatcher(DispatcherOptions{DB: db, Workers: 16, PerTarget: 4, Lease: time.Minute, PollInterval: 5 * time.Second,
		Now: clock.Now, Logger: zerolog.Nop()})
	claims, _ := itClaim(t, d, d.workers, nil)
	retryDue := itT0.Add(time.Minute + time.Second)
	itRecord(t, d, itRetry(itFind(t, claims, "wh_retry/evt_1"), itT0, retryDue))

	sent := itLoop(t, d, clock, itT0.Add(2*time.Minute), time.Millisecond, []*deliveryClaim{itFind(t, claims, "wh_hung/evt_1")})
	got, ok := sent["wh_retry/evt_1"]
	if late := got.Sub(retryDue); !ok || late < 0 || late > time.Millisecond {
		t.Errorf("retry due at +%v: claimed at +%v (claimed: %v), want on time", retryDue.Sub(itT0), got.Sub(itT0), ok)
	}
	if _, ok := sent["wh_hung/evt_1"]; ok {
		t.Error("the delivery in flight was claimed again")
	}
}

// itTransport answers every request with status.
type itTransport struct {
	mu     sync.Mutex
	status int
	reqs   int
}

func (tr *itTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	tr.mu.Lock()
	tr.reqs++
	tr.mu.Unlock()
	return &http.Response{StatusCode: tr.status, Body: http.NoBody, Header: http.Header{}, Request: r}, nil
}

// With the default pool, ten receivers that hang with PerTarget sends each
// (up to the timeout) leave workers for the others: another
// subscription's due retry is claimed and sent at once.
func TestDispatch_HangingReceiversLeaveWorkers(t *testing.T) {
	const hanging = 10
	db := itDB(t)
	itUpdate(t, db, func(tx *bolt.Tx) error {
		if err := PutSubscription(tx, itSub("wh_fast", "s", "a")); err != nil {
			return err
		}
		_, err := Publish(tx, itEvent("evt_1", "s", "a", itT0))
		return err
	})
	tr := &itTransport{status: http.StatusOK}
	clock := &itClock{t: itT0}
	d := NewDispatcher(DispatcherOptions{DB: db, Now: clock.Now, Logger: zerolog.Nop(),
		PolicyFor: func(string) Policy { return Policy{Client: &http.Client{Transport: tr}} }})
	// The hanging sends, as deliver counts them.
	d.mu.Lock()
	for i := range hanging {
		d.perSub[fmt.Sprintf("wh_hung%d", i)] = d.perTarget
		d.busy += d.perTarget
	}
	d.mu.Unlock()

	var wg sync.WaitGroup
	res, err := d.dispatch(context.Background(), &wg, true)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.claimed != 1 || tr.reqs != 1 {
		t.Errorf("with %d receivers hanging (workers %d, per target %d): claimed %d and sent %d, want the due delivery claimed and sent",
			hanging, d.workers, d.perTarget, res.claimed, tr.reqs)
	}
}
