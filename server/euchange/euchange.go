// Package euchange turns the EU information system's failures into the
// API's errors, the same way for statements and simplified declarations:
// a change to a filed one (a DDS amendment, a declaration's update:
// Failed), and any call that could not be made (Unreachable) or was not
// taken for a reason trying again will not change (NotTaken).
package euchange

import (
	"errors"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euis"
)

// Change describes one kind of change for Failed.
type Change struct {
	// Noun names what was sent: "amended statement", "updated declaration".
	Noun string
	// Verb names the change in a refusal's issue: "amend", "update".
	Verb string
	// What names the change in a message: "amendment", "update".
	What string
	// NotChangeable is the 409 detail of a refusal: DDS_NOT_AMENDABLE,
	// SD_NOT_UPDATABLE; Target is its field, the path parameter
	// ("path.ddsId").
	NotChangeable, Target string
	// Field maps a field the EU system names (a fault's field, a
	// Violation's path) to the request's path.
	Field func(euField string) string
}

// Failed is the error of a change the EU system did not take (err not
// nil): 422 EU_SYSTEM_RULE for content against its rules (Violations
// found before the call, or a refusal whose errors all name fields), one
// detail each at the request's path; 409 NotChangeable for another
// refusal on its business rules or a statement it does not know; 503 for
// a failure that may go away; 422 EU_SYSTEM_NOT_CONFIGURED otherwise
// (credentials, permission, a call it does not take).
func Failed(c Change, err error) error {
	var vs euis.Violations
	var fault *euis.Fault
	switch {
	case errors.As(err, &vs):
		details := make([]apierr.Detail, len(vs))
		for i, v := range vs {
			details[i] = apierr.Detail{Code: apierr.DetailEUSystemRule, Field: c.Field(v.Path), Issue: v.Issue + " (" + v.Limit + ")"}
		}
		return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "the " + c.Noun + " breaks a rule or limit of the EU information system; nothing was changed", Details: details}
	case euis.IsTransient(err):
		return Unreachable(err, "nothing was changed")
	case errors.As(err, &fault) && fault.Rejected() && namesFields(fault):
		details := make([]apierr.Detail, len(fault.Errors))
		for i, e := range fault.Errors {
			details[i] = apierr.Detail{Code: apierr.DetailEUSystemRule, Field: c.Field(e.Field), Issue: e.ID + ": " + e.Message}
		}
		return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
			Message: "the EU system refused the " + c.Noun + "; nothing was changed", Details: details}
	case errors.As(err, &fault) && (fault.Rejected() || fault.Kind == euis.FaultNotFound):
		return apierr.Conflict(c.NotChangeable, c.Target, "the EU system refused to "+c.Verb+" it: "+fault.Message)
	}
	return NotTaken("did not take the "+c.What, "nothing was changed", err.Error())
}

// Unreachable is the 503 of a call of the EU system that failed in a way
// that may go away (it could not be reached, it timed out, it was busy):
// outcome says what the appliance did ("nothing was changed").
func Unreachable(err error, outcome string) error {
	return &apierr.Error{Status: apierr.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable,
		Message: "the EU system could not be reached; " + outcome + ", try again", RetryAfter: 30, Err: err}
}

// NotTaken is the 422 EU_SYSTEM_NOT_CONFIGURED of a call the EU system
// refused for a reason trying again will not change (credentials,
// permission, an endpoint that is not its): what says what it did ("did
// not take the withdrawal"), outcome what the appliance did, issue why.
func NotTaken(what, outcome, issue string) error {
	return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
		Message: "the EU system " + what + "; " + outcome + ": check the endpoint and credentials",
		Details: []apierr.Detail{{Code: apierr.DetailEUSystemNotConfigured, Field: "credentials", Issue: issue}}}
}

// namesFields reports whether every error of f names a field: a refusal
// of the content, not of the change itself.
func namesFields(f *euis.Fault) bool {
	for _, e := range f.Errors {
		if e.Field == "" {
			return false
		}
	}
	return len(f.Errors) > 0
}
