package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

func TestValidTraceID(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{
		{"a", true},
		{"abc-DEF_123.x", true},
		{strings.Repeat("a", 128), true},
		{"", false},
		{strings.Repeat("a", 129), false},
		{"a b", false},
		{"a/b", false},
		{"a:b", false},
		{"trace\n", false},
		{"ü", false},
	} {
		if got := validTraceID(tc.in); got != tc.want {
			t.Errorf("validTraceID(%q): got %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestApp_TraceID(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)

	t.Run("Echoed", func(t *testing.T) {
		for _, id := range []string{"abc-123", strings.Repeat("Z", 128), "a.b_c"} {
			w := ta.do("GET", "/livez", "", "X-Trace-Id", id)
			if got := w.Header().Get("X-Trace-Id"); got != id {
				t.Errorf("X-Trace-Id %q: got %q, want it echoed", id, got)
			}
		}
	})

	t.Run("ReplacedWhenInvalid", func(t *testing.T) {
		for _, id := range []string{"", "has space", strings.Repeat("a", 129), "<script>"} {
			w := ta.do("GET", "/livez", "", "X-Trace-Id", id)
			if got := w.Header().Get("X-Trace-Id"); !hex32.MatchString(got) {
				t.Errorf("X-Trace-Id %q: got %q, want a new 32-hex-char id", id, got)
			}
		}
	})

	t.Run("NewPerRequest", func(t *testing.T) {
		a := ta.do("GET", "/livez", "").Header().Get("X-Trace-Id")
		b := ta.do("GET", "/livez", "").Header().Get("X-Trace-Id")
		if a == b {
			t.Errorf("two requests without X-Trace-Id: both got %q, want different ids", a)
		}
	})

	t.Run("OnEveryResponse", func(t *testing.T) {
		for name, r := range map[string]*http.Request{
			"200":    newRequest("GET", eudrPrefix+"/health", "", "X-API-Key", key),
			"404Key": newRequest("DELETE", enterprisePrefix+"/api-keys/key_none", "", "Authorization", "Bearer "+ta.adminToken()),
			"401":    newRequest("GET", eudrPrefix+"/health", ""),
			"404":    newRequest("GET", "/nope", ""),
			"405":    newRequest("PUT", "/livez", ""),
			"400":    newRequest("POST", eudrPrefix+"/suppliers", `{}`, "X-API-Key", key),
		} {
			w := ta.serve(storage.Sandbox, r)
			if got := w.Header().Get("X-Trace-Id"); !hex32.MatchString(got) {
				t.Errorf("%s (status %d): X-Trace-Id got %q, want a 32-hex-char id", name, w.Code, got)
			}
		}
	})
}

func TestApp_RecoverPanics(t *testing.T) {
	ta := newTestApp(t)
	chain := func(h http.HandlerFunc) http.Handler {
		return ta.traceAndLog(storage.Sandbox, ta.recoverPanics(h))
	}

	t.Run("Envelope", func(t *testing.T) {
		for name, v := range map[string]any{"String": "secret panic text", "Error": io.ErrUnexpectedEOF, "Nil map": map[string]int(nil)} {
			w := serveTo(chain(func(w http.ResponseWriter, r *http.Request) {
				if m, ok := v.(map[string]int); ok {
					m["x"] = 1 // a real runtime panic
				}
				panic(v)
			}), newRequest("GET", "/", "", "X-Trace-Id", "panic-trace"))
			e := wantError(t, w, http.StatusInternalServerError, apierr.CodeInternal, "")
			if e.Message != "internal error" || len(e.Details) != 0 {
				t.Errorf("%s: got %q %+v, want \"internal error\" without details", name, e.Message, e.Details)
			}
			if got := w.Header().Get("X-Trace-Id"); got != "panic-trace" {
				t.Errorf("%s: X-Trace-Id got %q, want panic-trace", name, got)
			}
			if strings.Contains(w.Body.String(), "secret") || strings.Contains(w.Body.String(), "unexpected EOF") || strings.Contains(w.Body.String(), "nil map") {
				t.Errorf("%s: body %s, want no panic value", name, w.Body)
			}
		}
	})

	t.Run("AfterWriteNoEnvelope", func(t *testing.T) {
		w := serveTo(chain(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"partial":`))
			panic("midway")
		}), newRequest("GET", "/", ""))
		if w.Code != 200 || w.Body.String() != `{"partial":` {
			t.Errorf("panic after writing: got %d %q, want the 200 and the partial body only", w.Code, w.Body)
		}
	})

	t.Run("ErrAbortHandlerRepanics", func(t *testing.T) {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("recovered: got %v, want http.ErrAbortHandler passed on", p)
			}
		}()
		serveTo(chain(func(w http.ResponseWriter, r *http.Request) { panic(http.ErrAbortHandler) }), newRequest("GET", "/", ""))
		t.Error("ErrAbortHandler: got a response, want the panic passed on to net/http")
	})

	t.Run("ServerStaysUp", func(t *testing.T) {
		srv := httptest.NewServer(chain(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/boom" {
				panic("boom")
			}
			writeJSON(w, r, 200, map[string]string{"status": "ok"})
		}))
		defer srv.Close()
		for _, p := range []string{"/boom", "/ok", "/boom", "/ok"} {
			resp, err := http.Get(srv.URL + p)
			if err != nil {
				t.Fatalf("GET %s: %v", p, err)
			}
			resp.Body.Close()
			want := 200
			if p == "/boom" {
				want = 500
			}
			if resp.StatusCode != want {
				t.Errorf("GET %s: got %d, want %d", p, resp.StatusCode, want)
			}
		}
	})
}

func TestApp_LimitBody(t *testing.T) {
	ta := newTestApp(t, "EUDR_LIMITS_MAX_BODY_BYTES=1024")
	login := enterprisePrefix + "/auth/login"
	creds := `{"username":"admin","password":"` + testAdminPassword + `"}`

	t.Run("ContentLengthOver", func(t *testing.T) {
		body := creds + strings.Repeat(" ", 1100)
		w := ta.do("POST", login, body)
		e := wantError(t, w, http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "")
		if !strings.Contains(e.Message, "1024") {
			t.Errorf("message: got %q, want it to name 1024", e.Message)
		}
	})

	t.Run("DeclaredOverAfterAuthentication", func(t *testing.T) {
		// A declared oversize body is refused on any route before it is read,
		// but only once the caller is known: without a key it is 401 first.
		_, key := ta.newKey(storage.Sandbox)
		big := strings.Repeat("x", 1025)
		wantError(t, ta.do("POST", eudrPrefix+"/suppliers", big), http.StatusUnauthorized, apierr.CodeUnauthorized, "")
		for _, tc := range []struct{ method, path string }{{"GET", "/livez"}, {"POST", eudrPrefix + "/suppliers"}, {"GET", eudrPrefix + "/health"}} {
			w := ta.do(tc.method, tc.path, big, "Content-Type", "text/plain", "X-API-Key", key)
			wantError(t, w, http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "")
		}
	})

	t.Run("ChunkedOver", func(t *testing.T) {
		r := newRequest("POST", login, "x")
		r.Body = io.NopCloser(strings.NewReader(creds + strings.Repeat(" ", 1100)))
		r.ContentLength = -1
		wantError(t, ta.serve(storage.Sandbox, r), http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "")
	})

	t.Run("AtLimit", func(t *testing.T) {
		body := creds + strings.Repeat(" ", 1024-len(creds))
		if w := ta.do("POST", login, body); w.Code != 200 {
			t.Errorf("body of exactly 1024 bytes: got %d %s, want 200", w.Code, w.Body)
		}
		r := newRequest("POST", login, "x")
		r.Body = io.NopCloser(strings.NewReader(body))
		r.ContentLength = -1
		if w := ta.serve(storage.Sandbox, r); w.Code != 200 {
			t.Errorf("chunked body of exactly 1024 bytes: got %d %s, want 200", w.Code, w.Body)
		}
	})
}

func TestApp_Probes(t *testing.T) {
	ta := newTestApp(t)
	for _, env := range storage.Environments {
		for _, p := range []string{"/livez", "/readyz"} {
			w := ta.serve(env, newRequest("GET", p, ""))
			if w.Code != 200 || strings.TrimSpace(w.Body.String()) != `{"status":"ok"}` {
				t.Errorf("%s %s: got %d %s, want 200 {\"status\":\"ok\"}", env, p, w.Code, w.Body)
			}
		}
	}
	// A store that cannot serve reads makes the appliance unready, not dead.
	if err := ta.db.Close(); err != nil {
		t.Fatal(err)
	}
	wantError(t, ta.do("GET", "/readyz", ""), http.StatusServiceUnavailable, apierr.CodeServiceUnavailable, "")
	if w := ta.do("GET", "/livez", ""); w.Code != 200 {
		t.Errorf("/livez with the store closed: got %d, want 200", w.Code)
	}
}

func TestApp_Health(t *testing.T) {
	ta := newTestApp(t)
	_, test := ta.newKey(storage.Sandbox, "read")
	_, live := ta.newKey(storage.Production, "read")
	ta.clock.Advance(90 * time.Second)
	for _, tc := range []struct {
		env storage.Environment
		key string
	}{{storage.Sandbox, test}, {storage.Production, live}} {
		w := ta.serve(tc.env, newRequest("GET", eudrPrefix+"/health", "", "X-API-Key", tc.key))
		if w.Code != 200 {
			t.Fatalf("%s /health: got %d %s", tc.env, w.Code, w.Body)
		}
		var h healthResponse
		mustDecode(t, w, &h)
		if h.Status != "ok" || h.Environment != string(tc.env) || h.Version != "test" || h.UptimeSeconds != 90 ||
			h.Store.Status != "ok" || h.Store.SchemaVersion != storage.SchemaVersion || h.Store.SizeBytes <= 0 {
			t.Errorf("%s /health: got %+v, want ok, %s, version test, uptime 90, store ok", tc.env, h, tc.env)
		}
	}
}

// syncBuffer is a log sink safe for the request goroutines of a test server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(s.b.Bytes()))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestApp_AccessLog(t *testing.T) {
	var logs syncBuffer
	clock := newFakeClock()
	cfg := mustLoadConfig(t, t.TempDir())
	a, err := New(cfg, Options{Logger: zerolog.New(&logs), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	ta := &testApp{App: a, tb: t, clock: clock}
	k, value := ta.newKey(storage.Sandbox)
	token := ta.adminToken()
	logs.mu.Lock()
	logs.b.Reset()
	logs.mu.Unlock()

	ta.do("GET", eudrPrefix+"/suppliers/V1", "", "X-API-Key", value, "X-Trace-Id", "log-1")
	ta.do("GET", enterprisePrefix+"/api-keys", "", "Authorization", "Bearer "+token, "X-Trace-Id", "log-2")
	ta.do("GET", "/nope", "", "X-Trace-Id", "log-3")
	serveTo(ta.traceAndLog(storage.Sandbox, ta.recoverPanics(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("x") }))),
		newRequest("GET", "/", "", "X-Trace-Id", "log-4"))
	ta.do("GET", eudrPrefix+"/suppliers/V1?api_key="+value, "", "X-Trace-Id", "log-5")
	long := "/" + strings.Repeat("a", 300)
	ta.do("DELETE", eudrPrefix+"/suppliers", "", "X-API-Key", value, "X-Trace-Id", "log-6")
	ta.do("GET", long+"?api_key="+value, "", "X-Trace-Id", "log-7")
	ta.do("GET", "/no%20such/path", "", "X-Trace-Id", "log-8")

	byTrace := map[string][]map[string]any{}
	for _, l := range logs.lines(t) {
		id, _ := l["trace_id"].(string)
		byTrace[id] = append(byTrace[id], l)
	}
	request := func(id string) map[string]any {
		for _, l := range byTrace[id] {
			if l["message"] == "request" {
				return l
			}
		}
		t.Fatalf("no request log line with trace_id %s: %v", id, byTrace[id])
		return nil
	}
	for _, c := range []struct {
		trace, method, route, keyID, level, env string
		status                                  float64
		code                                    string // the envelope's code; "" for none
		path                                    string // logged when no route matched
	}{
		{"log-1", "GET", eudrPrefix + "/suppliers/:erpVendorId", k.ID, "info", "sandbox", 404, "NOT_FOUND", ""},
		{"log-2", "GET", enterprisePrefix + "/api-keys", "user:admin", "info", "sandbox", 200, "", ""},
		{"log-3", "GET", "", "", "info", "sandbox", 404, "NOT_FOUND", "/nope"},
		{"log-4", "GET", "", "", "warn", "sandbox", 500, "INTERNAL", "/"},
		{"log-5", "GET", eudrPrefix + "/suppliers/:erpVendorId", "", "info", "sandbox", 401, "UNAUTHORIZED", ""},
		{"log-6", "DELETE", "", k.ID, "info", "sandbox", 405, "METHOD_NOT_ALLOWED", eudrPrefix + "/suppliers"},
		{"log-7", "GET", "", "", "info", "sandbox", 404, "NOT_FOUND", long[:maxLoggedPath-1] + "…"},
		{"log-8", "GET", "", "", "info", "sandbox", 404, "NOT_FOUND", "/no%20such/path"},
	} {
		l := request(c.trace)
		if l["route"] != c.route || l["key_id"] != c.keyID || l["status"] != c.status || l["level"] != c.level ||
			l["environment"] != c.env || l["method"] != c.method || l["client_ip"] != "192.0.2.1" {
			t.Errorf("access log of %s: got %v, want route %q key_id %q status %v level %s", c.trace, l, c.route, c.keyID, c.status, c.level)
		}
		if code, _ := l["code"].(string); code != c.code {
			t.Errorf("access log of %s: code %q, want %q; line %v", c.trace, code, c.code, l)
		}
		if path, _ := l["path"].(string); path != c.path {
			t.Errorf("access log of %s: path %q, want %q; line %v", c.trace, path, c.path, l)
		}
	}
	panicked := false
	for _, l := range byTrace["log-4"] {
		if l["message"] == "handler panicked" && l["level"] == "error" && l["stack"] != nil {
			panicked = true
		}
	}
	if !panicked {
		t.Errorf("panic: got log lines %v, want a \"handler panicked\" error with its stack and trace_id", byTrace["log-4"])
	}
	logs.mu.Lock()
	all := logs.b.String()
	logs.mu.Unlock()
	if strings.Contains(all, value) || strings.Contains(all, value[12:]) || strings.Contains(all, token) {
		t.Error("log: got a key value or login token in the log, want neither")
	}
}
