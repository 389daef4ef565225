package server

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/ratelimit"
)

// rateLimit counts every request against the caller's bucket: the API key
// (or logged-in user) when the credential is valid, else the client IP. It
// sets the X-RateLimit-* headers on every response and answers 429 with
// Retry-After when the bucket is empty.
func (a *App) rateLimit(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who := infoFrom(r.Context()).who
		now := a.now()
		var v ratelimit.Verdict
		if id := who.id(); id != "" {
			v = a.keyRate.Take(id, now)
		} else {
			v = a.ipRate.Take("ip:"+a.clientIP(r).String(), now)
		}
		h := w.Header()
		h.Set("X-RateLimit-Limit", strconv.Itoa(v.Limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(v.Remaining))
		h.Set("X-RateLimit-Reset", strconv.FormatInt(v.ResetUnix(), 10))
		if !v.Allowed {
			writeError(w, r, &apierr.Error{Status: http.StatusTooManyRequests, Code: apierr.CodeRateLimitExceeded,
				Message:    "rate limit exceeded; retry after the number of seconds in Retry-After",
				RetryAfter: v.RetryAfterSeconds()})
			return
		}
		next.ServeHTTP(w, r)
	})
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
