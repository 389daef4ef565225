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
