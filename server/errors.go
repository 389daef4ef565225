package server

import (
	"fmt"
	"net/http"

	"github.com/eudr/eudr/server/apierr"
	"github.com/rs/zerolog"
)

// writeError writes err as the error envelope. It is the only writer of
// errors; 5xx causes are logged here, once, and never sent.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := apierr.From(err)
	infoFrom(r.Context()).code = e.Code // for the access log
	if e.Status >= 500 {
		zerolog.Ctx(r.Context()).Error().Err(e.Err).Str("code", e.Code).Msg("request failed")
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
	writeJSON(w, r, e.Status, bounded(e))
}

// What an error answer repeats of the request is bounded: a field path
// names the client's members (an unknown one by its name), and messages
// and issues quote its values and IDs, any of which can be megabytes long.
// The text bound is above the longest message the API writes itself
// (about 320 characters), so only echoes are ever cut.
const (
	maxEchoedField = 200  // characters of a detail's field
	maxEchoedText  = 1000 // characters of a message or a detail's issue
)

// bounded is a copy of e to send: each text cut to its bound (apierr.Cut),
// and details [] rather than null. e itself is left alone (it may be
// shared).
func bounded(e *apierr.Error) *apierr.Error {
	out := *e
	out.Message = apierr.Cut(e.Message, maxEchoedText)
	out.Details = make([]apierr.Detail, len(e.Details))
	for i, d := range e.Details {
		out.Details[i] = apierr.Detail{Code: d.Code, Field: apierr.Cut(d.Field, maxEchoedField), Issue: apierr.Cut(d.Issue, maxEchoedText)}
	}
	return &out
}
