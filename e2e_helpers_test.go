package main_test

// End-to-end harness: the eudr binary that TestMain builds, a running
// `eudr serve` (serverProc) and the CLI commands, on a data dir of their
// own. Shared by the end-to-end tests and the load tests. The HTTP client,
// the checks of answers and the webhook receiver are server/apitest's.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
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

	// Short names of the API's path prefixes, which almost every URL
	// of these tests starts with.
	eudrAPI       = apitest.EUDRAPI
	enterpriseAPI = apitest.EnterpriseAPI
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
// dataDir: loopback listeners on free ports (the metrics listener too),
// the known admin password, JSON logs, then extra (NAME=value; a later
// entry wins).
func serverEnv(dataDir string, extra []string) []string {
	env := append(baseEnv(),
		"EUDR_DATA_DIR="+dataDir,
		"EUDR_PRODUCTION_LISTEN=127.0.0.1:0",
		"EUDR_SANDBOX_LISTEN=127.0.0.1:0",
		"EUDR_METRICS_LISTEN=127.0.0.1:0",
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

// assertLogHasNoSecrets fails t when the process's output contains any of secrets.
func assertLogHasNoSecrets(t testing.TB, p *serverProc, secrets ...string) {
	t.Helper()
	out := p.LogText() + "\n" + p.Stderr()
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("the log contains a secret (%.12s...)", s)
		}
	}
}

// Login returns a login token for admin, cached per process.
func (p *serverProc) Login(t testing.TB) string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.jwt == "" {
		p.jwt = apitest.Login(t, p.SandboxURL, "admin", p.AdminPassword)
	}
	return p.jwt
}

// CreateKey creates an API key of env through the API (as admin).
func (p *serverProc) CreateKey(t testing.TB, env string, scopes ...string) apitest.APIKey {
	t.Helper()
	return apitest.CreateKey(t, p.SandboxURL, p.Login(t), env, scopes...)
}

// createKey is CreateKey returning only the key value.
func (p *serverProc) createKey(t testing.TB, env string, scopes ...string) string {
	t.Helper()
	return p.CreateKey(t, env, scopes...).Key
}

// mustDo is do that fails t unless the answer has status want.
func (p *serverProc) mustDo(t testing.TB, method, url string, headers map[string]string, body any, want int) *apitest.Response {
	t.Helper()
	return apitest.Do(t, method, url, headers, body).WantStatus(t, want)
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

// waitUntil polls cond every 20ms and fails t when it is still false after
// timeout.
func waitUntil(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
func postSupplier(t testing.TB, baseURL, key, idem string, body any) *apitest.Response {
	t.Helper()
	return apitest.Do(t, "POST", baseURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(key), apitest.Hdr("Idempotency-Key", idem)), body)
}

// mustCreateSupplier upserts a supplier with a fresh Idempotency-Key.
func mustCreateSupplier(t testing.TB, baseURL, key, erpVendorID, name string) supplier {
	t.Helper()
	r := postSupplier(t, baseURL, key, apitest.NewIdemKey(), supplierBody(erpVendorID, name))
	r.WantStatus(t, http.StatusOK)
	var s supplier
	r.Decode(t, &s)
	return s
}
