package apitest_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// fakeAPI answers like the appliance on a few paths: the common headers on
// every answer but /bare's, the error envelope on errors, login and key
// creation.
func fakeAPI(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	common := func(w http.ResponseWriter, r *http.Request) {
		trace := r.Header.Get("X-Trace-Id")
		if !apitest.TraceIDPattern.MatchString(trace) {
			trace = strings.Repeat("ab", 16)
		}
		w.Header().Set("X-Trace-Id", trace)
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "99")
		w.Header().Set("X-RateLimit-Reset", "1795000000")
	}
	fail := func(w http.ResponseWriter, status int, body string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		common(w, r)
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"contentType": r.Header.Get("Content-Type"),
			"contentLength": r.ContentLength, "body": string(body)})
	})
	mux.HandleFunc("/bare", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, "not found")
	})
	mux.HandleFunc("/nulldetails", func(w http.ResponseWriter, r *http.Request) {
		common(w, r)
		fail(w, http.StatusBadRequest, `{"code":"VALIDATION_FAILED","message":"m","details":null}`)
	})
	mux.HandleFunc("POST "+apitest.EnterpriseAPI+"/auth/login", func(w http.ResponseWriter, r *http.Request) {
		common(w, r)
		var c struct{ Username, Password string }
		json.NewDecoder(r.Body).Decode(&c)
		if c.Username != "admin" || c.Password != "pw" {
			fail(w, http.StatusUnauthorized, `{"code":"UNAUTHORIZED","message":"`+apitest.MsgUnauthorized+`","details":[]}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"token":"jwt-1","expiresAt":"2026-11-20T11:00:00.000Z"}`)
	})
	mux.HandleFunc("POST "+apitest.EnterpriseAPI+"/api-keys", func(w http.ResponseWriter, r *http.Request) {
		common(w, r)
		if r.Header.Get("Authorization") != "Bearer jwt-1" || r.Header.Get("Idempotency-Key") == "" {
			fail(w, http.StatusForbidden, `{"code":"FORBIDDEN","message":"`+apitest.MsgForbidden+`","details":[{"code":"JWT_REQUIRED","field":"headers.Authorization","issue":"a login token"}]}`)
			return
		}
		var body struct {
			Environment string   `json:"environment"`
			Scopes      []string `json:"scopes"`
		}
		json.NewDecoder(r.Body).Decode(&body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"keyId":"key_1","name":"n","environment":%q,"scopes":%q,"key":"sk_test_x","createdAt":"2026-11-20T10:00:00.000Z"}`,
			body.Environment, body.Scopes)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestDo_Bodies(t *testing.T) {
	srv := fakeAPI(t)
	var got struct {
		ContentType   string `json:"contentType"`
		ContentLength int64  `json:"contentLength"`
		Body          string `json:"body"`
	}
	cases := []struct {
		name         string
		headers      map[string]string
		body         any
		ct, sent     string
		chunked      bool
		traceEchoed  bool
		wantedLength bool
	}{
		{"JSON", nil, map[string]int{"a": 1}, "application/json", `{"a":1}`, false, false, true},
		{"String", apitest.Hdr("Content-Type", "text/plain"), "raw", "text/plain", "raw", false, false, true},
		{"Reader", nil, strings.NewReader("streamed"), "application/json", "streamed", true, false, false},
		{"NoContentType", apitest.Hdr("Content-Type", "", "X-Trace-Id", "trace-1"), []byte("x"), "", "x", false, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := apitest.Do(t, "POST", srv.URL+"/echo", c.headers, c.body).WantStatus(t, http.StatusOK)
			r.Decode(t, &got)
			if got.ContentType != c.ct || got.Body != c.sent {
				t.Errorf("sent Content-Type %q, body %q; want %q, %q", got.ContentType, got.Body, c.ct, c.sent)
			}
			if chunked := got.ContentLength == -1; chunked != c.chunked {
				t.Errorf("Content-Length %d, want chunked %v", got.ContentLength, c.chunked)
			}
			if c.traceEchoed && r.Header.Get("X-Trace-Id") != "trace-1" {
				t.Errorf("X-Trace-Id %q, want trace-1", r.Header.Get("X-Trace-Id"))
			}
			if r.Request != "POST "+srv.URL+"/echo" {
				t.Errorf("Request %q", r.Request)
			}
		})
	}
}

func TestDo_ChecksCommon(t *testing.T) {
	srv := fakeAPI(t)
	errs := failures(t, func(tb testing.TB) { apitest.Do(tb, "GET", srv.URL+"/bare", nil, nil) })
	for _, want := range []string{"X-Trace-Id", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Content-Type", "not a JSON object"} {
		if !strings.Contains(strings.Join(errs, "\n"), want) {
			t.Errorf("an answer without the common headers and envelope: no report of %s in %q", want, errs)
		}
	}
	errs = failures(t, func(tb testing.TB) { apitest.Do(tb, "GET", srv.URL+"/nulldetails", nil, nil) })
	if len(errs) != 1 || !strings.Contains(errs[0], "details is not an array") {
		t.Errorf("details null: reported %q, want one report of the details", errs)
	}
	if _, err := apitest.TryDo(t, "GET", "http://127.0.0.1:1/", nil, nil); err == nil {
		t.Errorf("TryDo to a closed port: no error")
	}
}

func TestWantError(t *testing.T) {
	resp := func(status int, body string) *apitest.Response {
		return &apitest.Response{Request: "GET /x", Status: status, Header: http.Header{}, Body: []byte(body)}
	}
	r := resp(400, `{"code":"VALIDATION_FAILED","message":"m","details":[
		{"code":"REQUIRED","field":"name","issue":"is required"},{"code":"INVALID_VALUE","field":"country","issue":"not ISO"}]}`)
	e := apitest.WantError(t, r, 400, "VALIDATION_FAILED", "INVALID_VALUE", "REQUIRED")
	if d := e.Detail(t, "country"); d.Code != "INVALID_VALUE" || d.Issue != "not ISO" {
		t.Errorf("Detail(country) = %+v", d)
	}

	for _, c := range []struct {
		name   string
		r      *apitest.Response
		status int
		code   string
		codes  []string
		report string
	}{
		{"Status", r, 404, "VALIDATION_FAILED", []string{"INVALID_VALUE", "REQUIRED"}, "got status 400, want 404"},
		{"Code", r, 400, "CONFLICT", []string{"INVALID_VALUE", "REQUIRED"}, `got code "VALIDATION_FAILED", want "CONFLICT"`},
		{"DetailCodes", r, 400, "VALIDATION_FAILED", []string{"REQUIRED"}, "got detail codes"},
		{"UnknownMember", resp(400, `{"code":"X","message":"m","details":[],"extra":1}`), 400, "X", nil, "unknown field"},
		{"NoMessage", resp(409, `{"code":"X","message":"","details":[]}`), 409, "X", nil, "empty message"},
		{"NoIssue", resp(409, `{"code":"X","message":"m","details":[{"code":"Y","field":"f"}]}`), 409, "X", []string{"Y"}, "without issue"},
	} {
		t.Run(c.name, func(t *testing.T) {
			errs := failures(t, func(tb testing.TB) { apitest.WantError(tb, c.r, c.status, c.code, c.codes...) })
			if len(errs) == 0 || !strings.Contains(strings.Join(errs, "\n"), c.report) {
				t.Errorf("reported %q, want a report containing %q", errs, c.report)
			}
		})
	}
	if errs := failures(t, func(tb testing.TB) { e.Detail(tb, "nope") }); len(errs) != 1 {
		t.Errorf("Detail of a field without a detail: reported %q", errs)
	}
}

func TestWantUnauthorizedAndForbidden(t *testing.T) {
	srv := fakeAPI(t)
	loginURL := srv.URL + apitest.EnterpriseAPI + "/auth/login"
	apitest.WantUnauthorized(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{"username": "admin", "password": "no"}))
	r := apitest.Do(t, "POST", srv.URL+apitest.EnterpriseAPI+"/api-keys", apitest.WithKey("sk_test_x"), map[string]any{})
	if d := apitest.WantForbidden(t, r, "JWT_REQUIRED"); d.Field != "headers.Authorization" {
		t.Errorf("WantForbidden returned %+v, want the JWT_REQUIRED detail", d)
	}
	if errs := failures(t, func(tb testing.TB) { apitest.WantForbidden(tb, r, "SCOPE_REQUIRED") }); len(errs) != 1 {
		t.Errorf("403 with another reason: reported %q, want the detail codes", errs)
	}
	wrong := &apitest.Response{Request: "GET /x", Status: 401, Body: []byte(`{"code":"UNAUTHORIZED","message":"bad key","details":[]}`)}
	if errs := failures(t, func(tb testing.TB) { apitest.WantUnauthorized(tb, wrong) }); len(errs) != 1 || !strings.Contains(errs[0], apitest.MsgUnauthorized) {
		t.Errorf("401 with another message: reported %q", errs)
	}
	vague := &apitest.Response{Request: "GET /y", Status: 401, Body: []byte(`{"code":"UNAUTHORIZED","message":"` + apitest.MsgUnauthorized +
		`","details":[{"code":"MISSING_API_KEY","field":"headers.X-API-Key","issue":"no key"}]}`)}
	if errs := failures(t, func(tb testing.TB) { apitest.WantUnauthorized(tb, vague, "MISSING_API_KEY") }); len(errs) != 1 || !strings.Contains(errs[0], "header expected") {
		t.Errorf("401 whose detail names no header: reported %q", errs)
	}
	if errs := failures(t, func(tb testing.TB) { apitest.WantUnauthorized(tb, vague) }); len(errs) == 0 {
		t.Error("401 with a detail where none is wanted: reported nothing")
	}
}

func TestLoginAndCreateKey(t *testing.T) {
	srv := fakeAPI(t)
	jwt := apitest.Login(t, srv.URL, "admin", "pw")
	if jwt != "jwt-1" {
		t.Fatalf("Login = %q, want jwt-1", jwt)
	}
	k := apitest.CreateKey(t, srv.URL, jwt, "sandbox", "read")
	if k.KeyID != "key_1" || k.Key != "sk_test_x" || k.Environment != "sandbox" || len(k.Scopes) != 1 || k.Scopes[0] != "read" {
		t.Errorf("CreateKey = %+v", k)
	}
	if errs := failures(t, func(tb testing.TB) { apitest.Login(tb, srv.URL, "admin", "wrong") }); len(errs) != 1 {
		t.Errorf("a refused login: reported %q, want one failure", errs)
	}
	if a, b := apitest.NewIdemKey(), apitest.NewIdemKey(); a == b || !strings.HasPrefix(a, "idem-") {
		t.Errorf("NewIdemKey: %q then %q", a, b)
	}
	if s := apitest.RandBase62(32); len(s) != 32 || strings.Trim(s, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		t.Errorf("RandBase62(32) = %q", s)
	}
}

func TestParseTime(t *testing.T) {
	if got, want := apitest.ParseTime(t, "2026-11-20T10:00:00.250Z"), time.Date(2026, 11, 20, 10, 0, 0, 250e6, time.UTC); !got.Equal(want) {
		t.Errorf("ParseTime = %s, want %s", got, want)
	}
	for _, s := range []string{"2026-11-20T10:00:00Z", "2026-11-20T11:00:00.000+01:00", "yesterday"} {
		if errs := failures(t, func(tb testing.TB) { apitest.ParseTime(tb, s) }); len(errs) == 0 {
			t.Errorf("ParseTime(%q): no report", s)
		}
	}
}
