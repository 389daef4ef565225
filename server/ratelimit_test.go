package server

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
)

func TestRateLimiter_Take(t *testing.T) {
	t0 := testStart

	t.Run("BurstThenDenied", func(t *testing.T) {
		rl := newRateLimiter(10, 5) // a token every 100ms, 5 at most
		for i := range 5 {
			v := rl.take("k", t0)
			if !v.allowed {
				t.Fatalf("take %d of a burst of 5: got denied, want allowed", i+1)
			}
			if v.limit != 5 {
				t.Errorf("take %d: limit got %d, want 5", i+1, v.limit)
			}
			if want := 4 - i; v.remaining != want {
				t.Errorf("take %d: remaining got %d, want %d", i+1, v.remaining, want)
			}
			// i+1 tokens spent: full again after (i+1) * 100ms.
			if want := t0.Add(time.Duration(i+1) * 100 * time.Millisecond); !v.reset.Equal(want) {
				t.Errorf("take %d: reset got %v, want %v", i+1, v.reset.Sub(t0), want.Sub(t0))
			}
			if v.retryAfter != 0 {
				t.Errorf("take %d: retryAfter got %v, want 0 when allowed", i+1, v.retryAfter)
			}
		}
		v := rl.take("k", t0)
		if v.allowed {
			t.Fatal("take 6 of a burst of 5: got allowed, want denied")
		}
		if v.remaining != 0 {
			t.Errorf("denied: remaining got %d, want 0", v.remaining)
		}
		if want := 100 * time.Millisecond; v.retryAfter != want {
			t.Errorf("denied: retryAfter got %v, want %v (1/rate)", v.retryAfter, want)
		}
		if want := t0.Add(500 * time.Millisecond); !v.reset.Equal(want) {
			t.Errorf("denied: reset got %v, want %v (empty bucket refills in burst/rate)", v.reset.Sub(t0), want.Sub(t0))
		}
		// A denied request spends nothing: still denied, same wait.
		if v2 := rl.take("k", t0); v2.allowed || v2.retryAfter != v.retryAfter {
			t.Errorf("second denied take: got allowed=%v retryAfter=%v, want denied with %v", v2.allowed, v2.retryAfter, v.retryAfter)
		}
	})

	t.Run("Refill", func(t *testing.T) {
		rl := newRateLimiter(10, 5)
		for range 5 {
			rl.take("k", t0)
		}
		if v := rl.take("k", t0.Add(50*time.Millisecond)); v.allowed {
			t.Error("take after 50ms (half a token): got allowed, want denied")
		} else if want := 50 * time.Millisecond; v.retryAfter != want {
			t.Errorf("take after 50ms: retryAfter got %v, want %v", v.retryAfter, want)
		}
		if v := rl.take("k", t0.Add(100*time.Millisecond)); !v.allowed || v.remaining != 0 {
			t.Errorf("take after 100ms (one token): got allowed=%v remaining=%d, want allowed with 0 remaining", v.allowed, v.remaining)
		}
		v := rl.take("k", t0.Add(10*time.Second))
		if !v.allowed || v.remaining != 4 {
			t.Errorf("take after 10s (bucket full again, never over burst): got allowed=%v remaining=%d, want allowed with 4 remaining", v.allowed, v.remaining)
		}
	})

	t.Run("SeparateBuckets", func(t *testing.T) {
		rl := newRateLimiter(1, 1)
		if v := rl.take("a", t0); !v.allowed {
			t.Fatal("first take of a: got denied")
		}
		if v := rl.take("a", t0); v.allowed {
			t.Error("second take of a: got allowed, want denied")
		}
		if v := rl.take("b", t0); !v.allowed {
			t.Error("first take of b after a is empty: got denied, want allowed (one bucket per caller)")
		}
	})

	t.Run("DefaultRate", func(t *testing.T) {
		rl := newRateLimiter(100, 100)
		var v verdict
		for range 100 {
			v = rl.take("k", t0)
		}
		if !v.allowed || v.remaining != 0 {
			t.Fatalf("100th take at 100/s: got allowed=%v remaining=%d, want allowed with 0 left", v.allowed, v.remaining)
		}
		v = rl.take("k", t0)
		if v.allowed || v.retryAfter != 10*time.Millisecond {
			t.Errorf("101st take: got allowed=%v retryAfter=%v, want denied with 10ms", v.allowed, v.retryAfter)
		}
		if want := t0.Add(time.Second); !v.reset.Equal(want) {
			t.Errorf("101st take: reset got +%v, want +1s", v.reset.Sub(t0))
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
		if got := retryAfterSeconds(tc.in); got != tc.want {
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
		if got := ceilUnix(tc.in); got != tc.want {
			t.Errorf("ceilUnix(%v): got %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestRateLimiter_Sweep(t *testing.T) {
	t0 := testStart
	rl := newRateLimiter(10, 5) // full 500ms after the last take; sweep waits 1.5s
	rl.take("idle", t0)
	rl.take("busy", t0)
	rl.take("busy", t0.Add(2*time.Second))
	rl.take("edge", t0.Add(1*time.Second))

	rl.sweep(t0.Add(2500 * time.Millisecond))
	var got []string
	for id := range rl.buckets {
		got = append(got, id)
	}
	slices.Sort(got)
	if want := []string{"busy", "edge"}; !slices.Equal(got, want) {
		t.Errorf("buckets after sweep at +2.5s: got %q, want %q (only idle for more than 1.5s dropped)", got, want)
	}

	// A dropped bucket comes back full.
	if v := rl.take("idle", t0.Add(2600*time.Millisecond)); !v.allowed || v.remaining != 4 {
		t.Errorf("take of a swept caller: got allowed=%v remaining=%d, want a full bucket (4 left)", v.allowed, v.remaining)
	}
}

func TestApp_ClientIP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		proxies []string
		remote  string
		xff     []string
		want    string
	}{
		{"NoProxiesIgnoresXFF", nil, "10.1.1.1:1234", []string{"1.2.3.4"}, "10.1.1.1"},
		{"NoProxiesNoXFF", nil, "192.0.2.1:1234", nil, "192.0.2.1"},
		{"TrustedProxy", []string{"10.0.0.0/8"}, "10.1.1.1:1234", []string{"1.2.3.4, 10.0.0.5"}, "1.2.3.4"},
		{"RightmostUntrusted", []string{"10.0.0.0/8"}, "10.1.1.1:1234", []string{"6.6.6.6, 1.2.3.4, 10.0.0.5"}, "1.2.3.4"},
		{"SeveralXFFHeaders", []string{"10.0.0.0/8"}, "10.1.1.1:1234", []string{"6.6.6.6", "1.2.3.4, 10.0.0.5"}, "1.2.3.4"},
		{"UntrustedPeerIgnoresXFF", []string{"10.0.0.0/8"}, "192.0.2.1:1234", []string{"1.2.3.4"}, "192.0.2.1"},
		{"TrustedPeerNoXFF", []string{"10.0.0.0/8"}, "10.1.1.1:1234", nil, "10.1.1.1"},
		{"GarbageXFF", []string{"10.0.0.0/8"}, "10.1.1.1:1234", []string{"unknown"}, "10.1.1.1"},
		{"AllHopsTrusted", []string{"10.0.0.0/8"}, "10.1.1.1:1234", []string{"10.9.9.9, 10.0.0.5"}, "10.9.9.9"},
		{"IPv4Mapped", nil, "[::ffff:192.0.2.7]:443", nil, "192.0.2.7"},
		{"IPv4MappedTrustedProxy", []string{"10.0.0.0/8"}, "[::ffff:10.1.1.1]:443", []string{"::ffff:1.2.3.4"}, "1.2.3.4"},
		{"IPv6", []string{"fd00::/8"}, "[fd00::1]:443", []string{"2001:db8::7"}, "2001:db8::7"},
		{"NoPort", nil, "192.0.2.9", nil, "192.0.2.9"},
		{"Unparsable", nil, "pipe", nil, "0.0.0.0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &App{proxies: parsePrefixes(tc.proxies)}
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = tc.remote
			for _, v := range tc.xff {
				r.Header.Add("X-Forwarded-For", v)
			}
			if got := a.clientIP(r); got != netip.MustParseAddr(tc.want) {
				t.Errorf("clientIP(remote %s, XFF %q, proxies %q): got %s, want %s", tc.remote, tc.xff, tc.proxies, got, tc.want)
			}
		})
	}
}

func TestParsePrefixes(t *testing.T) {
	got := parsePrefixes([]string{"10.1.2.3/8", "bad", "2001:db8::1/32"})
	want := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	if !slices.Equal(got, want) {
		t.Errorf("parsePrefixes: got %v, want %v (masked, bad ones skipped)", got, want)
	}
}

func TestApp_RateLimit(t *testing.T) {
	health := eudrPrefix + "/health"

	t.Run("HeadersOnEveryResponse", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey("sandbox")
		for _, tc := range []struct {
			name string
			r    *http.Request
			want int
		}{
			{"OK", newRequest("GET", health, "", "X-API-Key", key), 200},
			{"NotFound", newRequest("GET", "/nope", "", "X-API-Key", key), 404},
			{"Unauthorized", newRequest("GET", health, ""), 401},
			{"Validation", newRequest("POST", eudrPrefix+"/suppliers", `{}`, "X-API-Key", key), 400},
			{"Probe", newRequest("GET", "/livez", ""), 200},
		} {
			w := ta.serve("sandbox", tc.r)
			if w.Code != tc.want {
				t.Errorf("%s: status got %d, want %d", tc.name, w.Code, tc.want)
			}
			for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
				if _, err := strconv.ParseInt(w.Header().Get(h), 10, 64); err != nil {
					t.Errorf("%s: %s got %q, want an integer", tc.name, h, w.Header().Get(h))
				}
			}
		}
	})

	t.Run("PerKey", func(t *testing.T) {
		ta := newTestApp(t, "EUDR_RATE_LIMIT_PER_SECOND=1", "EUDR_RATE_LIMIT_BURST=3")
		_, key := ta.newKey("sandbox")
		_, other := ta.newKey("sandbox")
		for i := range 3 {
			w := ta.do("GET", health, "", "X-API-Key", key)
			if w.Code != 200 {
				t.Fatalf("request %d of 3: got %d, want 200", i+1, w.Code)
			}
			if got, want := w.Header().Get("X-RateLimit-Remaining"), strconv.Itoa(2-i); got != want {
				t.Errorf("request %d: X-RateLimit-Remaining got %s, want %s", i+1, got, want)
			}
			if got := w.Header().Get("X-RateLimit-Limit"); got != "3" {
				t.Errorf("request %d: X-RateLimit-Limit got %s, want 3", i+1, got)
			}
			// i+1 tokens spent at 1/s: full again i+1 seconds from now.
			if got, want := w.Header().Get("X-RateLimit-Reset"), strconv.FormatInt(testStart.Unix()+int64(i+1), 10); got != want {
				t.Errorf("request %d: X-RateLimit-Reset got %s, want %s", i+1, got, want)
			}
		}
		w := ta.do("GET", health, "", "X-API-Key", key)
		wantError(t, w, http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "")
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Errorf("429: Retry-After got %q, want 1", got)
		}
		if got := w.Header().Get("X-RateLimit-Remaining"); got != "0" {
			t.Errorf("429: X-RateLimit-Remaining got %q, want 0", got)
		}
		if w.Header().Get("X-Trace-Id") == "" {
			t.Error("429: got no X-Trace-Id")
		}
		// Another key has its own bucket.
		if w := ta.do("GET", health, "", "X-API-Key", other); w.Code != 200 {
			t.Errorf("other key while the first is limited: got %d, want 200", w.Code)
		}
		// The same key through Authorization shares the bucket.
		if w := ta.do("GET", health, "", "Authorization", "Bearer "+key); w.Code != http.StatusTooManyRequests {
			t.Errorf("same key as Bearer: got %d, want 429", w.Code)
		}
		ta.clock.Advance(time.Second)
		if w := ta.do("GET", health, "", "X-API-Key", key); w.Code != 200 {
			t.Errorf("after 1s: got %d, want 200", w.Code)
		}
	})

	t.Run("PerClientIPWithoutKey", func(t *testing.T) {
		ta := newTestApp(t, "EUDR_RATE_LIMIT_IP_PER_SECOND=1", "EUDR_RATE_LIMIT_IP_BURST=2",
			"EUDR_TRUSTED_PROXIES=10.0.0.0/8")
		_, key := ta.newKey("sandbox")
		fromClient := func(ip string, hdr ...string) *httptest.ResponseRecorder {
			r := newRequest("GET", "/livez", "", hdr...)
			r.RemoteAddr = "10.0.0.1:5555" // the proxy
			r.Header.Set("X-Forwarded-For", ip)
			return ta.serve("sandbox", r)
		}
		for i := range 2 {
			if w := fromClient("1.2.3.4"); w.Code != 200 {
				t.Fatalf("request %d from 1.2.3.4: got %d, want 200", i+1, w.Code)
			}
		}
		w := fromClient("1.2.3.4")
		wantError(t, w, http.StatusTooManyRequests, apierr.CodeRateLimitExceeded, "")
		if got := w.Header().Get("X-RateLimit-Limit"); got != "2" {
			t.Errorf("X-RateLimit-Limit per IP: got %s, want 2", got)
		}
		if w := fromClient("5.6.7.8"); w.Code != 200 {
			t.Errorf("another client behind the same proxy: got %d, want 200", w.Code)
		}
		// A refused credential is counted per IP too.
		if w := fromClient("1.2.3.4", "X-API-Key", "sk_test_bad"); w.Code != http.StatusTooManyRequests {
			t.Errorf("bad key from a limited IP: got %d, want 429", w.Code)
		}
		// A valid key is limited per key, not per IP.
		if w := fromClient("1.2.3.4", "X-API-Key", key); w.Code != 200 {
			t.Errorf("valid key from a limited IP: got %d, want 200", w.Code)
		}
	})
}
