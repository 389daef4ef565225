// Package apierr is the API's error envelope: the Error every non-2xx
// answer carries, its Details, and every code the API answers. Workflow
// packages return these for business rules; From maps every other error
// (not found, geo problems, internal failures) in one place.
//
// The package knows HTTP statuses as numbers only; writing an Error onto
// a response is the server's job.
package apierr

import (
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/storage"
)

// The statuses an Error can carry.
const (
	StatusBadRequest          = 400
	StatusUnauthorized        = 401
	StatusForbidden           = 403
	StatusNotFound            = 404
	StatusMethodNotAllowed    = 405
	StatusConflict            = 409
	StatusPayloadTooLarge     = 413
	StatusUnsupportedMedia    = 415
	StatusUnprocessableEntity = 422
	StatusLocked              = 423
	StatusTooManyRequests     = 429
	StatusInternal            = 500
	StatusServiceUnavailable  = 503
)

// Error is an API error: the body of every non-2xx response.
type Error struct {
	Status  int      `json:"-"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details"` // never nil on the wire: [] not null
	Err     error    `json:"-"`       // cause; logged for 5xx, never sent
	// RetryAfter, in seconds, is sent as the Retry-After header when set.
	RetryAfter int `json:"-"`
}

// Detail names one problem: its case, the JSON path it concerns and what
// is wrong.
type Detail struct {
	Code  string `json:"code"`
	Field string `json:"field"`
	Issue string `json:"issue"`
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Code, e.Message, e.Err)
	}
	return e.Code + ": " + e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// Problems collects field-level validation problems; Err turns them into
// one 400 or nil.
type Problems []Detail

// Add records one problem.
func (p *Problems) Add(code, field, issue string) {
	*p = append(*p, Detail{Code: code, Field: field, Issue: issue})
}

// Err is nil when no problem was found, else a 400 VALIDATION_FAILED
// listing all.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return Validation(p...)
}

// DetailsOf is the details of err's 400, or nil for no error: a parser's
// problems, to Merge with a validator's.
func DetailsOf(err error) Problems {
	if err == nil {
		return nil
	}
	return From(err).Details
}

// Merge answers first's problems together with err's, one problem per
// field, first's first: a decoder's problems with a validator's, say. It
// is nil when neither found one; err itself when first is empty; and
// first's 400 alone when err is not a 400 (what failed otherwise matters
// less than what the client sent wrong).
func Merge(first Problems, err error) error {
	if len(first) == 0 {
		return err
	}
	if err == nil {
		return first.Err()
	}
	e := From(err)
	if e.Status != StatusBadRequest {
		return first.Err()
	}
	seen := map[string]bool{}
	for _, d := range first {
		seen[d.Field] = true
	}
	out := append(Problems(nil), first...)
	for _, d := range e.Details {
		if !seen[d.Field] {
			out = append(out, d)
		}
	}
	return out.Err()
}

// Validation is a 400 VALIDATION_FAILED listing details; its message is
// the only detail's issue when there is one.
func Validation(details ...Detail) *Error {
	msg := "request validation failed"
	if len(details) == 1 {
		msg = details[0].Issue
	}
	return &Error{Status: StatusBadRequest, Code: CodeValidationFailed, Message: msg, Details: details}
}

// Invalid is a 400 with one INVALID_VALUE detail.
func Invalid(field, issue string) *Error {
	return Validation(Detail{Code: DetailInvalidValue, Field: field, Issue: issue})
}

// Unauthorized is the 401 of a missing, malformed or revoked key, with the
// fixed message every 401 carries.
func Unauthorized() *Error {
	return &Error{Status: StatusUnauthorized, Code: CodeUnauthorized, Message: MsgUnauthorized}
}

// UnauthorizedBecause is the 401 with the fixed message every 401 carries
// and one detail saying what the request lacked and how to send it: the
// fixed message speaks of API keys whatever was missing.
func UnauthorizedBecause(detail, field, issue string) *Error {
	e := Unauthorized()
	e.Details = []Detail{{Code: detail, Field: field, Issue: issue}}
	return e
}

// InvalidCredentials is the 401 of a failed login: the fixed message every
// 401 carries, with a detail saying what went wrong, since the message alone
// speaks of API keys and a client (or a script's jq) cannot tell from it
// that the password was mistyped.
func InvalidCredentials() *Error {
	return &Error{Status: StatusUnauthorized, Code: CodeUnauthorized, Message: MsgUnauthorized,
		Details: []Detail{{Code: DetailInvalidCredentials, Field: "body", Issue: "the username or password is wrong"}}}
}

// Forbidden is the 403 of a valid key that may not make the request, with
// the fixed message every 403 carries and one detail saying why.
func Forbidden(detail, issue string) *Error {
	return &Error{Status: StatusForbidden, Code: CodeForbidden, Message: MsgForbidden,
		Details: []Detail{{Code: detail, Field: "headers.Authorization", Issue: issue}}}
}

// Conflict is a 409 whose message is its one detail's issue.
func Conflict(detail, field, issue string) *Error {
	return &Error{Status: StatusConflict, Code: CodeConflict, Message: issue,
		Details: []Detail{{Code: detail, Field: field, Issue: issue}}}
}

// BusinessRule is a 422 whose message is its one detail's issue.
func BusinessRule(detail, field, issue string) *Error {
	return &Error{Status: StatusUnprocessableEntity, Code: CodeBusinessRule, Message: issue,
		Details: []Detail{{Code: detail, Field: field, Issue: issue}}}
}

// NotFound is the error of a lookup that found nothing: Kind names what
// was looked for ("batch", "ledger entry") and ID which one. It is a
// storage.ErrNotFound, and From answers it 404 "<kind> <id> not found".
type NotFound struct {
	Kind, ID string
}

func (e NotFound) Error() string {
	if e.ID == "" {
		return e.Kind + " not found"
	}
	return e.Kind + " " + e.ID + " not found"
}

// Is makes a NotFound match storage.ErrNotFound.
func (e NotFound) Is(target error) bool { return target == storage.ErrNotFound }

// Named is err with a storage.ErrNotFound in it said as NotFound{kind,
// id}; other errors, and nil, are returned as they are.
func Named(err error, kind, id string) error {
	var nf NotFound
	if err == nil || errors.As(err, &nf) || !errors.Is(err, storage.ErrNotFound) {
		return err
	}
	return NotFound{Kind: kind, ID: id}
}

// Cut returns s if it has at most max characters, else its first max-1
// characters and "…": how an answer bounds a text it repeats (a value the
// client sent, another system's message). It cuts between characters, so
// valid UTF-8 stays valid.
func Cut(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	n := 0
	for i := range s {
		if n == max-1 {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// From maps any error to the API error to send: an *Error as it is; a
// NotFound, storage.ErrNotFound or ledger.ErrNotFound to 404; geo
// problems to one 400 listing them all; anything else to a 500 that keeps
// err as its cause.
func From(err error) *Error {
	var e *Error
	var nf NotFound
	var probs geo.Problems
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &nf):
		return &Error{Status: StatusNotFound, Code: CodeNotFound, Message: nf.Error()}
	case errors.As(err, &probs):
		return FromGeo(probs, nil)
	case errors.Is(err, ledger.ErrNotFound):
		return &Error{Status: StatusNotFound, Code: CodeNotFound, Message: err.Error()}
	case errors.Is(err, storage.ErrNotFound):
		return &Error{Status: StatusNotFound, Code: CodeNotFound, Message: "resource not found"}
	default:
		return &Error{Status: StatusInternal, Code: CodeInternal, Message: "internal error", Err: err}
	}
}

// FromGeo is the 400 of geo problems: one detail per problem, its path
// passed through field when field is not nil.
func FromGeo(probs geo.Problems, field func(path string) string) *Error {
	out := make(Problems, 0, len(probs))
	for _, p := range probs {
		path := p.Path
		if field != nil {
			path = field(path)
		}
		out.Add(p.Code, path, p.Issue)
	}
	return Validation(out...)
}
