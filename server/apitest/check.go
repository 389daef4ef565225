package apitest

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	// TraceIDPattern is an X-Trace-Id the API echoes when a request sends it.
	TraceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	// NewTraceIDPattern is the X-Trace-Id the API makes when the request
	// sends none, or one that TraceIDPattern does not match.
	NewTraceIDPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

	apiTimePattern = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)
)

// CheckCommon checks what every response must carry (docs/api.md):
// X-Trace-Id (the one req sent when valid, else 32 hex characters), the
// three X-RateLimit-* headers as integers, and for every status from 300 on
// but 304 (which has no body) a JSON error envelope with a string code and
// message and a details array (never null). It reports with t.Errorf only.
func (r *Response) CheckCommon(t testing.TB, req *http.Request) {
	t.Helper()
	got := r.Header.Get("X-Trace-Id")
	if sent := req.Header.Get("X-Trace-Id"); TraceIDPattern.MatchString(sent) {
		if got != sent {
			t.Errorf("%s: X-Trace-Id %q, want the request's %q echoed", r.Request, got, sent)
		}
	} else if !NewTraceIDPattern.MatchString(got) {
		t.Errorf("%s: X-Trace-Id %q, want 32 hex characters", r.Request, got)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if _, err := strconv.ParseInt(r.Header.Get(h), 10, 64); err != nil {
			t.Errorf("%s (status %d): header %s = %q, want an integer", r.Request, r.Status, h, r.Header.Get(h))
		}
	}
	if r.Status >= 300 && r.Status != http.StatusNotModified {
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: status %d with Content-Type %q, want application/json", r.Request, r.Status, ct)
		}
		var env map[string]any
		if err := json.Unmarshal(r.Body, &env); err != nil {
			t.Errorf("%s: status %d body is not a JSON object: %v: %s", r.Request, r.Status, err, r.Body)
			return
		}
		if _, ok := env["code"].(string); !ok {
			t.Errorf("%s: error body without code: %s", r.Request, r.Body)
		}
		if _, ok := env["message"].(string); !ok {
			t.Errorf("%s: error body without message: %s", r.Request, r.Body)
		}
		if _, ok := env["details"].([]any); !ok {
			t.Errorf("%s: error body details is not an array: %s", r.Request, r.Body)
		}
	}
}

// Decode decodes the body into v, or fails t.
func (r *Response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s: decode body (status %d): %v: %s", r.Request, r.Status, err, r.Body)
	}
}

// Object is the body as a JSON object, or fails t.
func (r *Response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	if m == nil {
		t.Fatalf("%s: body is not a JSON object: %s", r.Request, r.Body)
	}
	return m
}

// Array is the body as a JSON array of objects, or fails t.
func (r *Response) Array(t testing.TB) []map[string]any {
	t.Helper()
	var a []map[string]any
	r.Decode(t, &a)
	if a == nil {
		t.Fatalf("%s: body is not a JSON array: %s", r.Request, r.Body)
	}
	return a
}

// WantStatus fails t unless the status is want, and returns r.
func (r *Response) WantStatus(t testing.TB, want int) *Response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: got status %d, want %d; body: %s", r.Request, r.Status, want, r.Body)
	}
	return r
}

// APIError is the error envelope.
type APIError struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Details []APIDetail `json:"details"`
}

// APIDetail is one item of an error envelope's details.
type APIDetail struct {
	Code  string `json:"code"`
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// Detail returns the detail about field, or fails t.
func (e APIError) Detail(t testing.TB, field string) APIDetail {
	t.Helper()
	for _, d := range e.Details {
		if d.Field == field {
			return d
		}
	}
	t.Fatalf("no detail for field %q in %+v", field, e.Details)
	return APIDetail{}
}

// WantError checks status, the envelope's top-level code and its detail
// codes in any order (none: details must be empty), that the envelope has no
// other members, a message and an issue in every detail, and returns the
// envelope.
func WantError(t testing.TB, r *Response, status int, code string, detailCodes ...string) APIError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: got status %d, want %d; body: %s", r.Request, r.Status, status, r.Body)
	}
	var e APIError
	dec := json.NewDecoder(bytes.NewReader(r.Body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		t.Fatalf("%s: error envelope: %v: %s", r.Request, err, r.Body)
	}
	if e.Code != code {
		t.Errorf("%s: got code %q, want %q; body: %s", r.Request, e.Code, code, r.Body)
	}
	if e.Message == "" {
		t.Errorf("%s: empty message; body: %s", r.Request, r.Body)
	}
	var got []string
	for _, d := range e.Details {
		got = append(got, d.Code)
		if d.Issue == "" {
			t.Errorf("%s: detail %q without issue", r.Request, d.Code)
		}
	}
	want := slices.Clone(detailCodes)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s: got detail codes %q, want %q; body: %s", r.Request, got, detailCodes, r.Body)
	}
	return e
}

// The fixed messages every 401 and 403 carry.
const (
	MsgUnauthorized = "Missing or invalid API key"
	MsgForbidden    = "API key does not have the required scope"
)

// WantUnauthorized checks a 401: UNAUTHORIZED, the fixed message, and
// exactly the detail codes given: none for a credential refused as
// unknown, revoked or expired; MISSING_API_KEY, MALFORMED_API_KEY or
// MISSING_LOGIN_TOKEN for a missing or malformed one, whose issue names
// the header expected.
func WantUnauthorized(t testing.TB, r *Response, detailCodes ...string) {
	t.Helper()
	e := WantError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", detailCodes...)
	if e.Message != MsgUnauthorized {
		t.Errorf("%s: got message %q, want %q", r.Request, e.Message, MsgUnauthorized)
	}
	if len(detailCodes) == 0 && !bytes.Contains(r.Body, []byte(`"details":[]`)) {
		t.Errorf("%s: 401 details must be [], body: %s", r.Request, r.Body)
	}
	for _, d := range e.Details {
		if !strings.Contains(d.Issue, "X-API-Key header") && !strings.Contains(d.Issue, "Authorization: Bearer") {
			t.Errorf("%s: 401 detail %+v does not name the header expected", r.Request, d)
		}
	}
}

// WantLoginFailed checks the 401 of a failed login: the fixed message every
// 401 carries, and one detail INVALID_CREDENTIALS saying the username or
// password is wrong.
func WantLoginFailed(t testing.TB, r *Response) {
	t.Helper()
	e := WantError(t, r, http.StatusUnauthorized, "UNAUTHORIZED", "INVALID_CREDENTIALS")
	if e.Message != MsgUnauthorized {
		t.Errorf("%s: got message %q, want %q", r.Request, e.Message, MsgUnauthorized)
	}
	if len(e.Details) == 1 && (e.Details[0].Field != "body" || e.Details[0].Issue != "the username or password is wrong") {
		t.Errorf("%s: detail %+v, want field body saying the username or password is wrong", r.Request, e.Details[0])
	}
}

// WantForbidden checks a 403 (FORBIDDEN, its fixed message) with reason as
// the one detail, and returns that detail.
func WantForbidden(t testing.TB, r *Response, reason string) APIDetail {
	t.Helper()
	e := WantError(t, r, http.StatusForbidden, "FORBIDDEN", reason)
	if e.Message != MsgForbidden {
		t.Errorf("%s: got message %q, want %q", r.Request, e.Message, MsgForbidden)
	}
	if len(e.Details) == 0 {
		return APIDetail{}
	}
	return e.Details[0]
}

// ParseTime parses one of the API's times: RFC 3339 in UTC with
// milliseconds. Another form is an error of t; an unparsable one fails t.
func ParseTime(t testing.TB, s string) time.Time {
	t.Helper()
	if !apiTimePattern.MatchString(s) {
		t.Errorf("time %q is not RFC 3339 UTC with milliseconds", s)
	}
	tm, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatalf("parse time %q: %v", s, err)
	}
	return tm
}
