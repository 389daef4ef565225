package server

import (
	"context"
	"net/http"
	"strings"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// principal is who a request comes from, as far as its credentials tell.
// A request may carry credentials that are recognised but refused (a rotated
// key, a key of the other environment): then err holds the 401 or 403 to send
// when a route needs them, and the request is rate limited per client IP.
type principal struct {
	key    *storage.APIKey // a valid API key
	user   *storage.User   // a valid login token
	tenant storage.Tenant
	err    *apierr.Error // why the credential sent was refused; nil if none was sent
	field  string        // where the credential came from: headers.X-API-Key, headers.Authorization or cookies.<name>
	sent   credential    // what kind of credential the request carried
	// session is the console session of a request signed in by cookie;
	// csrfOK says whether it carried the session's X-CSRF-Token.
	session *account.Session
	csrfOK  bool
	// listener is the environment of the listener the request came in on.
	listener storage.Environment
}

// credential is the kind of credential a request carried, valid or not:
// the route's policy words a 401 after it.
type credential int

const (
	sentNothing   credential = iota
	sentKey                  // X-API-Key, or Authorization: Bearer sk_...
	sentToken                // Authorization: Bearer and anything else: a login token
	sentBadHeader            // Authorization without the Bearer scheme or a value
	sentSession              // the console's session cookie, and neither header
)

// How to send what a route needs, as the issue of a 401's detail.
const (
	sendKey   = "send the key in the X-API-Key header (or Authorization: Bearer sk_...)"
	sendToken = "send a login token in Authorization: Bearer (POST /api/v1/enterprise/auth/login gives one)"
)

// id is what the access log and the rate limiter know the caller by.
func (p principal) id() string {
	switch {
	case p.key != nil:
		return p.key.ID
	case p.user != nil:
		return "user:" + p.user.Username
	}
	return ""
}

// identify reads the credential of a request, if any, and records who sent
// it. It refuses nothing itself: the route's policy decides, after the rate
// limiter has counted the request.
func (a *App) identify(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ri := infoFrom(r.Context())
		ri.who = a.principalOf(r, ri.env)
		ri.who.listener = ri.env
		if ri.who.key != nil {
			a.usage.Touch(ri.who.key.ID, a.now())
		}
		next.ServeHTTP(w, r)
	})
}

// principalOf applies the key rules of docs/api.md: X-API-Key wins over Authorization;
// "Authorization: Bearer" carries an API key (sk_...) or a login token; a
// credential anywhere else counts as missing.
func (a *App) principalOf(r *http.Request, env storage.Environment) principal {
	if v := r.Header.Get("X-API-Key"); v != "" {
		return a.keyPrincipal(r.Context(), strings.TrimSpace(v), env, "headers.X-API-Key")
	}
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return a.sessionPrincipal(r, env)
	}
	scheme, token, ok := strings.Cut(authz, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return principal{err: apierr.UnauthorizedBecause(apierr.DetailMalformedAPIKey, "headers.Authorization",
			"the Authorization header must be Bearer and a value: "+sendKey), field: "headers.Authorization", sent: sentBadHeader}
	}
	if strings.HasPrefix(token, "sk_") {
		return a.keyPrincipal(r.Context(), token, env, "headers.Authorization")
	}
	return a.userPrincipal(r.Context(), token, env)
}

// keyPrincipal is the caller a key value names (account.VerifyKey); a
// refusal names the header the value came in. A value that is not of a
// key's form says so; an unknown or revoked one does not (a 401 tells
// nothing of which keys exist).
func (a *App) keyPrincipal(ctx context.Context, value string, env storage.Environment, field string) principal {
	if !account.WellFormedKey(value) {
		return principal{err: apierr.UnauthorizedBecause(apierr.DetailMalformedAPIKey, field,
			"not an API key (sk_live_ or sk_test_ and 32 letters and digits): "+sendKey), field: field, sent: sentKey}
	}
	key, err := a.accounts.VerifyKey(ctx, value, env)
	if err != nil {
		e := apierr.From(err)
		if len(e.Details) > 0 {
			e.Details[0].Field = field
		}
		return principal{err: e, field: field, sent: sentKey}
	}
	return principal{key: key, tenant: storage.Tenant{Org: key.Org, Env: env}, field: field, sent: sentKey}
}

// userPrincipal is the user a login token was issued to
// (account.VerifyToken).
func (a *App) userPrincipal(ctx context.Context, token string, env storage.Environment) principal {
	const field = "headers.Authorization"
	user, err := a.accounts.VerifyToken(ctx, token)
	if err != nil {
		return principal{err: apierr.From(err), field: field, sent: sentToken}
	}
	return principal{user: user, tenant: storage.Tenant{Org: user.Org, Env: env}, field: field, sent: sentToken}
}

// sessionPrincipal is the user of the listener's session cookie
// (account.VerifySession), if the request carries one: a credential only
// when no header carries one.
func (a *App) sessionPrincipal(r *http.Request, env storage.Environment) principal {
	c, err := r.Cookie(sessionCookie(env))
	if err != nil || c.Value == "" {
		return principal{}
	}
	field := "cookies." + c.Name
	sess, err := a.accounts.VerifySession(r.Context(), c.Value, env)
	if err != nil {
		e := apierr.From(err)
		if len(e.Details) > 0 {
			e.Details[0].Field = field
		}
		return principal{err: e, field: field, sent: sentSession}
	}
	return principal{user: sess.User, tenant: storage.Tenant{Org: sess.User.Org, Env: env}, field: field, sent: sentSession,
		session: sess, csrfOK: a.accounts.CheckCSRF(c.Value, r.Header.Get(csrfHeader))}
}

// authPolicy is what a route requires of its caller.
type authPolicy int

const (
	authNone      authPolicy = iota // probes, OpenAPI, login
	authKey                         // the EUDR API: an API key of this listener's environment
	authKeyRead                     // authKey with the read scope whatever the method: a POST that only checks what it is sent
	authAdmin                       // key and user management: a login token (JWT) of an admin
	authAppliance                   // backups, reference layers: a login token of an appliance administrator
	authSession                     // the console's own session: its session cookie
)

// authorize applies a route's policy to the request's principal and returns
// the 401 or 403 to send, or nil. A 401 for a missing or malformed
// credential has one detail naming the header the route expects.
func authorize(policy authPolicy, p principal, method string) *apierr.Error {
	scope := requiredScope(method)
	if policy == authKeyRead {
		policy, scope = authKey, account.ScopeRead
	}
	if policy != authNone && p.session != nil && !p.csrfOK && scope == account.ScopeWrite {
		e := apierr.Forbidden(apierr.DetailCSRFTokenRequired,
			"a request signed in by the session cookie that is not GET or HEAD needs the session's CSRF token in "+csrfHeader)
		e.Details[0].Field = "headers." + csrfHeader
		return e
	}
	switch policy {
	case authKey:
		if p.session != nil {
			// A session acts with its user's role: a reader has the read
			// scope, an admin both.
			if p.user.Role != account.RoleAdmin && scope == account.ScopeWrite {
				e := apierr.Forbidden(apierr.DetailScopeRequired, "a reader's session has the read scope only")
				e.Details[0].Field = p.field
				return e
			}
			return nil
		}
		if p.key == nil {
			return keyRequired(p)
		}
		if !account.HasScope(p.key.Scopes, scope) {
			e := apierr.Forbidden(apierr.DetailScopeRequired, "this request needs the "+scope+" scope")
			e.Details[0].Field = p.field
			return e
		}
	case authSession:
		if p.session == nil {
			if p.err != nil && p.sent == sentSession {
				return p.err
			}
			return apierr.UnauthorizedBecause(apierr.DetailMissingSession, "cookies."+sessionCookie(p.listener),
				"no console session: sign in with POST /api/v1/enterprise/auth/session")
		}
	case authAdmin, authAppliance:
		switch {
		case p.user != nil:
			if p.user.Role != account.RoleAdmin {
				return apierr.Forbidden(apierr.DetailAdminRequired, "this request needs an administrator")
			}
			if policy == authAppliance && !p.user.ApplianceAdmin {
				return apierr.Forbidden(apierr.DetailApplianceAdminRequired,
					"this request affects the whole appliance and needs an appliance administrator")
			}
		case p.err != nil && p.err.Status == http.StatusForbidden:
			return p.err // WRONG_ENVIRONMENT and KEY_ROTATED come before JWT_REQUIRED
		case p.key != nil:
			e := apierr.Forbidden(apierr.DetailJWTRequired, "key management needs a login token (POST /api/v1/enterprise/auth/login), not an API key")
			e.Details[0].Field = p.field
			return e
		case p.sent == sentToken || p.sent == sentSession:
			return p.err // a login token or session that is not (or no longer) valid
		default: // nothing, or something that is no login token
			return apierr.UnauthorizedBecause(apierr.DetailMissingLoginToken, "headers.Authorization", "key management needs a login token: "+sendToken)
		}
	}
	return nil
}

// keyRequired is the refusal of a request without a valid API key where
// one is needed.
func keyRequired(p principal) *apierr.Error {
	switch {
	case p.err != nil && p.sent != sentToken:
		return p.err // a 403, a malformed key or header, an unknown or revoked key
	case p.user != nil:
		return apierr.UnauthorizedBecause(apierr.DetailMissingAPIKey, p.field, "a login token is not an API key: "+sendKey)
	case p.sent == sentToken:
		return apierr.UnauthorizedBecause(apierr.DetailMalformedAPIKey, p.field, "neither an API key (sk_...) nor a valid login token: "+sendKey)
	default:
		return apierr.UnauthorizedBecause(apierr.DetailMissingAPIKey, "headers.X-API-Key", "no API key: "+sendKey)
	}
}

func requiredScope(method string) string {
	if method == http.MethodGet || method == http.MethodHead {
		return account.ScopeRead
	}
	return account.ScopeWrite
}
