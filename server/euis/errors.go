package euis

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// Kinds of a Fault.
const (
	// FaultBusinessRules: the information system rejects the request on its
	// business rules (BusinessRulesValidationException); Reasons holds its
	// error codes. For a submission this is a rejection. Permanent.
	FaultBusinessRules = "BUSINESS_RULES"
	// FaultPermissionDenied: the user may not do this
	// (PermissionDeniedException), such as a role the user lacks in TRACES.
	// Permanent.
	FaultPermissionDenied = "PERMISSION_DENIED"
	// FaultNotFound: no such statement (NotFoundException). Permanent.
	FaultNotFound = "NOT_FOUND"
	// FaultAuthentication: the credentials were refused
	// (UnauthenticatedException, a WS-Security fault, or a Created time
	// more than 5 minutes from the server's clock). Permanent until the
	// credentials or the clock are fixed.
	FaultAuthentication = "AUTHENTICATION"
	// FaultInvalidRequest: the request broke the XSD (a SAXParseException,
	// "cvc-..."), or another client fault. Permanent.
	FaultInvalidRequest = "INVALID_REQUEST"
	// FaultServer: any other server fault (InternalSystemException, say).
	// Transient.
	FaultServer = "SERVER"
)

// Fault is a SOAP fault answered by the information system.
type Fault struct {
	Operation string // submitDds, getDds, ...
	Kind      string // Fault* constant
	// Code is the faultcode without its prefix: Client, Server,
	// FailedAuthentication, ...
	Code string
	// Message is the faultstring.
	Message string
	// Reasons are the error IDs of the detail, in order
	// (EUDR_COMMODITIES_HS_CODE_INVALID, ...). A business-rules fault with
	// no error IDs has its Message as its only reason.
	Reasons []string
	// Errors are the errors of the detail, with their messages.
	Errors []FaultError
	// Detail is the local name of the detail element
	// (BusinessRulesValidationException, ...), or "".
	Detail string
	// HTTPStatus is the status of the HTTP response (500 for a SOAP fault,
	// normally).
	HTTPStatus int
}

// FaultError is an error of a fault's detail.
type FaultError struct {
	ID      string
	Message string
	Field   string
}

func (f *Fault) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "eu information system %s: %s fault", f.Operation, strings.ToLower(f.Kind))
	if f.Detail != "" {
		b.WriteString(" " + f.Detail)
	}
	if f.Message != "" {
		b.WriteString(": " + f.Message)
	}
	for i, e := range f.Errors {
		if i == 0 {
			b.WriteString(":")
		} else {
			b.WriteString(";")
		}
		b.WriteString(" " + e.ID)
		if e.Message != "" {
			b.WriteString(" (" + e.Message + ")")
		}
	}
	return b.String()
}

// Rejected reports whether the fault is a rejection on the business rules.
func (f *Fault) Rejected() bool { return f.Kind == FaultBusinessRules }

// HTTPError is an HTTP response that is not a SOAP answer: a proxy's 502, a
// 429, a 404 for a wrong endpoint, a redirect (never followed).
type HTTPError struct {
	Operation  string
	StatusCode int
	// RetryAfter is the Retry-After delay the response asked for, or 0.
	RetryAfter time.Duration
	// Location is where a 3xx pointed (cut to 256 bytes), or "".
	Location string
	// Body is the beginning of the body, for the log.
	Body string
}

// Redirect reports whether the answer was a redirect, which is not
// followed.
func (e *HTTPError) Redirect() bool { return e.StatusCode >= 300 && e.StatusCode < 400 }

// StatusText is the name of the answer's status ("Service Unavailable"),
// or "" for a status without one.
func (e *HTTPError) StatusText() string { return http.StatusText(e.StatusCode) }

func (e *HTTPError) Error() string {
	msg := fmt.Sprintf("eu information system %s: http %d %s", e.Operation, e.StatusCode, e.StatusText())
	if e.Redirect() {
		msg += ": redirect not followed"
		if e.Location != "" {
			msg += " (Location " + e.Location + ")"
		}
	}
	return msg
}

// capLocation bounds a Location header, which the answering server writes
// and which ends up in logs and a job's error.
func capLocation(loc string) string {
	const limit = 256
	if len(loc) > limit {
		loc = strings.ToValidUTF8(loc[:limit], "") + "..."
	}
	return loc
}

// ProtocolError is a 2xx answer that could not be read: not XML, or
// without the expected element.
type ProtocolError struct {
	Operation string
	Err       error
}

func (e *ProtocolError) Error() string {
	return fmt.Sprintf("eu information system %s: unreadable answer: %v", e.Operation, e.Err)
}

func (e *ProtocolError) Unwrap() error { return e.Err }

// IsTransient reports whether err is a failure that may go away by itself,
// so that the call is worth repeating later: a server fault of kind
// FaultServer, HTTP 408, 429 and 5xx without a SOAP fault, a 2xx that could
// not be read, timeouts, cancellation, and connection errors (refused,
// reset, DNS, an answer cut short). Faults of every other kind, other HTTP
// statuses (a redirect among them), ErrNotConfigured, Violations, TLS
// certificate errors and an endpoint the address guard refuses
// (netguard.ErrTargetNotAllowed) are permanent.
//
// A transient error of Submit does not say that nothing was filed: the
// information system may have accepted the statement before the answer was
// lost. Before submitting again, look for it with FindByInternalReference.
func IsTransient(err error) bool {
	if err == nil {
		return false
	}
	var f *Fault
	if errors.As(err, &f) {
		return f.Kind == FaultServer
	}
	var h *HTTPError
	if errors.As(err, &h) {
		return h.StatusCode == http.StatusRequestTimeout || h.StatusCode == http.StatusTooManyRequests || h.StatusCode >= 500
	}
	var p *ProtocolError
	if errors.As(err, &p) {
		return true
	}
	var vs Violations
	if errors.As(err, &vs) || errors.Is(err, ErrNotConfigured) {
		return false
	}
	// Before net.Error: the guard's refusal comes as a dial error, and
	// the address will not change by waiting.
	if errors.Is(err, netguard.ErrTargetNotAllowed) {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return true
	}
	var unknownCA x509.UnknownAuthorityError
	var invalidCert x509.CertificateInvalidError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	if errors.As(err, &unknownCA) || errors.As(err, &invalidCert) || errors.As(err, &hostname) || errors.As(err, &verify) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // timeouts, refused and reset connections, DNS
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}
