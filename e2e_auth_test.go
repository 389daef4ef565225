package main_test

// End-to-end tests of authentication and authorization: every way a
// credential is missing, malformed, revoked or forged (401), and every
// reason of a 403 (wrong environment, rotated key, login token required,
// scope required) with their order and the X-API-Key/Authorization rules.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// forgeJWT signs HS256 claims with a secret the appliance does not know.
func forgeJWT(alg string, claims map[string]any) string {
	enc := func(v any) string {
		b, _ := json.Marshal(v)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	head := enc(map[string]string{"alg": alg, "typ": "JWT"}) + "." + enc(claims)
	if alg == "none" {
		return head + "."
	}
	mac := hmac.New(sha256.New, []byte("not the appliance's secret"))
	mac.Write([]byte(head))
	return head + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

func TestAuth_Unauthorized(t *testing.T) {
	t.Parallel()
	// Many credential-less requests in a row: lift the per-IP limit.
	p := startServer(t, "EUDR_RATE_LIMIT_IP_PER_SECOND=1000", "EUDR_RATE_LIMIT_IP_BURST=1000")
	jwt := p.Login(t)
	key := p.CreateKey(t, sandbox)
	revoked := p.CreateKey(t, sandbox)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(revoked.Key), nil).WantStatus(t, http.StatusOK) // used, then revoked
	apitest.Do(t, "DELETE", p.SandboxURL+enterpriseAPI+"/api-keys/"+revoked.KeyID, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusNoContent)
	apitest.WantError(t, apitest.Do(t, "DELETE", p.SandboxURL+enterpriseAPI+"/api-keys/"+revoked.KeyID, apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
	// A revoked key cannot be brought back by rotating it.
	apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/api-keys/"+revoked.KeyID+"/rotate", apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
	unknown := "sk_test_" + apitest.RandBase62(32)
	health := p.SandboxURL + eudrAPI + "/health"

	t.Run("Control", func(t *testing.T) {
		apitest.Do(t, "GET", health, apitest.WithKey(key.Key), nil).WantStatus(t, http.StatusOK)
	})

	cases := []struct {
		name    string
		url     string
		headers map[string]string
		detail  string // a missing or malformed key has one, naming the header expected
	}{
		{"NoKey", health, nil, "MISSING_API_KEY"},
		{"EmptyXAPIKey", health, apitest.Hdr("X-API-Key", " "), "MISSING_API_KEY"},
		{"Malformed", health, apitest.WithKey("not-a-key"), "MALFORMED_API_KEY"},
		{"WrongPrefix", health, apitest.WithKey("sk_prod_" + key.Key[8:]), "MALFORMED_API_KEY"},
		{"Truncated", health, apitest.WithKey(key.Key[:len(key.Key)-1]), "MALFORMED_API_KEY"},
		{"OneCharTooMany", health, apitest.WithKey(key.Key + "A"), "MALFORMED_API_KEY"},
		{"NotBase62", health, apitest.WithKey(key.Key[:len(key.Key)-1] + "!"), "MALFORMED_API_KEY"},
		{"QueryString", health + "?api_key=" + key.Key, nil, "MISSING_API_KEY"},
		{"QueryStringXAPIKey", health + "?X-API-Key=" + key.Key, nil, "MISSING_API_KEY"},
		{"BareAuthorization", health, apitest.Hdr("Authorization", key.Key), "MALFORMED_API_KEY"},
		{"BasicAuthorization", health, apitest.Hdr("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(key.Key+":"))), "MALFORMED_API_KEY"},
		{"BearerWithoutToken", health, apitest.Hdr("Authorization", "Bearer"), "MALFORMED_API_KEY"},
		{"OtherHeader", health, apitest.Hdr("Api-Key", key.Key), "MISSING_API_KEY"},
		{"Revoked", health, apitest.WithKey(revoked.Key), ""},
		{"RevokedAsBearer", health, apitest.Bearer(revoked.Key), ""},
		{"UnknownWellFormed", health, apitest.WithKey(unknown), ""},
		{"UnknownWellFormedBearer", health, apitest.Bearer(unknown), ""},
		{"LoginTokenOnAPI", health, apitest.Bearer(jwt), "MISSING_API_KEY"},
		{"RevokedOnSuppliers", p.SandboxURL + eudrAPI + "/suppliers", apitest.WithKey(revoked.Key), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.WantUnauthorized(t, apitest.Do(t, "GET", c.url, c.headers, nil), details(c.detail)...)
		})
	}
	t.Run("RevokedKeyCannotWrite", func(t *testing.T) {
		apitest.WantUnauthorized(t, postSupplier(t, p.SandboxURL, revoked.Key, apitest.NewIdemKey(), supplierBody("rev-1", "Revoked Ltd")))
	})

	keys := p.SandboxURL + enterpriseAPI + "/api-keys"
	now := time.Now().Unix()
	// A token that is not valid (or no longer) is refused as such; anything
	// but a token is asked for one (MISSING_LOGIN_TOKEN).
	jwtCases := []struct {
		name    string
		headers map[string]string
		detail  string
	}{
		{"NoCredential", nil, "MISSING_LOGIN_TOKEN"},
		{"GarbageJWT", apitest.Bearer("not-a-jwt"), ""},
		{"GarbageThreeParts", apitest.Bearer("aaa.bbb.ccc"), ""},
		{"ForgedSignature", apitest.Bearer(forgeJWT("HS256", map[string]any{"iss": "eudr", "sub": "admin", "iat": now, "exp": now + 3600})), ""},
		{"ExpiredForged", apitest.Bearer(forgeJWT("HS256", map[string]any{"iss": "eudr", "sub": "admin", "iat": now - 7200, "exp": now - 3600})), ""},
		{"AlgNone", apitest.Bearer(forgeJWT("none", map[string]any{"iss": "eudr", "sub": "admin", "iat": now, "exp": now + 3600})), ""},
		{"TamperedRealToken", apitest.Bearer(tamper(jwt)), ""},
		{"JWTInXAPIKey", apitest.WithKey(jwt), "MISSING_LOGIN_TOKEN"},
		{"UnknownKey", apitest.WithKey(unknown), "MISSING_LOGIN_TOKEN"},
		{"RevokedKey", apitest.WithKey(revoked.Key), "MISSING_LOGIN_TOKEN"},
	}
	for _, c := range jwtCases {
		t.Run("APIKeys/"+c.name, func(t *testing.T) {
			apitest.WantUnauthorized(t, apitest.Do(t, "GET", keys, c.headers, nil), details(c.detail)...)
			apitest.WantUnauthorized(t, apitest.Do(t, "POST", keys, apitest.Merge(c.headers, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
				map[string]any{"environment": "sandbox"}), details(c.detail)...)
		})
	}
	t.Run("APIKeys/ValidJWT", func(t *testing.T) {
		apitest.Do(t, "GET", keys, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
	})

	loginURL := p.SandboxURL + enterpriseAPI + "/auth/login"
	t.Run("LoginBadPassword", func(t *testing.T) {
		apitest.WantLoginFailed(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{"username": "admin", "password": "wrong-password"}))
	})
	t.Run("LoginUnknownUser", func(t *testing.T) {
		apitest.WantLoginFailed(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{"username": "nobody", "password": testAdminPassword}))
	})
	t.Run("LoginOnProductionListener", func(t *testing.T) {
		apitest.Login(t, p.ProductionURL, "admin", testAdminPassword)
		apitest.WantLoginFailed(t, apitest.Do(t, "POST", p.ProductionURL+enterpriseAPI+"/auth/login", nil,
			map[string]string{"username": "admin", "password": testAdminPassword + "x"}))
	})
	t.Run("LoginMissingFields", func(t *testing.T) {
		e := apitest.WantError(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{}), http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED", "REQUIRED")
		if len(e.Details) == 2 && (e.Details[0].Field != "username" || e.Details[1].Field != "password") {
			t.Errorf("got fields %q, %q, want username, password", e.Details[0].Field, e.Details[1].Field)
		}
	})

	p.Stop(t)
	assertLogHasNoSecrets(t, p, key.Key, revoked.Key, unknown, jwt, testAdminPassword)
}

// tamper changes the first character of a token's signature (whose bits all
// count, unlike the last one's) so it no longer verifies.
func tamper(jwt string) string {
	i := strings.LastIndexByte(jwt, '.') + 1
	c := byte('A')
	if jwt[i] == 'A' {
		c = 'B'
	}
	return jwt[:i] + string(c) + jwt[i+1:]
}

func TestAuth_Forbidden(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	jwt := p.Login(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)
	ro := p.CreateKey(t, sandbox, "read")
	roLive := p.CreateKey(t, production, "read")
	if !slices.Equal(ro.Scopes, []string{"read"}) {
		t.Errorf("read-only key: scopes %q, want [read]", ro.Scopes)
	}
	if !slices.Equal(sk.Scopes, []string{"read", "write"}) {
		t.Errorf("default key: scopes %q, want [read write]", sk.Scopes)
	}
	healthOf := func(env string) string { return p.URL(env) + eudrAPI + "/health" }

	t.Run("SandboxKeyOnProduction", func(t *testing.T) {
		d := apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(production), apitest.WithKey(sk.Key), nil), "WRONG_ENVIRONMENT")
		if d.Field != "headers.X-API-Key" {
			t.Errorf("field %q, want headers.X-API-Key", d.Field)
		}
		d = apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(production), apitest.Bearer(sk.Key), nil), "WRONG_ENVIRONMENT")
		if d.Field != "headers.Authorization" {
			t.Errorf("field %q, want headers.Authorization", d.Field)
		}
		apitest.WantForbidden(t, postSupplier(t, p.ProductionURL, sk.Key, apitest.NewIdemKey(), supplierBody("x-env-1", "X")), "WRONG_ENVIRONMENT")
	})
	t.Run("ProductionKeyOnSandbox", func(t *testing.T) {
		apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(pk.Key), nil), "WRONG_ENVIRONMENT")
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers", apitest.Bearer(pk.Key), nil), "WRONG_ENVIRONMENT")
	})
	t.Run("OwnEnvironment", func(t *testing.T) {
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", healthOf(production), apitest.WithKey(pk.Key), nil).WantStatus(t, http.StatusOK)
	})

	var rotated apitest.APIKey
	old := p.CreateKey(t, sandbox)
	t.Run("RotatedKey", func(t *testing.T) {
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(old.Key), nil).WantStatus(t, http.StatusOK)
		r := apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/api-keys/"+old.KeyID+"/rotate", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
		r.Decode(t, &rotated)
		if rotated.KeyID != old.KeyID {
			t.Errorf("rotate: keyId %q, want the same %q", rotated.KeyID, old.KeyID)
		}
		if !sandboxKeyPattern.MatchString(rotated.Key) || rotated.Key == old.Key {
			t.Fatalf("rotate: key %q, want a new sk_test_ value", rotated.Key)
		}
		d := apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(old.Key), nil), "KEY_ROTATED")
		if d.Field != "headers.X-API-Key" {
			t.Errorf("field %q, want headers.X-API-Key", d.Field)
		}
		apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(sandbox), apitest.Bearer(old.Key), nil), "KEY_ROTATED")
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(rotated.Key), nil).WantStatus(t, http.StatusOK)
		mustCreateSupplier(t, p.SandboxURL, rotated.Key, "rot-1", "Rotated Ltd")

		// The list shows the new value's prefix and last four.
		var list []map[string]any
		apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		found := false
		for _, k := range list {
			if k["keyId"] == old.KeyID {
				found = true
				if k["prefix"] != rotated.Key[:12] || k["last4"] != rotated.Key[len(rotated.Key)-4:] {
					t.Errorf("listed prefix %v last4 %v, want those of the new value", k["prefix"], k["last4"])
				}
				if k["rotatedAt"] == nil {
					t.Errorf("listed rotatedAt is null after a rotation")
				}
			}
		}
		if !found {
			t.Errorf("rotated key %s missing from the list", old.KeyID)
		}
	})
	t.Run("RotatedTwice", func(t *testing.T) {
		var again apitest.APIKey
		apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/api-keys/"+old.KeyID+"/rotate", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK).Decode(t, &again)
		apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(old.Key), nil), "KEY_ROTATED")
		apitest.WantForbidden(t, apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(rotated.Key), nil), "KEY_ROTATED")
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(again.Key), nil).WantStatus(t, http.StatusOK)
	})
	t.Run("APIKeyOnKeyManagement", func(t *testing.T) {
		keys := p.SandboxURL + enterpriseAPI + "/api-keys"
		d := apitest.WantForbidden(t, apitest.Do(t, "GET", keys, apitest.WithKey(sk.Key), nil), "JWT_REQUIRED")
		if d.Field != "headers.X-API-Key" {
			t.Errorf("field %q, want headers.X-API-Key", d.Field)
		}
		apitest.WantForbidden(t, apitest.Do(t, "GET", keys, apitest.Bearer(sk.Key), nil), "JWT_REQUIRED")
		apitest.WantForbidden(t, apitest.Do(t, "POST", keys, apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
			map[string]any{"environment": "sandbox"}), "JWT_REQUIRED")
		apitest.WantForbidden(t, apitest.Do(t, "POST", keys+"/"+sk.KeyID+"/rotate", apitest.WithKey(sk.Key), nil), "JWT_REQUIRED")
		apitest.WantForbidden(t, apitest.Do(t, "DELETE", keys+"/"+sk.KeyID, apitest.WithKey(sk.Key), nil), "JWT_REQUIRED")
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.ProductionURL+enterpriseAPI+"/api-keys", apitest.WithKey(pk.Key), nil), "JWT_REQUIRED")
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK) // not revoked or rotated
	})
	t.Run("ReadOnlyKey", func(t *testing.T) {
		d := apitest.WantForbidden(t, postSupplier(t, p.SandboxURL, ro.Key, apitest.NewIdemKey(), supplierBody("ro-1", "Read Only Ltd")), "SCOPE_REQUIRED")
		if d.Field != "headers.X-API-Key" {
			t.Errorf("field %q, want headers.X-API-Key", d.Field)
		}
		apitest.WantForbidden(t, apitest.Do(t, "DELETE", p.SandboxURL+eudrAPI+"/suppliers/rot-1", apitest.WithKey(ro.Key), nil), "SCOPE_REQUIRED")
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(ro.Key), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/rot-1", apitest.WithKey(ro.Key), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", healthOf(sandbox), apitest.WithKey(ro.Key), nil).WantStatus(t, http.StatusOK)
		apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/ro-1", apitest.WithKey(ro.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantForbidden(t, postSupplier(t, p.ProductionURL, roLive.Key, apitest.NewIdemKey(), supplierBody("ro-2", "Read Only Ltd")), "SCOPE_REQUIRED")
	})
	t.Run("ReasonOrder", func(t *testing.T) {
		// WRONG_ENVIRONMENT, then KEY_ROTATED, JWT_REQUIRED, SCOPE_REQUIRED.
		apitest.WantForbidden(t, postSupplier(t, p.ProductionURL, ro.Key, apitest.NewIdemKey(), supplierBody("ro-3", "X")), "WRONG_ENVIRONMENT")
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.WithKey(pk.Key), nil), "WRONG_ENVIRONMENT")
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.WithKey(old.Key), nil), "KEY_ROTATED")
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.WithKey(ro.Key), nil), "JWT_REQUIRED")
	})
	t.Run("XAPIKeyWinsOverAuthorization", func(t *testing.T) {
		h := healthOf(sandbox)
		apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(sk.Key), apitest.Bearer("garbage")), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(sk.Key), apitest.Bearer(pk.Key)), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Authorization", "Basic Zm9vOmJhcg==")), nil).WantStatus(t, http.StatusOK)
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey("garbage"), apitest.Bearer(sk.Key)), nil), "MALFORMED_API_KEY")
		apitest.WantForbidden(t, apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(pk.Key), apitest.Bearer(sk.Key)), nil), "WRONG_ENVIRONMENT")
		// A write key in Authorization does not lend its scope to a read-only X-API-Key.
		apitest.WantForbidden(t, apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(ro.Key), apitest.Bearer(sk.Key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
			supplierBody("ro-4", "X")), "SCOPE_REQUIRED")
	})
	t.Run("BearerAPIKey", func(t *testing.T) {
		r := apitest.Do(t, "GET", healthOf(sandbox), apitest.Bearer(sk.Key), nil).WantStatus(t, http.StatusOK)
		if env := r.Object(t)["environment"]; env != sandbox {
			t.Errorf("environment %v, want sandbox", env)
		}
		apitest.Do(t, "GET", healthOf(sandbox), apitest.Hdr("Authorization", "bearer "+sk.Key), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.Bearer(sk.Key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
			supplierBody("bearer-1", "Bearer Ltd")).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/bearer-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	})
}

// details is the detail codes a 401 should carry: none for "".
func details(code string) []string {
	if code == "" {
		return nil
	}
	return []string{code}
}
