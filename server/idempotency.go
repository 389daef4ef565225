package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/storage"
)

// idemPolicy is whether a route takes an Idempotency-Key.
type idemPolicy int

const (
	idemNone     idemPolicy = iota // reads, deletes
	idemOptional                   // login-free actions API.md exempts: rotate, ping, DLQ actions
	idemRequired                   // every other POST that creates or changes something
)

const maxIdempotencyKeyLen = 255

// idempotencyHeadersNotStored are response headers that describe this
// answer rather than the stored one: a replay sets them afresh.
var idempotencyHeadersNotStored = []string{"X-Trace-Id", "X-Ratelimit-Limit", "X-Ratelimit-Remaining",
	"X-Ratelimit-Reset", "Retry-After", "Date", "Content-Length"}

// idempotent wraps a write route (API.md section 3). Same key, same
// fingerprint (method, path, SHA-256 of the body) within idempotency.ttl:
// the stored response again with Idempotent-Replayed: true. Same key, other
// fingerprint: 409. Same key while the first request runs: 423. Only 2xx
// answers are remembered; an error leaves the key unused, so the corrected
// request may reuse it.
func (a *App) idempotent(policy idemPolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := idempotencyKey(r.Header.Get("Idempotency-Key"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if key == "" {
			if policy == idemRequired {
				writeError(w, r, validationFailed(Detail{Code: DetailIdempotencyKeyMissing, Field: "headers.Idempotency-Key",
					Issue: "an Idempotency-Key header is required on this request"}))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeError(w, r, readBodyError(err))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		t := tenantFrom(r.Context())
		rec, err := a.beginIdempotent(r.Context(), t, key, fingerprint(r, body))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if rec.State == storage.IdemCompleted {
			replay(w, rec)
			return
		}

		cw := &capturingWriter{ResponseWriter: w}
		completed := false
		defer func() {
			if !completed { // a panic or an error answer: forget the key
				if err := a.db.Update(context.WithoutCancel(r.Context()), func(tx *storage.Tx) error {
					return tx.DeleteIdempotency(t, key)
				}); err != nil {
					zerolog.Ctx(r.Context()).Error().Err(err).Msg("release idempotency key")
				}
			}
		}()
		next.ServeHTTP(cw, r.WithContext(context.WithValue(r.Context(), ctxIdempotency, cw)))
		if cw.status < 200 || cw.status > 299 {
			return
		}
		rec.State = storage.IdemCompleted
		rec.Owner = ""
		rec.Status = cw.status
		rec.Header = cw.stored
		rec.Body = cw.body.Bytes()
		if cw.replayBody != nil {
			rec.Body = cw.replayBody
		}
		if err := a.db.Update(context.WithoutCancel(r.Context()), func(tx *storage.Tx) error {
			return tx.PutIdempotency(t, rec)
		}); err != nil {
			// The answer went out but cannot be remembered: the deferred
			// release forgets the key rather than leave it locked.
			zerolog.Ctx(r.Context()).Error().Err(err).Msg("store idempotent response")
			return
		}
		completed = true
	})
}

// beginIdempotent looks the key up and either returns the completed record
// to replay, refuses (409, 423), or records the request as in flight.
// An in-flight record left by an earlier process (it crashed or was killed)
// is taken over: that request's answer never reached its client.
func (a *App) beginIdempotent(ctx context.Context, t storage.Tenant, key, fp string) (*storage.IdempotencyRecord, error) {
	var rec *storage.IdempotencyRecord
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		old, err := tx.FindIdempotency(t, key)
		if err != nil && !errors.Is(err, storage.ErrNotFound) {
			return err
		}
		now := tx.Now()
		if old != nil && old.ExpiresAt.After(now) {
			switch {
			case old.Fingerprint != fp:
				return conflict(DetailIdempotencyKeyReused, "headers.Idempotency-Key",
					"this Idempotency-Key was already used for a different request within the idempotency window")
			case old.State == storage.IdemCompleted:
				rec = old
				return nil
			case old.Owner == a.runID:
				return &Error{Status: http.StatusLocked, Code: CodeResourceLocked, RetryAfter: 1,
					Message: "a request with this Idempotency-Key is still being processed; retry shortly",
					Details: []Detail{{Code: DetailIdempotencyInProgress, Field: "headers.Idempotency-Key", Issue: "the first request is still in flight"}}}
			}
		}
		rec = &storage.IdempotencyRecord{Key: key, Fingerprint: fp, State: storage.IdemInFlight, Owner: a.runID,
			CreatedAt: now, ExpiresAt: now.Add(a.cfg.Idempotency.TTL)}
		return tx.PutIdempotency(t, rec)
	})
	return rec, err
}

// idempotencyKey validates the header: 1-255 printable ASCII characters; the
// quoted form of the IETF draft ("...") is accepted and unquoted.
func idempotencyKey(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	bad := func(issue string) error {
		return validationFailed(Detail{Code: DetailInvalidValue, Field: "headers.Idempotency-Key", Issue: issue})
	}
	if len(v) > maxIdempotencyKeyLen {
		return "", bad("must be at most 255 characters")
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x21 || v[i] > 0x7e {
			return "", bad("must be printable ASCII without spaces")
		}
	}
	return v, nil
}

// fingerprint is SHA-256 over method, path and SHA-256 of the body.
func fingerprint(r *http.Request, body []byte) string {
	bh := sha256.Sum256(body)
	h := sha256.New()
	io.WriteString(h, r.Method+" "+r.URL.Path+"\n")
	h.Write(bh[:])
	return hex.EncodeToString(h.Sum(nil))
}

func replay(w http.ResponseWriter, rec *storage.IdempotencyRecord) {
	h := w.Header()
	for k, vs := range rec.Header {
		h[k] = vs
	}
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(rec.Status)
	w.Write(rec.Body)
}

// capturingWriter passes a response through and keeps a copy to store.
type capturingWriter struct {
	http.ResponseWriter
	status     int
	stored     http.Header
	body       bytes.Buffer
	replayBody []byte // set by handlers whose answer holds a secret shown once
}

func (w *capturingWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.stored = w.Header().Clone()
		for _, k := range idempotencyHeadersNotStored {
			w.stored.Del(k)
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *capturingWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	w.body.Write(b)
	return w.ResponseWriter.Write(b)
}

// setReplayBody makes a replay of this request answer body instead of what
// was sent: used where the answer shows a secret once (a new key value).
func setReplayBody(ctx context.Context, body []byte) {
	if cw, ok := ctx.Value(ctxIdempotency).(*capturingWriter); ok {
		cw.replayBody = body
	}
}

// sweepIdempotency deletes expired records in small transactions so the
// writer lock is never held long.
func (a *App) sweepIdempotency(ctx context.Context) {
	total := 0
	for ctx.Err() == nil {
		var n int
		err := a.db.Update(ctx, func(tx *storage.Tx) error {
			var err error
			n, err = tx.SweepIdempotency(tx.Now(), 1000)
			return err
		})
		if err != nil {
			if ctx.Err() == nil {
				a.log.Warn().Err(err).Msg("sweep idempotency records")
			}
			return
		}
		total += n
		if n < 1000 {
			break
		}
	}
	if total > 0 {
		a.log.Debug().Int("deleted", total).Msg("swept expired idempotency records")
	}
}
