package server

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// keyCreated is the answer of create and rotate.
type keyCreated struct {
	KeyID       string   `json:"keyId"`
	Name        string   `json:"name"`
	Environment string   `json:"environment"`
	Scopes      []string `json:"scopes"`
	Key         string   `json:"key"`
	CreatedAt   string   `json:"createdAt"`
}

func TestApp_Keys(t *testing.T) {
	ta := newTestApp(t)
	token := ta.adminToken()
	jwtHdr := func(hdr ...string) []string { return append([]string{"Authorization", "Bearer " + token}, hdr...) }
	keysPath := enterprisePrefix + "/api-keys"
	health := eudrPrefix + "/health"

	create := func(body, idemKey string) keyCreated {
		t.Helper()
		w := ta.do("POST", keysPath, body, jwtHdr("Idempotency-Key", idemKey)...)
		if w.Code != 200 {
			t.Fatalf("create %s: got %d %s, want 200", body, w.Code, w.Body)
		}
		var kc keyCreated
		mustDecode(t, w, &kc)
		return kc
	}
	list := func() (string, []keyResponse) {
		t.Helper()
		w := ta.do("GET", keysPath, "", jwtHdr()...)
		if w.Code != 200 {
			t.Fatalf("list: got %d %s, want 200", w.Code, w.Body)
		}
		var ks []keyResponse
		mustDecode(t, w, &ks)
		return w.Body.String(), ks
	}

	created := create(`{"name":"erp","environment":"sandbox"}`, "create-1")
	t.Run("Create", func(t *testing.T) {
		if !regexp.MustCompile(`^sk_test_[0-9A-Za-z]{32}$`).MatchString(created.Key) {
			t.Errorf("key: got %q, want sk_test_ + 32 base62", created.Key)
		}
		if created.Name != "erp" || created.Environment != "sandbox" || !slices.Equal(created.Scopes, []string{"read", "write"}) {
			t.Errorf("created: got %+v, want name erp, sandbox, [read write]", created)
		}
		if created.CreatedAt != "2026-11-20T10:00:00.000Z" {
			t.Errorf("createdAt: got %q, want 2026-11-20T10:00:00.000Z", created.CreatedAt)
		}
		if w := ta.do("GET", health, "", "X-API-Key", created.Key); w.Code != 200 {
			t.Errorf("new key on sandbox: got %d, want 200", w.Code)
		}
	})

	t.Run("CreateProductionFromSandboxListener", func(t *testing.T) {
		live := create(`{"name":"prod","environment":"production","scopes":["read"]}`, "create-live")
		if !strings.HasPrefix(live.Key, "sk_live_") || !slices.Equal(live.Scopes, []string{"read"}) {
			t.Errorf("production key: got %q %q, want sk_live_ read-only", live.Key, live.Scopes)
		}
		if w := ta.serve(storage.Production, newRequest("GET", health, "", "X-API-Key", live.Key)); w.Code != 200 {
			t.Errorf("live key on production: got %d, want 200", w.Code)
		}
	})

	t.Run("CreateUnknownField", func(t *testing.T) {
		// (Which values are refused is account's tests'.)
		w := ta.do("POST", keysPath, `{"environment":"sandbox","scope":["read"]}`, jwtHdr("Idempotency-Key", "bad-2")...)
		wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailUnknownField)
	})

	t.Run("CreateNeedsIdempotencyKey", func(t *testing.T) {
		w := ta.do("POST", keysPath, `{"environment":"sandbox"}`, jwtHdr()...)
		e := wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)
		if e.Details[0].Field != "headers.Idempotency-Key" {
			t.Errorf("field: got %q, want headers.Idempotency-Key", e.Details[0].Field)
		}
	})

	t.Run("CreateReplayRedactsValue", func(t *testing.T) {
		w := ta.do("POST", keysPath, `{"name":"erp","environment":"sandbox"}`, jwtHdr("Idempotency-Key", "create-1")...)
		if w.Code != 200 || w.Header().Get("Idempotent-Replayed") != "true" {
			t.Fatalf("replay: got %d Idempotent-Replayed %q, want 200 true", w.Code, w.Header().Get("Idempotent-Replayed"))
		}
		var kc keyCreated
		mustDecode(t, w, &kc)
		if kc.KeyID != created.KeyID {
			t.Errorf("replayed keyId: got %s, want %s (no second key)", kc.KeyID, created.KeyID)
		}
		want := created.Key[:12] + strings.Repeat("*", 24) + created.Key[36:]
		if kc.Key != want {
			t.Errorf("replayed key: got %q, want the redacted %q", kc.Key, want)
		}
		ta.view(func(tx *storage.Tx) error {
			r, err := tx.FindIdempotency(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, "create-1")
			if err != nil {
				return err
			}
			if strings.Contains(string(r.Body), created.Key) {
				t.Error("stored idempotent response contains the key value")
			}
			return nil
		})
	})

	t.Run("ListNeverShowsValue", func(t *testing.T) {
		ta.do("GET", health, "", "X-API-Key", created.Key)
		body, ks := list()
		if strings.Contains(body, created.Key) || strings.Contains(body, created.Key[12:]) || strings.Contains(body, `"key"`) {
			t.Errorf("list: got %s, want no key value", body)
		}
		i := slices.IndexFunc(ks, func(k keyResponse) bool { return k.KeyID == created.KeyID })
		if i < 0 {
			t.Fatalf("list: got %s, want key %s", body, created.KeyID)
		}
		k := ks[i]
		if k.Prefix != created.Key[:12] || k.Last4 != created.Key[36:] || k.Name != "erp" || k.Environment != "sandbox" {
			t.Errorf("listed key: got %+v, want prefix %q last4 %q", k, created.Key[:12], created.Key[36:])
		}
		if k.LastUsedAt == nil || *k.LastUsedAt != "2026-11-20T10:00:00.000Z" {
			t.Errorf("lastUsedAt after a request: got %v, want 2026-11-20T10:00:00.000Z", k.LastUsedAt)
		}
		// Newest first.
		for j := 1; j < len(ks); j++ {
			if ks[j-1].KeyID < ks[j].KeyID {
				t.Errorf("list order: %s before %s, want newest first", ks[j-1].KeyID, ks[j].KeyID)
			}
		}
	})

	var rotated keyCreated
	t.Run("Rotate", func(t *testing.T) {
		ta.clock.Advance(time.Minute)
		w := ta.do("POST", keysPath+"/"+created.KeyID+"/rotate", "", jwtHdr()...) // Idempotency-Key optional
		if w.Code != 200 {
			t.Fatalf("rotate: got %d %s, want 200", w.Code, w.Body)
		}
		mustDecode(t, w, &rotated)
		if rotated.KeyID != created.KeyID {
			t.Errorf("rotated keyId: got %s, want %s", rotated.KeyID, created.KeyID)
		}
		if rotated.Key == created.Key || !account.WellFormedKey(rotated.Key) || !strings.HasPrefix(rotated.Key, "sk_test_") {
			t.Errorf("rotated value: got %q, want a new sk_test_ value", rotated.Key)
		}
		if !slices.Equal(rotated.Scopes, created.Scopes) || rotated.Name != created.Name {
			t.Errorf("rotated: got %+v, want name and scopes kept", rotated)
		}
		w = ta.do("GET", health, "", "X-API-Key", created.Key)
		wantError(t, w, http.StatusForbidden, apierr.CodeForbidden, apierr.DetailKeyRotated)
		if w := ta.do("GET", health, "", "X-API-Key", rotated.Key); w.Code != 200 {
			t.Errorf("new value: got %d, want 200", w.Code)
		}
		_, ks := list()
		i := slices.IndexFunc(ks, func(k keyResponse) bool { return k.KeyID == created.KeyID })
		if i < 0 || ks[i].Prefix != rotated.Key[:12] || ks[i].Last4 != rotated.Key[36:] || ks[i].RotatedAt == nil {
			t.Errorf("listed after rotate: got %+v, want new prefix/last4 and rotatedAt", ks[i])
		}
	})

	t.Run("RotateWithIdempotencyKey", func(t *testing.T) {
		k, first := ta.newKey(storage.Sandbox)
		rotate := func() *keyCreated {
			w := ta.do("POST", keysPath+"/"+k.ID+"/rotate", "", jwtHdr("Idempotency-Key", "rot-1")...)
			if w.Code != 200 {
				t.Fatalf("rotate: got %d %s", w.Code, w.Body)
			}
			var kc keyCreated
			mustDecode(t, w, &kc)
			return &kc
		}
		one := rotate()
		two := rotate()
		if two.Key == one.Key || !strings.HasPrefix(two.Key, one.Key[:12]) || !strings.HasSuffix(two.Key, one.Key[36:]) || !strings.Contains(two.Key, "*") {
			t.Errorf("replayed rotate: got key %q, want %q redacted", two.Key, one.Key)
		}
		// The replay did not rotate again: the value from the first answer works.
		if w := ta.do("GET", health, "", "X-API-Key", one.Key); w.Code != 200 {
			t.Errorf("value of the first rotate after the replay: got %d, want 200", w.Code)
		}
		wantError(t, ta.do("GET", health, "", "X-API-Key", first), http.StatusForbidden, apierr.CodeForbidden, apierr.DetailKeyRotated)
	})

	t.Run("Revoke", func(t *testing.T) {
		// Used just before: a revoke must not be hidden by what the app remembers of the key.
		if w := ta.do("GET", health, "", "X-API-Key", rotated.Key); w.Code != 200 {
			t.Fatalf("current value before revoke: got %d, want 200", w.Code)
		}
		w := ta.do("DELETE", keysPath+"/"+created.KeyID, "", jwtHdr()...)
		if w.Code != http.StatusNoContent || w.Body.Len() != 0 {
			t.Fatalf("revoke: got %d %q, want 204 with no body", w.Code, w.Body)
		}
		for _, v := range []string{rotated.Key, created.Key} {
			wantError(t, ta.do("GET", health, "", "X-API-Key", v), http.StatusUnauthorized, apierr.CodeUnauthorized, "")
		}
		body, _ := list()
		if strings.Contains(body, created.KeyID) {
			t.Errorf("list after revoke: got %s, want no %s", body, created.KeyID)
		}
		wantError(t, ta.do("POST", keysPath+"/"+created.KeyID+"/rotate", "", jwtHdr()...), 404, apierr.CodeNotFound, "")
		wantError(t, ta.do("DELETE", keysPath+"/"+created.KeyID, "", jwtHdr()...), 404, apierr.CodeNotFound, "")
	})

	// The organisation is the token's: its admin sees and makes its keys.
	// (That an organisation cannot touch another's keys is account's
	// tests'.)
	t.Run("OtherOrganisation", func(t *testing.T) {
		ta.addOrgUser("acme", "acme-admin", "acme-password")
		kr, _ := account.ParseKeyRequest("acme", "acme-erp", "sandbox", nil)
		acmeKey, _, err := ta.accounts.IssueKey(context.Background(), kr)
		if err != nil {
			t.Fatal(err)
		}

		acmeToken := ta.login("acme-admin", "acme-password")
		w := ta.do("GET", keysPath, "", "Authorization", "Bearer "+acmeToken)
		var ks []keyResponse
		mustDecode(t, w, &ks)
		if len(ks) != 1 || ks[0].KeyID != acmeKey.ID {
			t.Errorf("acme's list: got %+v, want only %s", ks, acmeKey.ID)
		}
		// Keys made by acme's admin belong to acme.
		w = ta.do("POST", keysPath, `{"environment":"sandbox"}`, "Authorization", "Bearer "+acmeToken, "Idempotency-Key", "create-1")
		if w.Code != 200 || w.Header().Get("Idempotent-Replayed") != "" {
			t.Fatalf("acme create with default's Idempotency-Key: got %d replayed %q, want 200 not replayed (keys are per organisation)", w.Code, w.Header().Get("Idempotent-Replayed"))
		}
		var kc keyCreated
		mustDecode(t, w, &kc)
		ta.view(func(tx *storage.Tx) error {
			k, err := tx.FindAPIKey(kc.KeyID)
			if err != nil {
				return err
			}
			if k.Org != "acme" {
				t.Errorf("org of a key made by acme's admin: got %q, want acme", k.Org)
			}
			return nil
		})
	})

	t.Run("Pagination", func(t *testing.T) {
		for range 3 {
			ta.newKey(storage.Sandbox)
		}
		w := ta.do("GET", keysPath+"?limit=2", "", jwtHdr()...)
		var ks []keyResponse
		mustDecode(t, w, &ks)
		if len(ks) != 2 || w.Header().Get("X-Next-Cursor") != ks[1].KeyID || !strings.Contains(w.Header().Get("Link"), `rel="next"`) {
			t.Fatalf("page 1: got %d keys, X-Next-Cursor %q, Link %q", len(ks), w.Header().Get("X-Next-Cursor"), w.Header().Get("Link"))
		}
		w = ta.do("GET", keysPath+"?limit=2&cursor="+ks[1].KeyID, "", jwtHdr()...)
		var next []keyResponse
		mustDecode(t, w, &next)
		if len(next) == 0 || next[0].KeyID >= ks[1].KeyID {
			t.Errorf("page 2: got %+v, want keys older than %s", next, ks[1].KeyID)
		}
		wantError(t, ta.do("GET", keysPath+"?limit=0", "", jwtHdr()...), 400, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
		wantError(t, ta.do("GET", keysPath+"?limit=1001", "", jwtHdr()...), 400, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	})
}

func TestApp_KeyUsage(t *testing.T) {
	dir, clock := t.TempDir(), newFakeClock()
	cfg := mustLoadConfig(t, dir)
	a, err := New(cfg, Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{App: a, tb: t, clock: clock, dir: dir}
	k, value := ta.newKey(storage.Sandbox)
	clock.Advance(90 * time.Second)
	if w := ta.do("GET", eudrPrefix+"/health", "", "X-API-Key", value); w.Code != 200 {
		t.Fatalf("GET /health: got %d", w.Code)
	}
	if err := a.Close(); err != nil { // flushes the in-memory tally
		t.Fatal(err)
	}

	ta2 := newTestAppAt(t, dir, clock)
	w := ta2.do("GET", enterprisePrefix+"/api-keys", "", "Authorization", "Bearer "+ta2.adminToken())
	var ks []keyResponse
	mustDecode(t, w, &ks)
	if len(ks) != 1 || ks[0].KeyID != k.ID || ks[0].LastUsedAt == nil || *ks[0].LastUsedAt != "2026-11-20T10:01:30.000Z" {
		t.Errorf("keys after restart: got %+v, want %s used at 2026-11-20T10:01:30.000Z", ks, k.ID)
	}
	if ks[0].RotatedAt != nil {
		t.Errorf("rotatedAt of a key never rotated: got %v, want null", *ks[0].RotatedAt)
	}
}
