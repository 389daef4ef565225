package dds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
	"github.com/eudr/eudr/storage"
)

// HTTP statuses of the EU system's answers that AttemptOf names (the
// package does not import net/http).
const (
	statusRequestTimeout  = 408
	statusTooManyRequests = 429
	statusGatewayTimeout  = 504
)

// AttemptOf describes a transient failure of a call to the EU system as
// the submission job's lastAttempt shows it: a code and a message a client
// can show. The full error (addresses, URLs) is only logged.
func AttemptOf(err error) storage.JobAttempt {
	var (
		fault *euis.Fault
		he    *euis.HTTPError
		pe    *euis.ProtocolError
		ne    net.Error
	)
	switch {
	case errors.As(err, &fault):
		what := oneLine(fault.Message, maxFaultText)
		if what == "" {
			what = "fault code " + fault.Code
		}
		return storage.JobAttempt{Code: apierr.AttemptEUSystemUnavailable,
			Message: fmt.Sprintf("the EU information system answered %s with a server fault (%s)%s", fault.Operation, what, attemptAgain)}
	case errors.As(err, &he):
		code := apierr.AttemptEUSystemUnavailable
		switch he.StatusCode {
		case statusTooManyRequests:
			code = apierr.AttemptEUSystemRateLimited
		case statusRequestTimeout, statusGatewayTimeout:
			code = apierr.AttemptEUSystemTimeout
		}
		status := fmt.Sprint(he.StatusCode)
		if text := he.StatusText(); text != "" {
			status += " (" + text + ")"
		}
		return storage.JobAttempt{Code: code, Message: fmt.Sprintf("the EU information system answered HTTP %s to %s%s", status, he.Operation, attemptAgain)}
	case errors.As(err, &pe):
		return storage.JobAttempt{Code: apierr.AttemptEUSystemUnreadableAnswer,
			Message: fmt.Sprintf("the EU information system's answer to %s could not be read (%v)%s", pe.Operation, pe.Err, attemptAgain)}
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return storage.JobAttempt{Code: apierr.AttemptEUSystemTimeout, Message: "the EU information system did not answer in time" + attemptAgain}
	}
	return storage.JobAttempt{Code: apierr.AttemptEUSystemUnreachable,
		Message: fmt.Sprintf("the EU information system could not be reached (%s)%s", unreachableCause(err), attemptAgain)}
}

// attemptAgain ends each AttemptOf message: the job tries again.
const attemptAgain = "; trying again"

// maxFaultText bounds the EU system's fault text in a message (a fault
// can carry a stack trace).
const maxFaultText = 200

// oneLine is s with its runs of white space made one space, cut to limit
// characters (apierr.Cut).
func oneLine(s string, limit int) string {
	return apierr.Cut(strings.Join(strings.Fields(s), " "), limit)
}

// unreachableCause names why a connection failed, in a few words.
func unreachableCause(err error) string {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return "its host name could not be resolved"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return "the connection closed before the answer"
	case errors.Is(err, context.Canceled):
		return "the call was cancelled"
	}
	return "network error"
}
