// Package ratelimit keeps one token bucket per caller, in memory: a
// restart starts every bucket full, which is acceptable for a per-second
// limit. The HTTP middleware that spends a token per request is the
// server's.
package ratelimit

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Limiter keeps one token bucket per caller.
type Limiter struct {
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

// New is a limiter of perSecond tokens a second per caller, burst at most.
func New(perSecond float64, burst int) *Limiter {
	return &Limiter{limit: rate.Limit(perSecond), burst: burst, buckets: map[string]*bucket{}}
}

// Verdict is the outcome of one request against its bucket.
type Verdict struct {
	Allowed    bool
	Limit      int
	Remaining  int
	Reset      time.Time     // when the bucket is full again
	RetryAfter time.Duration // when denied: until the next token
}

// Take spends one token of id's bucket at now.
func (rl *Limiter) Take(id string, now time.Time) Verdict {
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

	v := Verdict{Limit: rl.burst}
	v.Allowed = b.lim.AllowN(now, 1)
	tokens := b.lim.TokensAt(now)
	v.Remaining = max(0, int(math.Floor(tokens)))
	v.Reset = now.Add(time.Duration((float64(rl.burst) - tokens) / float64(rl.limit) * float64(time.Second)))
	if !v.Allowed {
		v.RetryAfter = time.Duration((1 - tokens) / float64(rl.limit) * float64(time.Second))
	}
	return v
}

// Sweep drops buckets idle long enough to have refilled: forgetting them
// changes nothing.
func (rl *Limiter) Sweep(now time.Time) {
	rl.mu.Lock()
	defer rl.mu.Unlock()
	rl.sweepLocked(now)
}

func (rl *Limiter) sweepLocked(now time.Time) {
	full := time.Duration(float64(rl.burst)/float64(rl.limit)*float64(time.Second)) + time.Second
	for id, b := range rl.buckets {
		if now.Sub(b.last) > full {
			delete(rl.buckets, id)
		}
	}
}

// ResetUnix is Reset in whole seconds, rounded up (X-RateLimit-Reset).
func (v Verdict) ResetUnix() int64 {
	t := v.Reset
	s := t.Unix()
	if t.Nanosecond() > 0 {
		s++
	}
	return s
}

// RetryAfterSeconds is RetryAfter rounded up into the 1-60 range
// docs/api.md gives.
func (v Verdict) RetryAfterSeconds() int {
	return min(60, max(1, int(math.Ceil(v.RetryAfter.Seconds()))))
}
