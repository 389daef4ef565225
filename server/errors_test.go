package server

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eudr/eudr/geo"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// An error answer repeats what it must of the request (a member's name, a
// value, an ID), but never more than a bounded part of it: a 10 MB member
// name is not sent back whole, whatever the endpoint.
func TestApp_ErrorsBoundEchoes(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	huge := strings.Repeat("é", 5<<20) // 10 MB, two bytes a character
	hugeNumber := "1" + strings.Repeat("0", 1<<20)
	for _, tc := range []struct {
		name, method, path, body string
		status                   int
		echoed                   bool // the answer quotes the long input (cut)
	}{
		{"UnknownMember", "POST", "/webhooks", `{"targetUrl":"https://hooks.example.com/x","eventTypes":["job.failed"],"` + huge + `":1}`, 400, true},
		{"NestedUnknownMember", "POST", "/batches", `{"quantity":{"` + huge + `":1}}`, 400, true},
		{"QuotedValue", "POST", "/webhooks", `{"targetUrl":"https://hooks.example.com/x","eventTypes":["` + huge + `"]}`, 400, true},
		{"PathID", "GET", "/polygons/" + strings.Repeat("p", 1<<20), "", 404, true},
		// Not quoted today; bounded all the same.
		{"WrongTypeValue", "POST", "/suppliers", `{"erpVendorId":` + hugeNumber + `}`, 400, false},
		{"QueryValue", "GET", "/webhooks/dlq?eventType=" + strings.Repeat("q", 1<<20) + "&" + huge + "=1", "", 400, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ta.do(tc.method, eudrPrefix+tc.path, tc.body, "X-API-Key", key, "Idempotency-Key", "echo-"+tc.name)
			if w.Body.Len() > 16<<10 {
				t.Fatalf("%s %s: answer of %d bytes (%.200s...), want a bounded one", tc.method, tc.name, w.Body.Len(), w.Body)
			}
			e := wantError(t, w, tc.status, map[int]string{400: apierr.CodeValidationFailed, 404: apierr.CodeNotFound}[tc.status], "")
			texts := []string{e.Message}
			for _, d := range e.Details {
				if n := utf8.RuneCountInString(d.Field); n > maxEchoedField {
					t.Errorf("field of %d characters, want at most %d", n, maxEchoedField)
				}
				texts = append(texts, d.Field, d.Issue)
			}
			for _, s := range texts {
				if n := utf8.RuneCountInString(s); n > maxEchoedText {
					t.Errorf("message or issue of %d characters, want at most %d", n, maxEchoedText)
				}
				if !utf8.ValidString(s) {
					t.Errorf("%.100q: invalid UTF-8", s)
				}
			}
			if tc.echoed && !strings.Contains(w.Body.String(), "…") {
				t.Errorf("answer %.300s: want what was cut to end in …", w.Body)
			}
		})
	}

	// The unknown members are all named up to a bound, then counted.
	var b strings.Builder
	b.WriteString(`{"targetUrl":"https://hooks.example.com/x","eventTypes":["job.failed"]`)
	for i := range 5000 {
		fmt.Fprintf(&b, `,"m%04d":0`, i)
	}
	b.WriteString("}")
	w := ta.do("POST", eudrPrefix+"/webhooks", b.String(), "X-API-Key", key, "Idempotency-Key", "echo-many")
	e := wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailUnknownField)
	if n := len(e.Details); n != apierr.MaxUnknownFields+1 || e.Details[n-1].Code != geo.CodeTooManyProblems ||
		!strings.Contains(e.Details[n-1].Issue, "4000 more unknown fields") {
		t.Errorf("5,000 unknown members: %d details, last %+v; want %d named and one counting the rest",
			n, e.Details[len(e.Details)-1], apierr.MaxUnknownFields)
	}
}
