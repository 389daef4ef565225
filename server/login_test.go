package server

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestApp_Login(t *testing.T) {
	loginPath := enterprisePrefix + "/auth/login"
	keys := enterprisePrefix + "/api-keys"

	t.Run("TokenExpiresAfterTTL", func(t *testing.T) {
		ta := newTestApp(t, "EUDR_AUTH_TOKEN_TTL=2h")
		w := ta.do("POST", loginPath, `{"username":"admin","password":"`+testAdminPassword+`"}`)
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
	})

	t.Run("DefaultTTLOneHour", func(t *testing.T) {
		ta := newTestApp(t)
		token := ta.adminToken()
		var claims jwt.RegisteredClaims
		if _, _, err := jwt.NewParser().ParseUnverified(token, &claims); err != nil {
			t.Fatal(err)
		}
		if got := claims.ExpiresAt.Sub(claims.IssuedAt.Time); got != time.Hour {
			t.Errorf("exp - iat: got %v, want 1h", got)
		}
		if claims.Subject != "admin" || claims.Issuer != "eudr" {
			t.Errorf("claims: got sub %q iss %q, want admin, eudr", claims.Subject, claims.Issuer)
		}
		ta.clock.Advance(time.Hour + 6*time.Second)
		wantError(t, ta.do("GET", keys, "", "Authorization", "Bearer "+token), 401, apierr.CodeUnauthorized, "")
	})

	t.Run("BadCredentials", func(t *testing.T) {
		ta := newTestApp(t)
		for name, body := range map[string]string{
			"WrongPassword": `{"username":"admin","password":"wrong"}`,
			"UnknownUser":   `{"username":"nobody","password":"` + testAdminPassword + `"}`,
		} {
			w := ta.do("POST", loginPath, body)
			e := wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, "")
			if e.Message != apierr.MsgUnauthorized {
				t.Errorf("%s: message got %q, want %q", name, e.Message, apierr.MsgUnauthorized)
			}
			if strings.Contains(w.Body.String(), "token") {
				t.Errorf("%s: body %s, want no token", name, w.Body)
			}
		}
	})

	t.Run("MissingFields", func(t *testing.T) {
		ta := newTestApp(t)
		e := wantError(t, ta.do("POST", loginPath, `{}`), 400, apierr.CodeValidationFailed, apierr.DetailRequired)
		if got := detailSet(e.Details); !got["REQUIRED username"] || !got["REQUIRED password"] || len(got) != 2 {
			t.Errorf("details: got %+v, want REQUIRED username and password", e.Details)
		}
	})

	t.Run("NoIdempotencyKeyNeeded", func(t *testing.T) {
		ta := newTestApp(t)
		ta.adminToken() // fails the test unless 200
	})
}

func TestApp_Bootstrap(t *testing.T) {
	t.Run("WithAdminPassword", func(t *testing.T) {
		dir := t.TempDir()
		clock := newFakeClock()
		cfg := mustLoadConfig(t, dir, "EUDR_ADMIN_PASSWORD=first-password")
		a, err := New(cfg, Options{Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		ta := &testApp{App: a, tb: t, clock: clock, dir: dir}
		token := ta.login("admin", "first-password")
		ta.view(func(tx *storage.Tx) error {
			u, err := tx.FindUser("admin")
			if err != nil {
				return err
			}
			if u.Org != "default" || u.Role != "admin" {
				t.Errorf("admin: got org %q role %q, want default, admin", u.Org, u.Role)
			}
			_, err = tx.FindOrg("default")
			return err
		})
		if _, err := os.Stat(filepath.Join(dir, account.InitialPasswordFile)); !os.IsNotExist(err) {
			t.Errorf("%s with EUDR_ADMIN_PASSWORD: got stat err %v, want no file", account.InitialPasswordFile, err)
		}
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}

		// A second start with another password keeps the first admin.
		ta2 := newTestAppAt(t, dir, clock, "EUDR_ADMIN_PASSWORD=second-password")
		ta2.login("admin", "first-password")
		w := ta2.do("POST", enterprisePrefix+"/auth/login", `{"username":"admin","password":"second-password"}`)
		wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, "")
		// The token key survives a restart: the first run's token still works.
		if w := ta2.do("GET", enterprisePrefix+"/api-keys", "", "Authorization", "Bearer "+token); w.Code != 200 {
			t.Errorf("token from before the restart: got %d, want 200", w.Code)
		}
	})

	t.Run("GeneratedPassword", func(t *testing.T) {
		dir := t.TempDir()
		clock := newFakeClock()
		cfg, err := LoadConfig("", []string{"EUDR_DATA_DIR=" + dir})
		if err != nil {
			t.Fatal(err)
		}
		a, err := New(cfg, Options{Now: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, account.InitialPasswordFile)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%s: %v", account.InitialPasswordFile, err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode: got %o, want 600", account.InitialPasswordFile, mode)
		}
		b, _ := os.ReadFile(path)
		password := strings.TrimSuffix(string(b), "\n")
		if len(password) < 20 || strings.ContainsAny(password, " \n") {
			t.Errorf("generated password: got %q, want at least 20 characters, one line", password)
		}
		ta := &testApp{App: a, tb: t, clock: clock, dir: dir}
		ta.login("admin", password)
		if err := a.Close(); err != nil {
			t.Fatal(err)
		}

		// Written once: a restart neither rewrites it nor changes the password.
		if err := os.Remove(path); err != nil {
			t.Fatal(err)
		}
		ta2 := newTestAppAt(t, dir, clock)
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("%s after restart: got stat err %v, want no file", account.InitialPasswordFile, err)
		}
		ta2.login("admin", password)
	})

	t.Run("TwoStoresTwoPasswords", func(t *testing.T) {
		dir1, dir2 := t.TempDir(), t.TempDir()
		for _, dir := range []string{dir1, dir2} {
			cfg, _ := LoadConfig("", []string{"EUDR_DATA_DIR=" + dir})
			a, err := New(cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			a.Close()
		}
		p1, _ := os.ReadFile(filepath.Join(dir1, account.InitialPasswordFile))
		p2, _ := os.ReadFile(filepath.Join(dir2, account.InitialPasswordFile))
		if string(p1) == string(p2) {
			t.Errorf("generated passwords of two stores: both %q, want random ones", p1)
		}
	})
}
