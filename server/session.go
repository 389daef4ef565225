package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// sessionCookieName is the production listener's session cookie. The
// sandbox's has a name of its own: browsers keep cookies per host, not
// per port, and one sign-in must not replace the other listener's.
const sessionCookieName = "eudr_session"

// csrfHeader carries the session's CSRF token on every request signed in
// by cookie that is not GET or HEAD.
const csrfHeader = "X-CSRF-Token"

func sessionCookie(env storage.Environment) string {
	if env == storage.Sandbox {
		return sessionCookieName + "_sandbox"
	}
	return sessionCookieName
}

// sessionResponse says who is signed in and the token to send back.
type sessionResponse struct {
	Username       string `json:"username"`
	Org            string `json:"org"`
	Role           string `json:"role"`
	ApplianceAdmin bool   `json:"applianceAdmin"`
	Environment    string `json:"environment"`
	ExpiresAt      string `json:"expiresAt"`
	MaxExpiresAt   string `json:"maxExpiresAt"`
	CSRFToken      string `json:"csrfToken"`
}

func sessionOf(s *account.Session) sessionResponse {
	return sessionResponse{Username: s.User.Username, Org: s.User.Org, Role: s.User.Role, ApplianceAdmin: s.User.ApplianceAdmin,
		Environment: string(s.Env), ExpiresAt: storage.FormatTime(s.ExpiresAt), MaxExpiresAt: storage.FormatTime(s.MaxExpiresAt),
		CSRFToken: s.CSRFToken}
}

// setSessionCookie sets (or, with an empty id, clears) the listener's
// session cookie: HttpOnly, so no script reads it; SameSite=Strict, so no
// other site's page sends it; Secure when the listener is TLS.
func setSessionCookie(w http.ResponseWriter, r *http.Request, env storage.Environment, id string) {
	c := &http.Cookie{Name: sessionCookie(env), Value: id, Path: "/", HttpOnly: true, Secure: r.TLS != nil,
		SameSite: http.SameSiteStrictMode}
	if id == "" {
		c.MaxAge = -1
	}
	http.SetCookie(w, c)
}

// handleSessionCreate signs a user in for the console (account.SignIn):
// the session cookie, and who is signed in with the CSRF token.
func (a *App) handleSessionCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req account.LoginRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := apierr.Merge(decoded, req.Validate()); err != nil {
		writeError(w, r, err)
		return
	}
	env := infoFrom(r.Context()).env
	var replaces string // the session this browser drops, if any
	if c, err := r.Cookie(sessionCookie(env)); err == nil {
		replaces = c.Value
	}
	id, sess, err := a.accounts.SignIn(r.Context(), req.Username, req.Password, env, replaces)
	if err != nil {
		writeError(w, r, err)
		return
	}
	setSessionCookie(w, r, env, id)
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, sessionOf(sess))
}

// handleSessionGet answers who is signed in, and the CSRF token again (a
// reloaded page has lost it).
func (a *App) handleSessionGet(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, sessionOf(infoFrom(r.Context()).who.session))
}

// handleSessionDelete signs out (account.SignOut) and clears the cookie.
func (a *App) handleSessionDelete(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	env := infoFrom(r.Context()).env
	c, err := r.Cookie(sessionCookie(env))
	if err == nil {
		if err := a.accounts.SignOut(r.Context(), c.Value); err != nil {
			writeError(w, r, err)
			return
		}
	}
	setSessionCookie(w, r, env, "")
	writeNoContent(w)
}

// whoamiResponse is who a request's credential names and what it may do:
// the console offers the controls that write only to a credential with
// the write scope, an API key's as much as a session's.
type whoamiResponse struct {
	Credential  string   `json:"credential"` // "apiKey" or "session"
	Org         string   `json:"org"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	KeyID       string   `json:"keyId,omitempty"`
	KeyName     string   `json:"keyName,omitempty"`
	Username    string   `json:"username,omitempty"`
	Role        string   `json:"role,omitempty"`
}

// handleWhoami answers the caller's credential and scopes: an API key's
// own, or a session's by its user's role (a reader reads, an admin also
// writes).
func (a *App) handleWhoami(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	ri := infoFrom(r.Context())
	p := ri.who
	res := whoamiResponse{Org: p.tenant.Org, Environment: string(ri.env)}
	if p.session != nil {
		res.Credential, res.Username, res.Role = "session", p.user.Username, p.user.Role
		res.Scopes = []string{account.ScopeRead}
		if p.user.Role == account.RoleAdmin {
			res.Scopes = append(res.Scopes, account.ScopeWrite)
		}
	} else {
		res.Credential, res.KeyID, res.KeyName, res.Scopes = "apiKey", p.key.ID, p.key.Name, p.key.Scopes
	}
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, r, http.StatusOK, res)
}
