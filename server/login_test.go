package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"golang.org/x/crypto/bcrypt"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestHashPassword(t *testing.T) {
	hash, err := hashPassword("s3cret pässword")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(hash, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Errorf("hashPassword: got %q, want an argon2id PHC string with m=19456,t=2,p=1", hash)
	}
	if !checkPassword(hash, "s3cret pässword") {
		t.Error("checkPassword(hash, same password): got false, want true")
	}
	for _, wrong := range []string{"", "s3cret password", "s3cret pässword ", "S3cret pässword"} {
		if checkPassword(hash, wrong) {
			t.Errorf("checkPassword(hash, %q): got true, want false", wrong)
		}
	}
	again, _ := hashPassword("s3cret pässword")
	if again == hash {
		t.Error("hashPassword twice: got the same string, want a fresh salt each time")
	}
}

func TestCheckPassword(t *testing.T) {
	bc, err := bcrypt.GenerateFromPassword([]byte("legacy password"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	argon, _ := hashPassword("pw")
	parts := strings.Split(argon, "$")
	for _, tc := range []struct {
		name     string
		hash, pw string
		want     bool
	}{
		{"Bcrypt", string(bc), "legacy password", true},
		{"BcryptWrong", string(bc), "legacy passwort", false},
		{"BcryptMalformed", "$2a$10$tooshort", "legacy password", false},
		{"Argon2id", argon, "pw", true},
		{"Empty", "", "", false},
		{"Plaintext", "pw", "pw", false},
		{"OtherAlgorithm", "$argon2i$" + strings.Join(parts[2:], "$"), "pw", false},
		{"WrongVersion", "$argon2id$v=16$" + strings.Join(parts[3:], "$"), "pw", false},
		{"MissingPart", strings.Join(parts[:5], "$"), "pw", false},
		{"ExtraPart", argon + "$x", "pw", false},
		{"BadParams", strings.Join([]string{"", "argon2id", "v=19", "m=x,t=2,p=1", parts[4], parts[5]}, "$"), "pw", false},
		{"BadSalt", strings.Join([]string{"", "argon2id", "v=19", parts[3], "!!!", parts[5]}, "$"), "pw", false},
		{"BadKey", strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], "!!!"}, "$"), "pw", false},
		{"EmptyKey", strings.Join([]string{"", "argon2id", "v=19", parts[3], parts[4], ""}, "$"), "pw", false},
		{"OtherParamsSameKey", strings.Join([]string{"", "argon2id", "v=19", "m=19456,t=3,p=1", parts[4], parts[5]}, "$"), "pw", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := checkPassword(tc.hash, tc.pw); got != tc.want {
				t.Errorf("checkPassword(%q, %q): got %v, want %v", tc.hash, tc.pw, got, tc.want)
			}
		})
	}
}

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

	t.Run("ForeignTokensRefused", func(t *testing.T) {
		ta := newTestApp(t)
		now := ta.clock.Now()
		claims := jwt.RegisteredClaims{Issuer: "eudr", Subject: "admin",
			IssuedAt: jwt.NewNumericDate(now), ExpiresAt: jwt.NewNumericDate(now.Add(time.Hour))}
		otherKey, err := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString([]byte("another key of 32 bytes........."))
		if err != nil {
			t.Fatal(err)
		}
		none, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
		if err != nil {
			t.Fatal(err)
		}
		hs512, err := jwt.NewWithClaims(jwt.SigningMethodHS512, claims).SignedString(ta.jwtKey)
		if err != nil {
			t.Fatal(err)
		}
		otherIssuer := claims
		otherIssuer.Issuer = "someone"
		wrongIss, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, otherIssuer).SignedString(ta.jwtKey)
		noExp := claims
		noExp.ExpiresAt = nil
		noExpiry, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, noExp).SignedString(ta.jwtKey)
		ghost := claims
		ghost.Subject = "ghost"
		unknownUser, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, ghost).SignedString(ta.jwtKey)
		good, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, claims).SignedString(ta.jwtKey)

		other := newTestApp(t)
		fromOtherApp := other.adminToken()

		for name, token := range map[string]string{
			"OtherKey":     otherKey,
			"AlgNone":      none,
			"HS512":        hs512,
			"OtherIssuer":  wrongIss,
			"NoExpiry":     noExpiry,
			"UnknownUser":  unknownUser,
			"OtherStore":   fromOtherApp,
			"Garbage":      "not.a.jwt",
			"TamperedSig":  good[:len(good)-2] + "xx",
			"TamperedBody": tamperSubject(t, good),
		} {
			t.Run(name, func(t *testing.T) {
				w := ta.do("GET", keys, "", "Authorization", "Bearer "+token)
				wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, "")
			})
		}
		// The control: the same claims signed with the app's key pass.
		if w := ta.do("GET", keys, "", "Authorization", "Bearer "+good); w.Code != 200 {
			t.Errorf("token with the app's key: got %d, want 200", w.Code)
		}
	})
}

// tamperSubject changes the payload of a signed token without re-signing it.
func tamperSubject(t *testing.T, token string) string {
	t.Helper()
	parts := strings.Split(token, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["exp"] = m["exp"].(float64) + 1e6
	b, _ := json.Marshal(m)
	parts[1] = base64.RawURLEncoding.EncodeToString(b)
	return strings.Join(parts, ".")
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
		if _, err := os.Stat(filepath.Join(dir, InitialPasswordFile)); !os.IsNotExist(err) {
			t.Errorf("%s with EUDR_ADMIN_PASSWORD: got stat err %v, want no file", InitialPasswordFile, err)
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
		path := filepath.Join(dir, InitialPasswordFile)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatalf("%s: %v", InitialPasswordFile, err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode: got %o, want 600", InitialPasswordFile, mode)
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
			t.Errorf("%s after restart: got stat err %v, want no file", InitialPasswordFile, err)
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
		p1, _ := os.ReadFile(filepath.Join(dir1, InitialPasswordFile))
		p2, _ := os.ReadFile(filepath.Join(dir2, InitialPasswordFile))
		if string(p1) == string(p2) {
			t.Errorf("generated passwords of two stores: both %q, want random ones", p1)
		}
	})
}

func TestApp_LoginBounded(t *testing.T) {
	ta := newTestApp(t)
	ta.hashWait = 50 * time.Millisecond
	for range cap(ta.hashSlots) { // every slot busy
		ta.hashSlots <- struct{}{}
	}
	creds := `{"username":"admin","password":"` + testAdminPassword + `"}`
	w := ta.do("POST", enterprisePrefix+"/auth/login", creds)
	wantError(t, w, http.StatusServiceUnavailable, apierr.CodeServiceUnavailable, "")
	if w.Header().Get("Retry-After") != "1" {
		t.Errorf("Retry-After: got %q, want 1", w.Header().Get("Retry-After"))
	}
	<-ta.hashSlots // one slot frees up
	if w := ta.do("POST", enterprisePrefix+"/auth/login", creds); w.Code != http.StatusOK {
		t.Errorf("login with a free slot: got %d %s, want 200", w.Code, w.Body)
	}
}

func TestApp_BootstrapStaleFile(t *testing.T) {
	// A password file left by a start that died before committing the admin
	// is overwritten by the next start, whose password then logs in.
	dir := t.TempDir()
	path := filepath.Join(dir, InitialPasswordFile)
	if err := os.WriteFile(path, []byte("stale\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ta := newTestAppAt(t, dir, newFakeClock(), "EUDR_ADMIN_PASSWORD=")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	password := strings.TrimSpace(string(b))
	if password == "stale" {
		t.Fatal("initial-admin-password: got the stale content, want a new password")
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
	}
	if _, err := ta.App.login(context.Background(), adminUsername, password); err != nil {
		t.Errorf("login with the new password: %v", err)
	}
}

func TestApp_ResetPassword(t *testing.T) {
	ta := newTestApp(t)
	keys := enterprisePrefix + "/api-keys"
	before := ta.adminToken()
	if w := ta.do("GET", keys, "", "Authorization", "Bearer "+before); w.Code != http.StatusOK {
		t.Fatalf("GET /api-keys with a token: got %d %s, want 200", w.Code, w.Body)
	}
	password, err := ta.ResetPassword(context.Background(), adminUsername)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ta.App.login(context.Background(), adminUsername, testAdminPassword); err == nil {
		t.Error("old password still logs in after a reset")
	}
	if _, err := ta.App.login(context.Background(), adminUsername, password); err != nil {
		t.Errorf("new password: %v", err)
	}
	// A token issued before the change ends with it (whoever lost the old
	// password may have logged in with it), well before its expiry; one
	// issued after works.
	wantError(t, ta.do("GET", keys, "", "Authorization", "Bearer "+before), http.StatusUnauthorized, apierr.CodeUnauthorized, "")
	after := ta.login(adminUsername, password)
	if w := ta.do("GET", keys, "", "Authorization", "Bearer "+after); w.Code != http.StatusOK {
		t.Errorf("GET /api-keys with a token issued after the reset: got %d %s, want 200", w.Code, w.Body)
	}
	if _, err := ta.ResetPassword(context.Background(), adminUsername); err != nil {
		t.Fatal(err)
	}
	wantError(t, ta.do("GET", keys, "", "Authorization", "Bearer "+after), http.StatusUnauthorized, apierr.CodeUnauthorized, "")
	if _, err := ta.ResetPassword(context.Background(), "nobody"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("unknown user: got %v, want an error saying it does not exist", err)
	}
}
