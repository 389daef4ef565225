package euchange_test

import (
	"errors"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/euchange"
	"github.com/eudr/eudr/server/euis"
)

var change = euchange.Change{Noun: "changed thing", Verb: "change", What: "change", NotChangeable: "THING_NOT_CHANGEABLE",
	Target: "path.id", Field: func(f string) string { return "body." + f }}

// TestFailed: each failure of a change is sorted into the API's error, a
// field the EU system names mapped to the request's path.
func TestFailed(t *testing.T) {
	rules := &euis.Fault{Kind: euis.FaultBusinessRules, Message: "no", Errors: []euis.FaultError{{ID: "E1", Message: "bad", Field: "a"}, {ID: "E2", Field: "b"}}}
	partly := &euis.Fault{Kind: euis.FaultBusinessRules, Message: "grouped", Errors: []euis.FaultError{{ID: "E1", Field: "a"}, {ID: "E2"}}}
	for name, tc := range map[string]struct {
		err            error
		status         int
		detail, fields string
	}{
		"violations":   {euis.Violations{{Path: "x[0].y", Limit: "at most 1", Issue: "2"}}, 422, apierr.DetailEUSystemRule, "body.x[0].y"},
		"fields":       {rules, 422, apierr.DetailEUSystemRule, "body.a body.b"},
		"not all":      {partly, 409, "THING_NOT_CHANGEABLE", "path.id"},
		"not found":    {&euis.Fault{Kind: euis.FaultNotFound}, 409, "THING_NOT_CHANGEABLE", "path.id"},
		"transient":    {&euis.HTTPError{StatusCode: 503}, 503, "", ""},
		"credentials":  {&euis.Fault{Kind: euis.FaultAuthentication}, 422, apierr.DetailEUSystemNotConfigured, "credentials"},
		"unclassified": {errors.New("tls"), 422, apierr.DetailEUSystemNotConfigured, "credentials"},
	} {
		t.Run(name, func(t *testing.T) {
			e := apierr.From(euchange.Failed(change, tc.err))
			fields := ""
			for i, d := range e.Details {
				if d.Code != tc.detail {
					t.Errorf("detail %s, want %s", d.Code, tc.detail)
				}
				if i > 0 {
					fields += " "
				}
				fields += d.Field
			}
			if e.Status != tc.status || fields != tc.fields {
				t.Errorf("%d at %q, want %d at %q", e.Status, fields, tc.status, tc.fields)
			}
		})
	}
}
