package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/storage"
)

// testAdminPassword is the password of the admin user of every test app.
const testAdminPassword = "correct horse battery staple"

// defaultOrg and adminUsername are what the store of every test app starts
// with.
const (
	defaultOrg    = account.DefaultOrg
	adminUsername = account.AdminUsername
)

// testStart is where every fake clock starts.
var testStart = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

// newFakeClock is the clock of a test app: the time seen by the app, the
// store, the rate limiter and the token checks, at testStart until the test
// moves it.
func newFakeClock() *apitest.Clock { return apitest.NewClock(testStart) }

// testApp is a real App on a store in a temp dir, with a fake clock.
type testApp struct {
	*App
	tb    testing.TB
	clock *apitest.Clock
	dir   string
}

// mustLoadConfig loads the config with no file, the data dir and admin
// password of a test app, and extra EUDR_ variables (later ones win).
func mustLoadConfig(tb testing.TB, dir string, env ...string) *config.Config {
	tb.Helper()
	environ := append([]string{"EUDR_DATA_DIR=" + dir, "EUDR_ADMIN_PASSWORD=" + testAdminPassword}, env...)
	cfg, err := config.Load("", environ)
	if err != nil {
		tb.Fatalf("config.Load(%q): %v", environ, err)
	}
	return cfg
}

// newTestApp starts an App on a new temp dir; env adds or overrides EUDR_
// variables. The app is closed when the test ends.
func newTestApp(tb testing.TB, env ...string) *testApp {
	tb.Helper()
	return newTestAppAt(tb, tb.TempDir(), newFakeClock(), env...)
}

// newTestAppAt starts an App on dir with clock.
func newTestAppAt(tb testing.TB, dir string, clock *apitest.Clock, env ...string) *testApp {
	tb.Helper()
	cfg := mustLoadConfig(tb, dir, env...)
	a, err := New(cfg, Options{Version: "test", Logger: zerolog.New(io.Discard), Now: clock.Now})
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	tb.Cleanup(func() {
		if err := a.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return &testApp{App: a, tb: tb, clock: clock, dir: dir}
}

// newRequest builds a request; hdr are header name, value pairs (a name given
// twice is sent twice). A body gets Content-Type application/json unless hdr
// sets another ("" removes it).
func newRequest(method, path, body string, hdr ...string) *http.Request {
	var r *http.Request
	if body == "" {
		r = httptest.NewRequest(method, path, nil)
	} else {
		r = httptest.NewRequest(method, path, strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(hdr); i += 2 {
		switch {
		case hdr[i+1] == "":
			r.Header.Del(hdr[i])
		case seen[hdr[i]]:
			r.Header.Add(hdr[i], hdr[i+1])
		default:
			r.Header.Set(hdr[i], hdr[i+1])
		}
		seen[hdr[i]] = true
	}
	return r
}

// serve sends r to env's handler.
func (ta *testApp) serve(env storage.Environment, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	ta.Handler(env).ServeHTTP(w, r)
	return w
}

// do sends a request to the sandbox listener.
func (ta *testApp) do(method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	return ta.serve(storage.Sandbox, newRequest(method, path, body, hdr...))
}

// newKey creates a key of org "default" in env directly (not through HTTP)
// and returns its record and value. No scopes means the default.
func (ta *testApp) newKey(env storage.Environment, scopes ...string) (*storage.APIKey, string) {
	ta.tb.Helper()
	if len(scopes) == 0 {
		scopes = nil
	}
	kr, err := account.ParseKeyRequest(defaultOrg, "test", string(env), scopes)
	if err != nil {
		ta.tb.Fatalf("ParseKeyRequest: %v", err)
	}
	key, value, err := ta.accounts.IssueKey(context.Background(), kr)
	if err != nil {
		ta.tb.Fatalf("IssueKey: %v", err)
	}
	return key, value
}

// login logs username in through HTTP and returns the token.
func (ta *testApp) login(username, password string) string {
	ta.tb.Helper()
	body, _ := json.Marshal(account.LoginRequest{Username: username, Password: password})
	w := ta.do("POST", enterprisePrefix+"/auth/login", string(body))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("login %s: got status %d, want 200: %s", username, w.Code, w.Body)
	}
	var resp loginResponse
	mustDecode(ta.tb, w, &resp)
	return resp.Token
}

// adminToken logs the bootstrap admin in.
func (ta *testApp) adminToken() string {
	ta.tb.Helper()
	return ta.login(adminUsername, testAdminPassword)
}

// addOrgUser creates organisation org and an admin user of it in the store.
func (ta *testApp) addOrgUser(org, username, password string) {
	ta.tb.Helper()
	hash, err := account.HashPassword(password)
	if err != nil {
		ta.tb.Fatal(err)
	}
	ta.update(func(tx *storage.Tx) error {
		if err := tx.PutOrg(&storage.Org{ID: org, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.PutUser(&storage.User{Username: username, Org: org, Role: account.RoleAdmin, PasswordHash: hash, CreatedAt: tx.Now()})
	})
}

// update runs fn in a write transaction of the app's store.
func (ta *testApp) update(fn func(tx *storage.Tx) error) {
	ta.tb.Helper()
	if err := ta.db.Update(context.Background(), fn); err != nil {
		ta.tb.Fatalf("Update: %v", err)
	}
}

// view runs fn in a read transaction of the app's store.
func (ta *testApp) view(fn func(tx *storage.Tx) error) {
	ta.tb.Helper()
	if err := ta.db.View(context.Background(), fn); err != nil {
		ta.tb.Fatalf("View: %v", err)
	}
}

// mustDecode decodes the JSON body of w into v.
func mustDecode(tb testing.TB, w *httptest.ResponseRecorder, v any) {
	tb.Helper()
	if err := json.Unmarshal(w.Body.Bytes(), v); err != nil {
		tb.Fatalf("decode body %q: %v", w.Body, err)
	}
}

// envelope decodes an error body and checks that it is the API's envelope:
// JSON, code and message set, details an array (never null).
func envelope(tb testing.TB, w *httptest.ResponseRecorder) apierr.Error {
	tb.Helper()
	if ct := w.Header().Get("Content-Type"); ct != "application/json" {
		tb.Errorf("Content-Type: got %q, want application/json", ct)
	}
	var raw map[string]json.RawMessage
	mustDecode(tb, w, &raw)
	if d, ok := raw["details"]; !ok || !strings.HasPrefix(string(d), "[") {
		tb.Errorf("details: got %s, want a JSON array (body %s)", d, w.Body)
	}
	var e apierr.Error
	mustDecode(tb, w, &e)
	if e.Code == "" || e.Message == "" {
		tb.Errorf("envelope without code or message: %s", w.Body)
	}
	return e
}

// wantError checks status, top-level code and, when detail is not "", that
// the first detail has that code.
func wantError(tb testing.TB, w *httptest.ResponseRecorder, status int, code, detail string) apierr.Error {
	tb.Helper()
	if w.Code != status {
		tb.Fatalf("status: got %d, want %d (body %s)", w.Code, status, w.Body)
	}
	e := envelope(tb, w)
	if e.Code != code {
		tb.Errorf("code: got %q, want %q (body %s)", e.Code, code, w.Body)
	}
	if detail != "" {
		if len(e.Details) == 0 {
			tb.Errorf("details: got none, want %s (body %s)", detail, w.Body)
		} else if e.Details[0].Code != detail {
			tb.Errorf("detail code: got %q, want %q (body %s)", e.Details[0].Code, detail, w.Body)
		}
	}
	return e
}

// detailSet is "code field" of every detail, for comparing problem lists.
func detailSet(ds []apierr.Detail) map[string]bool {
	m := map[string]bool{}
	for _, d := range ds {
		m[d.Code+" "+d.Field] = true
	}
	return m
}

// rotateKey rotates a key as the API does and returns its new value.
func (ta *testApp) rotateKey(ctx context.Context, org, id string) (*storage.APIKey, string, error) {
	var key *storage.APIKey
	var value string
	err := ta.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		key, value, err = ta.accounts.RotateKey(tx, org, id)
		return err
	})
	return key, value, err
}

// receiver is the shared HTTPS webhook receiver (apitest.Receiver) for
// one sandbox subscription at /hook, read in arrival order with next.
type receiver struct {
	*apitest.Receiver
	caFile string
	read   int // deliveries next has returned
}

// newReceiver starts a receiver; pass "EUDR_WEBHOOKS_CA_FILE="+r.caFile to
// the app so that it trusts it.
func newReceiver(tb testing.TB) *receiver {
	tb.Helper()
	r := apitest.NewReceiver(tb)
	return &receiver{Receiver: r, caFile: r.CAFile}
}

// subscribe registers the receiver for eventTypes on the sandbox with key,
// and verifies deliveries with the webhook's secret at the app's clock.
func (rc *receiver) subscribe(ta *testApp, key string, eventTypes ...string) {
	ta.tb.Helper()
	types, _ := json.Marshal(eventTypes)
	w := ta.serve(storage.Sandbox, newRequest("POST", eudrPrefix+"/webhooks",
		`{"targetUrl":"`+rc.URL("/hook")+`","eventTypes":`+string(types)+`}`, "X-API-Key", key, "Idempotency-Key", "wh-"+string(types)))
	var wh webhookResponse
	mustDecode(ta.tb, w, &wh)
	rc.SetClock(ta.clock.Now)
	rc.SetSecret("/hook", wh.SigningSecret)
}

// next returns the next delivery's event type and data, failing if none
// comes within 60 s or if it does not verify.
func (rc *receiver) next(tb testing.TB) (eventType string, data json.RawMessage) {
	tb.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if got := rc.Requests("/hook", ""); len(got) > rc.read {
			d := got[rc.read]
			rc.read++
			if d.SigErr != nil || d.EnvErr != nil {
				tb.Fatalf("delivery of %s: signature %v, envelope %v", d.Env.EventType, d.SigErr, d.EnvErr)
			}
			return d.Env.EventType, d.Env.Data
		}
		if time.Now().After(deadline) {
			tb.Fatal("no webhook delivery within 60s")
			return "", nil
		}
	}
}
