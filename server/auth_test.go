package server

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestRequiredScope(t *testing.T) {
	for m, want := range map[string]string{"GET": "read", "HEAD": "read", "POST": "write", "PUT": "write", "PATCH": "write", "DELETE": "write"} {
		if got := requiredScope(m); got != want {
			t.Errorf("requiredScope(%s): got %s, want %s", m, got, want)
		}
	}
}

// authPrincipals builds every kind of caller against a real store, as the
// sandbox listener sees them.
func authPrincipals(t *testing.T) map[string]principal {
	t.Helper()
	ta := newTestApp(t)
	_, read := ta.newKey(storage.Sandbox, "read")
	_, rw := ta.newKey(storage.Sandbox, "read", "write")
	rotKey, rotated := ta.newKey(storage.Sandbox)
	if _, _, err := ta.rotateKey(context.Background(), defaultOrg, rotKey.ID); err != nil {
		t.Fatal(err)
	}
	_, live := ta.newKey(storage.Production)
	_, liveRead := ta.newKey(storage.Production, "read")
	liveRotKey, liveRotated := ta.newKey(storage.Production)
	if _, _, err := ta.rotateKey(context.Background(), defaultOrg, liveRotKey.ID); err != nil {
		t.Fatal(err)
	}
	revKey, revoked := ta.newKey(storage.Sandbox)
	if w := ta.do("DELETE", enterprisePrefix+"/api-keys/"+revKey.ID, "", "Authorization", "Bearer "+ta.adminToken()); w.Code != 204 {
		t.Fatalf("revoke: got %d, want 204", w.Code)
	}
	ta.addOrgUser("other", "member", "member-password")
	ta.update(func(tx *storage.Tx) error {
		u, err := tx.FindUser("member")
		if err != nil {
			return err
		}
		u.Role = "viewer"
		return tx.PutUser(u)
	})

	of := func(hdr ...string) principal {
		return ta.principalOf(newRequest("GET", "/", "", hdr...), storage.Sandbox)
	}
	return map[string]principal{
		"None":            of(),
		"KeyRead":         of("X-API-Key", read),
		"KeyReadWrite":    of("X-API-Key", rw),
		"Rotated":         of("X-API-Key", rotated),
		"Revoked":         of("X-API-Key", revoked),
		"Malformed":       of("X-API-Key", "sk_test_short"),
		"Unknown":         of("X-API-Key", "sk_test_"+strings.Repeat("A", 32)),
		"WrongEnv":        of("X-API-Key", live),
		"WrongEnvRead":    of("X-API-Key", liveRead),
		"WrongEnvRotated": of("X-API-Key", liveRotated),
		"JWT":             of("Authorization", "Bearer "+ta.adminToken()),
		"JWTNonAdmin":     of("Authorization", "Bearer "+ta.login("member", "member-password")),
		"InvalidJWT":      of("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.e30.bm90IGEgc2lnbmF0dXJl"),
		"NoScheme":        of("Authorization", rw),
		"BasicScheme":     of("Authorization", "Basic "+rw),
	}
}

func TestAuthorize(t *testing.T) {
	ps := authPrincipals(t)
	type want struct {
		status int    // 0: allowed
		detail string // detail code of a 403, or of a 401 that has one
	}
	ok := want{}
	u := want{401, ""} // a credential refused as unknown, revoked or expired: no detail
	missingKey, malformedKey := want{401, apierr.DetailMissingAPIKey}, want{401, apierr.DetailMalformedAPIKey}
	missingToken := want{401, apierr.DetailMissingLoginToken}
	f := func(d string) want { return want{403, d} }
	all := func(w want) map[string]want { return map[string]want{"GET": w, "POST": w, "DELETE": w} }
	methods := []string{"GET", "POST", "DELETE"}
	for _, tc := range []struct {
		principal string
		policy    authPolicy
		byMethod  map[string]want // GET, POST, DELETE
	}{
		// authNone lets everyone through, whatever they send.
		{"None", authNone, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"Revoked", authNone, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"WrongEnv", authNone, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"InvalidJWT", authNone, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},

		// authKey: the EUDR API.
		{"None", authKey, all(missingKey)},
		{"KeyRead", authKey, map[string]want{"GET": ok, "POST": f(apierr.DetailScopeRequired), "DELETE": f(apierr.DetailScopeRequired)}},
		{"KeyReadWrite", authKey, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"Rotated", authKey, map[string]want{"GET": f(apierr.DetailKeyRotated), "POST": f(apierr.DetailKeyRotated), "DELETE": f(apierr.DetailKeyRotated)}},
		{"Revoked", authKey, map[string]want{"GET": u, "POST": u, "DELETE": u}},
		{"Malformed", authKey, all(malformedKey)},
		{"Unknown", authKey, map[string]want{"GET": u, "POST": u, "DELETE": u}},
		{"WrongEnv", authKey, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},
		// WRONG_ENVIRONMENT comes before SCOPE_REQUIRED and KEY_ROTATED.
		{"WrongEnvRead", authKey, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},
		{"WrongEnvRotated", authKey, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},
		// A login token is not an API key.
		{"JWT", authKey, all(missingKey)},
		{"InvalidJWT", authKey, all(malformedKey)},
		{"NoScheme", authKey, all(malformedKey)},
		{"BasicScheme", authKey, all(malformedKey)},

		// authKeyRead: a POST that only checks; the read scope is enough.
		{"None", authKeyRead, all(missingKey)},
		{"KeyRead", authKeyRead, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"KeyReadWrite", authKeyRead, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"WrongEnvRead", authKeyRead, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},

		// authAdmin: key management.
		{"None", authAdmin, all(missingToken)},
		{"KeyRead", authAdmin, map[string]want{"GET": f(apierr.DetailJWTRequired), "POST": f(apierr.DetailJWTRequired), "DELETE": f(apierr.DetailJWTRequired)}},
		{"KeyReadWrite", authAdmin, map[string]want{"GET": f(apierr.DetailJWTRequired), "POST": f(apierr.DetailJWTRequired), "DELETE": f(apierr.DetailJWTRequired)}},
		// KEY_ROTATED and WRONG_ENVIRONMENT come before JWT_REQUIRED.
		{"Rotated", authAdmin, map[string]want{"GET": f(apierr.DetailKeyRotated), "POST": f(apierr.DetailKeyRotated), "DELETE": f(apierr.DetailKeyRotated)}},
		{"WrongEnv", authAdmin, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},
		{"WrongEnvRotated", authAdmin, map[string]want{"GET": f(apierr.DetailWrongEnvironment), "POST": f(apierr.DetailWrongEnvironment), "DELETE": f(apierr.DetailWrongEnvironment)}},
		// Anything but a login token: the answer asks for one.
		{"Revoked", authAdmin, all(missingToken)},
		{"Malformed", authAdmin, all(missingToken)},
		{"JWT", authAdmin, map[string]want{"GET": ok, "POST": ok, "DELETE": ok}},
		{"JWTNonAdmin", authAdmin, map[string]want{"GET": f(apierr.DetailAdminRequired), "POST": f(apierr.DetailAdminRequired), "DELETE": f(apierr.DetailAdminRequired)}},
		{"InvalidJWT", authAdmin, map[string]want{"GET": u, "POST": u, "DELETE": u}},
		{"NoScheme", authAdmin, all(missingToken)},
		{"BasicScheme", authAdmin, all(missingToken)},
	} {
		policyName := map[authPolicy]string{authNone: "authNone", authKey: "authKey", authKeyRead: "authKeyRead", authAdmin: "authAdmin"}[tc.policy]
		t.Run(policyName+"/"+tc.principal, func(t *testing.T) {
			p, found := ps[tc.principal]
			if !found {
				t.Fatalf("no principal %s", tc.principal)
			}
			for _, m := range methods {
				w := tc.byMethod[m]
				e := authorize(tc.policy, p, m)
				if w.status == 0 {
					if e != nil {
						t.Errorf("%s: got %d %s %+v, want allowed", m, e.Status, e.Code, e.Details)
					}
					continue
				}
				if e == nil {
					t.Errorf("%s: got allowed, want %d %s", m, w.status, w.detail)
					continue
				}
				if e.Status != w.status {
					t.Errorf("%s: status got %d, want %d", m, e.Status, w.status)
				}
				switch w.status {
				case 401:
					if e.Code != apierr.CodeUnauthorized || e.Message != apierr.MsgUnauthorized {
						t.Errorf("%s: got %s %q, want UNAUTHORIZED %q", m, e.Code, e.Message, apierr.MsgUnauthorized)
					}
					if w.detail == "" && len(e.Details) != 0 || w.detail != "" && (len(e.Details) != 1 || e.Details[0].Code != w.detail) {
						t.Errorf("%s: details got %+v, want %q (none when empty)", m, e.Details, w.detail)
					}
				case 403:
					if e.Code != apierr.CodeForbidden || e.Message != apierr.MsgForbidden {
						t.Errorf("%s: got %s %q, want FORBIDDEN %q", m, e.Code, e.Message, apierr.MsgForbidden)
					}
					if len(e.Details) != 1 || e.Details[0].Code != w.detail {
						t.Errorf("%s: details got %+v, want one %s", m, e.Details, w.detail)
					}
				}
			}
		})
	}
}

func TestApp_PrincipalOf(t *testing.T) {
	ta := newTestApp(t)
	k, value := ta.newKey(storage.Sandbox)
	token := ta.adminToken()
	for _, tc := range []struct {
		name      string
		hdr       []string
		wantKey   bool
		wantUser  bool
		wantField string
	}{
		{"XAPIKey", []string{"X-API-Key", value}, true, false, "headers.X-API-Key"},
		{"XAPIKeySpaces", []string{"X-API-Key", "  " + value + " "}, true, false, "headers.X-API-Key"},
		{"Bearer", []string{"Authorization", "Bearer " + value}, true, false, "headers.Authorization"},
		{"LowercaseBearer", []string{"Authorization", "bearer " + value}, true, false, "headers.Authorization"},
		{"UppercaseBearer", []string{"Authorization", "BEARER " + value}, true, false, "headers.Authorization"},
		{"BearerJWT", []string{"Authorization", "Bearer " + token}, false, true, "headers.Authorization"},
		{"XAPIKeyWins", []string{"X-API-Key", value, "Authorization", "Bearer " + token}, true, false, "headers.X-API-Key"},
		{"XAPIKeyWinsEvenWhenBad", []string{"X-API-Key", "sk_test_bad", "Authorization", "Bearer " + value}, false, false, "headers.X-API-Key"},
		{"NoScheme", []string{"Authorization", value}, false, false, "headers.Authorization"},
		{"EmptyBearer", []string{"Authorization", "Bearer "}, false, false, "headers.Authorization"},
		{"Nothing", nil, false, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := ta.principalOf(newRequest("GET", "/", "", tc.hdr...), storage.Sandbox)
			if (p.key != nil) != tc.wantKey || (p.user != nil) != tc.wantUser {
				t.Fatalf("got key=%v user=%v err=%v, want key=%v user=%v", p.key != nil, p.user != nil, p.err, tc.wantKey, tc.wantUser)
			}
			if p.key != nil && p.key.ID != k.ID {
				t.Errorf("key: got %s, want %s", p.key.ID, k.ID)
			}
			if (p.key != nil || p.user != nil) && (p.err != nil || p.tenant != (storage.Tenant{Org: defaultOrg, Env: storage.Sandbox})) {
				t.Errorf("valid credential: got err=%v tenant=%v, want no error and tenant default/sandbox", p.err, p.tenant)
			}
			if p.field != tc.wantField {
				t.Errorf("field: got %q, want %q", p.field, tc.wantField)
			}
			if tc.name != "Nothing" && !tc.wantKey && !tc.wantUser && (p.err == nil || p.err.Status != 401) {
				t.Errorf("refused credential: got err %v, want 401", p.err)
			}
			if tc.name == "Nothing" && p.err != nil {
				t.Errorf("no credential: got err %v, want nil (missing, not refused)", p.err)
			}
		})
	}

	t.Run("QueryStringIgnored", func(t *testing.T) {
		p := ta.principalOf(newRequest("GET", "/?api_key="+value+"&key="+value, ""), storage.Sandbox)
		if p.key != nil {
			t.Error("key in the query string: got a key principal, want none")
		}
	})

	t.Run("WrongEnvironmentDetailField", func(t *testing.T) {
		p := ta.principalOf(newRequest("GET", "/", "", "Authorization", "Bearer "+value), storage.Production)
		if p.err == nil || p.err.Details[0].Code != apierr.DetailWrongEnvironment || p.err.Details[0].Field != "headers.Authorization" {
			t.Errorf("sandbox key on production: got %+v, want WRONG_ENVIRONMENT on headers.Authorization", p.err)
		}
	})
}

func TestApp_Auth(t *testing.T) {
	ta := newTestApp(t)
	_, rw := ta.newKey(storage.Sandbox)
	_, read := ta.newKey(storage.Sandbox, "read")
	_, live := ta.newKey(storage.Production)
	token := ta.adminToken()
	health := eudrPrefix + "/health"
	suppliers := eudrPrefix + "/suppliers"
	supplierBody := `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`

	for _, tc := range []struct {
		name       string
		env        storage.Environment
		method     string
		path       string
		hdr        []string
		wantStatus int
		wantDetail string
	}{
		{"XAPIKey", storage.Sandbox, "GET", health, []string{"X-API-Key", rw}, 200, ""},
		{"Bearer", storage.Sandbox, "GET", health, []string{"Authorization", "Bearer " + rw}, 200, ""},
		{"LowercaseBearer", storage.Sandbox, "GET", health, []string{"Authorization", "bearer " + rw}, 200, ""},
		{"XAPIKeyWins", storage.Sandbox, "GET", health, []string{"X-API-Key", rw, "Authorization", "Bearer nonsense"}, 200, ""},
		{"XAPIKeyWinsWhenBad", storage.Sandbox, "GET", health, []string{"X-API-Key", "sk_test_nonsense", "Authorization", "Bearer " + rw}, 401, apierr.DetailMalformedAPIKey},
		{"LiveKeyOnProduction", storage.Production, "GET", health, []string{"X-API-Key", live}, 200, ""},
		{"Missing", storage.Sandbox, "GET", health, nil, 401, apierr.DetailMissingAPIKey},
		{"QueryString", storage.Sandbox, "GET", health + "?api_key=" + rw, nil, 401, apierr.DetailMissingAPIKey},
		{"BareAuthorization", storage.Sandbox, "GET", health, []string{"Authorization", rw}, 401, apierr.DetailMalformedAPIKey},
		{"Truncated", storage.Sandbox, "GET", health, []string{"X-API-Key", rw[:len(rw)-1]}, 401, apierr.DetailMalformedAPIKey},
		{"JWTOnEUDRRoute", storage.Sandbox, "GET", health, []string{"Authorization", "Bearer " + token}, 401, apierr.DetailMissingAPIKey},
		{"UnknownKey", storage.Sandbox, "GET", health, []string{"X-API-Key", "sk_test_" + strings.Repeat("Z", 32)}, 401, ""},
		{"NothingOnKeyManagement", storage.Sandbox, "GET", enterprisePrefix + "/api-keys", nil, 401, apierr.DetailMissingLoginToken},
		{"TestKeyOnProduction", storage.Production, "GET", health, []string{"X-API-Key", rw}, 403, apierr.DetailWrongEnvironment},
		{"LiveKeyOnSandbox", storage.Sandbox, "GET", health, []string{"X-API-Key", live}, 403, apierr.DetailWrongEnvironment},
		{"ReadKeyWrites", storage.Sandbox, "POST", suppliers, []string{"X-API-Key", read, "Idempotency-Key", "k1"}, 403, apierr.DetailScopeRequired},
		{"ReadKeyDeletes", storage.Sandbox, "DELETE", suppliers + "/V1", []string{"X-API-Key", read}, 403, apierr.DetailScopeRequired},
		{"ReadKeyReads", storage.Sandbox, "GET", suppliers, []string{"X-API-Key", read}, 200, ""},
		{"KeyOnKeyManagement", storage.Sandbox, "GET", enterprisePrefix + "/api-keys", []string{"X-API-Key", rw}, 403, apierr.DetailJWTRequired},
		{"JWTOnKeyManagement", storage.Sandbox, "GET", enterprisePrefix + "/api-keys", []string{"Authorization", "Bearer " + token}, 200, ""},
		{"JWTOnKeyManagementProduction", storage.Production, "GET", enterprisePrefix + "/api-keys", []string{"Authorization", "Bearer " + token}, 200, ""},
		{"ProbeWithoutKey", storage.Sandbox, "GET", "/livez", nil, 200, ""},
		{"ProbeWithBadKey", storage.Sandbox, "GET", "/readyz", []string{"X-API-Key", "sk_test_bad"}, 200, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := ""
			if tc.method == "POST" {
				body = supplierBody
			}
			w := ta.serve(tc.env, newRequest(tc.method, tc.path, body, tc.hdr...))
			switch tc.wantStatus {
			case 200:
				if w.Code != 200 {
					t.Fatalf("got %d %s, want 200", w.Code, w.Body)
				}
			case 401:
				e := wantError(t, w, 401, apierr.CodeUnauthorized, tc.wantDetail)
				if e.Message != "Missing or invalid API key" {
					t.Errorf("message: got %q, want %q", e.Message, "Missing or invalid API key")
				}
				// A missing or malformed credential's detail names the header expected.
				expected := map[string]string{apierr.DetailMissingAPIKey: "X-API-Key header (or Authorization: Bearer sk_...)",
					apierr.DetailMalformedAPIKey: "X-API-Key header (or Authorization: Bearer sk_...)", apierr.DetailMissingLoginToken: "login token in Authorization: Bearer"}
				if tc.wantDetail == "" && len(e.Details) != 0 || tc.wantDetail != "" && len(e.Details) != 1 {
					t.Errorf("details: got %+v, want %q (none when empty)", e.Details, tc.wantDetail)
				} else if tc.wantDetail != "" && !strings.Contains(e.Details[0].Issue, expected[tc.wantDetail]) {
					t.Errorf("detail %+v: the issue does not say %q", e.Details[0], expected[tc.wantDetail])
				}
			case 403:
				e := wantError(t, w, 403, apierr.CodeForbidden, tc.wantDetail)
				if e.Message != "API key does not have the required scope" {
					t.Errorf("message: got %q, want %q", e.Message, "API key does not have the required scope")
				}
			}
		})
	}

	t.Run("RefusedWriteChangesNothing", func(t *testing.T) {
		w := ta.do("GET", suppliers, "", "X-API-Key", rw)
		if w.Code != 200 || strings.TrimSpace(w.Body.String()) != "[]" {
			t.Errorf("suppliers after refused writes: got %d %s, want 200 []", w.Code, w.Body)
		}
	})
}

func TestApp_AuthRefusalOrder(t *testing.T) {
	ta := newTestApp(t)
	// A read-only production key, rotated: wrong environment, rotated and
	// lacking the write scope on the sandbox listener all at once.
	k, old := ta.newKey(storage.Production, "read")
	if _, _, err := ta.rotateKey(context.Background(), defaultOrg, k.ID); err != nil {
		t.Fatal(err)
	}
	// A read-only sandbox key, rotated: rotated and lacking the scope.
	k2, old2 := ta.newKey(storage.Sandbox, "read")
	if _, _, err := ta.rotateKey(context.Background(), defaultOrg, k2.ID); err != nil {
		t.Fatal(err)
	}
	_, readKey := ta.newKey(storage.Sandbox, "read")
	for _, tc := range []struct {
		name, method, path, key, want string
	}{
		{"WrongEnvBeforeRotated", "GET", eudrPrefix + "/health", old, apierr.DetailWrongEnvironment},
		{"WrongEnvBeforeScope", "DELETE", eudrPrefix + "/suppliers/V1", old, apierr.DetailWrongEnvironment},
		{"WrongEnvBeforeJWT", "GET", enterprisePrefix + "/api-keys", old, apierr.DetailWrongEnvironment},
		{"RotatedBeforeScope", "DELETE", eudrPrefix + "/suppliers/V1", old2, apierr.DetailKeyRotated},
		{"RotatedBeforeJWT", "GET", enterprisePrefix + "/api-keys", old2, apierr.DetailKeyRotated},
		{"JWTBeforeScope", "DELETE", enterprisePrefix + "/api-keys/" + k.ID, readKey, apierr.DetailJWTRequired},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := ta.do(tc.method, tc.path, "", "X-API-Key", tc.key)
			wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, tc.want)
		})
	}
}
