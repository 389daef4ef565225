package queue

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// itFillDLQ dead-letters n events of type "a" to wh_1 in scope, one a
// second from itT0 (evt_00000 first), each with size bytes of data.
func itFillDLQ(t *testing.T, db *bolt.DB, scope string, n, size int) {
	t.Helper()
	data := json.RawMessage(`"` + strings.Repeat("x", max(size-2, 0)) + `"`)
	for lo := 0; lo < n; lo += 100 {
		itUpdate(t, db, func(tx *bolt.Tx) error {
			for i := lo; i < min(lo+100, n); i++ {
				dl := &DeadLetter{EventID: fmt.Sprintf("evt_%05d", i), EventType: "a", SubscriptionID: "wh_1",
					TargetURL: "https://wh_1.example/hook", Attempts: MaxAttempts, LastStatus: 503, LastError: "HTTP 503",
					FailedAt: itT0.Add(time.Duration(i) * time.Second), Timestamp: itT0, Data: data}
				if err := putDeadLetter(tx, scope, dl); err != nil {
					return err
				}
			}
			return nil
		})
	}
}

// itAllocs returns the allocations and bytes allocated per call of fn,
// averaged over runs calls.
func itAllocs(runs int, fn func()) (allocs float64, bytes uint64) {
	fn() // warm up
	allocs = testing.AllocsPerRun(runs, fn)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	for range runs {
		fn()
	}
	runtime.ReadMemStats(&m1)
	return allocs, (m1.TotalAlloc - m0.TotalAlloc) / uint64(runs)
}

// FindDeadLetterPage with a Limit decodes only what it returns: its cost does
// not grow with the DLQ (it used to decode, data included, and sort every
// entry of the scope). Replay and ack with a Limit likewise.
func TestFindDeadLetterPage_CostDoesNotGrowWithDLQ(t *testing.T) {
	if testing.Short() {
		t.Skip("writes ~35 MB")
	}
	const size = 100 << 10
	type cost struct {
		allocs float64
		bytes  uint64
	}
	measure := func(t *testing.T, n int) map[string]cost {
		db := itDB(t)
		itUpdate(t, db, func(tx *bolt.Tx) error { return PutSubscription(tx, itSub("wh_1", "s", "a")) })
		itFillDLQ(t, db, "s", n, size)
		itFillDLQ(t, db, "other", 10, size)
		view := func(name string, f DLQFilter, want string) func() {
			return func() {
				err := db.View(func(tx *bolt.Tx) error {
					dls, _, err := FindDeadLetterPage(tx, "s", f)
					if err == nil && (len(dls) != 1 || dls[0].EventID != want) {
						err = fmt.Errorf("got %d entries, want %s", len(dls), want)
					}
					return err
				})
				if err != nil {
					t.Fatalf("%s with %d entries: %v", name, n, err)
				}
			}
		}
		errRollback := errors.New("rollback")
		update := func(name string, fn func(tx *bolt.Tx) (int, error)) func() {
			return func() {
				err := db.Update(func(tx *bolt.Tx) error {
					k, err := fn(tx)
					if err == nil && k != 1 {
						err = fmt.Errorf("got %d entries, want 1", k)
					}
					if err == nil {
						err = errRollback
					}
					return err
				})
				if !errors.Is(err, errRollback) {
					t.Fatalf("%s with %d entries: %v", name, n, err)
				}
			}
		}
		newest := fmt.Sprintf("evt_%05d", n-1)
		// A page after an old entry starts there: it does not walk past
		// the newer ones.
		after := (&DeadLetter{EventID: "evt_00005", SubscriptionID: "wh_1", FailedAt: itT0.Add(5 * time.Second)}).Cursor()
		out := map[string]cost{}
		for name, fn := range map[string]func(){
			"Find":       view("Find", DLQFilter{Limit: 1}, newest),
			"FindByType": view("FindByType", DLQFilter{EventType: "a", Limit: 1}, newest),
			"FindByTime": view("FindByTime", DLQFilter{Start: itT0.Add(time.Second), End: itT0.Add(time.Second)}, "evt_00001"),
			"FindByID":   view("FindByID", DLQFilter{EventIDs: []string{"evt_00003"}}, "evt_00003"),
			"FindAfter":  view("FindAfter", DLQFilter{After: &after, Limit: 1}, "evt_00004"),
			"Replay": update("Replay", func(tx *bolt.Tx) (int, error) {
				return ReplayDeadLetters(tx, "s", DLQFilter{Limit: 1}, itT0)
			}),
			"Ack": update("Ack", func(tx *bolt.Tx) (int, error) { return AckDeadLetters(tx, "s", DLQFilter{Limit: 1}) }),
		} {
			a, b := itAllocs(5, fn)
			out[name] = cost{a, b}
		}
		return out
	}
	const nSmall, nLarge = 20, 300
	small, large := measure(t, nSmall), measure(t, nLarge)
	for name, s := range small {
		l := large[name]
		t.Logf("%s: %d entries %.0f allocs %d B; %d entries %.0f allocs %d B", name, nSmall, s.allocs, s.bytes, nLarge, l.allocs, l.bytes)
		// A deeper bbolt tree costs a few allocations per level (cursor
		// stack, nodes a write touches); decoding costs ~10 per entry.
		if slack := float64(nLarge-nSmall) / 10; l.allocs > s.allocs+slack {
			t.Errorf("%s: %.0f allocs over %d entries, %.0f over %d: want no growth with the DLQ", name, l.allocs, nLarge, s.allocs, nSmall)
		}
		// Find decodes the one entry it returns; Ack none; Replay the one
		// it replays (its event is gone) and stores the event again. The
		// old code decoded every entry.
		limit := uint64(2 * size)
		if name == "Replay" {
			limit = 6 * size
		}
		if l.bytes > limit {
			t.Errorf("%s: %d bytes allocated over %d entries of %d bytes: want at most %d", name, l.bytes, nLarge, size, limit)
		}
	}
}

// itReferenceFind is FindDeadLetterPage's list as it was before the index: decode
// every entry of the scope, filter, sort, cut.
func itReferenceFind(t *testing.T, tx *bolt.Tx, scope string, f DLQFilter) []DeadLetter {
	t.Helper()
	var out []DeadLetter
	ids := map[string]bool{}
	for _, id := range f.EventIDs {
		ids[id] = true
	}
	err := tx.Bucket(bucketDLQ).ForEach(func(k, v []byte) error {
		if !strings.HasPrefix(string(k), scope+"\x00") {
			return nil
		}
		var dl DeadLetter
		if err := json.Unmarshal(v, &dl); err != nil {
			return err
		}
		if f.EventIDs != nil && !ids[dl.EventID] ||
			f.EventType != "" && dl.EventType != f.EventType ||
			!f.Start.IsZero() && dl.FailedAt.Before(f.Start) ||
			!f.End.IsZero() && dl.FailedAt.After(f.End) {
			return nil
		}
		out = append(out, dl)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := &out[i], &out[j]
		if !a.FailedAt.Equal(b.FailedAt) {
			return a.FailedAt.After(b.FailedAt)
		}
		if a.EventID != b.EventID {
			return a.EventID > b.EventID
		}
		return a.SubscriptionID < b.SubscriptionID
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out
}

// The index walk lists what decoding and sorting every entry listed, for
// random entries (many at the same FailedAt, several subscriptions per
// event, IDs that prefix each other) and random filters.
func TestFindDeadLetterPage_MatchesFullScan(t *testing.T) {
	db := itDB(t)
	rng := rand.New(rand.NewPCG(1, 2))
	events := []string{"evt_1", "evt_10", "evt_2", "evt_20", "evt_3", "evt_a", "evt_b", "evt_b0"}
	subs := []string{"wh_1", "wh_10", "wh_2", "wh_3"}
	types := []string{"a", "b", "c"}
	at := func(i int) time.Time { return itT0.Add(time.Duration(i) * time.Second) }
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, scope := range []string{"s", "s2", "t"} {
			for _, ev := range events {
				typ, failed := types[rng.IntN(len(types))], at(rng.IntN(4))
				for _, sub := range subs {
					if rng.IntN(3) == 0 {
						continue
					}
					// Retries of one event fail at different times now and then.
					when := failed
					if rng.IntN(4) == 0 {
						when = at(rng.IntN(4))
					}
					dl := &DeadLetter{EventID: ev, EventType: typ, SubscriptionID: sub, FailedAt: when, Timestamp: itT0,
						Data: json.RawMessage(`{"e":"` + ev + `"}`)}
					if err := putDeadLetter(tx, scope, dl); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	itCheck(t, db, "filling the DLQ")
	key := func(dls []DeadLetter) []string {
		var ks []string
		for _, dl := range dls {
			ks = append(ks, fmt.Sprintf("%s/%s@%s", dl.EventID, dl.SubscriptionID, dl.FailedAt.Sub(itT0)))
		}
		return ks
	}
	for i := range 2000 {
		var f DLQFilter
		if rng.IntN(3) == 0 {
			f.EventType = types[rng.IntN(len(types))]
		}
		if rng.IntN(3) == 0 {
			f.Start = at(rng.IntN(5) - 1)
		}
		if rng.IntN(3) == 0 {
			f.End = at(rng.IntN(5))
		}
		if rng.IntN(4) == 0 {
			f.EventIDs = []string{}
			for range rng.IntN(4) {
				f.EventIDs = append(f.EventIDs, append(events, "nope", "")[rng.IntN(len(events)+2)])
			}
		}
		if rng.IntN(2) == 0 {
			f.Limit = rng.IntN(8)
		}
		scope := []string{"s", "s2", "t", "u"}[rng.IntN(4)]
		if err := db.View(func(tx *bolt.Tx) error {
			got, _, err := FindDeadLetterPage(tx, scope, f)
			if err != nil {
				return err
			}
			want := itReferenceFind(t, tx, scope, f)
			if !reflect.DeepEqual(key(got), key(want)) {
				t.Fatalf("case %d: scope %s, filter %+v:\n got %v\nwant %v", i, scope, f, key(got), key(want))
			}
			if len(got) > 0 && !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d: entries differ:\n got %+v\nwant %+v", i, got, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

// webhook_dlq_failed follows every write of the DLQ: dead-lettering (also
// replacing an entry), replay, ack; and Init builds it for a store that
// has none.
func TestDLQIndex_FollowsEveryOperation(t *testing.T) {
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
	itPublish(t, db,
		itEvent("evt_1", "s", "a", itT0),
		itEvent("evt_2", "s", "b", itT0),
		itEvent("evt_9", "other", "a", itT0))
	clock := &itClock{t: itT0}
	d := itDispatcher(db, clock)
	claims, _ := itClaim(t, d, 16, nil)
	if len(claims) != 4 {
		t.Fatalf("claim: got %v, want 4 claims", itKeys(claims))
	}
	var outs []*outcome
	for i, c := range claims {
		outs = append(outs, itDeadLetter(c, itT0.Add(time.Duration(i)*s)))
	}
	itRecord(t, d, outs...)
	itCheck(t, db, "dead-lettering")
	dlq := func(scope string) []string {
		var out []string
		if err := db.View(func(tx *bolt.Tx) error {
			dls, _, err := FindDeadLetterPage(tx, scope, DLQFilter{})
			for _, dl := range dls {
				out = append(out, dl.EventID+"/"+dl.SubscriptionID)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// Claimed (and so failed, a second apart) in the order wh_1/evt_1,
	// wh_1/evt_2, wh_2/evt_1, wh_3/evt_9.
	if got, want := itKeys(claims), []string{"wh_1/evt_1", "wh_1/evt_2", "wh_2/evt_1", "wh_3/evt_9"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("claims: got %v, want %v", got, want)
	}
	if got, want := dlq("s"), []string{"evt_1/wh_2", "evt_2/wh_1", "evt_1/wh_1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DLQ of s: got %v, want %v", got, want)
	}

	// Replacing an entry moves its index key to its new FailedAt.
	itUpdate(t, db, func(tx *bolt.Tx) error {
		return putDeadLetter(tx, "s", &DeadLetter{EventID: "evt_1", EventType: "a", SubscriptionID: "wh_1", FailedAt: itT0.Add(time.Hour)})
	})
	itCheck(t, db, "replacing an entry")
	if got, want := dlq("s"), []string{"evt_1/wh_1", "evt_1/wh_2", "evt_2/wh_1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DLQ of s after replacing evt_1/wh_1: got %v, want %v", got, want)
	}

	itUpdate(t, db, func(tx *bolt.Tx) error {
		n, err := ReplayDeadLetters(tx, "s", DLQFilter{EventIDs: []string{"evt_1"}}, itT0.Add(2*time.Hour))
		if n != 2 {
			t.Errorf("replay evt_1: got %d, want 2", n)
		}
		return err
	})
	itCheck(t, db, "replay")
	itUpdate(t, db, func(tx *bolt.Tx) error {
		n, err := AckDeadLetters(tx, "other", DLQFilter{Limit: 1})
		if n != 1 {
			t.Errorf("ack: got %d, want 1", n)
		}
		return err
	})
	itCheck(t, db, "ack")
	if got, want := dlq("s"), []string{"evt_2/wh_1"}; !reflect.DeepEqual(got, want) {
		t.Errorf("DLQ of s after replay: got %v, want %v", got, want)
	}
	if got := dlq("other"); len(got) != 0 {
		t.Errorf("DLQ of other after ack: got %v, want none", got)
	}

	// A store from before the index: Init builds it.
	itFillDLQ(t, db, "s", 150, 10)
	itUpdate(t, db, func(tx *bolt.Tx) error { return tx.DeleteBucket(bucketDLQFailed) })
	itUpdate(t, db, Init)
	itCheck(t, db, "Init on a store without the index")
	if got := dlq("s"); len(got) != 151 || got[0] != "evt_00149/wh_1" || got[150] != "evt_00000/wh_1" {
		t.Errorf("DLQ of s after Init: got %d entries, from %v to %v", len(got), got[0], got[len(got)-1])
	}
}

// Pages walked cursor to cursor list every matching entry once, in order,
// for random entries (many at one FailedAt, several subscriptions per event,
// IDs that prefix each other), filters and page sizes, with or without
// EventIDs.
func TestFindDeadLetterPage_WalksEveryEntryOnce(t *testing.T) {
	db := itDB(t)
	rng := rand.New(rand.NewPCG(3, 4))
	events := []string{"evt_1", "evt_10", "evt_2", "evt_20", "evt_3", "evt_a", "evt_b", "evt_b0"}
	subs := []string{"wh_1", "wh_10", "wh_2", "wh_3"}
	types := []string{"a", "b"}
	at := func(i int) time.Time { return itT0.Add(time.Duration(i) * time.Second) }
	itUpdate(t, db, func(tx *bolt.Tx) error {
		for _, scope := range []string{"s", "t"} {
			for _, ev := range events {
				typ := types[rng.IntN(len(types))]
				for _, sub := range subs {
					if rng.IntN(4) == 0 {
						continue
					}
					dl := &DeadLetter{EventID: ev, EventType: typ, SubscriptionID: sub, FailedAt: at(rng.IntN(3)), Timestamp: itT0}
					if err := PutDeadLetter(tx, scope, dl); err != nil {
						return err
					}
				}
			}
		}
		return nil
	})
	key := func(dls []DeadLetter) []string {
		var ks []string
		for _, dl := range dls {
			ks = append(ks, fmt.Sprintf("%s/%s@%s", dl.EventID, dl.SubscriptionID, dl.FailedAt.Sub(itT0)))
		}
		return ks
	}
	for i := range 500 {
		var f DLQFilter
		if rng.IntN(3) == 0 {
			f.EventType = types[rng.IntN(len(types))]
		}
		if rng.IntN(3) == 0 {
			f.Start = at(rng.IntN(3))
		}
		if rng.IntN(3) == 0 {
			f.End = at(rng.IntN(3))
		}
		if rng.IntN(4) == 0 {
			f.EventIDs = []string{events[rng.IntN(len(events))], events[rng.IntN(len(events))]}
		}
		scope := []string{"s", "t"}[rng.IntN(2)]
		limit := 1 + rng.IntN(5)
		if err := db.View(func(tx *bolt.Tx) error {
			want := key(itReferenceFind(t, tx, scope, f))
			var got []string
			page := f
			page.Limit = limit
			for n := 0; ; n++ {
				dls, more, err := FindDeadLetterPage(tx, scope, page)
				if err != nil {
					return err
				}
				if more && len(dls) != limit || len(dls) > limit {
					t.Fatalf("case %d page %d: %d entries, more %v; want %d when more follow", i, n, len(dls), more, limit)
				}
				got = append(got, key(dls)...)
				if !more {
					break
				}
				c, err := ParseDLQCursor(dls[len(dls)-1].Cursor().String())
				if err != nil {
					return err
				}
				page.After = &c
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("case %d: scope %s, filter %+v, pages of %d:\n got %v\nwant %v", i, scope, f, limit, got, want)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestParseDLQCursor(t *testing.T) {
	dl := &DeadLetter{EventID: "evt_01JD3T0A1B2C3D4E5F6G7H8J9K", SubscriptionID: "wh_01JD3S4T5V6W7X8Y9Z0A1B2C3D", FailedAt: itT0}
	s := dl.Cursor().String()
	c, err := ParseDLQCursor(s)
	if err != nil || c != dl.Cursor() {
		t.Errorf("ParseDLQCursor(%q): got %+v, %v, want %+v", s, c, err, dl.Cursor())
	}
	if strings.ContainsAny(s, "+/=%&?#") {
		t.Errorf("cursor %q: want only URL-safe characters", s)
	}
	enc := base64.RawURLEncoding.EncodeToString
	for _, bad := range []string{"", "!!!", enc([]byte("short")), enc([]byte("12345678evt_1")), enc([]byte("12345678\x00wh_1")),
		enc([]byte("12345678evt_1\x00")), enc([]byte("12345678evt_1\x00wh\x001")), s + "="} {
		if _, err := ParseDLQCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseDLQCursor(%q): got %v, want ErrBadCursor", bad, err)
		}
	}
}
