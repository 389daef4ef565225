package server

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// reply is a handler's successful answer.
type reply struct {
	status int
	header http.Header // extra headers, such as Location
	body   any         // nil: no body
	// replay, when not nil, is what a replay of this request (same
	// Idempotency-Key) answers instead of body: for answers that show a
	// secret the store does not keep, such as a new API key's value (only
	// its hash is stored). A secret the store keeps anyway, such as a
	// webhook's signing secret, is replayed as first answered.
	replay any
	// onCommit, when not nil, runs once the change is committed (to clear
	// a cache the change makes stale).
	onCommit func()
}

// accepted is the 202 of a request that queued job: Location points at
// the job, body says what was accepted.
func accepted(jobID string, body any) reply {
	return reply{status: http.StatusAccepted, header: http.Header{"Location": {eudrPrefix + "/jobs/" + jobID}}, body: body}
}

// commit runs fn in one write transaction and sends the reply it returns.
// Concurrent requests share commits (storage.DB.Batch), so fn may run more
// than once and must only change the store and its own results. fn decides
// a refusal (an *apierr.Error below 500: 404, 409, ...) before it writes anything;
// see sharedCommitError.
// When the request carries an Idempotency-Key, the reply is stored in that
// same transaction: the state change and the answer a retry replays commit
// together or not at all. Errors from fn are sent as the error envelope.
func (a *App) commit(w http.ResponseWriter, r *http.Request, fn func(tx *storage.Tx) (reply, error)) {
	var rep reply
	var body []byte
	var done func()
	var refused *apierr.Error
	err := a.db.Batch(r.Context(), func(tx *storage.Tx) error {
		body, done, refused = nil, nil, nil // a run again starts afresh
		var err error
		if rep, err = fn(tx); err != nil {
			return sharedCommitError(err, &refused)
		}
		if rep.body != nil {
			if body, err = marshalBody(rep.body); err != nil {
				return err
			}
		}
		stored := body
		if rep.replay != nil {
			if stored, err = marshalBody(rep.replay); err != nil {
				return err
			}
		}
		header := rep.header.Clone()
		if header == nil {
			header = http.Header{}
		}
		if body != nil {
			header.Set("Content-Type", "application/json")
		}
		done, err = storeIdempotent(r.Context(), tx, rep.status, header, stored)
		return err
	})
	if err == nil && refused != nil {
		err = refused
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	done()
	if rep.onCommit != nil {
		rep.onCommit()
	}
	h := w.Header()
	for k, vs := range rep.header {
		h[k] = vs
	}
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(rep.status)
	w.Write(body)
}

// marshalBody is the JSON of a response body, newline-terminated like writeJSON's.
func marshalBody(v any) ([]byte, error) {
	b, err := storage.MarshalJSON(v)
	if err != nil {
		return nil, fmt.Errorf("encode response: %w", err)
	}
	return append(b, '\n'), nil
}

// sharedCommitError is what a closure run by storage.DB.Batch returns for
// err. A failed closure makes the whole shared transaction roll back and
// every other request of the group run again, so a refusal (an *apierr.Error below
// 500 or an apierr.NotFound, which callers decide before writing) is kept in *refused and the
// closure succeeds with nothing written; real failures still fail it.
func sharedCommitError(err error, refused **apierr.Error) error {
	var e *apierr.Error
	var nf apierr.NotFound
	if errors.As(err, &e) || errors.As(err, &nf) {
		if e = apierr.From(err); e.Status < http.StatusInternalServerError {
			*refused = e
			return nil
		}
	}
	return err
}
