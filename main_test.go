package main_test

// End-to-end tests: TestMain builds eudr once; each test runs `eudr serve` on
// its own data dir with 127.0.0.1:0 listeners and talks HTTP like a client
// (STYLE.md section 7). The harness is in e2e_helpers_test.go.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func TestMain(m *testing.M) {
	flag.Parse()
	if testing.Short() {
		os.Exit(m.Run()) // every end-to-end test skips itself
	}
	dir, err := os.MkdirTemp("", "eudr-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	eudrBin, err = buildBinary(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	sandboxKeyPattern    = regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`)
	productionKeyPattern = regexp.MustCompile(`^sk_live_[0-9A-Za-z]{32}$`)
	keyIDPattern         = regexp.MustCompile(`^key_[0-9A-Z]{26}$`)
	supplierIDPattern    = regexp.MustCompile(`^sup_[0-9A-Z]{26}$`)
)

func TestServe_StartupAndProbes(t *testing.T) {
	t.Parallel()
	p := startServer(t)

	for _, env := range []string{production, sandbox} {
		base := p.URL(env)
		for _, path := range []string{"/livez", "/readyz"} {
			r := apitest.Do(t, "GET", base+path, nil, nil).WantStatus(t, http.StatusOK)
			if got := strings.TrimSpace(string(r.Body)); got != `{"status":"ok"}` {
				t.Errorf("%s: got body %s, want {\"status\":\"ok\"}", r.Request, got)
			}
		}
		r := apitest.Do(t, "GET", base+"/api/v1/openapi.json", nil, nil).WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s: Content-Type %q, want application/json", r.Request, ct)
		}
		if got := r.Object(t)["openapi"]; got != "3.1.0" {
			t.Errorf("%s: openapi = %v, want 3.1.0", r.Request, got)
		}
		// /health needs a key, unlike the probes.
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", base+eudrAPI+"/health", nil, nil))
	}

	for _, env := range []string{sandbox, production} {
		k := p.CreateKey(t, env)
		r := apitest.Do(t, "GET", p.URL(env)+eudrAPI+"/health", apitest.WithKey(k.Key), nil).WantStatus(t, http.StatusOK)
		var h struct {
			Status        string   `json:"status"`
			Environment   string   `json:"environment"`
			Version       string   `json:"version"`
			UptimeSeconds *float64 `json:"uptimeSeconds"`
			Store         struct {
				Status        string   `json:"status"`
				SchemaVersion *float64 `json:"schemaVersion"`
			} `json:"store"`
		}
		r.Decode(t, &h)
		if h.Environment != env {
			t.Errorf("%s: environment %q, want %q", r.Request, h.Environment, env)
		}
		if h.Version != testVersion {
			t.Errorf("%s: version %q, want %q (the -X main.version of the build)", r.Request, h.Version, testVersion)
		}
		if h.UptimeSeconds == nil || *h.UptimeSeconds < 0 || *h.UptimeSeconds > 600 || *h.UptimeSeconds != float64(int64(*h.UptimeSeconds)) {
			t.Errorf("%s: uptimeSeconds %v, want a small whole number", r.Request, h.UptimeSeconds)
		}
		if h.Store.Status != "ok" {
			t.Errorf("%s: store.status %q, want ok", r.Request, h.Store.Status)
		}
		if h.Store.SchemaVersion == nil || *h.Store.SchemaVersion != 1 {
			t.Errorf("%s: store.schemaVersion %v, want 1", r.Request, h.Store.SchemaVersion)
		}
	}
}

func TestServe_ShutdownFinishesInFlightRequests(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	idem := apitest.NewIdemKey()

	// A slow upload: the handler is reading the body when SIGTERM comes.
	pr, pw := io.Pipe()
	type result struct {
		r   *apitest.Response
		err error
	}
	res := make(chan result, 1)
	go func() {
		r, err := apitest.TryDo(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Idempotency-Key", idem)), pr)
		res <- result{r, err}
	}()
	// More than the client's write buffer, so the request is on the wire.
	if _, err := io.WriteString(pw, `{"erpVendorId":"slow-1",`+strings.Repeat(" ", 16<<10)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(p.LogText(), "shutting down") {
		if time.Now().After(deadline) {
			t.Fatal("no \"shutting down\" log line within 5s of SIGTERM")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if p.Exited() {
		t.Fatal("exited with a request in flight")
	}
	// New connections are refused while the in-flight request finishes
	// (the listeners close right after the log line).
	time.Sleep(100 * time.Millisecond)
	if _, err := apitest.TryDo(t, "GET", p.SandboxURL+"/livez", nil, nil); err == nil {
		t.Errorf("a new request was accepted after SIGTERM")
	}
	io.WriteString(pw, `"euOperatorUuid":"3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f","name":"Slow Ltd","country":"GH"}`)
	pw.Close()
	r := <-res
	if r.err != nil {
		t.Fatalf("in-flight request cut off by shutdown: %v", r.err)
	}
	r.r.WantStatus(t, http.StatusOK)
	if code, ok := p.Wait(stopTimeout); !ok || code != 0 {
		t.Fatalf("after SIGTERM: exited %v with code %d, want 0", ok, code)
	}
	// Nothing accepted is lost.
	p = p.Restart(t)
	var got supplier
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/slow-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
	if !bytes.Contains(r.r.Body, []byte(got.SupplierID)) {
		t.Errorf("stored %+v, answered %s", got, r.r.Body)
	}
	replay := postSupplier(t, p.SandboxURL, sk.Key, idem, `{"erpVendorId":"slow-1",`+strings.Repeat(" ", 16<<10)+
		`"euOperatorUuid":"3f2b6c1e-8a4d-4c2b-9e1f-0a1b2c3d4e5f","name":"Slow Ltd","country":"GH"}`).WantStatus(t, http.StatusOK)
	if replay.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(replay.Body, r.r.Body) {
		t.Errorf("replay after restart: %q %s, want %s", replay.Header.Get("Idempotent-Replayed"), replay.Body, r.r.Body)
	}
}

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
	}{
		{"NoKey", health, nil},
		{"EmptyXAPIKey", health, apitest.Hdr("X-API-Key", " ")},
		{"Malformed", health, apitest.WithKey("not-a-key")},
		{"WrongPrefix", health, apitest.WithKey("sk_prod_" + key.Key[8:])},
		{"Truncated", health, apitest.WithKey(key.Key[:len(key.Key)-1])},
		{"OneCharTooMany", health, apitest.WithKey(key.Key + "A")},
		{"NotBase62", health, apitest.WithKey(key.Key[:len(key.Key)-1] + "!")},
		{"QueryString", health + "?api_key=" + key.Key, nil},
		{"QueryStringXAPIKey", health + "?X-API-Key=" + key.Key, nil},
		{"BareAuthorization", health, apitest.Hdr("Authorization", key.Key)},
		{"BasicAuthorization", health, apitest.Hdr("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(key.Key+":")))},
		{"BearerWithoutToken", health, apitest.Hdr("Authorization", "Bearer")},
		{"OtherHeader", health, apitest.Hdr("Api-Key", key.Key)},
		{"Revoked", health, apitest.WithKey(revoked.Key)},
		{"RevokedAsBearer", health, apitest.Bearer(revoked.Key)},
		{"UnknownWellFormed", health, apitest.WithKey(unknown)},
		{"UnknownWellFormedBearer", health, apitest.Bearer(unknown)},
		{"LoginTokenOnAPI", health, apitest.Bearer(jwt)},
		{"RevokedOnSuppliers", p.SandboxURL + eudrAPI + "/suppliers", apitest.WithKey(revoked.Key)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			apitest.WantUnauthorized(t, apitest.Do(t, "GET", c.url, c.headers, nil))
		})
	}
	t.Run("RevokedKeyCannotWrite", func(t *testing.T) {
		apitest.WantUnauthorized(t, postSupplier(t, p.SandboxURL, revoked.Key, apitest.NewIdemKey(), supplierBody("rev-1", "Revoked Ltd")))
	})

	keys := p.SandboxURL + enterpriseAPI + "/api-keys"
	now := time.Now().Unix()
	jwtCases := []struct {
		name    string
		headers map[string]string
	}{
		{"NoCredential", nil},
		{"GarbageJWT", apitest.Bearer("not-a-jwt")},
		{"GarbageThreeParts", apitest.Bearer("aaa.bbb.ccc")},
		{"ForgedSignature", apitest.Bearer(forgeJWT("HS256", map[string]any{"iss": "eudr", "sub": "admin", "iat": now, "exp": now + 3600}))},
		{"ExpiredForged", apitest.Bearer(forgeJWT("HS256", map[string]any{"iss": "eudr", "sub": "admin", "iat": now - 7200, "exp": now - 3600}))},
		{"AlgNone", apitest.Bearer(forgeJWT("none", map[string]any{"iss": "eudr", "sub": "admin", "iat": now, "exp": now + 3600}))},
		{"TamperedRealToken", apitest.Bearer(tamper(jwt))},
		{"JWTInXAPIKey", apitest.WithKey(jwt)},
		{"UnknownKey", apitest.WithKey(unknown)},
		{"RevokedKey", apitest.WithKey(revoked.Key)},
	}
	for _, c := range jwtCases {
		t.Run("APIKeys/"+c.name, func(t *testing.T) {
			apitest.WantUnauthorized(t, apitest.Do(t, "GET", keys, c.headers, nil))
			apitest.WantUnauthorized(t, apitest.Do(t, "POST", keys, apitest.Merge(c.headers, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
				map[string]any{"environment": "sandbox"}))
		})
	}
	t.Run("APIKeys/ValidJWT", func(t *testing.T) {
		apitest.Do(t, "GET", keys, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
	})

	loginURL := p.SandboxURL + enterpriseAPI + "/auth/login"
	t.Run("LoginBadPassword", func(t *testing.T) {
		apitest.WantUnauthorized(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{"username": "admin", "password": "wrong-password"}))
	})
	t.Run("LoginUnknownUser", func(t *testing.T) {
		apitest.WantUnauthorized(t, apitest.Do(t, "POST", loginURL, nil, map[string]string{"username": "nobody", "password": testAdminPassword}))
	})
	t.Run("LoginOnProductionListener", func(t *testing.T) {
		apitest.Login(t, p.ProductionURL, "admin", testAdminPassword)
		apitest.WantUnauthorized(t, apitest.Do(t, "POST", p.ProductionURL+enterpriseAPI+"/auth/login", nil,
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

// assertLogHasNoSecrets fails t when the process's output contains any of secrets.
func assertLogHasNoSecrets(t testing.TB, p *serverProc, secrets ...string) {
	t.Helper()
	out := p.LogText() + "\n" + p.Stderr()
	for _, s := range secrets {
		if s != "" && strings.Contains(out, s) {
			t.Errorf("the log contains a secret (%.12s...)", s)
		}
	}
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
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey("garbage"), apitest.Bearer(sk.Key)), nil))
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
		r = apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.Bearer(sk.Key), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
			supplierBody("bearer-1", "Bearer Ltd")).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/bearer-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	})
}

func TestRouting_NotFoundMethodAndTrace(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)

	t.Run("UnknownPath", func(t *testing.T) {
		for _, path := range []string{"/nope", "/api/v1/enterprise/eudr/nope", "/api/v2/enterprise/eudr/health", "/api/v1/enterprise/eudr/health/"} {
			apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+path, apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
			apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+path, nil, nil), http.StatusNotFound, "NOT_FOUND")
		}
	})
	t.Run("UnknownSupplier", func(t *testing.T) {
		apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/no-such-vendor", apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", p.SandboxURL+eudrAPI+"/suppliers/no-such-vendor", apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("UnknownKeyID", func(t *testing.T) {
		jwt := p.Login(t)
		apitest.WantError(t, apitest.Do(t, "DELETE", p.SandboxURL+enterpriseAPI+"/api-keys/key_00000000000000000000000000", apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/api-keys/key_00000000000000000000000000/rotate", apitest.Bearer(jwt), nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("EnvironmentIsolation", func(t *testing.T) {
		s := mustCreateSupplier(t, p.SandboxURL, sk.Key, "iso-1", "Sandbox Only Ltd")
		apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(pk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", p.ProductionURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(pk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		var list []supplier
		apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers", apitest.WithKey(pk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		if len(list) != 0 {
			t.Errorf("production lists %d suppliers, want none: %+v", len(list), list)
		}
		var got supplier
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got.SupplierID != s.SupplierID {
			t.Errorf("sandbox supplierId %q, want %q", got.SupplierID, s.SupplierID)
		}
		// The same erpVendorId in production is a separate mapping.
		live := mustCreateSupplier(t, p.ProductionURL, pk.Key, "iso-1", "Production Ltd")
		if live.SupplierID == s.SupplierID {
			t.Errorf("production and sandbox share supplierId %q", s.SupplierID)
		}
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/iso-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got.Name != "Sandbox Only Ltd" {
			t.Errorf("sandbox name %q after a production upsert, want it unchanged", got.Name)
		}
	})
	t.Run("MethodNotAllowed", func(t *testing.T) {
		cases := []struct {
			method, path string
			allow        []string
			notAllow     string
		}{
			{"PUT", eudrAPI + "/suppliers", []string{"GET", "POST"}, "PUT"},
			{"PATCH", eudrAPI + "/suppliers/v1", []string{"GET", "DELETE"}, "PATCH"},
			{"DELETE", "/livez", []string{"GET"}, "DELETE"},
			{"GET", enterpriseAPI + "/auth/login", []string{"POST"}, "GET"},
		}
		for _, c := range cases {
			r := apitest.Do(t, c.method, p.SandboxURL+c.path, apitest.WithKey(sk.Key), nil)
			apitest.WantError(t, r, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
			allow := r.Header.Get("Allow")
			for _, m := range c.allow {
				if !strings.Contains(allow, m) {
					t.Errorf("%s: Allow %q lacks %s", r.Request, allow, m)
				}
			}
			if strings.Contains(allow, c.notAllow) {
				t.Errorf("%s: Allow %q lists the refused method", r.Request, allow)
			}
		}
	})
	t.Run("AllowListsOnlyAllowedMethods", func(t *testing.T) {
		r := apitest.Do(t, "PUT", p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil)
		for _, m := range strings.Split(r.Header.Get("Allow"), ",") {
			m = strings.TrimSpace(m)
			if m == "" || m == "GET" || m == "POST" {
				continue
			}
			if got := apitest.Do(t, m, p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil); got.Status == http.StatusMethodNotAllowed {
				t.Errorf("a 405's Allow header (%q) lists %s, yet %s on the same path answers 405", r.Header.Get("Allow"), m, m)
			}
		}
	})
	t.Run("TraceID", func(t *testing.T) {
		h := p.SandboxURL + eudrAPI + "/health"
		a := apitest.Do(t, "GET", h, apitest.WithKey(sk.Key), nil)
		b := apitest.Do(t, "GET", h, apitest.WithKey(sk.Key), nil)
		if !apitest.NewTraceIDPattern.MatchString(a.Header.Get("X-Trace-Id")) || a.Header.Get("X-Trace-Id") == b.Header.Get("X-Trace-Id") {
			t.Errorf("generated trace ids %q and %q, want two different 32-hex ids", a.Header.Get("X-Trace-Id"), b.Header.Get("X-Trace-Id"))
		}
		for _, c := range []struct {
			sent string
			echo bool
		}{
			{"abc-123", true},
			{"A.b_C-9", true},
			{strings.Repeat("x", 128), true},
			{strings.Repeat("x", 129), false},
			{strings.Repeat("a", 200), false},
			{"has space", false},
			{"bad/char", false},
			{"ünïcode", false},
		} {
			trace := apitest.Hdr("X-Trace-Id", c.sent)
			for _, r := range []*apitest.Response{
				apitest.Do(t, "GET", h, apitest.Merge(apitest.WithKey(sk.Key), trace), nil),                                                      // 200
				apitest.Do(t, "GET", h, trace, nil),                                                                                              // 401
				apitest.Do(t, "GET", p.SandboxURL+"/nope", trace, nil),                                                                           // 404
				apitest.Do(t, "PUT", p.SandboxURL+"/livez", trace, nil),                                                                          // 405
				apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), trace), supplierBody("tr", "T")), // 400
			} {
				got := r.Header.Get("X-Trace-Id")
				if c.echo && got != c.sent {
					t.Errorf("%s with X-Trace-Id %q: got %q, want it echoed", r.Request, c.sent, got)
				}
				if !c.echo && (got == c.sent || !apitest.NewTraceIDPattern.MatchString(got)) {
					t.Errorf("%s with invalid X-Trace-Id %.20q: got %q, want a new 32-hex id", r.Request, c.sent, got)
				}
			}
		}
		// The echoed id is the request's trace_id in the log.
		found := false
		for _, l := range p.Logs() {
			if l["message"] == "request" && l["trace_id"] == "abc-123" && l["status"] == float64(200) && l["key_id"] == sk.KeyID {
				found = true
			}
		}
		if !found {
			t.Errorf("no request log line with trace_id abc-123, status 200 and key_id %s", sk.KeyID)
		}
	})
}

// rateHeaders reads the X-RateLimit-* headers as integers.
func rateHeaders(t testing.TB, r *apitest.Response) (limit, remaining, reset int64) {
	t.Helper()
	get := func(name string) int64 {
		n, err := strconv.ParseInt(r.Header.Get(name), 10, 64)
		if err != nil {
			t.Fatalf("%s (status %d): %s = %q, want an integer", r.Request, r.Status, name, r.Header.Get(name))
		}
		return n
	}
	return get("X-RateLimit-Limit"), get("X-RateLimit-Remaining"), get("X-RateLimit-Reset")
}

func TestRateLimit_PerKey(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_RATE_LIMIT_PER_SECOND=5", "EUDR_RATE_LIMIT_BURST=5")
	a := p.CreateKey(t, sandbox)
	b := p.CreateKey(t, sandbox)
	health := p.SandboxURL + eudrAPI + "/health"

	start := time.Now()
	var responses []*apitest.Response
	var limited *apitest.Response
	for i := 0; i < 12 && limited == nil; i++ {
		r := apitest.Do(t, "GET", health, apitest.WithKey(a.Key), nil)
		responses = append(responses, r)
		if r.Status == http.StatusTooManyRequests {
			limited = r
		} else {
			r.WantStatus(t, http.StatusOK)
		}
	}
	elapsed := time.Since(start)
	if limited == nil {
		t.Fatalf("12 requests in %s with a 5/s key: none was limited", elapsed)
	}
	if n := len(responses); n < 6 {
		t.Fatalf("request %d was limited, want the first 5 (the burst) through", n)
	} else if n > 6 && elapsed > time.Second {
		t.Fatalf("the first 429 came at request %d after %s, want the 6th or one within the same second", n, elapsed)
	}
	prev := int64(5)
	for i, r := range responses[:5] {
		limit, remaining, reset := rateHeaders(t, r)
		if limit != 5 {
			t.Errorf("request %d: X-RateLimit-Limit %d, want 5", i+1, limit)
		}
		if remaining >= prev {
			t.Errorf("request %d: X-RateLimit-Remaining %d, want below the previous %d", i+1, remaining, prev)
		}
		prev = remaining
		if now := time.Now().Unix(); reset < start.Unix() || reset > now+2 {
			t.Errorf("request %d: X-RateLimit-Reset %d, want epoch seconds in [%d, %d]", i+1, reset, start.Unix(), now+2)
		}
	}
	if _, remaining, _ := rateHeaders(t, responses[0]); remaining != 4 {
		t.Errorf("first request: X-RateLimit-Remaining %d, want 4", remaining)
	}

	apitest.WantError(t, limited, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	ra, err := strconv.Atoi(limited.Header.Get("Retry-After"))
	if err != nil || ra < 1 || ra > 60 {
		t.Errorf("429: Retry-After %q, want an integer from 1 to 60", limited.Header.Get("Retry-After"))
	}
	limit, remaining, reset := rateHeaders(t, limited)
	if limit != 5 || remaining != 0 || reset < time.Now().Unix() {
		t.Errorf("429: X-RateLimit-Limit %d, -Remaining %d, -Reset %d; want 5, 0, >= now (%d)", limit, remaining, reset, time.Now().Unix())
	}

	// Another key has its own bucket.
	r := apitest.Do(t, "GET", health, apitest.WithKey(b.Key), nil).WantStatus(t, http.StatusOK)
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 4 {
		t.Errorf("other key: X-RateLimit-Limit %d, -Remaining %d, want 5 and 4", limit, remaining)
	}
	// Error answers carry the headers too, and count.
	r = apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/none", apitest.WithKey(b.Key), nil)
	apitest.WantError(t, r, http.StatusNotFound, "NOT_FOUND")
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 3 {
		t.Errorf("404: X-RateLimit-Limit %d, -Remaining %d, want 5 and 3", limit, remaining)
	}
	r = apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers?limit=0", apitest.WithKey(b.Key), nil)
	apitest.WantError(t, r, http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	if limit, remaining, _ := rateHeaders(t, r); limit != 5 || remaining != 2 {
		t.Errorf("400: X-RateLimit-Limit %d, -Remaining %d, want 5 and 2", limit, remaining)
	}
	r = apitest.Do(t, "GET", health, nil, nil)
	apitest.WantUnauthorized(t, r)
	if limit, _, _ := rateHeaders(t, r); limit != 40 {
		t.Errorf("401: X-RateLimit-Limit %d, want the per-IP burst 40", limit)
	}

	// The bucket refills: after Retry-After the key works again.
	time.Sleep(time.Duration(ra) * time.Second)
	apitest.Do(t, "GET", health, apitest.WithKey(a.Key), nil).WantStatus(t, http.StatusOK)
}

func TestRateLimit_PerIP(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_RATE_LIMIT_IP_PER_SECOND=2", "EUDR_RATE_LIMIT_IP_BURST=2")
	key := p.CreateKey(t, sandbox) // the login took one token of this IP's bucket
	time.Sleep(1100 * time.Millisecond)
	health := p.SandboxURL + eudrAPI + "/health"

	r1 := apitest.Do(t, "GET", health, nil, nil)
	r2 := apitest.Do(t, "GET", health, apitest.WithKey("sk_test_"+apitest.RandBase62(32)), nil)
	r3 := apitest.Do(t, "GET", health, apitest.WithKey("garbage"), nil)
	apitest.WantUnauthorized(t, r1)
	apitest.WantUnauthorized(t, r2)
	if limit, remaining, _ := rateHeaders(t, r1); limit != 2 || remaining != 1 {
		t.Errorf("1st 401: X-RateLimit-Limit %d, -Remaining %d, want 2 and 1", limit, remaining)
	}
	if _, remaining, _ := rateHeaders(t, r2); remaining != 0 {
		t.Errorf("2nd 401: X-RateLimit-Remaining %d, want 0", remaining)
	}
	apitest.WantError(t, r3, http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	if ra, err := strconv.Atoi(r3.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
		t.Errorf("429: Retry-After %q, want 1-60", r3.Header.Get("Retry-After"))
	}
	// X-Forwarded-For from a peer that is not a trusted proxy changes nothing.
	apitest.WantError(t, apitest.Do(t, "GET", health, apitest.Hdr("X-Forwarded-For", "203.0.113.7"), nil), http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	// Probes without credentials share the IP's bucket.
	apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+"/nope", nil, nil), http.StatusTooManyRequests, "RATE_LIMIT_EXCEEDED")
	// A valid key is limited per key, not per IP.
	r := apitest.Do(t, "GET", health, apitest.WithKey(key.Key), nil).WantStatus(t, http.StatusOK)
	if limit, _, _ := rateHeaders(t, r); limit != 100 {
		t.Errorf("keyed request: X-RateLimit-Limit %d, want the per-key 100", limit)
	}
}

func TestIdempotency_ReplayAcrossRestarts(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	idem := apitest.NewIdemKey()
	body := supplierBody("idem-1", "Idempotent Ltd")

	t.Run("MissingKey", func(t *testing.T) {
		for _, b := range []any{body, map[string]any{"bad": true}, "not json"} {
			e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, "", b), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
			if len(e.Details) == 1 && e.Details[0].Field != "headers.Idempotency-Key" {
				t.Errorf("field %q, want headers.Idempotency-Key", e.Details[0].Field)
			}
		}
		apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/idem-1", apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
	})

	first := postSupplier(t, p.SandboxURL, sk.Key, idem, body).WantStatus(t, http.StatusOK)
	if v := first.Header.Get("Idempotent-Replayed"); v != "" {
		t.Errorf("first answer has Idempotent-Replayed %q", v)
	}
	var created supplier
	first.Decode(t, &created)
	checkReplay := func(t *testing.T, base string) {
		t.Helper()
		r := postSupplier(t, base, sk.Key, idem, body)
		r.WantStatus(t, first.Status)
		if r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("replay: Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
		}
		if !bytes.Equal(r.Body, first.Body) {
			t.Errorf("replay body\n%s\nwant the first\n%s", r.Body, first.Body)
		}
		if ct := r.Header.Get("Content-Type"); ct != first.Header.Get("Content-Type") {
			t.Errorf("replay Content-Type %q, want %q", ct, first.Header.Get("Content-Type"))
		}
		// Not done again: the stored mapping is the first one, and exists once.
		var got supplier
		apitest.Do(t, "GET", base+eudrAPI+"/suppliers/idem-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got != created {
			t.Errorf("stored mapping %+v, want the first %+v", got, created)
		}
		var list []supplier
		apitest.Do(t, "GET", base+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		n := 0
		for _, s := range list {
			if s.ERPVendorID == "idem-1" {
				n++
			}
		}
		if n != 1 {
			t.Errorf("idem-1 listed %d times, want once", n)
		}
	}
	checkConflict := func(t *testing.T, base string) {
		t.Helper()
		e := apitest.WantError(t, postSupplier(t, base, sk.Key, idem, supplierBody("idem-1", "Changed Name Ltd")),
			http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
		if len(e.Details) == 1 && e.Details[0].Field != "headers.Idempotency-Key" {
			t.Errorf("field %q, want headers.Idempotency-Key", e.Details[0].Field)
		}
		// Same body, other path: another fingerprint.
		apitest.WantError(t, apitest.Do(t, "POST", base+enterpriseAPI+"/api-keys", apitest.Merge(apitest.Bearer(apitest.Login(t, base, "admin", testAdminPassword)), apitest.Hdr("Idempotency-Key", idem)),
			body), http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
		var got supplier
		apitest.Do(t, "GET", base+eudrAPI+"/suppliers/idem-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got.Name != "Idempotent Ltd" {
			t.Errorf("name %q after a refused reuse, want unchanged", got.Name)
		}
	}

	t.Run("Replay", func(t *testing.T) {
		time.Sleep(5 * time.Millisecond) // a repeated write would show in updatedAt
		checkReplay(t, p.SandboxURL)
		checkReplay(t, p.SandboxURL)
	})
	t.Run("ReusedForOtherBody", func(t *testing.T) { checkConflict(t, p.SandboxURL) })
	t.Run("QuotedKeyIsTheSameKey", func(t *testing.T) {
		r := postSupplier(t, p.SandboxURL, sk.Key, `"`+idem+`"`, body).WantStatus(t, http.StatusOK)
		if r.Header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("quoted key: Idempotent-Replayed %q, want true", r.Header.Get("Idempotent-Replayed"))
		}
	})
	t.Run("InvalidKey", func(t *testing.T) {
		e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, strings.Repeat("k", 256), body), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		if len(e.Details) == 1 && e.Details[0].Field != "headers.Idempotency-Key" {
			t.Errorf("field %q, want headers.Idempotency-Key", e.Details[0].Field)
		}
	})

	// Restarts happen here, not in a subtest: a process belongs to the
	// test that started it and is killed when that test ends.
	jwt := p.Login(t)
	p.Stop(t)
	p = p.Restart(t)
	t.Run("AfterSIGTERM", func(t *testing.T) {
		checkReplay(t, p.SandboxURL)
		checkConflict(t, p.SandboxURL)
	})
	t.Run("LoginTokenSurvivesRestart", func(t *testing.T) {
		apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
	})

	// A second key completed just before the crash.
	idem2 := apitest.NewIdemKey()
	body2 := supplierBody("idem-2", "Crash Ltd")
	second := postSupplier(t, p.SandboxURL, sk.Key, idem2, body2).WantStatus(t, http.StatusOK)
	p.Kill(t)
	p = p.Restart(t)
	t.Run("AfterSIGKILL", func(t *testing.T) {
		checkReplay(t, p.SandboxURL)
		checkConflict(t, p.SandboxURL)
		r := postSupplier(t, p.SandboxURL, sk.Key, idem2, body2).WantStatus(t, http.StatusOK)
		if r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, second.Body) {
			t.Errorf("replay after SIGKILL: Idempotent-Replayed %q, body %s; want true and %s", r.Header.Get("Idempotent-Replayed"), r.Body, second.Body)
		}
	})
	p.Stop(t)
}

func TestIdempotency_ScopedPerEnvironment(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)
	idem := apitest.NewIdemKey()

	sb := postSupplier(t, p.SandboxURL, sk.Key, idem, supplierBody("env-1", "Sandbox Ltd")).WantStatus(t, http.StatusOK)
	pr := postSupplier(t, p.ProductionURL, pk.Key, idem, supplierBody("env-2", "Production Ltd")).WantStatus(t, http.StatusOK)
	if pr.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("production: Idempotent-Replayed %q on the first use of the key there", pr.Header.Get("Idempotent-Replayed"))
	}
	var s1, s2 supplier
	sb.Decode(t, &s1)
	pr.Decode(t, &s2)
	if s2.ERPVendorID != "env-2" || s1.SupplierID == s2.SupplierID {
		t.Errorf("production answered %+v, want its own env-2 mapping", s2)
	}
	// Each environment remembers its own request.
	r := postSupplier(t, p.SandboxURL, sk.Key, idem, supplierBody("env-1", "Sandbox Ltd")).WantStatus(t, http.StatusOK)
	if r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, sb.Body) {
		t.Errorf("sandbox replay: %q %s", r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	r = postSupplier(t, p.ProductionURL, pk.Key, idem, supplierBody("env-2", "Production Ltd")).WantStatus(t, http.StatusOK)
	if r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, pr.Body) {
		t.Errorf("production replay: %q %s", r.Header.Get("Idempotent-Replayed"), r.Body)
	}
	apitest.WantError(t, postSupplier(t, p.ProductionURL, pk.Key, idem, supplierBody("env-1", "Sandbox Ltd")), http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
	apitest.WantError(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers/env-1", apitest.WithKey(pk.Key), nil), http.StatusNotFound, "NOT_FOUND")
}

func TestIdempotency_FailedRequestDoesNotBurnKey(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	idem := apitest.NewIdemKey()

	bad := supplierBody("burn-1", "Burn Ltd")
	bad["country"] = "Brazil"
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, bad), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	// Retrying unchanged fails identically, not with a replay or a conflict.
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, bad), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, `{"erpVendorId":`), http.StatusBadRequest, "VALIDATION_FAILED", "MALFORMED_JSON")
	apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Idempotency-Key", idem, "Content-Type", "text/plain")),
		supplierBody("burn-1", "Burn Ltd")), http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "INVALID_VALUE")

	good := supplierBody("burn-1", "Burn Ltd")
	r := postSupplier(t, p.SandboxURL, sk.Key, idem, good).WantStatus(t, http.StatusOK)
	if r.Header.Get("Idempotent-Replayed") != "" {
		t.Errorf("corrected request: Idempotent-Replayed %q, want a fresh answer", r.Header.Get("Idempotent-Replayed"))
	}
	r2 := postSupplier(t, p.SandboxURL, sk.Key, idem, good).WantStatus(t, http.StatusOK)
	if r2.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, r2.Body) {
		t.Errorf("replay of the corrected request: %q %s", r2.Header.Get("Idempotent-Replayed"), r2.Body)
	}
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, bad), http.StatusConflict, "CONFLICT", "IDEMPOTENCY_KEY_REUSED")
}

func TestIdempotency_ConcurrentSameKey(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	idem := apitest.NewIdemKey()
	body := supplierBody("conc-1", "Concurrent Ltd")

	const n = 12
	results := make([]*apitest.Response, n)
	errs := make([]error, n)
	start := make(chan struct{})
	done := make(chan int)
	for i := range n {
		go func() {
			<-start
			results[i], errs[i] = apitest.TryDo(t, "POST", p.SandboxURL+eudrAPI+"/suppliers", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("Idempotency-Key", idem)), body)
			done <- i
		}()
	}
	close(start)
	for range n {
		<-done
	}
	fresh, replayed, locked := 0, 0, 0
	var firstBody []byte
	for i, r := range results {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		switch {
		case r.Status == http.StatusOK && r.Header.Get("Idempotent-Replayed") == "":
			fresh++
			firstBody = r.Body
		case r.Status == http.StatusOK:
			replayed++
		case r.Status == http.StatusLocked:
			locked++
			apitest.WantError(t, r, http.StatusLocked, "RESOURCE_LOCKED", "IDEMPOTENCY_IN_PROGRESS")
			if ra, err := strconv.Atoi(r.Header.Get("Retry-After")); err != nil || ra < 1 || ra > 60 {
				t.Errorf("423: Retry-After %q, want 1-60", r.Header.Get("Retry-After"))
			}
		default:
			t.Errorf("concurrent request %d: status %d, want 200 or 423; body %s", i, r.Status, r.Body)
		}
	}
	t.Logf("%d concurrent requests: %d ran, %d replayed, %d got 423", n, fresh, replayed, locked)
	if fresh != 1 {
		t.Fatalf("%d of %d concurrent requests with one Idempotency-Key ran (%d replayed, %d locked), want exactly 1", fresh, n, replayed, locked)
	}
	for _, r := range results {
		if r.Status == http.StatusOK && !bytes.Equal(r.Body, firstBody) {
			t.Errorf("replayed body %s, want the executed one %s", r.Body, firstBody)
		}
	}
	// Once the first is done, every retry is a replay.
	r := postSupplier(t, p.SandboxURL, sk.Key, idem, body).WantStatus(t, http.StatusOK)
	if r.Header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(r.Body, firstBody) {
		t.Errorf("retry after the race: %q %s", r.Header.Get("Idempotent-Replayed"), r.Body)
	}
}

func TestIdempotency_KeyCreateReplayIsRedacted(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	jwt := p.Login(t)
	idem := apitest.NewIdemKey()
	keys := p.SandboxURL + enterpriseAPI + "/api-keys"
	body := map[string]any{"name": "replayed", "environment": "sandbox", "scopes": []string{"read", "write"}}

	var first, again apitest.APIKey
	r1 := apitest.Do(t, "POST", keys, apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", idem)), body).WantStatus(t, http.StatusOK)
	r1.Decode(t, &first)
	r2 := apitest.Do(t, "POST", keys, apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", idem)), body).WantStatus(t, http.StatusOK)
	r2.Decode(t, &again)
	if r2.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: Idempotent-Replayed %q, want true", r2.Header.Get("Idempotent-Replayed"))
	}
	if again.KeyID != first.KeyID || again.CreatedAt != first.CreatedAt || again.Name != first.Name {
		t.Errorf("replay %+v, want the first record %+v", again, first)
	}
	if !strings.Contains(again.Key, "*") || again.Key == first.Key || bytes.Contains(r2.Body, []byte(first.Key)) {
		t.Errorf("replayed key %q, want the value redacted with '*'", again.Key)
	}
	if !strings.HasPrefix(again.Key, first.Key[:12]) || !strings.HasSuffix(again.Key, first.Key[len(first.Key)-4:]) || len(again.Key) != len(first.Key) {
		t.Errorf("replayed key %q, want prefix %q, last four %q and the same length", again.Key, first.Key[:12], first.Key[len(first.Key)-4:])
	}
	// One key was created, and the shown value works.
	var list []map[string]any
	apitest.Do(t, "GET", keys, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
	n := 0
	for _, k := range list {
		if k["name"] == "replayed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d keys named replayed, want 1", n)
	}
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(first.Key), nil).WantStatus(t, http.StatusOK)

	t.Run("RotateWithKey", func(t *testing.T) {
		ridem := apitest.NewIdemKey()
		url := keys + "/" + first.KeyID + "/rotate"
		var rot, rot2 apitest.APIKey
		apitest.Do(t, "POST", url, apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", ridem)), nil).WantStatus(t, http.StatusOK).Decode(t, &rot)
		r := apitest.Do(t, "POST", url, apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", ridem)), nil).WantStatus(t, http.StatusOK)
		r.Decode(t, &rot2)
		if r.Header.Get("Idempotent-Replayed") != "true" || !strings.Contains(rot2.Key, "*") || rot2.Key == rot.Key {
			t.Errorf("rotate replay: %q key %q, want a redacted replay", r.Header.Get("Idempotent-Replayed"), rot2.Key)
		}
		// Rotated once, not twice: the value shown first still works.
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(rot.Key), nil).WantStatus(t, http.StatusOK)
	})

	p.Stop(t)
	assertLogHasNoSecrets(t, p, first.Key, jwt, testAdminPassword)
}

// linkNext extracts the target of a Link: <...>; rel="next" header.
var linkNext = regexp.MustCompile(`^<([^>]+)>;\s*rel="next"$`)

func TestSuppliers(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	base := p.SandboxURL + eudrAPI + "/suppliers"
	key := apitest.WithKey(sk.Key)

	t.Run("Upsert", func(t *testing.T) {
		first := mustCreateSupplier(t, p.SandboxURL, sk.Key, "ups-1", "First Name Ltd")
		if !supplierIDPattern.MatchString(first.SupplierID) {
			t.Errorf("supplierId %q, want sup_ + ULID", first.SupplierID)
		}
		if first.Role != "OPERATOR" || first.Country != "BR" || first.EORI.Valid {
			t.Errorf("created %+v, want role OPERATOR, country BR, eori null", first)
		}
		if first.CreatedAt != first.UpdatedAt {
			t.Errorf("new mapping: createdAt %s, updatedAt %s, want equal", first.CreatedAt, first.UpdatedAt)
		}
		time.Sleep(5 * time.Millisecond)
		body := supplierBody("ups-1", "Second Name Ltd")
		body["euOperatorUuid"] = "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE"
		body["eori"] = "DE123456789"
		body["role"] = "TRADER"
		var second supplier
		postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body).WantStatus(t, http.StatusOK).Decode(t, &second)
		if second.SupplierID != first.SupplierID || second.CreatedAt != first.CreatedAt {
			t.Errorf("upsert: supplierId %s createdAt %s, want the first %s %s", second.SupplierID, second.CreatedAt, first.SupplierID, first.CreatedAt)
		}
		if second.Name != "Second Name Ltd" || second.Role != "TRADER" || second.EORI != (nullString{true, "DE123456789"}) {
			t.Errorf("upsert answered %+v, want the new values", second)
		}
		if second.EUOperatorUUID != "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee" {
			t.Errorf("euOperatorUuid %q, want it lower-cased", second.EUOperatorUUID)
		}
		created, updated := apitest.ParseTime(t, second.CreatedAt), apitest.ParseTime(t, second.UpdatedAt)
		if !updated.After(created) || updated.Before(apitest.ParseTime(t, first.UpdatedAt)) {
			t.Errorf("updatedAt %s, want after createdAt %s", second.UpdatedAt, second.CreatedAt)
		}
		var got supplier
		apitest.Do(t, "GET", base+"/ups-1", key, nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got != second {
			t.Errorf("GET %+v, want what the upsert answered %+v", got, second)
		}
	})

	var made []supplier
	t.Run("ListNewestFirst", func(t *testing.T) {
		for i := 1; i <= 4; i++ {
			time.Sleep(2 * time.Millisecond) // IDs are time-ordered to the millisecond
			made = append(made, mustCreateSupplier(t, p.SandboxURL, sk.Key, fmt.Sprintf("list-%d", i), fmt.Sprintf("List %d Ltd", i)))
		}
		var list []supplier
		r := apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK)
		r.Decode(t, &list)
		if r.Header.Get("Link") != "" || r.Header.Get("X-Next-Cursor") != "" {
			t.Errorf("complete list has Link %q / X-Next-Cursor %q", r.Header.Get("Link"), r.Header.Get("X-Next-Cursor"))
		}
		if len(list) < 4 {
			t.Fatalf("listed %d suppliers, want at least 4", len(list))
		}
		for i := 0; i < 4; i++ {
			if want := made[3-i]; list[i] != want {
				t.Errorf("list[%d] = %s, want %s (newest first)", i, list[i].ERPVendorID, want.ERPVendorID)
			}
		}
		for i := 1; i < len(list); i++ {
			if list[i].SupplierID >= list[i-1].SupplierID {
				t.Errorf("list not newest first at %d: %s after %s", i, list[i].SupplierID, list[i-1].SupplierID)
			}
		}
	})
	t.Run("Pagination", func(t *testing.T) {
		var all []supplier
		apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK).Decode(t, &all)
		for _, limit := range []int{1, 2, 3} {
			var walked []supplier
			next := base + "?limit=" + strconv.Itoa(limit)
			for pages := 0; next != ""; pages++ {
				if pages > len(all)+1 {
					t.Fatalf("limit=%d: more pages than suppliers", limit)
				}
				r := apitest.Do(t, "GET", next, key, nil).WantStatus(t, http.StatusOK)
				var page []supplier
				r.Decode(t, &page)
				if len(page) == 0 || len(page) > limit {
					t.Fatalf("limit=%d: page of %d", limit, len(page))
				}
				walked = append(walked, page...)
				next = ""
				link, cursor := r.Header.Get("Link"), r.Header.Get("X-Next-Cursor")
				if link == "" {
					if cursor != "" {
						t.Errorf("limit=%d: X-Next-Cursor %q without Link", limit, cursor)
					}
					continue
				}
				m := linkNext.FindStringSubmatch(link)
				if m == nil || !strings.HasPrefix(m[1], eudrAPI+"/suppliers?") {
					t.Fatalf("limit=%d: Link %q, want <%s/suppliers?...>; rel=\"next\"", limit, link, eudrAPI)
				}
				u, err := url.Parse(m[1])
				if err != nil {
					t.Fatal(err)
				}
				if cursor == "" || u.Query().Get("cursor") != cursor || cursor != page[len(page)-1].SupplierID {
					t.Errorf("limit=%d: X-Next-Cursor %q, Link cursor %q, want the page's last supplierId %s", limit, cursor, u.Query().Get("cursor"), page[len(page)-1].SupplierID)
				}
				if u.Query().Get("limit") != strconv.Itoa(limit) {
					t.Errorf("limit=%d: Link keeps limit %q", limit, u.Query().Get("limit"))
				}
				next = p.SandboxURL + m[1]
			}
			if !slices.Equal(walked, all) {
				t.Errorf("limit=%d: walked %d suppliers, want the %d of the full list in order", limit, len(walked), len(all))
			}
		}
	})
	t.Run("LimitOutOfRange", func(t *testing.T) {
		for _, q := range []string{"limit=0", "limit=5000", "limit=1001", "limit=-1", "limit=abc"} {
			e := apitest.WantError(t, apitest.Do(t, "GET", base+"?"+q, key, nil), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
			if len(e.Details) == 1 && e.Details[0].Field != "query.limit" {
				t.Errorf("?%s: field %q, want query.limit", q, e.Details[0].Field)
			}
		}
		apitest.Do(t, "GET", base+"?limit=1000", key, nil).WantStatus(t, http.StatusOK)
	})
	t.Run("GetAndDelete", func(t *testing.T) {
		s := mustCreateSupplier(t, p.SandboxURL, sk.Key, "del-1", "Delete Me Ltd")
		var got supplier
		apitest.Do(t, "GET", base+"/del-1", key, nil).WantStatus(t, http.StatusOK).Decode(t, &got)
		if got != s {
			t.Errorf("GET %+v, want %+v", got, s)
		}
		r := apitest.Do(t, "DELETE", base+"/del-1", key, nil).WantStatus(t, http.StatusNoContent)
		if len(r.Body) != 0 {
			t.Errorf("204 with body %q", r.Body)
		}
		apitest.WantError(t, apitest.Do(t, "GET", base+"/del-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		apitest.WantError(t, apitest.Do(t, "DELETE", base+"/del-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		var list []supplier
		apitest.Do(t, "GET", base, key, nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		for _, x := range list {
			if x.ERPVendorID == "del-1" {
				t.Errorf("deleted supplier still listed")
			}
		}
		// Created again, it is a new mapping.
		again := mustCreateSupplier(t, p.SandboxURL, sk.Key, "del-1", "Back Again Ltd")
		if again.SupplierID == s.SupplierID {
			t.Errorf("re-created supplier kept the deleted one's id %s", s.SupplierID)
		}
	})
	t.Run("ValidationReportsEveryProblem", func(t *testing.T) {
		body := map[string]any{
			"erpVendorId":    "has space!",
			"euOperatorUuid": "not-a-uuid",
			"name":           "   ",
			"country":        "XX",
			"eori":           "12",
			"role":           "BOSS",
		}
		e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body), http.StatusBadRequest, "VALIDATION_FAILED",
			"INVALID_VALUE", "INVALID_VALUE", "REQUIRED", "INVALID_VALUE", "INVALID_VALUE", "INVALID_VALUE")
		for field, code := range map[string]string{"erpVendorId": "INVALID_VALUE", "euOperatorUuid": "INVALID_VALUE", "name": "REQUIRED",
			"country": "INVALID_VALUE", "eori": "INVALID_VALUE", "role": "INVALID_VALUE"} {
			if d := e.Detail(t, field); d.Code != code {
				t.Errorf("field %s: code %s, want %s", field, d.Code, code)
			}
		}
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), map[string]any{}), http.StatusBadRequest, "VALIDATION_FAILED",
			"REQUIRED", "REQUIRED", "REQUIRED", "REQUIRED")
		for _, f := range []string{"erpVendorId", "euOperatorUuid", "name", "country"} {
			e.Detail(t, f)
		}
		lower := supplierBody("val-1", "Lower Ltd")
		lower["country"] = "br"
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), lower), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "country")
		typed := supplierBody("val-2", "Typed Ltd")
		typed["name"] = 42
		e = apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), typed), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE")
		e.Detail(t, "name")
		apitest.WantError(t, apitest.Do(t, "GET", base+"/val-1", key, nil), http.StatusNotFound, "NOT_FOUND")
	})
	t.Run("UnknownFields", func(t *testing.T) {
		body := supplierBody("unk-1", "Unknown Ltd")
		body["colour"] = "green"
		body["legacyId"] = 7
		e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), body), http.StatusBadRequest, "VALIDATION_FAILED", "UNKNOWN_FIELD", "UNKNOWN_FIELD")
		e.Detail(t, "colour")
		e.Detail(t, "legacyId")
	})
	t.Run("MalformedJSON", func(t *testing.T) {
		for _, c := range []struct{ body, code string }{
			{`{"erpVendorId": "x",`, "MALFORMED_JSON"},
			{`{"erpVendorId": "x"}{}`, "MALFORMED_JSON"},
			{`nul`, "MALFORMED_JSON"},
			{`{'erpVendorId': 'x'}`, "MALFORMED_JSON"},
			{" ", "MALFORMED_JSON"},
			{`[1,2]`, "INVALID_VALUE"}, // well-formed, but not an object
		} {
			e := apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), c.body), http.StatusBadRequest, "VALIDATION_FAILED", c.code)
			if len(e.Details) == 1 && e.Details[0].Field != "body" {
				t.Errorf("body %q: field %q, want body", c.body, e.Details[0].Field)
			}
		}
	})
	t.Run("UnsupportedMediaType", func(t *testing.T) {
		for _, ct := range []string{"text/plain", "application/xml", "application/x-www-form-urlencoded", "application/geo+json"} {
			r := apitest.Do(t, "POST", base, apitest.Merge(key, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", ct)), supplierBody("mt-1", "Media Ltd"))
			apitest.WantError(t, r, http.StatusUnsupportedMediaType, "UNSUPPORTED_MEDIA_TYPE", "INVALID_VALUE")
		}
		apitest.WantError(t, apitest.Do(t, "GET", base+"/mt-1", key, nil), http.StatusNotFound, "NOT_FOUND")
		apitest.Do(t, "POST", base, apitest.Merge(key, apitest.Hdr("Idempotency-Key", apitest.NewIdemKey(), "Content-Type", "application/json; charset=utf-8")),
			supplierBody("mt-1", "Media Ltd")).WantStatus(t, http.StatusOK)
	})
}

func TestSuppliers_BodyLimit(t *testing.T) {
	t.Parallel()
	p := startServer(t, "EUDR_LIMITS_MAX_BODY_BYTES=2048")
	sk := p.CreateKey(t, sandbox)
	big := supplierBody("big-1", strings.Repeat("n", 3000)) // over 2048 bytes as JSON
	js, _ := json.Marshal(big)

	// Content-Length over the limit.
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, apitest.NewIdemKey(), js), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// Chunked: the limit applies while reading.
	idem := apitest.NewIdemKey()
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, idem, bytes.NewReader(js)), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
	// A body just under the limit is fine, with the same key (a 413 does not burn it).
	ok := supplierBody("big-1", strings.Repeat("n", 190))
	postSupplier(t, p.SandboxURL, sk.Key, idem, ok).WantStatus(t, http.StatusOK)
	apitest.WantError(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil, bytes.NewReader(js)), http.StatusRequestEntityTooLarge, "PAYLOAD_TOO_LARGE")
}

func TestKeys_CreateListAndStorage(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	jwt := p.Login(t)
	keysURL := p.SandboxURL + enterpriseAPI + "/api-keys"

	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)
	ro := p.CreateKey(t, production, "read")
	wo := p.CreateKey(t, sandbox, "write")
	var liveFromProd apitest.APIKey
	apitest.Do(t, "POST", p.ProductionURL+enterpriseAPI+"/api-keys", apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())),
		map[string]any{"environment": "production"}).WantStatus(t, http.StatusOK).Decode(t, &liveFromProd)
	all := []apitest.APIKey{sk, pk, ro, wo, liveFromProd}

	t.Run("Values", func(t *testing.T) {
		for _, k := range []apitest.APIKey{sk, wo} {
			if !sandboxKeyPattern.MatchString(k.Key) || k.Environment != sandbox {
				t.Errorf("sandbox key %q (environment %q), want sk_test_ + 32 base62", k.Key, k.Environment)
			}
		}
		for _, k := range []apitest.APIKey{pk, ro, liveFromProd} {
			if !productionKeyPattern.MatchString(k.Key) || k.Environment != production {
				t.Errorf("production key %q (environment %q), want sk_live_ + 32 base62", k.Key, k.Environment)
			}
		}
		seen := map[string]bool{}
		for _, k := range all {
			if !keyIDPattern.MatchString(k.KeyID) {
				t.Errorf("keyId %q, want key_ + ULID", k.KeyID)
			}
			apitest.ParseTime(t, k.CreatedAt)
			if seen[k.Key] || seen[k.KeyID] {
				t.Errorf("duplicate key value or id")
			}
			seen[k.Key], seen[k.KeyID] = true, true
		}
		if !slices.Equal(wo.Scopes, []string{"read", "write"}) {
			t.Errorf("write key scopes %q, want [read write] (write implies read)", wo.Scopes)
		}
		if !slices.Equal(ro.Scopes, []string{"read"}) {
			t.Errorf("read key scopes %q, want [read]", ro.Scopes)
		}
		apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/health", apitest.WithKey(liveFromProd.Key), nil).WantStatus(t, http.StatusOK)
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(wo.Key), nil).WantStatus(t, http.StatusOK)
	})
	t.Run("InvalidRequests", func(t *testing.T) {
		post := func(body any) *apitest.Response {
			return apitest.Do(t, "POST", keysURL, apitest.Merge(apitest.Bearer(jwt), apitest.Hdr("Idempotency-Key", apitest.NewIdemKey())), body)
		}
		apitest.WantError(t, post(map[string]any{"environment": "staging"}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE").Detail(t, "environment")
		apitest.WantError(t, post(map[string]any{}), http.StatusBadRequest, "VALIDATION_FAILED", "REQUIRED").Detail(t, "environment")
		apitest.WantError(t, post(map[string]any{"environment": "sandbox", "scopes": []string{"read", "admin"}}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE").Detail(t, "scopes[1]")
		apitest.WantError(t, post(map[string]any{"environment": "sandbox", "scopes": []string{}}), http.StatusBadRequest, "VALIDATION_FAILED", "INVALID_VALUE").Detail(t, "scopes")
		apitest.WantError(t, post(map[string]any{"environment": "sandbox", "key": "sk_test_" + apitest.RandBase62(32)}), http.StatusBadRequest, "VALIDATION_FAILED", "UNKNOWN_FIELD")
		apitest.WantError(t, apitest.Do(t, "POST", keysURL, apitest.Bearer(jwt), map[string]any{"environment": "sandbox"}), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	})
	t.Run("ListNeverShowsValues", func(t *testing.T) {
		apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
		for _, base := range []string{p.SandboxURL, p.ProductionURL} {
			r := apitest.Do(t, "GET", base+enterpriseAPI+"/api-keys", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
			for _, k := range all {
				if bytes.Contains(r.Body, []byte(k.Key)) || bytes.Contains(r.Body, []byte(k.Key[12:])) {
					t.Errorf("the key list contains the value of %s", k.KeyID)
				}
			}
			byID := map[string]map[string]any{}
			for _, m := range r.Array(t) {
				if _, ok := m["key"]; ok {
					t.Errorf("listed key %v has a key field", m["keyId"])
				}
				byID[fmt.Sprint(m["keyId"])] = m
			}
			for _, k := range all {
				m := byID[k.KeyID]
				if m == nil {
					t.Errorf("%s: key %s not listed", base, k.KeyID)
					continue
				}
				if m["prefix"] != k.Key[:12] || m["last4"] != k.Key[len(k.Key)-4:] || m["environment"] != k.Environment || m["createdAt"] != k.CreatedAt {
					t.Errorf("listed %v, want prefix %q last4 %q environment %s createdAt %s", m, k.Key[:12], k.Key[len(k.Key)-4:], k.Environment, k.CreatedAt)
				}
			}
			if m := byID[sk.KeyID]; m != nil && m["lastUsedAt"] == nil {
				t.Errorf("used key %s has lastUsedAt null", sk.KeyID)
			}
			if m := byID[ro.KeyID]; m != nil && m["lastUsedAt"] != nil {
				t.Errorf("unused key %s has lastUsedAt %v", ro.KeyID, m["lastUsedAt"])
			}
		}
		// Revoked keys leave the list.
		apitest.Do(t, "DELETE", keysURL+"/"+wo.KeyID, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusNoContent)
		r := apitest.Do(t, "GET", keysURL+"?limit=1000", apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
		for _, m := range r.Array(t) {
			if m["keyId"] == wo.KeyID {
				t.Errorf("revoked key %s still listed", wo.KeyID)
			}
		}
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(wo.Key), nil))
	})
	t.Run("ListPagination", func(t *testing.T) {
		var walked []string
		next := keysURL + "?limit=2"
		for next != "" {
			r := apitest.Do(t, "GET", next, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK)
			for _, m := range r.Array(t) {
				walked = append(walked, fmt.Sprint(m["keyId"]))
			}
			next = ""
			if m := linkNext.FindStringSubmatch(r.Header.Get("Link")); m != nil {
				next = p.SandboxURL + m[1]
			}
			if len(walked) > 20 {
				t.Fatal("pagination does not end")
			}
		}
		var full []map[string]any
		apitest.Do(t, "GET", keysURL, apitest.Bearer(jwt), nil).WantStatus(t, http.StatusOK).Decode(t, &full)
		if len(walked) != len(full) || len(full) != 4 {
			t.Errorf("walked %d keys with limit=2, list has %d, want 4 both", len(walked), len(full))
		}
	})

	p.Stop(t)
	t.Run("NotInDataDir", func(t *testing.T) {
		err := filepath.WalkDir(p.DataDir, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			for _, k := range all {
				if bytes.Contains(data, []byte(k.Key)) || bytes.Contains(data, []byte(k.Key[8:])) {
					t.Errorf("%s contains the value of key %s", path, k.KeyID)
				}
			}
			if bytes.Contains(data, []byte(testAdminPassword)) {
				t.Errorf("%s contains the admin password", path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(p.DataDir, "eudr.db")); err != nil {
			t.Errorf("no eudr.db in the data dir: %v", err)
		}
	})
	var secrets []string
	for _, k := range all {
		secrets = append(secrets, k.Key)
	}
	assertLogHasNoSecrets(t, p, append(secrets, jwt, testAdminPassword)...)

	t.Run("LastUsedAtSurvivesRestart", func(t *testing.T) {
		p := p.Restart(t)
		var list []map[string]any
		apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
		for _, k := range list {
			if k["keyId"] == sk.KeyID && k["lastUsedAt"] == nil {
				t.Errorf("lastUsedAt of %s lost over a clean restart", sk.KeyID)
			}
		}
		p.Stop(t)
	})
}

func TestCLI_CreateKey(t *testing.T) {
	t.Parallel()
	p := startServer(t)

	t.Run("RunningAppliance", func(t *testing.T) {
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox")
		if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
			t.Errorf("create-key on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
		}
		if sandboxKeyPattern.MatchString(strings.TrimSpace(res.Stdout)) {
			t.Errorf("create-key on a running appliance printed a key")
		}
		apitest.Do(t, "GET", p.SandboxURL+"/readyz", nil, nil).WantStatus(t, http.StatusOK)
	})
	p.Stop(t)

	var sandboxKey, liveReadKey string
	t.Run("StoppedAppliance", func(t *testing.T) {
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox", "--name", "from-cli")
		sandboxKey = strings.TrimSpace(res.Stdout)
		if res.Code != 0 || !sandboxKeyPattern.MatchString(sandboxKey) || strings.Count(res.Stdout, "\n") != 1 {
			t.Fatalf("create-key --env sandbox: exit %d, stdout %q, stderr %q; want 0 and one sk_test_ line", res.Code, res.Stdout, res.Stderr)
		}
		res = runCLI(t, p.DataDir, nil, "admin", "create-key", "--org", "default", "--env", "production", "--scopes", "read")
		liveReadKey = strings.TrimSpace(res.Stdout)
		if res.Code != 0 || !productionKeyPattern.MatchString(liveReadKey) {
			t.Fatalf("create-key --env production: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
		}
	})
	t.Run("BadUsage", func(t *testing.T) {
		for _, args := range [][]string{
			{"admin", "create-key", "--env", "staging"},
			{"admin", "create-key"},
			{"admin", "create-key", "--env", "sandbox", "--scopes", "read,admin"},
			{"admin", "create-key", "--env", "sandbox", "--bogus"},
		} {
			if res := runCLI(t, p.DataDir, nil, args...); res.Code != 2 || res.Stdout != "" {
				t.Errorf("eudr %v: exit %d, stdout %q; want 2 and nothing", args, res.Code, res.Stdout)
			}
		}
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox", "--org", "nope")
		if res.Code != 1 || !strings.Contains(res.Stderr, "nope") {
			t.Errorf("unknown org: exit %d, stderr %q; want 1 and the org named", res.Code, res.Stderr)
		}
	})
	if sandboxKey == "" {
		t.FailNow()
	}

	p = p.Restart(t)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sandboxKey), nil).WantStatus(t, http.StatusOK)
	mustCreateSupplier(t, p.SandboxURL, sandboxKey, "cli-1", "CLI Ltd")
	apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers", apitest.WithKey(liveReadKey), nil).WantStatus(t, http.StatusOK)
	apitest.WantForbidden(t, postSupplier(t, p.ProductionURL, liveReadKey, apitest.NewIdemKey(), supplierBody("cli-2", "X")), "SCOPE_REQUIRED")
	apitest.WantForbidden(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/health", apitest.WithKey(sandboxKey), nil), "WRONG_ENVIRONMENT")
	var list []map[string]any
	apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
	names := map[string]bool{}
	for _, k := range list {
		names[fmt.Sprint(k["name"])] = true
		if k["prefix"] == sandboxKey[:12] && k["name"] != "from-cli" {
			t.Errorf("CLI key listed with name %v, want from-cli", k["name"])
		}
	}
	if !names["from-cli"] || len(list) != 2 {
		t.Errorf("listed keys %v, want the two CLI keys, one named from-cli", list)
	}
}

func TestAdmin_GeneratedPassword(t *testing.T) {
	t.Parallel()
	requireE2E(t)
	// A data dir that does not exist yet is created, private.
	p := startServerIn(t, filepath.Join(tempDataDir(t), "new", "data"), "EUDR_ADMIN_PASSWORD=")
	for _, c := range []struct {
		path string
		mode fs.FileMode
	}{{p.DataDir, 0o700}, {filepath.Join(p.DataDir, "eudr.db"), 0o600}, {filepath.Join(p.DataDir, "eudr.sock"), 0o600}} {
		if fi, err := os.Stat(c.path); err != nil {
			t.Errorf("%v", err)
		} else if fi.Mode().Perm() != c.mode {
			t.Errorf("%s has mode %o, want %o", c.path, fi.Mode().Perm(), c.mode)
		}
	}
	path := filepath.Join(p.DataDir, "initial-admin-password")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no generated password file: %v", err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o, want 0600", path, fi.Mode().Perm())
	}
	data, _ := os.ReadFile(path)
	password := strings.TrimSpace(string(data))
	if len(password) < 16 {
		t.Fatalf("generated password %q is too short", password)
	}
	token := apitest.Login(t, p.SandboxURL, "admin", password)
	apitest.CreateKey(t, p.SandboxURL, token, sandbox)
	apitest.WantUnauthorized(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": testAdminPassword}))
	logged := false
	for _, l := range p.Logs() {
		if l["password_file"] == path {
			logged = true
		}
	}
	if !logged {
		t.Errorf("the password file's path %s is not logged", path)
	}

	// A restart keeps the admin: the file is not rewritten and the password still works.
	p.Stop(t)
	p2 := p.Restart(t)
	again, _ := os.ReadFile(path)
	if !bytes.Equal(again, data) {
		t.Errorf("restart rewrote %s", path)
	}
	apitest.Login(t, p2.SandboxURL, "admin", password)
	p2.Stop(t)
	assertLogHasNoSecrets(t, p, password)
	assertLogHasNoSecrets(t, p2, password)

	// EUDR_ADMIN_PASSWORD only applies to an empty store.
	p3 := startServerIn(t, p.DataDir, "EUDR_ADMIN_PASSWORD=another-password-123")
	apitest.Login(t, p3.SandboxURL, "admin", password)
	apitest.WantUnauthorized(t, apitest.Do(t, "POST", p3.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": "another-password-123"}))
}

func TestStore_SecondServeRefused(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	res := runCLI(t, p.DataDir, nil, "serve")
	if res.Code == 0 || !strings.Contains(res.Stderr, "data dir is in use") {
		t.Errorf("second serve: exit %d, stderr %q; want non-zero and \"data dir is in use\"", res.Code, res.Stderr)
	}
	if res.Elapsed > 5*time.Second {
		t.Errorf("second serve took %s to give up, want a few seconds", res.Elapsed)
	}
	if strings.Contains(res.Stdout, "listener ready") {
		t.Errorf("second serve opened listeners: %s", res.Stdout)
	}
	// The first one is unaffected.
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	mustCreateSupplier(t, p.SandboxURL, sk.Key, "still-1", "Still Here Ltd")

	// SIGINT stops it cleanly too; then the data dir is free again.
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if code, ok := p.Wait(stopTimeout); !ok || code != 0 {
		t.Fatalf("after SIGINT: exited %v with code %d, want 0", ok, code)
	}
	p = p.Restart(t)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/still-1", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
	p.Stop(t)
}

// restoreBackup starts a server on a new data dir holding backup as eudr.db.
// restoreBackup restores as README's Operations section says: the store
// from the backup, and the key files (kept outside the store, backed up on
// their own) from the data dir keysFrom.
func restoreBackup(t *testing.T, backup, keysFrom string) *serverProc {
	t.Helper()
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatalf("read backup: %v", err)
	}
	dir := tempDataDir(t)
	if err := os.WriteFile(filepath.Join(dir, "eudr.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ledger-signing.key", "eu-credentials.key"} {
		key, err := os.ReadFile(filepath.Join(keysFrom, name))
		if err != nil {
			t.Fatalf("key file: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return startServerIn(t, dir)
}

func TestBackup_HotAndCold(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)
	before := []supplier{
		mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-1", "Before One Ltd"),
		mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-2", "Before Two Ltd"),
		mustCreateSupplier(t, p.ProductionURL, pk.Key, "bk-live", "Before Live Ltd"),
	}
	out := tempDataDir(t)

	hot := filepath.Join(out, "hot.db")
	res := runCLI(t, p.DataDir, nil, "admin", "backup", hot)
	if res.Code != 0 || !strings.Contains(res.Stdout, "from the running appliance") {
		t.Fatalf("backup while running: exit %d, stdout %q, stderr %q; want 0 and \"from the running appliance\"", res.Code, res.Stdout, res.Stderr)
	}
	after := mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-3", "After Ltd")
	// The appliance keeps serving during and after the backup.
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)

	t.Run("RestoreHot", func(t *testing.T) {
		r := restoreBackup(t, hot, p.DataDir)
		for _, s := range before {
			base, key := r.SandboxURL, sk.Key
			if s.ERPVendorID == "bk-live" {
				base, key = r.ProductionURL, pk.Key
			}
			var got supplier
			apitest.Do(t, "GET", base+eudrAPI+"/suppliers/"+s.ERPVendorID, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
			if got != s {
				t.Errorf("restored %+v, want %+v", got, s)
			}
		}
		apitest.WantError(t, apitest.Do(t, "GET", r.SandboxURL+eudrAPI+"/suppliers/"+after.ERPVendorID, apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.Login(t, r.SandboxURL, "admin", testAdminPassword)
		r.Stop(t)
	})
	t.Run("ThroughTheAPI", func(t *testing.T) {
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", apitest.WithKey(sk.Key), nil), "JWT_REQUIRED")
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", nil, nil))
		r := apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("backup Content-Type %q, want application/octet-stream", ct)
		}
		if cl := r.Header.Get("Content-Length"); cl != strconv.Itoa(len(r.Body)) {
			t.Errorf("backup Content-Length %q, body %d bytes", cl, len(r.Body))
		}
		f := filepath.Join(out, "api.db")
		if err := os.WriteFile(f, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		rs := restoreBackup(t, f, p.DataDir)
		apitest.Do(t, "GET", rs.SandboxURL+eudrAPI+"/suppliers/"+after.ERPVendorID, apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
		rs.Stop(t)
	})
	t.Run("BackupWithoutFile", func(t *testing.T) {
		if res := runCLI(t, p.DataDir, nil, "admin", "backup"); res.Code != 2 {
			t.Errorf("backup without a file: exit %d, want 2", res.Code)
		}
	})

	p.Stop(t)
	cold := filepath.Join(out, "cold.db")
	res = runCLI(t, p.DataDir, nil, "admin", "backup", cold)
	if res.Code != 0 || !strings.Contains(res.Stdout, "from the stopped data dir") {
		t.Fatalf("backup while stopped: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	t.Run("RestoreCold", func(t *testing.T) {
		r := restoreBackup(t, cold, p.DataDir)
		for _, s := range append(before[:2:2], after) {
			var got supplier
			apitest.Do(t, "GET", r.SandboxURL+eudrAPI+"/suppliers/"+s.ERPVendorID, apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
			if got != s {
				t.Errorf("restored %+v, want %+v", got, s)
			}
		}
		r.Stop(t)
	})
	t.Run("NoKeyValuesInBackups", func(t *testing.T) {
		for _, f := range []string{hot, cold} {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(f)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %o, want 0600", f, fi.Mode().Perm())
			}
			for _, k := range []apitest.APIKey{sk, pk} {
				if bytes.Contains(data, []byte(k.Key)) {
					t.Errorf("%s contains the value of %s", f, k.KeyID)
				}
			}
		}
	})
	t.Run("MissingDataDir", func(t *testing.T) {
		res := runCLI(t, filepath.Join(out, "nothing-here"), nil, "admin", "backup", filepath.Join(out, "x.db"))
		if res.Code != 1 {
			t.Errorf("backup of a missing store: exit %d, want 1; stderr %q", res.Code, res.Stderr)
		}
	})
}

func TestLog_RequestLinesAndShutdown(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	health := p.SandboxURL + eudrAPI + "/health"

	apitest.Do(t, "GET", health, apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("X-Trace-Id", "log-trace-ok")), nil).WantStatus(t, http.StatusOK)
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", health+"?api_key="+sk.Key, apitest.Hdr("X-Trace-Id", "log-trace-401"), nil))
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", health, apitest.Hdr("Authorization", sk.Key), nil))
	apitest.WantError(t, apitest.Do(t, "GET", p.SandboxURL+"/no/such/path", apitest.Merge(apitest.WithKey(sk.Key), apitest.Hdr("X-Trace-Id", "log-trace-404")), nil), http.StatusNotFound, "NOT_FOUND")
	apitest.WantError(t, apitest.Do(t, "PUT", p.SandboxURL+eudrAPI+"/suppliers", apitest.WithKey(sk.Key), nil), http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED")
	apitest.WantError(t, postSupplier(t, p.SandboxURL, sk.Key, "", supplierBody("log-1", "Log Ltd")), http.StatusBadRequest, "VALIDATION_FAILED", "IDEMPOTENCY_KEY_MISSING")
	mustCreateSupplier(t, p.SandboxURL, sk.Key, "log-1", "Log Ltd")
	apitest.WantUnauthorized(t, apitest.Do(t, "POST", p.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": "wrong " + testAdminPassword}))
	const requests = 1 + 1 + 8 // login, create key, the eight above
	jwt := p.Login(t)

	p.Stop(t)
	lines := p.LogLines()
	var reqs []map[string]any
	messages := []string{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Errorf("log line is not JSON: %q", l)
			continue
		}
		for _, f := range []string{"level", "time", "message"} {
			if _, ok := m[f]; !ok {
				t.Errorf("log line without %s: %s", f, l)
			}
		}
		messages = append(messages, fmt.Sprint(m["message"]))
		if m["message"] == "request" {
			reqs = append(reqs, m)
		}
	}
	if len(reqs) != requests {
		t.Errorf("%d request log lines, want %d (one per request)", len(reqs), requests)
	}
	for _, m := range reqs {
		for f, kind := range map[string]string{"method": "string", "route": "string", "status": "number", "latency_ms": "number",
			"trace_id": "string", "key_id": "string", "environment": "string"} {
			v, ok := m[f]
			_, isStr := v.(string)
			_, isNum := v.(float64)
			if !ok || kind == "string" && !isStr || kind == "number" && !isNum {
				t.Errorf("request log line: %s = %v (%T), want a %s: %v", f, v, v, kind, m)
			}
		}
		if id, _ := m["trace_id"].(string); !apitest.TraceIDPattern.MatchString(id) {
			t.Errorf("request log line trace_id %q", id)
		}
	}
	byTrace := func(id string) map[string]any {
		for _, m := range reqs {
			if m["trace_id"] == id {
				return m
			}
		}
		t.Errorf("no request log line with trace_id %s", id)
		return map[string]any{}
	}
	if m := byTrace("log-trace-ok"); m["method"] != "GET" || m["route"] != eudrAPI+"/health" || m["status"] != float64(200) || m["key_id"] != sk.KeyID || m["environment"] != sandbox {
		t.Errorf("200 line: %v, want GET %s 200 key_id %s sandbox", m, eudrAPI+"/health", sk.KeyID)
	}
	if m := byTrace("log-trace-401"); m["status"] != float64(401) || m["key_id"] != "" {
		t.Errorf("401 line: %v, want status 401 and no key_id", m)
	}
	if m := byTrace("log-trace-404"); m["status"] != float64(404) || m["route"] != "" || m["key_id"] != sk.KeyID {
		t.Errorf("404 line: %v, want status 404, route \"\" and key_id %s", m, sk.KeyID)
	}

	// Shutdown is logged, last.
	si := slices.IndexFunc(messages, func(m string) bool { return strings.HasPrefix(m, "shutting down") })
	st := slices.Index(messages, "stopped")
	if st < 0 || si < 0 || si > st || st != len(messages)-1 {
		t.Errorf("log messages %q, want shutting down then stopped, last", messages)
	}
	assertLogHasNoSecrets(t, p, sk.Key, sk.Key[8:], testAdminPassword, jwt)
}

func TestCLI_ResetPassword(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	keys := enterpriseAPI + "/api-keys"
	before := apitest.Login(t, p.SandboxURL, "admin", p.AdminPassword)
	res := runCLI(t, p.DataDir, nil, "admin", "reset-password")
	if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
		t.Errorf("reset-password on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
	}
	p.Stop(t)

	res = runCLI(t, p.DataDir, nil, "admin", "reset-password")
	password := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || len(password) < 16 {
		t.Fatalf("reset-password: exit %d, stdout %q, stderr %q; want 0 and a password", res.Code, res.Stdout, res.Stderr)
	}
	if res := runCLI(t, p.DataDir, nil, "admin", "reset-password", "--user", "nobody"); res.Code != 1 || !strings.Contains(res.Stderr, "does not exist") {
		t.Errorf("reset-password --user nobody: exit %d, stderr %q; want 1 and \"does not exist\"", res.Code, res.Stderr)
	}

	q := p.Restart(t)
	after := apitest.Login(t, q.SandboxURL, "admin", password)
	r := apitest.Do(t, "POST", q.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": p.AdminPassword})
	apitest.WantUnauthorized(t, r)
	// The token of the old password ended with it; the new one works.
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", q.SandboxURL+keys, apitest.Bearer(before), nil))
	apitest.Do(t, "GET", q.SandboxURL+keys, apitest.Bearer(after), nil).WantStatus(t, http.StatusOK)
}
