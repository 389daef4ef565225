package account_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

func TestParseKeyRequest(t *testing.T) {
	for _, tc := range []struct {
		name        string
		keyName     string
		env         string
		scopes      []string
		wantScopes  []string
		wantDetails []string // "code field"
	}{
		{name: "DefaultScopes", env: "sandbox", scopes: nil, wantScopes: []string{"read", "write"}},
		{name: "ReadOnly", env: "production", scopes: []string{"read"}, wantScopes: []string{"read"}},
		{name: "WriteImpliesRead", env: "sandbox", scopes: []string{"write"}, wantScopes: []string{"read", "write"}},
		{name: "WriteReadOrder", env: "sandbox", scopes: []string{"write", "read"}, wantScopes: []string{"read", "write"}},
		{name: "Duplicates", env: "sandbox", scopes: []string{"read", "read"}, wantScopes: []string{"read"}},
		{name: "NameAtLimit", keyName: strings.Repeat("n", 100), env: "sandbox", wantScopes: []string{"read", "write"}},
		{name: "NameAtLimitNonASCII", keyName: strings.Repeat("ü", 100), env: "sandbox", wantScopes: []string{"read", "write"}},
		{name: "NameTooLongNonASCII", keyName: strings.Repeat("ü", 101), env: "sandbox", wantDetails: []string{"INVALID_VALUE name"}},
		{name: "MissingEnv", env: "", wantDetails: []string{"REQUIRED environment"}},
		{name: "BadEnv", env: "staging", wantDetails: []string{"INVALID_VALUE environment"}},
		{name: "EnvCase", env: "Sandbox", wantDetails: []string{"INVALID_VALUE environment"}},
		{name: "EmptyScopes", env: "sandbox", scopes: []string{}, wantDetails: []string{"INVALID_VALUE scopes"}},
		{name: "BadScope", env: "sandbox", scopes: []string{"read", "admin"}, wantDetails: []string{"INVALID_VALUE scopes[1]"}},
		{name: "NameTooLong", keyName: strings.Repeat("n", 101), env: "sandbox", wantDetails: []string{"INVALID_VALUE name"}},
		{name: "AllAtOnce", keyName: strings.Repeat("n", 101), env: "prod", scopes: []string{"delete", "read", "READ"},
			wantDetails: []string{"INVALID_VALUE name", "INVALID_VALUE environment", "INVALID_VALUE scopes[0]", "INVALID_VALUE scopes[2]"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kr, err := account.ParseKeyRequest("org1", tc.keyName, tc.env, tc.scopes)
			if tc.wantDetails == nil {
				if err != nil {
					t.Fatalf("ParseKeyRequest(%q, %q, %q): got %v, want nil", tc.keyName, tc.env, tc.scopes, err)
				}
				if !slices.Equal(kr.Scopes, tc.wantScopes) {
					t.Errorf("scopes: got %q, want %q", kr.Scopes, tc.wantScopes)
				}
				if kr.Org != "org1" || string(kr.Env) != tc.env || kr.Name != tc.keyName {
					t.Errorf("request: got %+v, want org1, %s, %q", kr, tc.env, tc.keyName)
				}
				return
			}
			e := apierr.From(err)
			if e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed {
				t.Fatalf("ParseKeyRequest(%q, %q, %q): got %v, want 400 VALIDATION_FAILED", tc.keyName, tc.env, tc.scopes, err)
			}
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Code+" "+d.Field)
			}
			if !slices.Equal(got, tc.wantDetails) {
				t.Errorf("details: got %q, want %q", got, tc.wantDetails)
			}
		})
	}
}

func TestHasScope(t *testing.T) {
	for _, tc := range []struct {
		scopes []string
		need   string
		want   bool
	}{
		{[]string{"read"}, "read", true},
		{[]string{"read"}, "write", false},
		{[]string{"write"}, "read", true}, // write implies read
		{[]string{"write"}, "write", true},
		{[]string{"read", "write"}, "write", true},
		{nil, "read", false},
		{[]string{"admin"}, "read", false},
	} {
		if got := account.HasScope(tc.scopes, tc.need); got != tc.want {
			t.Errorf("HasScope(%q, %s): got %v, want %v", tc.scopes, tc.need, got, tc.want)
		}
	}
}

// newKey makes a key of org in env through IssueKey and returns its record
// and value; no scopes means the default.
func newKey(tb testing.TB, s *account.Service, org string, env storage.Environment, scopes ...string) (*storage.APIKey, string) {
	tb.Helper()
	if len(scopes) == 0 {
		scopes = nil
	}
	kr, err := account.ParseKeyRequest(org, "test", string(env), scopes)
	if err != nil {
		tb.Fatal(err)
	}
	key, value, err := s.IssueKey(context.Background(), kr)
	if err != nil {
		tb.Fatalf("IssueKey: %v", err)
	}
	return key, value
}

// rotate rotates the organisation's key id in a transaction of its own.
func rotate(b *apitest.Bench, s *account.Service, org, id string) (*storage.APIKey, string, error) {
	var key *storage.APIKey
	var value string
	err := b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		key, value, err = s.RotateKey(tx, org, id)
		return err
	})
	return key, value, err
}

// revoke revokes the organisation's key id in a transaction of its own.
func revoke(b *apitest.Bench, s *account.Service, org, id string) error {
	return b.DB.Update(context.Background(), func(tx *storage.Tx) error { return s.RevokeKey(tx, org, id) })
}

// addOrg puts an organisation in the store.
func addOrg(tb testing.TB, b *apitest.Bench, org string) {
	b.Update(tb, func(tx *storage.Tx) error { return tx.PutOrg(&storage.Org{ID: org, CreatedAt: tx.Now()}) })
}

// findKey reads a key record from the store.
func findKey(tb testing.TB, b *apitest.Bench, id string) *storage.APIKey {
	tb.Helper()
	var k *storage.APIKey
	if err := b.DB.View(context.Background(), func(tx *storage.Tx) error {
		var err error
		k, err = tx.FindAPIKey(id)
		return err
	}); err != nil {
		tb.Fatal(err)
	}
	return k
}

// wantVerified checks that value is accepted on env's listener as key id.
func wantVerified(tb testing.TB, s *account.Service, value string, env storage.Environment, id string) {
	tb.Helper()
	k, err := s.VerifyKey(context.Background(), value, env)
	if err != nil || k.ID != id {
		tb.Errorf("VerifyKey(%s...) on %s: got %v, %v; want key %s", value[:12], env, k, err, id)
	}
}

// wantRefused checks that value is refused on env's listener with status
// and, for a 403, detail.
func wantRefused(tb testing.TB, s *account.Service, value string, env storage.Environment, status int, detail string) {
	tb.Helper()
	k, err := s.VerifyKey(context.Background(), value, env)
	if k != nil {
		tb.Errorf("VerifyKey on %s: got key %s, want refused %d %s", env, k.ID, status, detail)
		return
	}
	e := wantAPIError(tb, err, status, detail)
	if status == apierr.StatusUnauthorized && (e.Message != apierr.MsgUnauthorized || len(e.Details) != 0) {
		tb.Errorf("401: got %q %+v, want %q without details", e.Message, e.Details, apierr.MsgUnauthorized)
	}
	if status == apierr.StatusForbidden && e.Message != apierr.MsgForbidden {
		tb.Errorf("403: got message %q, want %q", e.Message, apierr.MsgForbidden)
	}
}

func TestService_CreateKey(t *testing.T) {
	b, s := newBootstrapped(t)
	kr, _ := account.ParseKeyRequest(account.DefaultOrg, "erp", "production", []string{"read"})
	key, value, err := s.IssueKey(context.Background(), kr)
	if err != nil {
		t.Fatal(err)
	}
	hash := sha256.Sum256([]byte(value))
	if string(key.Hash) != string(hash[:]) {
		t.Error("stored hash: got something else, want SHA-256 of the value")
	}
	if !strings.HasPrefix(value, "sk_live_") || key.Prefix != value[:12] || key.Last4 != value[len(value)-4:] ||
		!strings.HasPrefix(key.ID, "key_") || len(key.ID) != 30 {
		t.Errorf("key: got value %s... id %q prefix %q last4 %q, want sk_live_, key_+ULID, %q, %q",
			value[:12], key.ID, key.Prefix, key.Last4, value[:12], value[len(value)-4:])
	}
	if key.Org != account.DefaultOrg || key.Env != storage.Production || key.Name != "erp" ||
		!slices.Equal(key.Scopes, []string{"read"}) || !key.CreatedAt.Equal(start) {
		t.Errorf("key: got %+v, want default, production, erp, [read], created %v", key, start)
	}
	// The value is not stored anywhere in the record.
	stored, _ := json.Marshal(findKey(t, b, key.ID))
	if strings.Contains(string(stored), value[12:]) {
		t.Errorf("stored record %s contains the key value", stored)
	}
	wantVerified(t, s, value, storage.Production, key.ID)

	t.Run("UnknownOrganisation", func(t *testing.T) {
		kr.Org = "nope"
		if _, _, err := s.IssueKey(context.Background(), kr); err == nil || !strings.Contains(err.Error(), "nope") {
			t.Errorf("IssueKey for a missing organisation: got %v, want an error naming it", err)
		}
		b.Update(t, func(tx *storage.Tx) error {
			if keys, err := tx.FindAPIKeys("nope"); err != nil || len(keys) != 0 {
				t.Errorf("keys of the missing organisation: got %v, %v; want none", keys, err)
			}
			return nil
		})
	})

	t.Run("RolledBack", func(t *testing.T) {
		// A key made in a transaction that does not commit does not exist.
		kr.Org = account.DefaultOrg
		var value string
		failed := errors.New("the caller's transaction failed")
		err := b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			var err error
			if _, value, err = s.CreateKey(tx, kr); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatal(err)
		}
		wantRefused(t, s, value, storage.Production, apierr.StatusUnauthorized, "")
	})
}

func TestService_VerifyKey(t *testing.T) {
	b, s := newBootstrapped(t)
	_, read := newKey(t, s, account.DefaultOrg, storage.Sandbox, "read")
	rw, rwValue := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	liveKey, live := newKey(t, s, account.DefaultOrg, storage.Production)
	rotKey, rotated := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	if _, _, err := rotate(b, s, account.DefaultOrg, rotKey.ID); err != nil {
		t.Fatal(err)
	}
	liveRotKey, liveRotated := newKey(t, s, account.DefaultOrg, storage.Production, "read")
	if _, _, err := rotate(b, s, account.DefaultOrg, liveRotKey.ID); err != nil {
		t.Fatal(err)
	}
	revKey, revoked := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	if err := revoke(b, s, account.DefaultOrg, revKey.ID); err != nil {
		t.Fatal(err)
	}
	const ok = 0
	for _, tc := range []struct {
		name   string
		value  string
		status int
		detail string
	}{
		{"Read", read, ok, ""},
		{"ReadWrite", rwValue, ok, ""},
		{"Malformed", "sk_test_short", apierr.StatusUnauthorized, ""},
		{"Unknown", "sk_test_" + strings.Repeat("A", 32), apierr.StatusUnauthorized, ""},
		{"Empty", "", apierr.StatusUnauthorized, ""},
		{"Revoked", revoked, apierr.StatusUnauthorized, ""},
		{"WrongEnvironment", live, apierr.StatusForbidden, apierr.DetailWrongEnvironment},
		{"Rotated", rotated, apierr.StatusForbidden, apierr.DetailKeyRotated},
		// WRONG_ENVIRONMENT comes before KEY_ROTATED.
		{"WrongEnvironmentRotated", liveRotated, apierr.StatusForbidden, apierr.DetailWrongEnvironment},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.status == ok {
				k, err := s.VerifyKey(context.Background(), tc.value, storage.Sandbox)
				if err != nil || k.Org != account.DefaultOrg || k.Env != storage.Sandbox {
					t.Errorf("got %+v, %v; want a sandbox key of %s", k, err, account.DefaultOrg)
				}
				return
			}
			wantRefused(t, s, tc.value, storage.Sandbox, tc.status, tc.detail)
		})
	}
	// On its own listener each key is accepted.
	wantVerified(t, s, rwValue, storage.Sandbox, rw.ID)
	wantVerified(t, s, live, storage.Production, liveKey.ID)
}

func TestService_RotateKey(t *testing.T) {
	b, s := newBootstrapped(t)
	key, first := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	wantVerified(t, s, first, storage.Sandbox, key.ID) // remembered by the service from here on

	b.Clock.Advance(time.Minute)
	rotated, second, err := rotate(b, s, account.DefaultOrg, key.ID)
	if err != nil {
		t.Fatal(err)
	}
	if rotated.ID != key.ID || second == first || !strings.HasPrefix(second, "sk_test_") || !account.WellFormedKey(second) {
		t.Errorf("rotated: got id %s value %s..., want id %s and a new sk_test_ value", rotated.ID, second[:12], key.ID)
	}
	stored := findKey(t, b, key.ID)
	if stored.RotatedAt == nil || !stored.RotatedAt.Equal(start.Add(time.Minute)) || stored.Prefix != second[:12] ||
		stored.Last4 != second[36:] || stored.Name != key.Name || !slices.Equal(stored.Scopes, key.Scopes) {
		t.Errorf("stored after rotate: got %+v, want rotatedAt %v, the new prefix and last4, name and scopes kept", stored, start.Add(time.Minute))
	}
	wantRefused(t, s, first, storage.Sandbox, apierr.StatusForbidden, apierr.DetailKeyRotated)
	wantVerified(t, s, second, storage.Sandbox, key.ID)

	_, third, err := rotate(b, s, account.DefaultOrg, key.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range []string{first, second} {
		wantRefused(t, s, old, storage.Sandbox, apierr.StatusForbidden, apierr.DetailKeyRotated)
	}
	wantVerified(t, s, third, storage.Sandbox, key.ID)

	t.Run("RolledBack", func(t *testing.T) {
		// A rotation that does not commit changes nothing: the current
		// value still works, though the service had it in memory.
		failed := errors.New("the caller's transaction failed")
		err := b.DB.Update(context.Background(), func(tx *storage.Tx) error {
			if _, _, err := s.RotateKey(tx, account.DefaultOrg, key.ID); err != nil {
				return err
			}
			return failed
		})
		if !errors.Is(err, failed) {
			t.Fatal(err)
		}
		wantVerified(t, s, third, storage.Sandbox, key.ID)
	})

	t.Run("NotFound", func(t *testing.T) {
		addOrg(t, b, "acme")
		acme, acmeValue := newKey(t, s, "acme", storage.Sandbox)
		gone, _ := newKey(t, s, account.DefaultOrg, storage.Sandbox)
		if err := revoke(b, s, account.DefaultOrg, gone.ID); err != nil {
			t.Fatal(err)
		}
		for name, id := range map[string]string{"OtherOrganisation": acme.ID, "Revoked": gone.ID, "Unknown": "key_nope"} {
			_, _, err := rotate(b, s, account.DefaultOrg, id)
			if e := wantAPIError(t, err, apierr.StatusNotFound, ""); e.Message != "API key "+id+" not found" {
				t.Errorf("%s: message got %q, want %q", name, e.Message, "API key "+id+" not found")
			}
		}
		if got := findKey(t, b, acme.ID); got.RotatedAt != nil || string(got.Hash) != string(acme.Hash) {
			t.Errorf("acme's key after default tried to rotate it: got %+v, want it unchanged", got)
		}
		wantVerified(t, s, acmeValue, storage.Sandbox, acme.ID)
	})
}

func TestService_RevokeKey(t *testing.T) {
	b, s := newBootstrapped(t)
	key, old := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	_, current, err := rotate(b, s, account.DefaultOrg, key.ID)
	if err != nil {
		t.Fatal(err)
	}
	kept, keptValue := newKey(t, s, account.DefaultOrg, storage.Sandbox)
	// Used just before: a revoke must not be hidden by what the service
	// remembers of the key.
	wantVerified(t, s, current, storage.Sandbox, key.ID)

	b.Clock.Advance(time.Minute)
	if err := revoke(b, s, account.DefaultOrg, key.ID); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{current, old} {
		wantRefused(t, s, v, storage.Sandbox, apierr.StatusUnauthorized, "")
	}
	if got := findKey(t, b, key.ID); got.RevokedAt == nil || !got.RevokedAt.Equal(start.Add(time.Minute)) {
		t.Errorf("revokedAt: got %v, want %v", got.RevokedAt, start.Add(time.Minute))
	}
	wantVerified(t, s, keptValue, storage.Sandbox, kept.ID)

	keys, err := s.Keys(context.Background(), account.DefaultOrg)
	if err != nil || len(keys) != 1 || keys[0].ID != kept.ID {
		t.Errorf("keys after revoke: got %v, %v; want only %s", keys, err, kept.ID)
	}

	addOrg(t, b, "acme")
	acme, acmeValue := newKey(t, s, "acme", storage.Sandbox)
	for name, id := range map[string]string{"Again": key.ID, "OtherOrganisation": acme.ID, "Unknown": "key_nope"} {
		if e := wantAPIError(t, revoke(b, s, account.DefaultOrg, id), apierr.StatusNotFound, ""); e.Message != "API key "+id+" not found" {
			t.Errorf("%s: message got %q, want %q", name, e.Message, "API key "+id+" not found")
		}
	}
	wantVerified(t, s, acmeValue, storage.Sandbox, acme.ID)
}

func TestService_Keys(t *testing.T) {
	b, s := newBootstrapped(t)
	addOrg(t, b, "acme")
	var want []string
	for i := range 3 {
		b.Clock.Advance(time.Second)
		k, _ := newKey(t, s, account.DefaultOrg, []storage.Environment{storage.Sandbox, storage.Production}[i%2])
		want = append([]string{k.ID}, want...) // newest first
		newKey(t, s, "acme", storage.Sandbox)
	}
	keys, err := s.Keys(context.Background(), account.DefaultOrg)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, k := range keys {
		got = append(got, k.ID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("keys of default: got %v, want %v (newest first, none of acme)", got, want)
	}
	if keys, err := s.Keys(context.Background(), "nobody"); err != nil || len(keys) != 0 {
		t.Errorf("keys of an unknown organisation: got %v, %v; want none", keys, err)
	}
}
