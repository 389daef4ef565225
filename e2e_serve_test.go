package main_test

// End-to-end tests of `eudr serve` itself: startup, the probes and
// /health on both listeners, a new data dir made private with a generated
// admin password, a shutdown that finishes the requests in flight and
// loses nothing, a second serve refused on a data dir in use, and the JSON
// log lines of requests and of the shutdown.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func TestServe_StartupAndProbes(t *testing.T) {
	t.Parallel()
	p := startServer(t)

	for _, env := range []string{production, sandbox} {
		base := p.URL(env)
		for _, path := range []string{"/livez", "/readyz"} {
			r := apitest.Do(t, "GET", base+path, nil, nil).WantStatus(t, http.StatusOK)
			if got := strings.TrimSpace(string(r.Body)); got != `{"status":"ok"}` {
				t.Errorf("%s: got body %s, want {\"status\":\"ok\"}", r.Request, got)
			}
		}
		r := apitest.Do(t, "GET", base+"/api/v1/openapi.json", nil, nil).WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q, want application/json", r.Request, ct)
		}
		if got := r.Object(t)["openapi"]; got != "3.1.0" {
			t.Errorf("%s: openapi = %v, want 3.1.0", r.Request, got)
		}
		// /health needs a key, unlike the probes.
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", base+eudrAPI+"/health", nil, nil), "MISSING_API_KEY")
	}

	for _, env := range []string{sandbox, production} {
		k := p.CreateKey(t, env)
		r := apitest.Do(t, "GET", p.URL(env)+eudrAPI+"/health", apitest.WithKey(k.Key), nil).WantStatus(t, http.StatusOK)
		var h struct {
			Status        string   `json:"status"`
			Environment   string   `json:"environment"`
			Version       string   `json:"version"`
			UptimeSeconds *float64 `json:"uptimeSeconds"`
			Store         struct {
				Status        string   `json:"status"`
				SchemaVersion *float64 `json:"schemaVersion"`
			} `json:"store"`
		}
		r.Decode(t, &h)
		if h.Environment != env {
			t.Errorf("%s: environment %q, want %q", r.Request, h.Environment, env)
		}
		if h.Version != testVersion {
			t.Errorf("%s: version %q, want %q (the -X main.version of the build)", r.Request, h.Version, testVersion)
		}
		if h.UptimeSeconds == nil || *h.UptimeSeconds < 0 || *h.UptimeSeconds > 600 || *h.UptimeSeconds != float64(int64(*h.UptimeSeconds)) {
			t.Errorf("%s: uptimeSeconds %v, want a small whole number", r.Request, h.UptimeSeconds)
		}
		if h.Store.Status != "ok" {
			t.Errorf("%s: store.status %q, want ok", r.Request, h.Store.Status)
		}
		if h.Store.SchemaVersion == nil || *h.Store.SchemaVersion != 1 {
			t.Errorf("%s: store.schemaVersion %v, want 1", r.Request, h.Store.SchemaVersion)
		}
	}
}

func TestServe_ShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	idem := apitest.NewIdemKey()

	// A slow upload: the handler is reading the body when SIGTERM comes.
	pr, pw := io.Pipe()
	type result struct {
		r   *apitest.Response
		err error
	}
	res := make(chan result, 1)
	go func() {
		r, err := apitest.TryDo(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Idempotency-Key", idem)), pr)
		res <- result{r, err}
	}()
	// More than the client's write buffer, so the request is on the wire.
	if _, err := io.WriteString(pw, `{"erpVendorId":"slow-1",`+strings.Repeat(" ", 16<<10)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.LogText(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatal("no \"shutting down\" log line within 5s of SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Exited() {
		t.Fatal("exited with a request in flight")
	}
	// New connections are refused while the in-flight request finishes
	// (the listeners close right after the log line).
	time.Sleep(100 * time.Millisecond)
	if _, err := apitest.TryDo(t, "GET", p.SandboxURL+"/livez", nil, nil); err == nil {
		t.Errorf("a new request was accepted after SIGTERM")
	}
	io.WriteString(pw, `"euOperatorUuid":"3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f","name":"Slow Ltd","country":"GH"}`)
	pw.Close()
	r := <-res
	if r.err != nil {
		t.Fatalf("in-flight request cut off by shutdown: %v", r.err)
	}
	r.r.WantStatus(t, http.StatusOK)
	if code, ok := p.Wait(stopTimeout); !ok || code != 0 {
		t.Fatalf("after SIGTERM: exited %v with code %d, want 0", ok, code)
	}
	// Nothing accepted is lost.
	p = p.Restart(t)
	var got supplier
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/slow-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
	if !bytes.Contains(r.r.Body, []byte(got.SupplierID)) {
		t.Errorf("stored %+v, answered %s", got, r.r.Body)
	}
	replay := postSupplier(t, p.SandboxURL, sk.Key, idem, `{"erpVendorId":"slow-1",`+strings.Repeat(" ", 16<<10)+
		`"euOperatorUuid":"3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f","name":"Slow Ltd","country":"GH"}`).WantStatus(t, http.StatusOK)
	if replay.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.Body, r.r.Body) {
		t.Errorf("replay after restart: %q %s, want %s", replay.Header.Get("Idempotent-Replayed"), replay.Body, r.r.Body)
	}
}

func TestAdmin_GeneratedPassword(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	// A data dir that does not exist yet is created, private.
	p := startServerIn(t, filepath.Join(tempDataDir(t), "new", "data"), "EUDR_ADMIN_PASSWORD=")
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{p.DataDir, 0o700}, {filepath.Join(p.DataDir, "eudr.db"), 0o600}, {filepath.Join(p.DataDir, "eudr.sock"), 0o600}} {
		if fi, err := os.Stat(c.path); err != nil {
			t.Errorf("%v", err)
		} else if fi.Mode().Perm() != c.mode {
			t.Errorf("%s has mode %o, want %o", c.path, fi.Mode().Perm(), c.mode)
		}
	}
	path := filepath.Join(p.DataDir, "initial-admin-password")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no generated password file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o, want 0600", path, fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	password := strings.TrimSpace(string(data))
	if len(password) < 16 {
		t.Fatalf("generated password %q is too short", password)
	}
	token := apitest.Login(t, p.SandboxURL, "admin", password)
	apitest.CreateKey(t, p.SandboxURL, token, sandbox)
	apitest.WantLoginFailed(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": testAdminPassword}))
	logged := false
	for _, l := range p.Logs() {
		if l["password_file"] == path {
			logged = true
		}
	}
	if !logged {
		t.Errorf("the password file's path %s is not logged", path)
	}

	// A restart keeps the admin: the file is not rewritten and the password still works.
	p.Stop(t)
	p2 := p.Restart(t)
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, data) {
		t.Errorf("restart rewrote %s", path)
	}
	apitest.Login(t, p2.SandboxURL, "admin", password)
	p2.Stop(t)
	assertLogHasNoSecrets(t, p, password)
	assertLogHasNoSecrets(t, p2, password)

	// EUDR_ADMIN_PASSWORD only applies to an empty store, and says so.
	p3 := startServerIn(t, p.DataDir, "EUDR_ADMIN_PASSWORD=another-password-123")
	apitest.Login(t, p3.SandboxURL, "admin", password)
	apitest.WantLoginFailed(t, apitest.Do(t, "POST", p3.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": "another-password-123"}))
	warned := false
	for _, l := range p3.Logs() {
		if msg, _ := l["message"].(string); l["level"] == "warn" && strings.Contains(msg, "EUDR_ADMIN_PASSWORD") && strings.Contains(msg, "ignored") {
			warned = true
		}
	}
	if !warned {
		t.Errorf("EUDR_ADMIN_PASSWORD on a store with users: no warning that it is ignored in %s", p3.LogText())
	}
	p3.Stop(t)

	// A reset rewrites the generated password's file, and says so.
	res := runCLI(t, p.DataDir, nil, "admin", "reset-password")
	reset := strings.TrimSpace(res.Stdout)
	now, _ := os.ReadFile(path)
	if res.Code != 0 || strings.TrimSpace(string(now)) != reset || !strings.Contains(res.Stderr, path) {
		t.Errorf("reset-password: exit %d, stdout %q, stderr %q; %s holds %q; want the new password in both, and the file named",
			res.Code, res.Stdout, res.Stderr, path, now)
	}
}

func TestStore_SecondServeRefused(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	res := runCLI(t, p.DataDir, nil, "serve")
	if res.Code == 0 || !strings.Contains(res.Stderr, "data dir is in use") {
		t.Errorf("second serve: exit %d, stderr %q; want non-zero and \"data dir is in use\"", res.Code, res.Stderr)
	}
	if res.Elapsed > 5*time.Second {
		t.Errorf("second serve took %s to give up, want a few seconds", res.Elapsed)
	}
	if strings.Contains(res.Stdout, "listener ready") {
		t.Errorf("second serve opened listeners: %s", res.Stdout)
	}
	// The first one is unaffected.
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	mustCreateSupplier(t, p.SandboxURL, sk.Key, "still-1", "Still Here Ltd")

	// SIGINT stops it cleanly too; then the data dir is free again.
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, ok := p.Wait(stopTimeout); !ok || code != 0 {
		t.Fatalf("after SIGINT: exited %v with code %d, want 0", ok, code)
	}
	p = p.Restart(t)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/still-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	p.Stop(t)
}

func TestLog_RequestLinesAndShutdown(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	health := p.SandboxURL + eudrAPI + "/health"

	apitest.Do(t, "GET", health, apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("X-Trace-Id", "log-trace-ok")), nil).WantStatus(t, http.StatusOK)
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", health+"?api_key="+sk.Key, apitest.Hdr("X-Trace-Id", "log-trace-401"), nil), "MISSING_API_KEY")
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", health, apitest.Hdr("Authorization", sk.Key), nil), "MALFORMED_API_KEY")
	apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+"/no/such/path", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("X-Trace-Id", "log-trace-404")), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "PUT", p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, "", supplierBody("log-1", "Log Ltd")), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	mustCreateSupplier(t, p.SandboxURL, sk.Key, "log-1", "Log Ltd")
	// A failed login keeps the fixed message of every 401 and says what was
	// wrong.
	apitest.WantLoginFailed(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil,
		map[string]string{"username": "admin", "password": "wrong " + testAdminPassword}))
	const requests = 1 + 1 + 8 // login, create key, the eight above
	jwt := p.Login(t)

	p.Stop(t)
	lines := p.LogLines()
	var reqs []map[string]any
	messages := []string{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("log line is not JSON: %q", l)
			continue
		}
		for _, f := range []string{"level", "time", "message"} {
			if _, ok := m[f]; !ok {
				t.Errorf("log line without %s: %s", f, l)
			}
		}
		messages = append(messages, fmt.Sprint(m["message"]))
		if m["message"] == "request" {
			reqs = append(reqs, m)
		}
	}
	if len(reqs) != requests {
		t.Errorf("%d request log lines, want %d (one per request)", len(reqs), requests)
	}
	for _, m := range reqs {
		for f, kind := range map[string]string{"method": "string", "route": "string", "status": "number", "latency_ms": "number",
			"trace_id": "string", "key_id": "string", "environment": "string"} {
			v, ok := m[f]
			_, isStr := v.(string)
			_, isNum := v.(float64)
			if !ok || kind == "string" && !isStr || kind == "number" && !isNum {
				t.Errorf("request log line: %s = %v (%T), want a %s: %v", f, v, v, kind, m)
			}
		}
		if id, _ := m["trace_id"].(string); !apitest.TraceIDPattern.MatchString(id) {
			t.Errorf("request log line trace_id %q", id)
		}
	}
	byTrace := func(id string) map[string]any {
		for _, m := range reqs {
			if m["trace_id"] == id {
				return m
			}
		}
		t.Errorf("no request log line with trace_id %s", id)
		return map[string]any{}
	}
	if m := byTrace("log-trace-ok"); m["method"] != "GET" || m["route"] != eudrAPI+"/health" || m["status"] != float64(200) || m["key_id"] != sk.KeyID || m["environment"] != sandbox {
		t.Errorf("200 line: %v, want GET %s 200 key_id %s sandbox", m, eudrAPI+"/health", sk.KeyID)
	}
	if m := byTrace("log-trace-401"); m["status"] != float64(401) || m["key_id"] != "" {
		t.Errorf("401 line: %v, want status 401 and no key_id", m)
	}
	if m := byTrace("log-trace-404"); m["status"] != float64(404) || m["route"] != "" || m["key_id"] != sk.KeyID {
		t.Errorf("404 line: %v, want status 404, route \"\" and key_id %s", m, sk.KeyID)
	}

	// Shutdown is logged, last.
	si := slices.IndexFunc(messages, func(m string) bool { return strings.HasPrefix(m, "shutting down") })
	st := slices.Index(messages, "stopped")
	if st < 0 || si < 0 || si > st || st != len(messages)-1 {
		t.Errorf("log messages %q, want shutting down then stopped, last", messages)
	}
	assertLogHasNoSecrets(t, p, sk.Key, sk.Key[8:], testAdminPassword, jwt)
}
