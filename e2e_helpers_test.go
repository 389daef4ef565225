package main_test

// End-to-end harness: the eudr binary that TestMain builds, a running
// `eudr serve` (serverProc) and an HTTP client that checks what every
// response must carry. Shared by the end-to-end tests in main_test.go and
// the load test.

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// eudrBin is the binary built by TestMain; "" under -short.
var eudrBin string

const (
	// testVersion is stamped into the binary: /health must report it.
	testVersion = "e2e-test"
	// testAdminPassword is EUDR_ADMIN_PASSWORD unless a test overrides it.
	testAdminPassword = "e2e-Adm1n-pa55word-Qx7"

	startTimeout = 15 * time.Second
	stopTimeout  = 10 * time.Second
	cliTimeout   = 20 * time.Second

	eudrAPI       = "/api/v1/enterprise/eudr"
	enterpriseAPI = "/api/v1/enterprise"
)

// Environments, as the API spells them.
const (
	sandbox    = "sandbox"
	production = "production"
)

// buildBinary runs `go build` from the repository root (the test's working
// directory) into dir and returns the binary's path.
func buildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "eudr")
	cmd := exec.Command("go", "build", "-ldflags", "-X main.version="+testVersion, "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, nil
}

// requireE2E skips t under -short and fails it when the binary is missing.
func requireE2E(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test: skipped with -short")
	}
	if eudrBin == "" {
		t.Fatal("the eudr binary was not built (TestMain)")
	}
}

// tempDataDir makes a short-named directory (the admin socket's path must
// stay under the 108-byte limit of Unix socket names), removed after t.
func tempDataDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "eudr-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// baseEnv is the test process's environment without EUDR_ variables, so a
// developer's settings do not leak into the appliance under test.
func baseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "EUDR_") {
			env = append(env, kv)
		}
	}
	return env
}

// serverEnv is the environment of `eudr serve` (and the admin commands) on
// dataDir: loopback listeners on free ports, the known admin password, JSON
// logs, then extra (NAME=value; a later entry wins).
func serverEnv(dataDir string, extra []string) []string {
	env := append(baseEnv(),
		"EUDR_DATA_DIR="+dataDir,
		"EUDR_PRODUCTION_LISTEN=127.0.0.1:0",
		"EUDR_SANDBOX_LISTEN=127.0.0.1:0",
		"EUDR_ADMIN_PASSWORD="+testAdminPassword,
		"EUDR_LOG_FORMAT=json",
	)
	return append(env, extra...)
}

// lookupEnv returns the last value of name in env, as exec does.
func lookupEnv(env []string, name string) string {
	v := ""
	for _, kv := range env {
		if k, val, ok := strings.Cut(kv, "="); ok && k == name {
			v = val
		}
	}
	return v
}

// logBuffer collects a process's stdout line by line and tells when both
// "listener ready" lines have been seen.
type logBuffer struct {
	mu      sync.Mutex
	partial []byte
	lines   []string
	addrs   map[string]string // environment -> host:port
	ready   chan struct{}
}

func newLogBuffer() *logBuffer {
	return &logBuffer{addrs: map[string]string{}, ready: make(chan struct{})}
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.partial = append(b.partial, p...)
	for {
		i := bytes.IndexByte(b.partial, '\n')
		if i < 0 {
			break
		}
		line := string(b.partial[:i])
		b.partial = b.partial[i+1:]
		b.lines = append(b.lines, line)
		if !strings.Contains(line, "listener ready") {
			continue
		}
		var l struct {
			Message     string `json:"message"`
			Environment string `json:"environment"`
			Addr        string `json:"addr"`
		}
		if json.Unmarshal([]byte(line), &l) != nil || l.Message != "listener ready" {
			continue
		}
		b.addrs[l.Environment] = l.Addr
		if b.addrs[sandbox] != "" && b.addrs[production] != "" {
			select {
			case <-b.ready:
			default:
				close(b.ready)
			}
		}
	}
	return len(p), nil
}

func (b *logBuffer) snapshot() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := slices.Clone(b.lines)
	if len(b.partial) > 0 {
		lines = append(lines, string(b.partial))
	}
	return lines
}

// syncBuffer is a bytes.Buffer safe for the copying goroutine and readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serverProc is a running `eudr serve`.
type serverProc struct {
	DataDir       string
	ProductionURL string // http://127.0.0.1:port
	SandboxURL    string
	// AdminPassword logs in as admin: EUDR_ADMIN_PASSWORD, or the generated
	// one read from <data_dir>/initial-admin-password.
	AdminPassword string

	extraEnv []string
	cmd      *exec.Cmd
	stdout   *logBuffer
	stderr   *syncBuffer
	done     chan struct{} // closed when the process has exited and its output is read

	mu  sync.Mutex
	jwt string // cached login token
}

// startServer starts `eudr serve` on a new data dir with extra environment
// variables (NAME=value, e.g. "EUDR_RATE_LIMIT_PER_SECOND=5") and waits until
// both listeners are ready.
func startServer(t testing.TB, env ...string) *serverProc {
	t.Helper()
	requireE2E(t)
	return startServerIn(t, tempDataDir(t), env...)
}

// startServerIn starts `eudr serve` on dataDir. The process is killed when t
// ends if it is still running; when t failed its output is logged.
func startServerIn(t testing.TB, dataDir string, env ...string) *serverProc {
	t.Helper()
	requireE2E(t)
	p := &serverProc{
		DataDir:  dataDir,
		extraEnv: env,
		stdout:   newLogBuffer(),
		stderr:   &syncBuffer{},
		done:     make(chan struct{}),
	}
	full := serverEnv(dataDir, env)
	p.AdminPassword = lookupEnv(full, "EUDR_ADMIN_PASSWORD")
	p.cmd = exec.Command(eudrBin, "serve")
	p.cmd.Env = full
	p.cmd.Stdout = p.stdout
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start eudr serve: %v", err)
	}
	go func() {
		p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			p.cmd.Process.Kill()
			<-p.done
		}
		if t.Failed() {
			lines := p.LogLines()
			if len(lines) > 60 {
				lines = lines[len(lines)-60:]
			}
			t.Logf("eudr serve on %s, last stdout lines:\n%s\nstderr:\n%s", dataDir, strings.Join(lines, "\n"), p.Stderr())
		}
	})
	select {
	case <-p.stdout.ready:
	case <-p.done:
		t.Fatalf("eudr serve exited before it was ready (exit code %d)\nstderr: %s\nstdout: %s",
			p.cmd.ProcessState.ExitCode(), p.Stderr(), p.LogText())
	case <-time.After(startTimeout):
		t.Fatalf("eudr serve not ready within %s\nstdout: %s", startTimeout, p.LogText())
	}
	p.stdout.mu.Lock()
	p.ProductionURL = "http://" + p.stdout.addrs[production]
	p.SandboxURL = "http://" + p.stdout.addrs[sandbox]
	p.stdout.mu.Unlock()
	if p.AdminPassword == "" {
		b, err := os.ReadFile(filepath.Join(dataDir, "initial-admin-password"))
		if err == nil {
			p.AdminPassword = strings.TrimSpace(string(b))
		}
	}
	return p
}

// URL is the base URL of env's listener.
func (p *serverProc) URL(env string) string {
	if env == production {
		return p.ProductionURL
	}
	return p.SandboxURL
}

// Exited reports whether the process has exited.
func (p *serverProc) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits up to d for the process to exit and returns its exit code
// (-1 when killed by a signal); ok is false on timeout.
func (p *serverProc) Wait(d time.Duration) (code int, ok bool) {
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode(), true
	case <-time.After(d):
		return 0, false
	}
}

// Stop sends SIGTERM and fails t unless the process exits with code 0
// within stopTimeout.
func (p *serverProc) Stop(t testing.TB) {
	t.Helper()
	if p.Exited() {
		t.Fatalf("Stop: eudr serve had already exited (code %d)", p.cmd.ProcessState.ExitCode())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	code, ok := p.Wait(stopTimeout)
	if !ok {
		p.cmd.Process.Kill()
		<-p.done
		t.Fatalf("eudr serve did not exit within %s of SIGTERM", stopTimeout)
	}
	if code != 0 {
		t.Fatalf("eudr serve exited with code %d after SIGTERM, want 0\nstderr: %s", code, p.Stderr())
	}
}

// Kill sends SIGKILL and waits for the process to be gone.
func (p *serverProc) Kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !p.Exited() {
		t.Fatalf("SIGKILL: %v", err)
	}
	<-p.done
}

// Restart starts a new `eudr serve` on the same data dir with the same extra
// environment; p must have been stopped or killed.
func (p *serverProc) Restart(t testing.TB) *serverProc {
	t.Helper()
	if !p.Exited() {
		t.Fatal("Restart: the previous process is still running")
	}
	return startServerIn(t, p.DataDir, p.extraEnv...)
}

// LogLines is everything the process wrote to stdout so far, one entry per line.
func (p *serverProc) LogLines() []string { return p.stdout.snapshot() }

// LogText is stdout so far as one string.
func (p *serverProc) LogText() string { return strings.Join(p.LogLines(), "\n") }

// Logs is stdout parsed as JSON lines; lines that are not JSON objects are
// skipped (TestLog_RequestLines checks there are none).
func (p *serverProc) Logs() []map[string]any {
	var out []map[string]any
	for _, l := range p.LogLines() {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Stderr is what the process wrote to stderr so far.
func (p *serverProc) Stderr() string { return p.stderr.String() }

// Login returns a login token for admin, cached per process.
func (p *serverProc) Login(t testing.TB) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jwt == "" {
		p.jwt = login(t, p.SandboxURL, "admin", p.AdminPassword)
	}
	return p.jwt
}

// CreateKey creates an API key of env through the API (as admin).
func (p *serverProc) CreateKey(t testing.TB, env string, scopes ...string) apiKey {
	t.Helper()
	return createKey(t, p.SandboxURL, p.Login(t), env, scopes...)
}

// createKey is CreateKey returning only the key value.
func (p *serverProc) createKey(t testing.TB, env string, scopes ...string) string {
	t.Helper()
	return p.CreateKey(t, env, scopes...).Key
}

// mustDo is do that fails t unless the answer has status want.
func (p *serverProc) mustDo(t testing.TB, method, url string, headers map[string]string, body any, want int) *response {
	t.Helper()
	return do(t, method, url, headers, body).wantStatus(t, want)
}

// cliResult is the outcome of one `eudr` command.
type cliResult struct {
	Stdout, Stderr string
	Code           int
	Elapsed        time.Duration
}

// runCLI runs `eudr args...` with the serve environment of dataDir plus
// extra, and waits up to cliTimeout.
func runCLI(t testing.TB, dataDir string, extra []string, args ...string) cliResult {
	t.Helper()
	requireE2E(t)
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(eudrBin, args...)
	cmd.Env = serverEnv(dataDir, extra)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatalf("start eudr %v: %v", args, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(cliTimeout):
		cmd.Process.Kill()
		<-done
		t.Fatalf("eudr %v did not finish within %s\nstdout: %s\nstderr: %s", args, cliTimeout, stdout.String(), stderr.String())
	}
	return cliResult{Stdout: stdout.String(), Stderr: stderr.String(), Code: cmd.ProcessState.ExitCode(), Elapsed: time.Since(start)}
}

// --- HTTP ---

// httpClient does not follow redirects: the API never sends one, and a
// redirect must show up as a failure.
var httpClient = &http.Client{
	Timeout:       15 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// response is one HTTP answer, read in full.
type response struct {
	Request string // "METHOD URL", for messages
	Status  int
	Header  http.Header
	Body    []byte
}

// hdr builds a header map from name, value pairs.
func hdr(kv ...string) map[string]string {
	if len(kv)%2 != 0 {
		panic("hdr: odd number of arguments")
	}
	m := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// withKey is the canonical API key header.
func withKey(key string) map[string]string { return hdr("X-API-Key", key) }

// bearer is an Authorization: Bearer header.
func bearer(token string) map[string]string { return hdr("Authorization", "Bearer "+token) }

// merge combines header maps; later ones win.
func merge(ms ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range ms {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

var (
	traceIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)
	newTracePat    = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// do sends one request and reads the answer. body is nil (none), a string or
// []byte (sent as is, with Content-Length), an io.Reader (sent chunked), or
// anything else (sent as JSON). A body gets Content-Type application/json
// unless headers name one; a header with value "" is not sent.
//
// It checks what every response must carry (API.md section 3): X-Trace-Id
// (the request's when valid, else 32 hex chars), the three X-RateLimit-*
// headers, and for every error status the JSON envelope with a details
// array (never null).
func do(t testing.TB, method, url string, headers map[string]string, body any) *response {
	t.Helper()
	r, err := tryDo(t, method, url, headers, body)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// tryDo is do returning a transport error instead of failing t, so it can
// run in goroutines other than the test's (it reports only with t.Errorf).
func tryDo(t testing.TB, method, url string, headers map[string]string, body any) (*response, error) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	case io.Reader:
		rd = struct{ io.Reader }{b} // hide the type: no Content-Length, chunked
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, fmt.Errorf("encode request body: %v", err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, url, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s %s: read body: %v", method, url, err)
	}
	r := &response{Request: method + " " + url, Status: resp.StatusCode, Header: resp.Header, Body: data}
	r.checkCommon(t, req)
	return r, nil
}

func (r *response) checkCommon(t testing.TB, req *http.Request) {
	t.Helper()
	got := r.Header.Get("X-Trace-Id")
	if sent := req.Header.Get("X-Trace-Id"); traceIDPattern.MatchString(sent) {
		if got != sent {
			t.Errorf("%s: X-Trace-Id %q, want the request's %q echoed", r.Request, got, sent)
		}
	} else if !newTracePat.MatchString(got) {
		t.Errorf("%s: X-Trace-Id %q, want 32 hex characters", r.Request, got)
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
		if _, err := strconv.ParseInt(r.Header.Get(h), 10, 64); err != nil {
			t.Errorf("%s (status %d): header %s = %q, want an integer", r.Request, r.Status, h, r.Header.Get(h))
		}
	}
	if r.Status >= 300 {
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

// Decode decodes the body into v.
func (r *response) Decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("%s: decode body (status %d): %v: %s", r.Request, r.Status, err, r.Body)
	}
}

// Object is the body as a JSON object.
func (r *response) Object(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	r.Decode(t, &m)
	if m == nil {
		t.Fatalf("%s: body is not a JSON object: %s", r.Request, r.Body)
	}
	return m
}

// Array is the body as a JSON array of objects.
func (r *response) Array(t testing.TB) []map[string]any {
	t.Helper()
	var a []map[string]any
	r.Decode(t, &a)
	if a == nil {
		t.Fatalf("%s: body is not a JSON array: %s", r.Request, r.Body)
	}
	return a
}

// wantStatus fails t unless the status is want.
func (r *response) wantStatus(t testing.TB, want int) *response {
	t.Helper()
	if r.Status != want {
		t.Fatalf("%s: got status %d, want %d; body: %s", r.Request, r.Status, want, r.Body)
	}
	return r
}

// apiError is the error envelope.
type apiError struct {
	Code    string      `json:"code"`
	Message string      `json:"message"`
	Details []apiDetail `json:"details"`
}

type apiDetail struct {
	Code  string `json:"code"`
	Field string `json:"field"`
	Issue string `json:"issue"`
}

// detail returns the detail about field, or fails t.
func (e apiError) detail(t testing.TB, field string) apiDetail {
	t.Helper()
	for _, d := range e.Details {
		if d.Field == field {
			return d
		}
	}
	t.Fatalf("no detail for field %q in %+v", field, e.Details)
	return apiDetail{}
}

// wantError checks status, top-level code and the detail codes in any order
// (none: details must be empty), and returns the envelope.
func wantError(t testing.TB, r *response, status int, code string, detailCodes ...string) apiError {
	t.Helper()
	if r.Status != status {
		t.Fatalf("%s: got status %d, want %d; body: %s", r.Request, r.Status, status, r.Body)
	}
	var e apiError
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

const (
	msgUnauthorized = "Missing or invalid API key"
	msgForbidden    = "API key does not have the required scope"
)

// wantUnauthorized checks SPEC.md's 401: UNAUTHORIZED, the fixed message, no details.
func wantUnauthorized(t testing.TB, r *response) {
	t.Helper()
	e := wantError(t, r, http.StatusUnauthorized, "UNAUTHORIZED")
	if e.Message != msgUnauthorized {
		t.Errorf("%s: got message %q, want %q", r.Request, e.Message, msgUnauthorized)
	}
	if !bytes.Contains(r.Body, []byte(`"details":[]`)) {
		t.Errorf("%s: 401 details must be [], body: %s", r.Request, r.Body)
	}
}

// wantForbidden checks SPEC.md's 403 with the reason as the one detail.
func wantForbidden(t testing.TB, r *response, reason string) apiDetail {
	t.Helper()
	e := wantError(t, r, http.StatusForbidden, "FORBIDDEN", reason)
	if e.Message != msgForbidden {
		t.Errorf("%s: got message %q, want %q", r.Request, e.Message, msgForbidden)
	}
	if len(e.Details) == 0 {
		return apiDetail{}
	}
	return e.Details[0]
}

// --- accounts and keys ---

// login posts the admin credentials and returns the token.
func login(t testing.TB, baseURL, username, password string) string {
	t.Helper()
	r := do(t, "POST", baseURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": username, "password": password})
	r.wantStatus(t, http.StatusOK)
	var out struct {
		Token     string `json:"token"`
		ExpiresAt string `json:"expiresAt"`
	}
	r.Decode(t, &out)
	if out.Token == "" {
		t.Fatalf("login: no token in %s", r.Body)
	}
	return out.Token
}

// apiKey is the answer to POST /api-keys and /rotate.
type apiKey struct {
	KeyID       string   `json:"keyId"`
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Key         string   `json:"key"`
	CreatedAt   string   `json:"createdAt"`
}

// createKey creates a key of env through the API with a login token; no
// scopes means the default (read and write).
func createKey(t testing.TB, baseURL, jwt, env string, scopes ...string) apiKey {
	t.Helper()
	body := map[string]any{"name": "e2e " + env, "environment": env}
	if len(scopes) > 0 {
		body["scopes"] = scopes
	}
	r := do(t, "POST", baseURL+enterpriseAPI+"/api-keys", merge(bearer(jwt), hdr("Idempotency-Key", newIdemKey())), body)
	r.wantStatus(t, http.StatusOK)
	var k apiKey
	r.Decode(t, &k)
	if k.Key == "" || k.KeyID == "" {
		t.Fatalf("create key: no key or keyId in %s", r.Body)
	}
	return k
}

// newIdemKey is a fresh Idempotency-Key.
func newIdemKey() string { return "idem-" + randHex(12) }

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// randBase62 is n random base62 characters (the body of a key value).
func randBase62(n int) string {
	const chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	b := make([]byte, n)
	rand.Read(b)
	for i := range b {
		b[i] = chars[int(b[i])%len(chars)]
	}
	return string(b)
}

// --- suppliers ---

// supplier is a supplier mapping as the API answers it.
type supplier struct {
	SupplierID     string     `json:"supplierId"`
	ERPVendorID    string     `json:"erpVendorId"`
	EUOperatorUUID string     `json:"euOperatorUuid"`
	Name           string     `json:"name"`
	Country        string     `json:"country"`
	EORI           nullString `json:"eori"`
	Role           string     `json:"role"`
	CreatedAt      string     `json:"createdAt"`
	UpdatedAt      string     `json:"updatedAt"`
}

// nullString is a JSON string or null, comparable with ==.
type nullString struct {
	Valid bool
	S     string
}

func (n *nullString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = nullString{}
		return nil
	}
	n.Valid = true
	return json.Unmarshal(b, &n.S)
}

// supplierBody is a valid POST /suppliers body.
func supplierBody(erpVendorID, name string) map[string]any {
	return map[string]any{
		"erpVendorId":    erpVendorID,
		"euOperatorUuid": "3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f",
		"name":           name,
		"country":        "BR",
	}
}

// postSupplier posts body to /suppliers with key and Idempotency-Key idem
// ("" sends none).
func postSupplier(t testing.TB, baseURL, key, idem string, body any) *response {
	t.Helper()
	return do(t, "POST", baseURL+eudrAPI+"/suppliers", merge(withKey(key), hdr("Idempotency-Key", idem)), body)
}

// mustCreateSupplier upserts a supplier with a fresh Idempotency-Key.
func mustCreateSupplier(t testing.TB, baseURL, key, erpVendorID, name string) supplier {
	t.Helper()
	r := postSupplier(t, baseURL, key, newIdemKey(), supplierBody(erpVendorID, name))
	r.wantStatus(t, http.StatusOK)
	var s supplier
	r.Decode(t, &s)
	return s
}
