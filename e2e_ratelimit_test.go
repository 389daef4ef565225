package main_test

// End-to-end tests of rate limits: per key, and per client IP for requests
// without a valid key, with the X-RateLimit-* and Retry-After headers.

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// rateHeaders reads the X-RateLimit-* headers as integers.
func rateHeaders(t testing.TB, r *apitest.Response) (limit, remaining, reset int64) {
	t.Helper()
	get := func(name string) int64 {
		n, err := strconv.ParseInt(r.Header.Get(name), 10, 64)
		if err != nil {
			t.Fatalf("%s (status %d): %s = %q, want an integer", r.Request, r.Status, name, r.Header.Get(name))
		}
		return n
	}
	return get("X-RateLimit-Limit"), get("X-RateLimit-Remaining"), get("X-RateLimit-Reset")
}

func TestRateLimit_PerKey(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_RATE_LIMIT_PER_SECOND=5", "EUDR_RATE_LIMIT_BURST=5")
	a := p.CreateKey(t, sandbox)
	b := p.CreateKey(t, sandbox)
	health := p.SandboxURL + eudrAPI + "/health"

	start := time.Now()
	var responses []*apitest.Response
	var limited *apitest.Response
	for i := 0; i < 12 && limited == nil; i++ {
		r := apitest.Do(t, "GET", health, apitest.WithKey(a.Key), nil)
		responses = append(responses, r)
		if r.Status == http.StatusTooManyRequests {
			limited = r
		} else {
			r.WantStatus(t, http.StatusOK)
		}
	}
	elapsed := time.Since(start)
	if limited == nil {
		t.Fatalf("12 requests in %s with a 5/s key: none was limited", elapsed)
	}
	if n := len(responses); n < 6 {
		t.Fatalf("request %d was limited, want the first 5 (the burst) through", n)
	} else if n > 6 && elapsed > time.Second {
		t.Fatalf("the first 429 came at request %d after %s, want the 6th or one within the same second", n, elapsed)
	}
	prev := int64(5)
	for i, r := range responses[:5] {
		limit, remaining, reset := rateHeaders(t, r)
		if limit != 5 {
			t.Errorf("request %d: X-RateLimit-Limit %d, want 5", i+1, limit)
		}
		if remaining >= prev {
			t.Errorf("request %d: X-RateLimit-Remaining %d, want below the previous %d", i+1, remaining, prev)
		}
		prev = remaining
		if now := time.Now().Unix(); reset < start.Unix() || reset > now+2 {
			t.Errorf("request %d: X-RateLimit-Reset %d, want epoch seconds in [%d, %d]", i+1, reset, start.Unix(), now+2)
		}
	}
	if _, remaining, _ := rateHeaders(t, responses[0]); remaining != 4 {
		t.Errorf("first request: X-RateLimit-Remaining %d, want 4", remaining)
	}

	apitest.WantError(t, limited, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	ra, err := strconv.Atoi(limited.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("429: Retry-After %q, want an integer from 1 to 60", limited.Header.Get("Retry-After"))
	}
	limit, remaining, reset := rateHeaders(t, limited)
	if limit != 5 || remaining != 0 || reset < time.Now().Unix() {
		t.Errorf("429: X-RateLimit-Limit %d, -Remaining %d, -Reset %d; want 5, 0, >= now (%d)", limit, remaining, reset, time.Now().Unix())
	}

	// Another key has its own bucket.
	r := apitest.Do(t, "GET", health, apitest.WithKey(b.Key), nil).WantStatus(t, http.StatusOK)
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 4 {
		t.Errorf("other key: X-RateLimit-Limit %d, -Remaining %d, want 5 and 4", limit, remaining)
	}
	// Error answers carry the headers too, and count.
	r = apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/none", apitest.WithKey(b.Key), nil)
	apitest.WantError(t, r, http.StatusNotFound, "NOT_FOUND")
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 3 {
		t.Errorf("404: X-RateLimit-Limit %d, -Remaining %d, want 5 and 3", limit, remaining)
	}
	r = apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers?limit=0", apitest.WithKey(b.Key), nil)
	apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 2 {
		t.Errorf("400: X-RateLimit-Limit %d, -Remaining %d, want 5 and 2", limit, remaining)
	}
	r = apitest.Do(t, "GET", health, nil, nil)
	apitest.WantUnauthorized(t, r, "MISSING_API_KEY")
	if limit, _, _ := rateHeaders(t, r); limit != 40 {
		t.Errorf("401: X-RateLimit-Limit %d, want the per-IP burst 40", limit)
	}

	// The bucket refills: after Retry-After the key works again.
	time.Sleep(time.Duration(ra) * time.Second)
	apitest.Do(t, "GET", health, apitest.WithKey(a.Key), nil).WantStatus(t, http.StatusOK)
}

func TestRateLimit_PerIP(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_RATE_LIMIT_IP_PER_SECOND=2", "EUDR_RATE_LIMIT_IP_BURST=2")
	key := p.CreateKey(t, sandbox) // the login took one token of this IP's bucket
	time.Sleep(1100 * time.Millisecond)
	health := p.SandboxURL + eudrAPI + "/health"

	r1 := apitest.Do(t, "GET", health, nil, nil)
	r2 := apitest.Do(t, "GET", health, apitest.WithKey("sk_test_"+apitest.RandBase62(32)), nil)
	r3 := apitest.Do(t, "GET", health, apitest.WithKey("garbage"), nil)
	apitest.WantUnauthorized(t, r1, "MISSING_API_KEY")
	apitest.WantUnauthorized(t, r2)
	if limit, remaining, _ := rateHeaders(t, r1); limit != 2 || remaining != 1 {
		t.Errorf("1st 401: X-RateLimit-Limit %d, -Remaining %d, want 2 and 1", limit, remaining)
	}
	if _, remaining, _ := rateHeaders(t, r2); remaining != 0 {
		t.Errorf("2nd 401: X-RateLimit-Remaining %d, want 0", remaining)
	}
	apitest.WantError(t, r3, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if ra, err := strconv.Atoi(r3.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("429: Retry-After %q, want 1-60", r3.Header.Get("Retry-After"))
	}
	// X-Forwarded-For from a peer that is not a trusted proxy changes nothing.
	apitest.WantError(t, apitest.Do(t, "GET", health, apitest.Hdr("X-Forwarded-For", "203.0.113.7"), nil), http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	// Probes without credentials share the IP's bucket.
	apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+"/nope", nil, nil), http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	// A valid key is limited per key, not per IP.
	r := apitest.Do(t, "GET", health, apitest.WithKey(key.Key), nil).WantStatus(t, http.StatusOK)
	if limit, _, _ := rateHeaders(t, r); limit != 100 {
		t.Errorf("keyed request: X-RateLimit-Limit %d, want the per-key 100", limit)
	}
}
