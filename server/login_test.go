package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
)

// TestApp_LoginTokenTTL: a token logged in through the API lasts
// auth.token_ttl. (Credentials, claims and the leeway are account's
// tests'.)
func TestApp_LoginTokenTTL(t *testing.T) {
	keys := enterprisePrefix + "/api-keys"
	ta := newTestApp(t, "EUDR_AUTH_TOKEN_TTL=2h")
	w := ta.do("POST", enterprisePrefix+"/auth/login", `{"username":"admin","password":"`+testAdminPassword+`"}`)
	if w.Code != 200 {
		t.Fatalf("login: got %d %s, want 200", w.Code, w.Body)
	}
	var resp loginResponse
	mustDecode(t, w, &resp)
	if want := "2026-11-20T12:00:00.000Z"; resp.ExpiresAt != want {
		t.Errorf("expiresAt: got %q, want %q (now + auth.token_ttl)", resp.ExpiresAt, want)
	}
	if resp.Token == "" || strings.HasPrefix(resp.Token, "sk_") {
		t.Fatalf("token: got %q, want a JWT", resp.Token)
	}
	bearer := []string{"Authorization", "Bearer " + resp.Token}
	if w := ta.do("GET", keys, "", bearer...); w.Code != 200 {
		t.Fatalf("GET /api-keys with a fresh token: got %d, want 200", w.Code)
	}
	ta.clock.Advance(2*time.Hour - time.Minute)
	if w := ta.do("GET", keys, "", bearer...); w.Code != 200 {
		t.Errorf("a minute before expiry: got %d, want 200", w.Code)
	}
	ta.clock.Advance(time.Minute + 6*time.Second) // past expiry and the 5s leeway
	w = ta.do("GET", keys, "", bearer...)
	wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, "")
}

// TestApp_BootstrapRestart: the admin is made with admin.password at the
// first start; a restart with another keeps the first, and the tokens
// issued before it. (The bootstrap itself is account's tests'.)
func TestApp_BootstrapRestart(t *testing.T) {
	dir := t.TempDir()
	clock := newFakeClock()
	cfg := mustLoadConfig(t, dir, "EUDR_ADMIN_PASSWORD=first-password")
	a, err := New(cfg, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{App: a, tb: t, clock: clock, dir: dir}
	token := ta.login("admin", "first-password")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	ta2 := newTestAppAt(t, dir, clock, "EUDR_ADMIN_PASSWORD=second-password")
	ta2.login("admin", "first-password")
	w := ta2.do("POST", enterprisePrefix+"/auth/login", `{"username":"admin","password":"second-password"}`)
	wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, "")
	// The token key survives a restart: the first run's token still works.
	if w := ta2.do("GET", enterprisePrefix+"/api-keys", "", "Authorization", "Bearer "+token); w.Code != 200 {
		t.Errorf("token from before the restart: got %d, want 200", w.Code)
	}
}
