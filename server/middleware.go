package server

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log"
	mrand "math/rand/v2"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// requestInfo travels in the context of every request; inner steps fill it
// and the access log reads it when the response is done.
type requestInfo struct {
	env     storage.Environment
	traceID string
	route   string // the route template, "" when no route matched
	who     principal
	code    string // the error envelope's code, when the answer is one
}

type ctxKey int

const (
	ctxRequestInfo ctxKey = iota
	ctxIdempotency
)

func infoFrom(ctx context.Context) *requestInfo {
	ri, _ := ctx.Value(ctxRequestInfo).(*requestInfo)
	if ri == nil {
		return &requestInfo{}
	}
	return ri
}

// tenantFrom is the (organisation, environment) of the authenticated caller.
func tenantFrom(ctx context.Context) storage.Tenant { return infoFrom(ctx).who.tenant }

// handler composes the chain of one listener, outermost first: trace id and
// access log, panic recovery, identification, rate limit, body limit, router.
// Per route, routes.go adds the auth policy and idempotency.
func (a *App) handler(env storage.Environment) http.Handler {
	var h http.Handler = a.router(env)
	h = a.limitBody(h)
	h = a.rateLimit(h)
	h = a.identify(h)
	h = a.recoverPanics(h)
	return a.traceAndLog(env, h)
}

// statusWriter remembers the status and size of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// maxLoggedPath bounds the path an access log line repeats of a request
// that matched no route: the client chose it, and it can be long.
const maxLoggedPath = 200

// traceAndLog sets X-Trace-Id on every response and writes one log line per
// request: method, route, status, latency, trace id and key id (never a key
// value); for an error answer, its envelope's code; for a request that
// matched no route, its path (bounded, without the query string, which
// may carry a key).
func (a *App) traceAndLog(env storage.Environment, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		traceID := r.Header.Get("X-Trace-Id")
		if !validTraceID(traceID) {
			traceID = newTraceID()
		}
		w.Header().Set("X-Trace-Id", traceID)
		ri := &requestInfo{env: env, traceID: traceID}
		l := a.log.With().Str("trace_id", traceID).Str("environment", string(env)).Logger()
		ctx := context.WithValue(r.Context(), ctxRequestInfo, ri)
		ctx = l.WithContext(ctx)
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		a.metrics.ObserveRequest(env, ri.route, r.Method, sw.status, time.Since(start))

		ev := l.Info()
		if sw.status >= 500 {
			ev = l.Warn()
		}
		ev.Str("method", r.Method).Str("route", ri.route)
		if ri.route == "" {
			ev.Str("path", apierr.Cut(r.URL.EscapedPath(), maxLoggedPath))
		}
		ev.Int("status", sw.status)
		if ri.code != "" {
			ev.Str("code", ri.code)
		}
		ev.Float64("latency_ms", float64(time.Since(start).Microseconds())/1000).
			Int("bytes", sw.bytes).Str("key_id", ri.who.id()).Str("client_ip", a.clientIP(r).String()).
			Msg("request")
	})
}

// newTraceID is 32 hex characters. Trace IDs need to be unique, not secret,
// so they come from the runtime's per-thread generator (ChaCha8) rather than
// a getrandom call per request.
func newTraceID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], mrand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], mrand.Uint64())
	return hex.EncodeToString(b[:])
}

// validTraceID accepts 1-128 characters of [A-Za-z0-9._-] (docs/api.md).
func validTraceID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// recoverPanics turns a panic into a 500 envelope (when nothing was written
// yet) and logs it with its stack.
func (a *App) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			zerolog.Ctx(r.Context()).Error().Str("panic", fmt.Sprint(p)).Bytes("stack", debug.Stack()).Msg("handler panicked")
			if sw, ok := w.(*statusWriter); ok && sw.status != 0 {
				return // the response is under way; the client sees a cut body
			}
			writeError(w, r, &apierr.Error{Status: http.StatusInternalServerError, Code: apierr.CodeInternal, Message: "internal error"})
		}()
		next.ServeHTTP(w, r)
	})
}

// limitBody caps every request body at limits.max_body_bytes; reading past it
// fails, and decodeJSON turns that into 413. A body announced as too large
// is refused by wrap, after the route's authentication.
func (a *App) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, a.cfg.Limits.MaxBodyBytes)
		next.ServeHTTP(w, r)
	})
}

// tooLarge refuses a request whose Content-Length is over the limit before
// any of its body is read.
func (a *App) tooLarge(r *http.Request) error {
	if r.ContentLength <= a.cfg.Limits.MaxBodyBytes {
		return nil
	}
	return &apierr.Error{Status: http.StatusRequestEntityTooLarge, Code: apierr.CodePayloadTooLarge,
		Message: fmt.Sprintf("request body exceeds %d bytes", a.cfg.Limits.MaxBodyBytes)}
}

// newStdLogger routes net/http's own messages (TLS handshake errors and the
// like) into the structured log.
func newStdLogger(l zerolog.Logger) *log.Logger {
	return log.New(l.With().Str("component", "http").Logger(), "", 0)
}
