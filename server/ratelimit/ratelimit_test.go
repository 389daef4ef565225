package ratelimit

import (
	"slices"
	"testing"
	"time"
)

var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestRateLimiter_Take(t *testing.T) {
	t0 := start

	t.Run("BurstThenDenied", func(t *testing.T) {
		rl := New(10, 5) // a token every 100ms, 5 at most
		for i := range 5 {
			v := rl.Take("k", t0)
			if !v.Allowed {
				t.Fatalf("take %d of a burst of 5: got denied, want allowed", i+1)
			}
			if v.Limit != 5 {
				t.Errorf("take %d: limit got %d, want 5", i+1, v.Limit)
			}
			if want := 4 - i; v.Remaining != want {
				t.Errorf("take %d: remaining got %d, want %d", i+1, v.Remaining, want)
			}
			// i+1 tokens spent: full again after (i+1) * 100ms.
			if want := t0.Add(time.Duration(i+1) * 100 * time.Millisecond); !v.Reset.Equal(want) {
				t.Errorf("take %d: reset got %v, want %v", i+1, v.Reset.Sub(t0), want.Sub(t0))
			}
			if v.RetryAfter != 0 {
				t.Errorf("take %d: retryAfter got %v, want 0 when allowed", i+1, v.RetryAfter)
			}
		}
		v := rl.Take("k", t0)
		if v.Allowed {
			t.Fatal("take 6 of a burst of 5: got allowed, want denied")
		}
		if v.Remaining != 0 {
			t.Errorf("denied: remaining got %d, want 0", v.Remaining)
		}
		if want := 100 * time.Millisecond; v.RetryAfter != want {
			t.Errorf("denied: retryAfter got %v, want %v (1/rate)", v.RetryAfter, want)
		}
		if want := t0.Add(500 * time.Millisecond); !v.Reset.Equal(want) {
			t.Errorf("denied: reset got %v, want %v (empty bucket refills in burst/rate)", v.Reset.Sub(t0), want.Sub(t0))
		}
		// A denied request spends nothing: still denied, same wait.
		if v2 := rl.Take("k", t0); v2.Allowed || v2.RetryAfter != v.RetryAfter {
			t.Errorf("second denied take: got allowed=%v retryAfter=%v, want denied with %v", v2.Allowed, v2.RetryAfter, v.RetryAfter)
		}
	})

	t.Run("Refill", func(t *testing.T) {
		rl := New(10, 5)
		for range 5 {
			rl.Take("k", t0)
		}
		if v := rl.Take("k", t0.Add(50*time.Millisecond)); v.Allowed {
			t.Error("take after 50ms (half a token): got allowed, want denied")
		} else if want := 50 * time.Millisecond; v.RetryAfter != want {
			t.Errorf("take after 50ms: retryAfter got %v, want %v", v.RetryAfter, want)
		}
		if v := rl.Take("k", t0.Add(100*time.Millisecond)); !v.Allowed || v.Remaining != 0 {
			t.Errorf("take after 100ms (one token): got allowed=%v remaining=%d, want allowed with 0 remaining", v.Allowed, v.Remaining)
		}
		v := rl.Take("k", t0.Add(10*time.Second))
		if !v.Allowed || v.Remaining != 4 {
			t.Errorf("take after 10s (bucket full again, never over burst): got allowed=%v remaining=%d, want allowed with 4 remaining", v.Allowed, v.Remaining)
		}
	})

	t.Run("SeparateBuckets", func(t *testing.T) {
		rl := New(1, 1)
		if v := rl.Take("a", t0); !v.Allowed {
			t.Fatal("first take of a: got denied")
		}
		if v := rl.Take("a", t0); v.Allowed {
			t.Error("second take of a: got allowed, want denied")
		}
		if v := rl.Take("b", t0); !v.Allowed {
			t.Error("first take of b after a is empty: got denied, want allowed (one bucket per caller)")
		}
	})

	t.Run("DefaultRate", func(t *testing.T) {
		rl := New(100, 100)
		var v Verdict
		for range 100 {
			v = rl.Take("k", t0)
		}
		if !v.Allowed || v.Remaining != 0 {
			t.Fatalf("100th take at 100/s: got allowed=%v remaining=%d, want allowed with 0 left", v.Allowed, v.Remaining)
		}
		v = rl.Take("k", t0)
		if v.Allowed || v.RetryAfter != 10*time.Millisecond {
			t.Errorf("101st take: got allowed=%v retryAfter=%v, want denied with 10ms", v.Allowed, v.RetryAfter)
		}
		if want := t0.Add(time.Second); !v.Reset.Equal(want) {
			t.Errorf("101st take: reset got +%v, want +1s", v.Reset.Sub(t0))
		}
	})
}

func TestRetryAfterSeconds(t *testing.T) {
	for _, tc := range []struct {
		in   time.Duration
		want int
	}{
		{-time.Second, 1},
		{0, 1},
		{time.Nanosecond, 1},
		{10 * time.Millisecond, 1},
		{time.Second, 1},
		{time.Second + time.Nanosecond, 2},
		{1500 * time.Millisecond, 2},
		{59*time.Second + time.Millisecond, 60},
		{60 * time.Second, 60},
		{61 * time.Second, 60},
		{time.Hour, 60},
	} {
		if got := (Verdict{RetryAfter: tc.in}).RetryAfterSeconds(); got != tc.want {
			t.Errorf("retryAfterSeconds(%v): got %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestCeilUnix(t *testing.T) {
	for _, tc := range []struct {
		in   time.Time
		want int64
	}{
		{time.Unix(100, 0), 100},
		{time.Unix(100, 1), 101},
		{time.Unix(100, 999999999), 101},
	} {
		if got := (Verdict{Reset: tc.in}).ResetUnix(); got != tc.want {
			t.Errorf("ceilUnix(%v): got %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestRateLimiter_Sweep(t *testing.T) {
	t0 := start
	rl := New(10, 5) // full 500ms after the last take; sweep waits 1.5s
	rl.Take("idle", t0)
	rl.Take("busy", t0)
	rl.Take("busy", t0.Add(2*time.Second))
	rl.Take("edge", t0.Add(1*time.Second))

	rl.Sweep(t0.Add(2500 * time.Millisecond))
	var got []string
	for id := range rl.buckets {
		got = append(got, id)
	}
	slices.Sort(got)
	if want := []string{"busy", "edge"}; !slices.Equal(got, want) {
		t.Errorf("buckets after sweep at +2.5s: got %q, want %q (only idle for more than 1.5s dropped)", got, want)
	}

	// A dropped bucket comes back full.
	if v := rl.Take("idle", t0.Add(2600*time.Millisecond)); !v.Allowed || v.Remaining != 4 {
		t.Errorf("take of a swept caller: got allowed=%v remaining=%d, want a full bucket (4 left)", v.Allowed, v.Remaining)
	}
}
