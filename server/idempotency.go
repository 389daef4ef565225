package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// idemPolicy is whether a route takes an Idempotency-Key.
type idemPolicy int

const (
	idemNone     idemPolicy = iota // reads, deletes
	idemOptional                   // rotate, ping and DLQ actions, which docs/api.md exempts
	idemRequired                   // every other POST that creates or changes something
)

const maxIdempotencyKeyLen = 255

// idempotent wraps a write route (docs/api.md, Idempotency). Same key, same
// fingerprint (method, path, SHA-256 of the body) within idempotency.ttl:
// the stored response again with Idempotent-Replayed: true. Same key, other
// fingerprint: 409. Same key while the first request runs: 423.
//
// The handler stores its answer through commit, in the transaction of the
// state change itself, so a crash can never leave a change without the
// answer a retry replays (or the reverse). Only 2xx answers are stored: when
// the handler ends without one (an error, a panic), the key is released and
// the corrected request may reuse it.
func (a *App) idempotent(policy idemPolicy, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, err := idempotencyKey(r.Header.Get("Idempotency-Key"))
		if err != nil {
			writeError(w, r, err)
			return
		}
		if key == "" {
			if policy == idemRequired {
				writeError(w, r, apierr.Validation(apierr.Detail{Code: apierr.DetailIdempotencyKeyMissing, Field: "headers.Idempotency-Key",
					Issue: "an Idempotency-Key header is required on this request"}))
				return
			}
			next.ServeHTTP(w, r)
			return
		}
		body, err := readBody(r)
		if err != nil {
			writeError(w, r, readBodyError(err))
			return
		}
		r.Body = newBufferedBody(body)
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

		p := &pendingIdempotency{tenant: t, rec: rec}
		defer func() {
			if p.stored {
				return
			}
			// An error answer or a panic: forget the key.
			if err := a.db.Update(context.WithoutCancel(r.Context()), func(tx *storage.Tx) error {
				return tx.DeleteIdempotency(t, key)
			}); err != nil {
				zerolog.Ctx(r.Context()).Error().Err(err).Msg("release idempotency key")
			}
		}()
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxIdempotency, p)))
	})
}

// pendingIdempotency is the in-flight record of a request that carries an
// Idempotency-Key, for commit to complete.
type pendingIdempotency struct {
	tenant storage.Tenant
	rec    *storage.IdempotencyRecord
	stored bool // set once the completed record is committed
}

// storeIdempotent completes the request's in-flight record, if it has one,
// with the answer to replay, inside tx. done is called after the commit.
func storeIdempotent(ctx context.Context, tx *storage.Tx, status int, header http.Header, body []byte) (done func(), err error) {
	p, ok := ctx.Value(ctxIdempotency).(*pendingIdempotency)
	if !ok {
		return func() {}, nil
	}
	rec := *p.rec
	rec.State, rec.Owner, rec.Status, rec.Header, rec.Body = storage.IdemCompleted, "", status, header, body
	if err := tx.PutIdempotency(p.tenant, &rec); err != nil {
		return nil, fmt.Errorf("store idempotent answer: %w", err)
	}
	return func() { p.stored = true }, nil
}

// beginIdempotent looks the key up and either returns the completed record
// to replay, refuses (409, 423), or records the request as in flight.
// An in-flight record left by an earlier process (it crashed or was killed)
// is taken over: that request's change never committed, since its answer
// is stored in the same transaction as the change.
func (a *App) beginIdempotent(ctx context.Context, t storage.Tenant, key, fp string) (*storage.IdempotencyRecord, error) {
	var rec *storage.IdempotencyRecord
	var refused *apierr.Error
	err := a.db.Batch(ctx, func(tx *storage.Tx) error {
		var err error
		refused = nil
		rec, err = a.takeIdempotencyKey(tx, t, key, fp)
		return sharedCommitError(err, &refused)
	})
	if err == nil && refused != nil {
		err = refused
	}
	return rec, err
}

// takeIdempotencyKey is beginIdempotent's transaction. It returns the
// completed record to replay or the new in-flight one; its refusals (409,
// 423) come before any write.
func (a *App) takeIdempotencyKey(tx *storage.Tx, t storage.Tenant, key, fp string) (*storage.IdempotencyRecord, error) {
	old, err := tx.FindIdempotency(t, key)
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	now := tx.Now()
	if old != nil && old.ExpiresAt.After(now) {
		switch {
		case old.Fingerprint != fp:
			return nil, apierr.Conflict(apierr.DetailIdempotencyKeyReused, "headers.Idempotency-Key",
				"this Idempotency-Key was already used for a different request within the idempotency window")
		case old.State == storage.IdemCompleted:
			return old, nil
		case old.Owner == a.runID:
			return nil, &apierr.Error{Status: http.StatusLocked, Code: apierr.CodeResourceLocked, RetryAfter: 1,
				Message: "a request with this Idempotency-Key is still being processed; retry shortly",
				Details: []apierr.Detail{{Code: apierr.DetailIdempotencyInProgress, Field: "headers.Idempotency-Key", Issue: "the first request is still in flight"}}}
		}
	}
	rec := &storage.IdempotencyRecord{Key: key, Fingerprint: fp, State: storage.IdemInFlight, Owner: a.runID,
		CreatedAt: now, ExpiresAt: now.Add(a.cfg.Idempotency.TTL)}
	return rec, tx.PutIdempotency(t, rec)
}

// idempotencyKey validates the header: 1-255 printable ASCII characters; the
// quoted form of the IETF draft ("...") is accepted and unquoted.
func idempotencyKey(v string) (string, error) {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	bad := func(issue string) error {
		return apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "headers.Idempotency-Key", Issue: issue})
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
