package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Scopes of an API key (API.md section 2): read allows GET and HEAD, write
// everything else and implies read.
const (
	ScopeRead  = "read"
	ScopeWrite = "write"
)

// Key values: prefix + 32 base62 characters.
const (
	livePrefix  = "sk_live_"
	testPrefix  = "sk_test_"
	keyBodyLen  = 32
	base62Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// keyPrefix is the value prefix of an environment's keys.
func keyPrefix(env storage.Environment) string {
	if env == storage.Production {
		return livePrefix
	}
	return testPrefix
}

// principal is who a request comes from, as far as its credentials tell.
// A request may carry credentials that are recognised but refused (a rotated
// key, a key of the other environment): then err holds the 401 or 403 to send
// when a route needs them, and the request is rate limited per client IP.
type principal struct {
	key    *storage.APIKey // a valid API key
	user   *storage.User   // a valid login token
	tenant storage.Tenant
	err    *apierr.Error // why the credential sent was refused; nil if none was sent
	field  string        // where the credential came from: headers.X-API-Key or headers.Authorization
}

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
		if ri.who.key != nil {
			a.usage.touch(ri.who.key.ID, a.now())
		}
		next.ServeHTTP(w, r)
	})
}

// principalOf applies API.md section 2: X-API-Key wins over Authorization;
// "Authorization: Bearer" carries an API key (sk_...) or a login token; a
// credential anywhere else counts as missing.
func (a *App) principalOf(r *http.Request, env storage.Environment) principal {
	if v := r.Header.Get("X-API-Key"); v != "" {
		return a.keyPrincipal(r.Context(), strings.TrimSpace(v), env, "headers.X-API-Key")
	}
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return principal{}
	}
	scheme, token, ok := strings.Cut(authz, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return principal{err: apierr.Unauthorized(), field: "headers.Authorization"}
	}
	if strings.HasPrefix(token, "sk_") {
		return a.keyPrincipal(r.Context(), token, env, "headers.Authorization")
	}
	return a.userPrincipal(r, token, env)
}

// keyPrincipal looks an API key value up by its SHA-256 and applies the
// refusal order of API.md: unknown, malformed or revoked is 401; then
// WRONG_ENVIRONMENT, then KEY_ROTATED (403).
func (a *App) keyPrincipal(ctx context.Context, value string, env storage.Environment, field string) principal {
	p := principal{field: field}
	if !wellFormedKey(value) {
		p.err = apierr.Unauthorized()
		return p
	}
	hash := sha256.Sum256([]byte(value))
	key, gen := a.keyCache.get(hash)
	if key == nil {
		err := a.db.View(ctx, func(tx *storage.Tx) error {
			var err error
			key, err = tx.FindAPIKeyByHash(hash[:])
			return err
		})
		if errors.Is(err, storage.ErrNotFound) {
			p.err = apierr.Unauthorized()
			return p
		}
		if err != nil { // the store failed: not the caller's fault
			p.err = &apierr.Error{Status: http.StatusInternalServerError, Code: apierr.CodeInternal, Message: "internal error",
				Err: fmt.Errorf("look up api key: %w", err)}
			return p
		}
		a.keyCache.put(hash, key, gen)
	}
	if key.RevokedAt != nil {
		p.err = apierr.Unauthorized()
		return p
	}
	switch {
	case key.Env != env:
		p.err = apierr.Forbidden(apierr.DetailWrongEnvironment, "a "+string(key.Env)+" key cannot be used on the "+string(env)+" listener")
		p.err.Details[0].Field = field
	case string(key.Hash) != string(hash[:]):
		p.err = apierr.Forbidden(apierr.DetailKeyRotated, "this key value was rotated; use the new value")
		p.err.Details[0].Field = field
	default:
		p.key = key
		p.tenant = storage.Tenant{Org: key.Org, Env: env}
	}
	return p
}

// wellFormedKey checks the prefix and 32 base62 characters before any lookup.
func wellFormedKey(v string) bool {
	var body string
	switch {
	case strings.HasPrefix(v, livePrefix):
		body = v[len(livePrefix):]
	case strings.HasPrefix(v, testPrefix):
		body = v[len(testPrefix):]
	default:
		return false
	}
	if len(body) != keyBodyLen {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62Chars, body[i]) < 0 {
			return false
		}
	}
	return true
}

// authPolicy is what a route requires of its caller.
type authPolicy int

const (
	authNone  authPolicy = iota // probes, OpenAPI, login
	authKey                     // the EUDR API: an API key of this listener's environment
	authAdmin                   // key management and admin: a login token (JWT)
)

// authorize applies a route's policy to the request's principal and returns
// the 401 or 403 to send, or nil.
func authorize(policy authPolicy, p principal, method string) *apierr.Error {
	switch policy {
	case authKey:
		if p.key == nil {
			if p.err != nil {
				return p.err
			}
			return apierr.Unauthorized() // nothing, or a login token where a key is needed
		}
		if !hasScope(p.key.Scopes, requiredScope(method)) {
			e := apierr.Forbidden(apierr.DetailScopeRequired, "this request needs the "+requiredScope(method)+" scope")
			e.Details[0].Field = p.field
			return e
		}
	case authAdmin:
		switch {
		case p.user != nil:
			if p.user.Role != roleAdmin {
				return apierr.Forbidden(apierr.DetailAdminRequired, "this request needs an administrator")
			}
		case p.err != nil && p.err.Status == http.StatusForbidden:
			return p.err // WRONG_ENVIRONMENT and KEY_ROTATED come before JWT_REQUIRED
		case p.key != nil:
			e := apierr.Forbidden(apierr.DetailJWTRequired, "key management needs a login token (POST /api/v1/enterprise/auth/login), not an API key")
			e.Details[0].Field = p.field
			return e
		case p.err != nil:
			return p.err
		default:
			return apierr.Unauthorized()
		}
	}
	return nil
}

func requiredScope(method string) string {
	if method == http.MethodGet || method == http.MethodHead {
		return ScopeRead
	}
	return ScopeWrite
}

// hasScope: write implies read.
func hasScope(scopes []string, need string) bool {
	return slices.Contains(scopes, need) || need == ScopeRead && slices.Contains(scopes, ScopeWrite)
}
