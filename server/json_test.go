package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestWriteJSON(t *testing.T) {
	t.Run("Value", func(t *testing.T) {
		w := httptest.NewRecorder()
		writeJSON(w, httptest.NewRequest("GET", "/", nil), http.StatusCreated, map[string]any{"a": 1, "b": []string{"x"}})
		if w.Code != http.StatusCreated {
			t.Errorf("status: got %d, want 201", w.Code)
		}
		if ct := w.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type: got %q, want application/json", ct)
		}
		if want := `{"a":1,"b":["x"]}` + "\n"; w.Body.String() != want {
			t.Errorf("body: got %q, want %q", w.Body, want)
		}
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
			t.Errorf("Content-Length: got %s, want %d", cl, w.Body.Len())
		}
	})

	t.Run("UnencodableIsInternal", func(t *testing.T) {
		w := httptest.NewRecorder()
		writeJSON(w, httptest.NewRequest("GET", "/", nil), http.StatusOK, map[string]float64{"x": math.Inf(1)})
		e := wantError(t, w, http.StatusInternalServerError, apierr.CodeInternal, "")
		if len(e.Details) != 0 {
			t.Errorf("details: got %v, want []", e.Details)
		}
		if cl := w.Header().Get("Content-Length"); cl != strconv.Itoa(w.Body.Len()) {
			t.Errorf("Content-Length: got %s, want %d", cl, w.Body.Len())
		}
	})
}

func TestFormatTime(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 20, 10, 15, 30, 123456789, time.UTC), "2026-11-20T10:15:30.123Z"},
		{time.Date(2026, 11, 20, 11, 15, 30, 0, loc), "2026-11-20T10:15:30.000Z"},
	} {
		if got := storage.FormatTime(tc.in); got != tc.want {
			t.Errorf("storage.FormatTime(%v): got %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := storage.FormatTimePtr(nil); got != nil {
		t.Errorf("storage.FormatTimePtr(nil): got %q, want nil", *got)
	}
}

// decodeTarget is a request body shape for the decodeJSON tests.
type decodeTarget struct {
	Name  string   `json:"name"`
	Count int      `json:"count"`
	Tags  []string `json:"tags"`
	Inner struct {
		N int `json:"n"`
	} `json:"inner"`
}

func TestDecodeJSON(t *testing.T) {
	for _, tc := range []struct {
		name        string
		contentType string // "-" sends none
		body        string
		wantStatus  int // 0: decodes
		wantCode    string
		wantDetails []string // "code field" of each detail, in order
	}{
		{name: "Valid", body: `{"name":"a","count":2,"tags":["x"],"inner":{"n":1}}`},
		{name: "ValidWithWhitespace", body: " \n{\"name\":\"a\"}\n\n"},
		{name: "EmptyBody", body: "", wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "BlankBody", body: " \n\t", wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "Truncated", body: `{"name":`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "Syntax", body: `{name:"a"}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "TrailingValue", body: `{"name":"a"} {"name":"b"}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "TrailingGarbage", body: `{"name":"a"} x`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "TrailingBrace", body: `{"name":"a"}}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "TrailingBracket", body: `{"name":"a"}]`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"MALFORMED_JSON body"}},
		{name: "WrongType", body: `{"count":"two"}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"INVALID_VALUE count"}},
		{name: "WrongTypeNested", body: `{"inner":{"n":"x"}}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"INVALID_VALUE inner.n"}},
		{name: "WrongTypeInArray", body: `{"tags":["a",2]}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"INVALID_VALUE tags[1]"}},
		{name: "ArrayForString", body: `{"name":["a"]}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"INVALID_VALUE name"}},
		{name: "ArrayForObject", body: `[1,2]`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"INVALID_VALUE body"}},
		{name: "UnknownField", body: `{"name":"a","nmae":"b"}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"UNKNOWN_FIELD nmae"}},
		{name: "UnknownFieldsAllListed", body: `{"zeta":1,"name":"a","alpha":2,"mid":{}}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed,
			wantDetails: []string{"UNKNOWN_FIELD alpha", "UNKNOWN_FIELD mid", "UNKNOWN_FIELD zeta"}},
		{name: "MemberNameCase", body: `{"Name":"a","count":1}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"UNKNOWN_FIELD Name"}},
		{name: "UnknownBeforeWrongType", body: `{"count":"x","extra":1}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"UNKNOWN_FIELD extra", "INVALID_VALUE count"}},
		{name: "UnknownNestedField", body: `{"inner":{"n":1,"m":2}}`, wantStatus: 400, wantCode: apierr.CodeValidationFailed, wantDetails: []string{"UNKNOWN_FIELD m"}},
		{name: "TextPlain", contentType: "text/plain", body: `{"name":"a"}`, wantStatus: 415, wantCode: apierr.CodeUnsupportedMediaType,
			wantDetails: []string{"INVALID_VALUE headers.Content-Type"}},
		{name: "FormEncoded", contentType: "application/x-www-form-urlencoded", body: `name=a`, wantStatus: 415, wantCode: apierr.CodeUnsupportedMediaType,
			wantDetails: []string{"INVALID_VALUE headers.Content-Type"}},
		{name: "UnparsableContentType", contentType: "application/json;;;=", body: `{}`, wantStatus: 415, wantCode: apierr.CodeUnsupportedMediaType,
			wantDetails: []string{"INVALID_VALUE headers.Content-Type"}},
		{name: "Charset", contentType: "application/json; charset=utf-8", body: `{"name":"a"}`},
		{name: "UpperCaseMediaType", contentType: "Application/JSON", body: `{"name":"a"}`},
		{name: "NoContentType", contentType: "-", body: `{"name":"a"}`},
		{name: "TextPlainBeforeBodyCheck", contentType: "text/plain", body: ``, wantStatus: 415, wantCode: apierr.CodeUnsupportedMediaType,
			wantDetails: []string{"INVALID_VALUE headers.Content-Type"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/", strings.NewReader(tc.body))
			switch tc.contentType {
			case "":
				r.Header.Set("Content-Type", "application/json")
			case "-":
			default:
				r.Header.Set("Content-Type", tc.contentType)
			}
			var v decodeTarget
			err := decodeAll(r, &v)
			if tc.wantStatus == 0 {
				if err != nil {
					t.Fatalf("decodeJSON(%s): got %v, want nil", tc.body, err)
				}
				return
			}
			var e *apierr.Error
			if !errors.As(err, &e) {
				t.Fatalf("decodeJSON(%s): got %v, want *apierr.Error %d", tc.body, err, tc.wantStatus)
			}
			if e.Status != tc.wantStatus || e.Code != tc.wantCode {
				t.Errorf("decodeJSON(%s): got %d %s, want %d %s", tc.body, e.Status, e.Code, tc.wantStatus, tc.wantCode)
			}
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Code+" "+d.Field)
				if d.Issue == "" {
					t.Errorf("detail %s %s: got an empty issue", d.Code, d.Field)
				}
			}
			if strings.Join(got, ", ") != strings.Join(tc.wantDetails, ", ") {
				t.Errorf("details of %s: got %q, want %q", tc.body, got, tc.wantDetails)
			}
		})
	}

	t.Run("FractionForInteger", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"count":1.5}`))
		e := apierr.From(decodeAll(r, &decodeTarget{}))
		if len(e.Details) != 1 || e.Details[0].Code != apierr.DetailInvalidValue || e.Details[0].Field != "count" {
			t.Fatalf("details: got %+v, want INVALID_VALUE count", e.Details)
		}
		if !strings.Contains(e.Details[0].Issue, "integer") {
			t.Errorf("issue %q: want it to ask for an integer", e.Details[0].Issue)
		}
	})

	t.Run("DecodedValues", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{"name":"a","count":2,"tags":["x","y"],"inner":{"n":7}}`))
		var v decodeTarget
		if err := decodeAll(r, &v); err != nil {
			t.Fatal(err)
		}
		if v.Name != "a" || v.Count != 2 || strings.Join(v.Tags, ",") != "x,y" || v.Inner.N != 7 {
			t.Errorf("decoded: got %+v, want name a, count 2, tags x,y, inner.n 7", v)
		}
	})

	t.Run("OtherMediaTypes", func(t *testing.T) {
		for ct, wantOK := range map[string]bool{
			"application/geo+json": true,
			"application/json":     true,
			"text/json":            false,
		} {
			r := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
			r.Header.Set("Content-Type", ct)
			var v decodeTarget
			err := decodeAll(r, &v, "application/json", "application/geo+json")
			if (err == nil) != wantOK {
				t.Errorf("decodeJSON with %s allowing json and geo+json: got %v, want ok=%v", ct, err, wantOK)
			}
			if err != nil && apierr.From(err).Status != http.StatusUnsupportedMediaType {
				t.Errorf("decodeJSON with %s: got status %d, want 415", ct, apierr.From(err).Status)
			}
		}
		r := httptest.NewRequest("POST", "/", strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/geo+json")
		if err := decodeAll(r, &decodeTarget{}); apierr.From(err).Status != http.StatusUnsupportedMediaType {
			t.Errorf("decodeJSON with geo+json and no media types given: got %v, want 415 (only application/json)", err)
		}
	})

	t.Run("TooLarge", func(t *testing.T) {
		w := httptest.NewRecorder()
		body := `{"name":"` + strings.Repeat("a", 100) + `"}`
		r := httptest.NewRequest("POST", "/", strings.NewReader(body))
		r.Body = http.MaxBytesReader(w, r.Body, 50)
		var v decodeTarget
		err := decodeAll(r, &v)
		e := apierr.From(err)
		if e.Status != http.StatusRequestEntityTooLarge || e.Code != apierr.CodePayloadTooLarge {
			t.Fatalf("decodeJSON of %d bytes with a 50-byte limit: got %d %s, want 413 %s", len(body), e.Status, e.Code, apierr.CodePayloadTooLarge)
		}
		if !strings.Contains(e.Message, "50") {
			t.Errorf("message: got %q, want it to name the limit 50", e.Message)
		}
	})

	t.Run("ReadFailure", func(t *testing.T) {
		r := httptest.NewRequest("POST", "/", errReader{})
		err := decodeAll(r, &decodeTarget{})
		e := apierr.From(err)
		if e.Status != http.StatusBadRequest || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailMalformedJSON {
			t.Errorf("decodeJSON of an unreadable body: got %d %+v, want 400 with one MALFORMED_JSON detail", e.Status, e.Details)
		}
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestAsError(t *testing.T) {
	own := &apierr.Error{Status: http.StatusConflict, Code: apierr.CodeConflict, Message: "taken"}
	for _, tc := range []struct {
		name       string
		err        error
		wantStatus int
		wantCode   string
	}{
		{"ErrNotFound", storage.ErrNotFound, 404, apierr.CodeNotFound},
		{"WrappedErrNotFound", fmt.Errorf("find batch bat_1: %w", storage.ErrNotFound), 404, apierr.CodeNotFound},
		{"Error", own, 409, apierr.CodeConflict},
		{"WrappedError", fmt.Errorf("link: %w", own), 409, apierr.CodeConflict},
		{"apierr.Problems", apierr.Problems{{Code: apierr.DetailRequired, Field: "name", Issue: "is required"}}.Err(), 400, apierr.CodeValidationFailed},
		{"PlainError", errors.New("open /var/lib/eudr/eudr.db: disk on fire"), 500, apierr.CodeInternal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := apierr.From(tc.err)
			if e.Status != tc.wantStatus || e.Code != tc.wantCode {
				t.Errorf("apierr.From(%v): got %d %s, want %d %s", tc.err, e.Status, e.Code, tc.wantStatus, tc.wantCode)
			}
		})
	}

	t.Run("PassesErrorThrough", func(t *testing.T) {
		if got := apierr.From(fmt.Errorf("x: %w", own)); got != own {
			t.Errorf("apierr.From(wrapped *apierr.Error): got %p, want the same *apierr.Error %p", got, own)
		}
	})

	t.Run("InternalKeepsCause", func(t *testing.T) {
		cause := errors.New("disk on fire")
		if e := apierr.From(cause); !errors.Is(e, cause) {
			t.Errorf("apierr.From(plain).Err: got %v, want the cause kept for the log", e.Err)
		}
	})
}

func TestWriteError(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)

	t.Run("InternalDoesNotLeak", func(t *testing.T) {
		w := httptest.NewRecorder()
		writeError(w, r, fmt.Errorf("query: %w", errors.New("secret-table-name exploded")))
		e := wantError(t, w, 500, apierr.CodeInternal, "")
		if e.Message != "internal error" {
			t.Errorf("message: got %q, want %q", e.Message, "internal error")
		}
		if strings.Contains(w.Body.String(), "secret-table-name") || strings.Contains(w.Body.String(), "query") {
			t.Errorf("body: got %s, want no trace of the internal error", w.Body)
		}
	})

	t.Run("NotFound", func(t *testing.T) {
		w := httptest.NewRecorder()
		writeError(w, r, storage.ErrNotFound)
		wantError(t, w, 404, apierr.CodeNotFound, "")
	})

	t.Run("DetailsEmptyArrayNotNull", func(t *testing.T) {
		for _, err := range []error{apierr.Unauthorized(), storage.ErrNotFound, errors.New("x"), &apierr.Error{Status: 409, Code: apierr.CodeConflict, Message: "m", Details: nil}} {
			w := httptest.NewRecorder()
			writeError(w, r, err)
			if !bytes.Contains(w.Body.Bytes(), []byte(`"details":[]`)) {
				t.Errorf("writeError(%v): got body %s, want \"details\":[]", err, w.Body)
			}
			if bytes.Contains(w.Body.Bytes(), []byte("null")) {
				t.Errorf("writeError(%v): got body %s, want no null", err, w.Body)
			}
		}
	})

	t.Run("DetailsListed", func(t *testing.T) {
		w := httptest.NewRecorder()
		var p apierr.Problems
		p.Add(apierr.DetailRequired, "name", "is required")
		p.Add(apierr.DetailInvalidValue, "features[3].geometry.coordinates[0]", "ring not closed")
		writeError(w, r, p.Err())
		e := wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailRequired)
		if len(e.Details) != 2 || e.Details[1] != (apierr.Detail{Code: apierr.DetailInvalidValue, Field: "features[3].geometry.coordinates[0]", Issue: "ring not closed"}) {
			t.Errorf("details: got %+v, want both problems in order", e.Details)
		}
		if e.Message != "request validation failed" {
			t.Errorf("message of two problems: got %q, want %q", e.Message, "request validation failed")
		}
	})

	t.Run("RetryAfter", func(t *testing.T) {
		w := httptest.NewRecorder()
		writeError(w, r, &apierr.Error{Status: 429, Code: apierr.CodeRateLimitExceeded, Message: "slow down", RetryAfter: 3})
		if got := w.Header().Get("Retry-After"); got != "3" {
			t.Errorf("Retry-After: got %q, want 3", got)
		}
		w = httptest.NewRecorder()
		writeError(w, r, apierr.Unauthorized())
		if got := w.Header().Get("Retry-After"); got != "" {
			t.Errorf("Retry-After without RetryAfter: got %q, want none", got)
		}
	})
}

func TestProblems_Err(t *testing.T) {
	var p apierr.Problems
	if err := p.Err(); err != nil {
		t.Errorf("apierr.Problems{}.Err(): got %v, want nil", err)
	}
	p.Add(apierr.DetailRequired, "name", "is required")
	e := apierr.From(p.Err())
	if e.Status != 400 || e.Code != apierr.CodeValidationFailed || e.Message != "is required" {
		t.Errorf("one problem: got %d %s %q, want 400 VALIDATION_FAILED with the issue as message", e.Status, e.Code, e.Message)
	}
}

func TestError_Error(t *testing.T) {
	cause := errors.New("boom")
	e := &apierr.Error{Code: apierr.CodeInternal, Message: "internal error", Err: cause}
	if !errors.Is(e, cause) {
		t.Error("errors.Is(Error, cause): got false, want true (Unwrap)")
	}
	if got, want := e.Error(), "INTERNAL: internal error: boom"; got != want {
		t.Errorf("Error(): got %q, want %q", got, want)
	}
	if got, want := apierr.Unauthorized().Error(), "UNAUTHORIZED: Missing or invalid API key"; got != want {
		t.Errorf("Error(): got %q, want %q", got, want)
	}
}

func TestApp_Router(t *testing.T) {
	ta := newTestApp(t)

	t.Run("NotFound", func(t *testing.T) {
		for _, path := range []string{"/nope", "/livez/", "/LIVEZ", eudrPrefix + "/unknown", "/api/v1/enterprise/eudr/suppliers/a/b"} {
			w := ta.do("GET", path, "")
			e := wantError(t, w, http.StatusNotFound, apierr.CodeNotFound, "")
			if len(e.Details) != 0 {
				t.Errorf("GET %s: details got %v, want []", path, e.Details)
			}
			if w.Header().Get("X-Trace-Id") == "" {
				t.Errorf("GET %s: got no X-Trace-Id", path)
			}
		}
	})

	t.Run("MethodNotAllowed", func(t *testing.T) {
		for _, tc := range []struct {
			method, path string
			wantAllow    []string
		}{
			{"DELETE", "/livez", []string{"GET"}},
			{"POST", "/readyz", []string{"GET"}},
			{"PUT", eudrPrefix + "/suppliers", []string{"GET", "POST"}},
			{"PATCH", enterprisePrefix + "/api-keys/key_1", []string{"DELETE"}},
		} {
			w := ta.do(tc.method, tc.path, "")
			wantError(t, w, http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "")
			allow := w.Header().Get("Allow")
			for _, m := range tc.wantAllow {
				if !strings.Contains(allow, m) {
					t.Errorf("%s %s: Allow got %q, want it to list %s", tc.method, tc.path, allow, m)
				}
			}
		}
	})

	t.Run("AllowListsOnlyServedMethods", func(t *testing.T) {
		_, key := ta.newKey(storage.Sandbox)
		for _, path := range []string{"/livez", eudrPrefix + "/suppliers", eudrPrefix + "/suppliers/V1", enterprisePrefix + "/api-keys/key_1"} {
			w := ta.do("PATCH", path, "")
			wantError(t, w, http.StatusMethodNotAllowed, apierr.CodeMethodNotAllowed, "")
			allow := w.Header().Get("Allow")
			if allow == "" {
				t.Errorf("PATCH %s: got no Allow header", path)
			}
			for _, m := range strings.Split(allow, ", ") {
				w := ta.do(m, path, "", "X-API-Key", key)
				if w.Code == http.StatusMethodNotAllowed {
					t.Errorf("%s %s: got 405, want it served (it is in Allow %q)", m, path, allow)
				}
			}
		}
	})

	t.Run("HeadLikeGet", func(t *testing.T) {
		_, read := ta.newKey(storage.Sandbox, "read")
		for _, path := range []string{"/livez", eudrPrefix + "/health", eudrPrefix + "/suppliers"} {
			w := ta.do("HEAD", path, "", "X-API-Key", read)
			if w.Code != 200 {
				t.Errorf("HEAD %s with a read-only key: got %d %s, want 200", path, w.Code, w.Body)
			}
		}
		wantError(t, ta.do("HEAD", eudrPrefix+"/health", ""), http.StatusUnauthorized, apierr.CodeUnauthorized, "")
	})
}

func TestError_JSON(t *testing.T) {
	b, err := json.Marshal(apierr.Detail{Code: "C", Field: "f", Issue: "i"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"code":"C","field":"f","issue":"i"}`; string(b) != want {
		t.Errorf("apierr.Detail JSON: got %s, want %s", b, want)
	}
	b, _ = json.Marshal(&apierr.Error{Status: 400, Code: "C", Message: "m", Details: []apierr.Detail{}, Err: errors.New("hidden"), RetryAfter: 4})
	if want := `{"code":"C","message":"m","details":[]}`; string(b) != want {
		t.Errorf("Error JSON: got %s, want %s", b, want)
	}
}

// decodeAll is decodeJSON with its member problems answered as one error,
// as handlers do with apierr.Merge.
func decodeAll(r *http.Request, v any, mediaTypes ...string) error {
	probs, err := decodeJSON(r, v, mediaTypes...)
	return apierr.Merge(probs, err)
}
