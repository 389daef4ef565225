package server

import (
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/eudr/eudr/server/apierr"
)

// rateLimiter keeps one token bucket per caller, in memory: a restart starts
// every bucket full, which is acceptable for a per-second limit.
type rateLimiter struct {
	limit rate.Limit
	burst int

	mu      sync.Mutex
	buckets map[string]*bucket
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// maxBuckets bounds memory when many client IPs appear: past it, idle buckets
// are dropped at once rather than at the next sweep.
const maxBuckets = 100_000

func newRateLimiter(perSecond float64, burst int) *rateLimiter {
	return &rateLimiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}}
}

// verdict is the outcome of one request against its bucket.
type verdict struct {
	allowed    bool
	limit      int
	remaining  int
	reset      time.Time     // when the bucket is full again
	retryAfter time.Duration // when denied: until the next token
}

// take spends one token of id's bucket at now.
func (rl *rateLimiter) take(id string, now time.Time) verdict {
	rl.mu.Lock()
	b := rl.buckets[id]
	if b == nil {
		if len(rl.buckets) >= maxBuckets {
			rl.sweepLocked(now)
		}
		b = &bucket{lim: rate.NewLimiter(rl.limit, rl.burst)}
		rl.buckets[id] = b
	}
	b.last = now
	rl.mu.Unlock()

	v := verdict{limit: rl.burst}
	v.allowed = b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	v.remaining = max(0, int(math.Floor(tokens)))
	v.reset = now.Add(time.Duration((float64(rl.burst) - tokens) / float64(rl.limit) * float64(time.Second)))
	if !v.allowed {
		v.retryAfter = time.Duration((1 - tokens) / float64(rl.limit) * float64(time.Second))
	}
	return v
}

// sweep drops buckets idle long enough to have refilled: forgetting them
// changes nothing.
func (rl *rateLimiter) sweep(now time.Time) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.sweepLocked(now)
}

func (rl *rateLimiter) sweepLocked(now time.Time) {
	full := time.Duration(float64(rl.burst)/float64(rl.limit)*float64(time.Second)) + time.Second
	for id, b := range rl.buckets {
		if now.Sub(b.last) > full {
			delete(rl.buckets, id)
		}
	}
}

// rateLimit counts every request against the caller's bucket: the API key
// (or logged-in user) when the credential is valid, else the client IP. It
// sets the X-RateLimit-* headers on every response and answers 429 with
// Retry-After when the bucket is empty.
func (a *App) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := infoFrom(r.Context()).who
		now := a.now()
		var v verdict
		if id := who.id(); id != "" {
			v = a.keyRate.take(id, now)
		} else {
			v = a.ipRate.take("ip:"+a.clientIP(r).String(), now)
		}
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(v.limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(v.remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(ceilUnix(v.reset), 10))
		if !v.allowed {
			writeError(w, r, &apierr.Error{Status: http.StatusTooManyRequests, Code: apierr.CodeRateLimitExceeded,
				Message:    "rate limit exceeded; retry after the number of seconds in Retry-After",
				RetryAfter: retryAfterSeconds(v.retryAfter)})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func ceilUnix(t time.Time) int64 {
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// retryAfterSeconds rounds up into the 1-60 range docs/api.md gives.
func retryAfterSeconds(d time.Duration) int {
	return min(60, max(1, int(math.Ceil(d.Seconds()))))
}

func parsePrefixes(ss []string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range ss {
		if p, err := netip.ParsePrefix(s); err == nil { // Validate rejected bad ones
			out = append(out, p.Masked())
		}
	}
	return out
}

// clientIP is the peer address, or, when the peer is a trusted proxy, the
// rightmost X-Forwarded-For address that is not a trusted proxy.
func (a *App) clientIP(r *http.Request) netip.Addr {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return netip.IPv4Unspecified()
	}
	ip = ip.Unmap()
	if !a.trusted(ip) {
		return ip
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		hop = hop.Unmap()
		if !a.trusted(hop) {
			return hop
		}
		ip = hop
	}
	return ip
}

func (a *App) trusted(ip netip.Addr) bool {
	for _, p := range a.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
