package server

import (
	"errors"
	"fmt"
	"net/http"
	"unicode/utf8"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/storage"
)

// Top-level error codes: one per class of failure (API.md section 3).
const (
	CodeValidationFailed     = "VALIDATION_FAILED"
	CodeUnauthorized         = "UNAUTHORIZED"
	CodeForbidden            = "FORBIDDEN"
	CodeNotFound             = "NOT_FOUND"
	CodeMethodNotAllowed     = "METHOD_NOT_ALLOWED"
	CodeConflict             = "CONFLICT"
	CodePayloadTooLarge      = "PAYLOAD_TOO_LARGE"
	CodeUnsupportedMediaType = "UNSUPPORTED_MEDIA_TYPE"
	CodeBusinessRule         = "BUSINESS_RULE"
	CodeResourceLocked       = "RESOURCE_LOCKED"
	CodeRateLimitExceeded    = "RATE_LIMIT_EXCEEDED"
	CodeInternal             = "INTERNAL"
	CodeServiceUnavailable   = "SERVICE_UNAVAILABLE"
)

// Detail codes: the case within a class.
const (
	DetailRequired              = "REQUIRED"
	DetailInvalidValue          = "INVALID_VALUE"
	DetailUnknownField          = "UNKNOWN_FIELD"
	DetailMalformedJSON         = "MALFORMED_JSON"
	DetailIdempotencyKeyMissing = "IDEMPOTENCY_KEY_MISSING"
	DetailIdempotencyKeyReused  = "IDEMPOTENCY_KEY_REUSED"
	DetailIdempotencyInProgress = "IDEMPOTENCY_IN_PROGRESS"
	DetailWrongEnvironment      = "WRONG_ENVIRONMENT"
	DetailKeyRotated            = "KEY_ROTATED"
	DetailJWTRequired           = "JWT_REQUIRED"
	DetailScopeRequired         = "SCOPE_REQUIRED"
	DetailAdminRequired         = "ADMIN_REQUIRED"
	// Batches (API.md section 6).
	DetailHSCodeNotInAnnexI   = "HS_CODE_NOT_IN_ANNEX_I" // 400: hsCode of no commodity; 422: of another commodity only
	DetailSupplierNotFound    = "SUPPLIER_NOT_FOUND"     // 404: no supplier mapping with that ERP vendor ID
	DetailPolygonNotFound     = "POLYGON_NOT_FOUND"      // 404: no such polygon
	DetailPolygonNotCompliant = "POLYGON_NOT_COMPLIANT"  // 422: a batch polygon is HIGH_RISK or FAILED
	DetailCommodityMismatch   = "COMMODITY_MISMATCH"     // 422: a batch polygon is of another commodity
	DetailPolygonInUse        = "POLYGON_IN_USE"         // 409: a polygon a batch uses cannot be deleted
	// Shipment links and the ledger (API.md sections 6 and 8).
	DetailBatchNotVerified      = "BATCH_NOT_VERIFIED"      // 422: only a VERIFIED batch can be linked
	DetailShipmentAlreadyLinked = "SHIPMENT_ALREADY_LINKED" // 409: another link holds the shipment
	DetailBatchAlreadyLinked    = "BATCH_ALREADY_LINKED"    // 409: another link holds the batch
	DetailProofNotReproducible  = "PROOF_NOT_REPRODUCIBLE"  // 422: evidence that does not verify
	// Archive reports (API.md section 8).
	DetailReportNotReady = "REPORT_NOT_READY" // 409: the report's job has not written the archive yet
	DetailReportFailed   = "REPORT_FAILED"    // 409: the report's job failed; there is no archive
	// Due-diligence statements (API.md section 7).
	DetailEUSystemRule          = "EU_SYSTEM_RULE"           // 422: the statement breaks a rule or limit of the EU system
	DetailEUSystemNotConfigured = "EU_SYSTEM_NOT_CONFIGURED" // 422: no EU system credentials (production)
	DetailDDSNotDraft           = "DDS_NOT_DRAFT"            // 409: only a DRAFT can be submitted, once
	DetailDDSNotRevocable       = "DDS_NOT_REVOCABLE"        // 409: not SUBMITTED or VALIDATED, past 72 h, or grouped
)

// The fixed messages of SPEC.md section 7.
const (
	msgUnauthorized = "Missing or invalid API key"
	msgForbidden    = "API key does not have the required scope"
)

// Error is an API error: the body of every non-2xx response.
type Error struct {
	Status  int      `json:"-"`
	Code    string   `json:"code"`
	Message string   `json:"message"`
	Details []Detail `json:"details"` // never nil: [] on the wire, not null
	Err     error    `json:"-"`       // cause; logged for 5xx, never sent
	// RetryAfter, in seconds, is sent as the Retry-After header when set.
	RetryAfter int `json:"-"`
}

// Detail names one problem: its case, the JSON path it concerns and what is wrong.
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

// Err is nil when no problem was found, else a 400 VALIDATION_FAILED listing all.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	return validationFailed(p...)
}

func validationFailed(details ...Detail) *Error {
	msg := "request validation failed"
	if len(details) == 1 {
		msg = details[0].Issue
	}
	return &Error{Status: http.StatusBadRequest, Code: CodeValidationFailed, Message: msg, Details: details}
}

func unauthorized() *Error {
	return &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: msgUnauthorized}
}

func forbidden(detail, issue string) *Error {
	return &Error{Status: http.StatusForbidden, Code: CodeForbidden, Message: msgForbidden,
		Details: []Detail{{Code: detail, Field: "headers.Authorization", Issue: issue}}}
}

func notFound(what string) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: what + " not found"}
}

func conflict(detail, field, issue string) *Error {
	return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: issue,
		Details: []Detail{{Code: detail, Field: field, Issue: issue}}}
}

// asError maps any error to the API error to send.
func asError(err error) *Error {
	var e *Error
	switch {
	case errors.As(err, &e):
		return e
	case errors.Is(err, storage.ErrNotFound):
		return notFound("resource")
	default:
		return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: "internal error", Err: err}
	}
}

// writeError writes err as the error envelope. It is the only writer of
// errors; 5xx causes are logged here, once, and never sent.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := asError(err)
	if e.Status >= 500 {
		zerolog.Ctx(r.Context()).Error().Err(e.Err).Str("code", e.Code).Msg("request failed")
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(e.RetryAfter))
	}
	writeJSON(w, r, e.Status, e.bounded())
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

// bounded is a copy of e to send: each text cut to its bound (cutEcho),
// and details [] rather than null. e itself is left alone (it may be
// shared).
func (e *Error) bounded() *Error {
	out := *e
	out.Message = cutEcho(e.Message, maxEchoedText)
	out.Details = make([]Detail, len(e.Details))
	for i, d := range e.Details {
		out.Details[i] = Detail{Code: d.Code, Field: cutEcho(d.Field, maxEchoedField), Issue: cutEcho(d.Issue, maxEchoedText)}
	}
	return &out
}

// cutEcho returns s if it has at most max characters, else its first
// max-1 characters and "…". It cuts between characters, so valid UTF-8
// stays valid.
func cutEcho(s string, max int) string {
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
