package main_test

// End-to-end tests of Idempotency-Key: replays across SIGTERM and SIGKILL,
// one key per environment, failed requests that do not burn the key,
// concurrent requests with one key, and key creation replayed without the
// key's value.

import (
	"bytes"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

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
