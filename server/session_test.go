package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

const sessionPath = enterprisePrefix + "/auth/session"

// signIn signs username in on env's listener and returns the cookie and
// the answer; it fails the test unless the answer is 200.
func (ta *testApp) signIn(env storage.Environment, username, password string) (*http.Cookie, sessionResponse) {
	ta.tb.Helper()
	body, _ := json.Marshal(account.LoginRequest{Username: username, Password: password})
	w := ta.serve(env, newRequest("POST", sessionPath, string(body)))
	if w.Code != http.StatusOK {
		ta.tb.Fatalf("sign in %s: got %d %s, want 200", username, w.Code, w.Body)
	}
	var resp sessionResponse
	mustDecode(ta.tb, w, &resp)
	for _, c := range w.Result().Cookies() {
		if c.Name == sessionCookie(env) {
			return c, resp
		}
	}
	ta.tb.Fatalf("sign in %s: no %s cookie in %v", username, sessionCookie(env), w.Result().Cookies())
	return nil, resp
}

// withCookie sends a request with the cookie and headers to env's listener.
func (ta *testApp) withCookie(env storage.Environment, c *http.Cookie, method, path, body string, hdr ...string) *httptest.ResponseRecorder {
	r := newRequest(method, path, body, hdr...)
	if c != nil {
		r.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
	}
	return ta.serve(env, r)
}

func TestSession_SignInReadWrite(t *testing.T) {
	ta := newTestApp(t)
	cookie, sess := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	t.Run("Cookie", func(t *testing.T) {
		if cookie.Name != "eudr_session_sandbox" || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || cookie.Path != "/" || cookie.Secure {
			t.Errorf("cookie: got %+v, want eudr_session_sandbox, HttpOnly, SameSite=Strict, Path=/, not Secure on plain HTTP", cookie)
		}
		if len(cookie.Value) < 40 {
			t.Errorf("session id %q: want 32 random bytes", cookie.Value)
		}
		ta.view(func(tx *storage.Tx) error {
			if _, err := tx.FindSession([]byte(cookie.Value)); err == nil {
				t.Error("the store holds the session id itself, want only its hash")
			}
			return nil
		})
	})
	want := sessionResponse{Username: adminUsername, Org: defaultOrg, Role: "admin", ApplianceAdmin: true, Environment: "sandbox",
		ExpiresAt: "2026-11-20T10:30:00.000Z", MaxExpiresAt: "2026-11-20T22:00:00.000Z", CSRFToken: sess.CSRFToken}
	if sess != want || len(sess.CSRFToken) < 40 {
		t.Errorf("session: got %+v, want %+v", sess, want)
	}
	t.Run("Get", func(t *testing.T) {
		w := ta.withCookie(storage.Sandbox, cookie, "GET", sessionPath, "")
		var got sessionResponse
		mustDecode(t, w, &got)
		if w.Code != 200 || got != want {
			t.Errorf("GET session: got %d %+v, want %+v", w.Code, got, want)
		}
		w = ta.do("GET", sessionPath, "")
		wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, apierr.DetailMissingSession)
	})

	suppliers := eudrPrefix + "/suppliers"
	body := `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`
	t.Run("Read", func(t *testing.T) {
		if w := ta.withCookie(storage.Sandbox, cookie, "GET", suppliers, ""); w.Code != 200 {
			t.Errorf("GET suppliers with a session: got %d %s", w.Code, w.Body)
		}
	})
	t.Run("CSRF", func(t *testing.T) {
		w := ta.withCookie(storage.Sandbox, cookie, "POST", suppliers, body, "Idempotency-Key", "c1")
		e := wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailCSRFTokenRequired)
		if e.Message != apierr.MsgForbidden || e.Details[0].Field != "headers.X-CSRF-Token" {
			t.Errorf("refusal: got %+v", e)
		}
		w = ta.withCookie(storage.Sandbox, cookie, "POST", suppliers, body, "Idempotency-Key", "c2", "X-CSRF-Token", sess.CSRFToken+"x")
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailCSRFTokenRequired)
		w = ta.withCookie(storage.Sandbox, cookie, "POST", enterprisePrefix+"/api-keys", `{"environment":"sandbox"}`, "Idempotency-Key", "c3")
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailCSRFTokenRequired)
	})
	t.Run("Write", func(t *testing.T) {
		w := ta.withCookie(storage.Sandbox, cookie, "POST", suppliers, body, "Idempotency-Key", "c4", "X-CSRF-Token", sess.CSRFToken)
		if w.Code != 200 {
			t.Errorf("POST supplier with session and CSRF token: got %d %s", w.Code, w.Body)
		}
		w = ta.withCookie(storage.Sandbox, cookie, "POST", enterprisePrefix+"/api-keys", `{"environment":"sandbox"}`, "Idempotency-Key", "c5", "X-CSRF-Token", sess.CSRFToken)
		if w.Code != 200 {
			t.Errorf("create key with session and CSRF token: got %d %s", w.Code, w.Body)
		}
	})
	t.Run("HeadersWin", func(t *testing.T) {
		// An API key is the credential when one is sent: no CSRF token
		// needed, whatever cookie comes with it.
		_, key := ta.newKey(storage.Sandbox)
		w := ta.withCookie(storage.Sandbox, cookie, "POST", suppliers, body, "Idempotency-Key", "c6", "X-API-Key", key)
		if w.Code != 200 {
			t.Errorf("POST with an API key and a cookie: got %d %s", w.Code, w.Body)
		}
	})
}

func TestSession_Reader(t *testing.T) {
	ta := newTestApp(t)
	reader := ta.createUser(ta.adminToken(), `{"username":"rita","role":"reader"}`, "u1")
	cookie, sess := ta.signIn(storage.Sandbox, "rita", reader.Password)
	csrf := []string{"X-CSRF-Token", sess.CSRFToken}
	if w := ta.withCookie(storage.Sandbox, cookie, "GET", eudrPrefix+"/polygons", ""); w.Code != 200 {
		t.Errorf("reader reads polygons: got %d %s", w.Code, w.Body)
	}
	for _, c := range []struct{ method, path, body, detail string }{
		{"POST", eudrPrefix + "/suppliers", `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`, apierr.DetailScopeRequired},
		{"DELETE", eudrPrefix + "/polygons/pol_x", "", apierr.DetailScopeRequired},
		{"PUT", eudrPrefix + "/credentials/eu-system", `{}`, apierr.DetailScopeRequired},
		{"POST", eudrPrefix + "/webhooks/dlq/replay-bulk", `{}`, apierr.DetailScopeRequired},
		{"GET", enterprisePrefix + "/api-keys", "", apierr.DetailAdminRequired},
		{"POST", enterprisePrefix + "/api-keys", `{"environment":"sandbox"}`, apierr.DetailAdminRequired},
		{"POST", enterprisePrefix + "/users", `{"username":"x","role":"reader"}`, apierr.DetailAdminRequired},
		{"GET", enterprisePrefix + "/admin/backup", "", apierr.DetailAdminRequired},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			w := ta.withCookie(storage.Sandbox, cookie, c.method, c.path, c.body, append(csrf, "Idempotency-Key", "r-"+c.path)...)
			wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, c.detail)
		})
	}
}

// A session ends when unused for auth.session_idle, and at
// auth.session_max however much it is used.
func TestSession_Expiry(t *testing.T) {
	ta := newTestApp(t)
	get := func(c *http.Cookie) int { return ta.withCookie(storage.Sandbox, c, "GET", sessionPath, "").Code }

	idle, _ := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	ta.clock.Advance(29 * time.Minute)
	if code := get(idle); code != 200 {
		t.Fatalf("after 29 minutes: got %d, want 200", code)
	}
	ta.clock.Advance(29 * time.Minute) // 58 minutes old, used 29 minutes ago
	if code := get(idle); code != 200 {
		t.Fatalf("29 minutes after its last use: got %d, want 200", code)
	}
	ta.clock.Advance(30 * time.Minute)
	if code := get(idle); code != 401 {
		t.Errorf("30 minutes unused: got %d, want 401", code)
	}

	busy, _ := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	for i := 0; i < 24; i++ { // used every 29 minutes for 11.6 hours
		ta.clock.Advance(29 * time.Minute)
		if code := get(busy); code != 200 {
			t.Fatalf("used after %d minutes: got %d, want 200", 29*(i+1), code)
		}
	}
	ta.clock.Advance(25 * time.Minute) // 12h01m old
	if code := get(busy); code != 401 {
		t.Errorf("past auth.session_max: got %d, want 401", code)
	}
}

func TestSession_SignOutAndPasswordReset(t *testing.T) {
	ta := newTestApp(t)
	cookie, sess := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	w := ta.withCookie(storage.Sandbox, cookie, "DELETE", sessionPath, "")
	wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailCSRFTokenRequired)
	w = ta.withCookie(storage.Sandbox, cookie, "DELETE", sessionPath, "", "X-CSRF-Token", sess.CSRFToken)
	if w.Code != http.StatusNoContent {
		t.Fatalf("sign out: got %d %s", w.Code, w.Body)
	}
	if cs := w.Result().Cookies(); len(cs) != 1 || cs[0].Name != cookie.Name || cs[0].MaxAge >= 0 {
		t.Errorf("sign out: cookies %v, want %s cleared", cs, cookie.Name)
	}
	if w := ta.withCookie(storage.Sandbox, cookie, "GET", sessionPath, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("after sign-out: got %d, want 401", w.Code)
	}

	cookie, _ = ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	if _, _, err := ta.accounts.ResetPassword(t.Context(), adminUsername); err != nil {
		t.Fatal(err)
	}
	if w := ta.withCookie(storage.Sandbox, cookie, "GET", sessionPath, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("after a password reset: got %d, want 401", w.Code)
	}
}

// A session works only on the listener it was made on.
func TestSession_OtherListener(t *testing.T) {
	ta := newTestApp(t)
	sandbox, _ := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	production, _ := ta.signIn(storage.Production, adminUsername, testAdminPassword)
	if production.Name == sandbox.Name {
		t.Fatalf("both listeners set cookie %s: one sign-in would replace the other's", production.Name)
	}
	// The sandbox's cookie is not production's: production sees none.
	w := ta.withCookie(storage.Production, sandbox, "GET", sessionPath, "")
	wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, apierr.DetailMissingSession)
	// A sandbox session id sent as production's cookie is refused.
	copied := &http.Cookie{Name: production.Name, Value: sandbox.Value}
	for _, path := range []string{sessionPath, eudrPrefix + "/suppliers", enterprisePrefix + "/api-keys"} {
		w = ta.withCookie(storage.Production, copied, "GET", path, "")
		e := wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailWrongEnvironment)
		if e.Details[0].Field != "cookies.eudr_session" {
			t.Errorf("%s: field %q, want cookies.eudr_session", path, e.Details[0].Field)
		}
	}
	if w := ta.withCookie(storage.Production, production, "GET", eudrPrefix+"/suppliers", ""); w.Code != 200 {
		t.Errorf("production session on production: got %d %s", w.Code, w.Body)
	}
}

func TestSession_SignInRefused(t *testing.T) {
	ta := newTestApp(t)
	w := ta.do("POST", sessionPath, `{"username":"admin","password":"wrong"}`)
	wantError(t, w, http.StatusUnauthorized, apierr.CodeUnauthorized, apierr.DetailInvalidCredentials)
	if len(w.Result().Cookies()) != 0 {
		t.Errorf("a failed sign-in set cookies %v", w.Result().Cookies())
	}
	w = ta.do("POST", sessionPath, `{"username":"admin"}`)
	wantError(t, w, http.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailRequired)
}

// GET /auth/whoami tells a key its scopes and a session its role's, so
// the console offers writes only to who may make them.
func TestSession_Whoami(t *testing.T) {
	ta := newTestApp(t)
	const path = enterprisePrefix + "/auth/whoami"
	readKey, readValue := ta.newKey(storage.Sandbox, account.ScopeRead)
	_, writeValue := ta.newKey(storage.Sandbox, account.ScopeRead, account.ScopeWrite)
	reader := ta.createUser(ta.adminToken(), `{"username":"rita","role":"reader"}`, "u1")
	readerCookie, _ := ta.signIn(storage.Sandbox, "rita", reader.Password)
	adminCookie, _ := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)

	for _, c := range []struct {
		name   string
		send   func() *httptest.ResponseRecorder
		want   whoamiResponse
		scopes string
	}{
		{"ReadKey", func() *httptest.ResponseRecorder {
			return ta.serve(storage.Sandbox, newRequest("GET", path, "", "X-API-Key", readValue))
		}, whoamiResponse{Credential: "apiKey", KeyID: readKey.ID, KeyName: "test"}, "read"},
		{"WriteKeyAsBearer", func() *httptest.ResponseRecorder {
			return ta.serve(storage.Sandbox, newRequest("GET", path, "", "Authorization", "Bearer "+writeValue))
		}, whoamiResponse{Credential: "apiKey", KeyName: "test"}, "read write"},
		{"ReaderSession", func() *httptest.ResponseRecorder {
			return ta.withCookie(storage.Sandbox, readerCookie, "GET", path, "")
		}, whoamiResponse{Credential: "session", Username: "rita", Role: "reader"}, "read"},
		{"AdminSession", func() *httptest.ResponseRecorder {
			return ta.withCookie(storage.Sandbox, adminCookie, "GET", path, "")
		}, whoamiResponse{Credential: "session", Username: adminUsername, Role: "admin"}, "read write"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := c.send()
			var got whoamiResponse
			mustDecode(t, w, &got)
			if w.Code != http.StatusOK {
				t.Fatalf("got %d %s, want 200", w.Code, w.Body)
			}
			if c.want.KeyID == "" {
				c.want.KeyID = got.KeyID // a key made here: its id is the store's
			}
			scopes := strings.Join(got.Scopes, " ")
			got.Scopes = nil
			c.want.Org, c.want.Environment = defaultOrg, "sandbox"
			if !reflect.DeepEqual(got, c.want) || scopes != c.scopes {
				t.Errorf("got %+v scopes %q, want %+v scopes %q", got, scopes, c.want, c.scopes)
			}
		})
	}
	t.Run("NoCredential", func(t *testing.T) {
		wantError(t, ta.serve(storage.Sandbox, newRequest("GET", path, "")), http.StatusUnauthorized, apierr.CodeUnauthorized, apierr.DetailMissingAPIKey)
	})
	t.Run("KeyOfTheOtherListener", func(t *testing.T) {
		w := ta.serve(storage.Production, newRequest("GET", path, "", "X-API-Key", readValue))
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailWrongEnvironment)
	})
}

// Signing in on a browser that holds a session ends that session: the
// browser keeps one cookie per listener, and the one it drops must not
// live on for whoever copied it.
func TestSession_SignInReplaces(t *testing.T) {
	ta := newTestApp(t)
	first, _ := ta.signIn(storage.Sandbox, adminUsername, testAdminPassword)
	body, _ := json.Marshal(account.LoginRequest{Username: adminUsername, Password: testAdminPassword})
	w := ta.withCookie(storage.Sandbox, first, "POST", sessionPath, string(body))
	if w.Code != http.StatusOK {
		t.Fatalf("sign in again: %d %s", w.Code, w.Body)
	}
	if w := ta.withCookie(storage.Sandbox, first, "GET", sessionPath, ""); w.Code != http.StatusUnauthorized {
		t.Errorf("the replaced session answers %d, want 401", w.Code)
	}
}
