package main_test

// End-to-end tests of API key management: the values made, validation,
// lists that never show a value, pagination, revocation, and no key value
// or admin password in the data dir or the log.

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

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
