package storage_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

// hashOf is the SHA-256 of a key value, as the hash index stores it.
func hashOf(value string) []byte {
	h := sha256.Sum256([]byte(value))
	return h[:]
}

// newKey returns a key record for org with the hash of value.
func newKey(id, org, value string) *storage.APIKey {
	return &storage.APIKey{
		ID:        id,
		Org:       org,
		Env:       storage.Sandbox,
		Name:      "key " + id,
		Scopes:    []string{"suppliers:read", "suppliers:write"},
		Hash:      hashOf(value),
		Prefix:    value[:min(12, len(value))],
		Last4:     value[max(0, len(value)-4):],
		CreatedAt: testNow,
	}
}

func keyIDs(keys []*storage.APIKey) []string {
	ids := make([]string, len(keys))
	for i, k := range keys {
		ids[i] = k.ID
	}
	return ids
}

func TestTx_CreateAPIKey(t *testing.T) {
	t.Run("FindByHashAndID", func(t *testing.T) {
		db := MustOpenDB(t)
		want := newKey("key_01", "org_a", "eudr_sk_test_value_1")
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.CreateAPIKey(want) })
		mustView(t, db, func(tx *storage.Tx) error {
			got, err := tx.FindAPIKeyByHash(hashOf("eudr_sk_test_value_1"))
			if err != nil {
				t.Fatalf("FindAPIKeyByHash: got %v, want key_01", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("FindAPIKeyByHash: got %+v, want %+v", got, want)
			}
			got, err = tx.FindAPIKey("key_01")
			if err != nil {
				t.Fatalf("FindAPIKey(key_01): %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("FindAPIKey(key_01): got %+v, want %+v", got, want)
			}
			return nil
		})
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.CreateAPIKey(newKey("key_01", "org_a", "v1")) })
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindAPIKeyByHash(hashOf("other")); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindAPIKeyByHash(unknown): got %v, want ErrNotFound", err)
			}
			if _, err := tx.FindAPIKey("key_02"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindAPIKey(key_02): got %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}

func TestTx_UpdateAPIKey(t *testing.T) {
	t.Run("RotationKeepsOldHash", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.CreateAPIKey(newKey("key_01", "org_a", "value-one")) })
		rotated := testNow.Add(time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			k, err := tx.FindAPIKey("key_01")
			if err != nil {
				return err
			}
			k.Hash = hashOf("value-two")
			k.Last4 = "-two"
			k.RotatedAt = &rotated
			return tx.UpdateAPIKey(k)
		})
		mustView(t, db, func(tx *storage.Tx) error {
			for _, v := range []string{"value-one", "value-two"} {
				k, err := tx.FindAPIKeyByHash(hashOf(v))
				if err != nil {
					t.Errorf("FindAPIKeyByHash(%s): got %v, want key_01", v, err)
					continue
				}
				if k.ID != "key_01" {
					t.Errorf("FindAPIKeyByHash(%s).ID: got %q, want key_01", v, k.ID)
				}
				if !bytes.Equal(k.Hash, hashOf("value-two")) {
					t.Errorf("FindAPIKeyByHash(%s).Hash: got %x, want the new hash %x", v, k.Hash, hashOf("value-two"))
				}
				if k.RotatedAt == nil || !k.RotatedAt.Equal(rotated) {
					t.Errorf("FindAPIKeyByHash(%s).RotatedAt: got %v, want %v", v, k.RotatedAt, rotated)
				}
				if k.Last4 != "-two" {
					t.Errorf("FindAPIKeyByHash(%s).Last4: got %q, want %q", v, k.Last4, "-two")
				}
			}
			return nil
		})
	})

	t.Run("SameHash", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.CreateAPIKey(newKey("key_01", "org_a", "value-one")) })
		revoked := testNow.Add(time.Minute)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			k, err := tx.FindAPIKey("key_01")
			if err != nil {
				return err
			}
			k.Name = "renamed"
			k.RevokedAt = &revoked
			return tx.UpdateAPIKey(k)
		})
		mustView(t, db, func(tx *storage.Tx) error {
			k, err := tx.FindAPIKeyByHash(hashOf("value-one"))
			if err != nil {
				t.Fatalf("FindAPIKeyByHash: %v", err)
			}
			if k.Name != "renamed" || k.RevokedAt == nil || !k.RevokedAt.Equal(revoked) {
				t.Errorf("after update: got Name %q RevokedAt %v, want %q %v", k.Name, k.RevokedAt, "renamed", revoked)
			}
			return nil
		})
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		db := MustOpenDB(t)
		err := db.Update(t.Context(), func(tx *storage.Tx) error {
			return tx.UpdateAPIKey(newKey("key_missing", "org_a", "v"))
		})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("UpdateAPIKey(missing): got %v, want ErrNotFound", err)
		}
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindAPIKeyByHash(hashOf("v")); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindAPIKeyByHash after failed update: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}

func TestTx_FindAPIKeys(t *testing.T) {
	db := MustOpenDB(t)
	revoked := testNow
	mustUpdate(t, db, func(tx *storage.Tx) error {
		for _, k := range []*storage.APIKey{
			newKey("key_01", "org_a", "v01"),
			newKey("key_02", "org_b", "v02"),
			newKey("key_03", "org_a", "v03"),
			func() *storage.APIKey { k := newKey("key_04", "org_a", "v04"); k.RevokedAt = &revoked; return k }(),
			newKey("key_05", "org_a", "v05"),
		} {
			if err := tx.CreateAPIKey(k); err != nil {
				return err
			}
		}
		return nil
	})
	mustView(t, db, func(tx *storage.Tx) error {
		for _, tc := range []struct {
			org  string
			want []string
		}{
			{"org_a", []string{"key_05", "key_03", "key_01"}},
			{"org_b", []string{"key_02"}},
			{"org_c", []string{}},
		} {
			keys, err := tx.FindAPIKeys(tc.org)
			if err != nil {
				t.Fatalf("FindAPIKeys(%s): %v", tc.org, err)
			}
			if got := keyIDs(keys); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FindAPIKeys(%s): got %v, want %v", tc.org, got, tc.want)
			}
		}
		// A revoked key is still found by ID and by hash.
		if k, err := tx.FindAPIKey("key_04"); err != nil || k.RevokedAt == nil {
			t.Errorf("FindAPIKey(key_04): got %+v, %v, want the revoked key", k, err)
		}
		if k, err := tx.FindAPIKeyByHash(hashOf("v04")); err != nil || k.ID != "key_04" {
			t.Errorf("FindAPIKeyByHash(v04): got %+v, %v, want key_04", k, err)
		}
		return nil
	})
}

func TestTx_TouchAPIKeys(t *testing.T) {
	db := MustOpenDB(t)
	t0 := time.Date(2025, 1, 1, 10, 0, 0, 0, time.UTC)
	mustUpdate(t, db, func(tx *storage.Tx) error {
		if err := tx.CreateAPIKey(newKey("key_01", "org_a", "v01")); err != nil {
			return err
		}
		return tx.CreateAPIKey(newKey("key_02", "org_a", "v02"))
	})
	lastUsed := func(id string) *time.Time {
		t.Helper()
		var got *time.Time
		mustView(t, db, func(tx *storage.Tx) error {
			k, err := tx.FindAPIKey(id)
			if err != nil {
				return err
			}
			got = k.LastUsedAt
			return nil
		})
		return got
	}

	t.Run("SetsFirstUse", func(t *testing.T) {
		zone := time.FixedZone("X", -5*3600)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.TouchAPIKeys(map[string]time.Time{"key_01": t0.In(zone), "key_unknown": t0})
		})
		got := lastUsed("key_01")
		if got == nil || !got.Equal(t0) {
			t.Fatalf("key_01 LastUsedAt: got %v, want %v", got, t0)
		}
		if got.Location() != time.UTC {
			t.Errorf("key_01 LastUsedAt location: got %v, want UTC", got.Location())
		}
		if got := lastUsed("key_02"); got != nil {
			t.Errorf("key_02 LastUsedAt: got %v, want nil (not touched)", got)
		}
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindAPIKey("key_unknown"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindAPIKey(key_unknown) after touch: got %v, want ErrNotFound (not created)", err)
			}
			return nil
		})
	})

	t.Run("OnlyForward", func(t *testing.T) {
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.TouchAPIKeys(map[string]time.Time{"key_01": t0.Add(-time.Hour)})
		})
		if got := lastUsed("key_01"); got == nil || !got.Equal(t0) {
			t.Errorf("key_01 LastUsedAt after older touch: got %v, want %v", got, t0)
		}
		later := t0.Add(time.Minute)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.TouchAPIKeys(map[string]time.Time{"key_01": later, "key_02": t0})
		})
		if got := lastUsed("key_01"); got == nil || !got.Equal(later) {
			t.Errorf("key_01 LastUsedAt after newer touch: got %v, want %v", got, later)
		}
		if got := lastUsed("key_02"); got == nil || !got.Equal(t0) {
			t.Errorf("key_02 LastUsedAt: got %v, want %v", got, t0)
		}
	})

	t.Run("KeepsOtherFields", func(t *testing.T) {
		mustView(t, db, func(tx *storage.Tx) error {
			k, err := tx.FindAPIKeyByHash(hashOf("v01"))
			if err != nil {
				t.Fatalf("FindAPIKeyByHash(v01) after touch: %v", err)
			}
			want := newKey("key_01", "org_a", "v01")
			want.LastUsedAt = k.LastUsedAt
			if !reflect.DeepEqual(k, want) {
				t.Errorf("key_01 after touch: got %+v, want %+v", k, want)
			}
			return nil
		})
	})
}

func TestTx_Secret(t *testing.T) {
	db := MustOpenDB(t)

	t.Run("ErrNotFoundReadOnly", func(t *testing.T) {
		mustView(t, db, func(tx *storage.Tx) error {
			if v, err := tx.Secret("jwt", 32); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("Secret(jwt) in View before creation: got %x, %v, want ErrNotFound", v, err)
			}
			return nil
		})
	})

	var first []byte
	t.Run("CreatesOnce", func(t *testing.T) {
		mustUpdate(t, db, func(tx *storage.Tx) error {
			v, err := tx.Secret("jwt", 32)
			if err != nil {
				return err
			}
			if len(v) != 32 {
				t.Errorf("Secret(jwt, 32): got %d bytes, want 32", len(v))
			}
			if bytes.Equal(v, make([]byte, 32)) {
				t.Errorf("Secret(jwt, 32): got all zero bytes, want random")
			}
			again, err := tx.Secret("jwt", 32)
			if err != nil {
				return err
			}
			if !bytes.Equal(again, v) {
				t.Errorf("second Secret(jwt) in same tx: got %x, want %x", again, v)
			}
			first = bytes.Clone(v)
			return nil
		})
	})

	t.Run("Stable", func(t *testing.T) {
		if first == nil {
			t.Skip("no secret created")
		}
		mustView(t, db, func(tx *storage.Tx) error {
			v, err := tx.Secret("jwt", 32)
			if err != nil || !bytes.Equal(v, first) {
				t.Errorf("Secret(jwt) in View: got %x, %v, want %x", v, err, first)
			}
			return nil
		})
		mustUpdate(t, db, func(tx *storage.Tx) error {
			// A different size does not replace an existing secret.
			v, err := tx.Secret("jwt", 64)
			if err != nil || !bytes.Equal(v, first) {
				t.Errorf("Secret(jwt, 64) in Update: got %x, %v, want %x", v, err, first)
			}
			other, err := tx.Secret("other", 32)
			if err != nil {
				return err
			}
			if bytes.Equal(other, first) {
				t.Errorf("Secret(other): got the jwt secret, want a separate one")
			}
			return nil
		})
	})

	t.Run("CallerCannotMutate", func(t *testing.T) {
		if first == nil {
			t.Skip("no secret created")
		}
		mustUpdate(t, db, func(tx *storage.Tx) error {
			v, err := tx.Secret("jwt", 32)
			if err != nil {
				return err
			}
			for i := range v {
				v[i] ^= 0xff
			}
			again, err := tx.Secret("jwt", 32)
			if err != nil || !bytes.Equal(again, first) {
				t.Errorf("Secret(jwt) in the same tx after caller mutated its copy: got %x, %v, want %x", again, err, first)
			}
			return nil
		})
		mustView(t, db, func(tx *storage.Tx) error {
			v, err := tx.Secret("jwt", 32)
			if err != nil || !bytes.Equal(v, first) {
				t.Errorf("Secret(jwt) after caller mutated its copy: got %x, %v, want %x", v, err, first)
			}
			return nil
		})
	})
}

func TestTx_HasUsers(t *testing.T) {
	db := MustOpenDB(t)
	mustView(t, db, func(tx *storage.Tx) error {
		if tx.HasUsers() {
			t.Errorf("HasUsers on new store: got true, want false")
		}
		return nil
	})
	u := &storage.User{Username: "admin", Org: "org_a", Role: "admin", PasswordHash: "$argon2id$x", CreatedAt: testNow}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutUser(u) })
	mustView(t, db, func(tx *storage.Tx) error {
		if !tx.HasUsers() {
			t.Errorf("HasUsers after PutUser: got false, want true")
		}
		return nil
	})
}

func TestTx_FindUser(t *testing.T) {
	db := MustOpenDB(t)
	u := &storage.User{Username: "admin", Org: "org_a", Role: "admin", PasswordHash: "$argon2id$x", CreatedAt: testNow}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutUser(u) })
	mustView(t, db, func(tx *storage.Tx) error {
		t.Run("Found", func(t *testing.T) {
			got, err := tx.FindUser("admin")
			if err != nil {
				t.Fatalf("FindUser(admin): %v", err)
			}
			if !reflect.DeepEqual(got, u) {
				t.Errorf("FindUser(admin): got %+v, want %+v", got, u)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			if got, err := tx.FindUser("nobody"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindUser(nobody): got %+v, %v, want ErrNotFound", got, err)
			}
		})
		return nil
	})
}

// PutUser counts password changes itself, whatever the caller sets: a
// login token issued under one version ends at the next.
func TestTx_PutUser_PasswordVersion(t *testing.T) {
	db := MustOpenDB(t)
	version := func() int {
		var v int
		mustView(t, db, func(tx *storage.Tx) error {
			u, err := tx.FindUser("admin")
			v = u.PasswordVersion
			return err
		})
		return v
	}
	put := func(hash string, version int) {
		u := &storage.User{Username: "admin", Org: "org_a", Role: "admin", PasswordHash: hash, PasswordVersion: version, CreatedAt: testNow}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutUser(u) })
	}
	for _, step := range []struct {
		name    string
		hash    string
		version int // what the caller sets
		want    int
	}{
		{"New", "$argon2id$a", 0, 0},
		{"SameHash", "$argon2id$a", 0, 0},
		{"NewHash", "$argon2id$b", 0, 1},
		{"CallerCannotRollBack", "$argon2id$b", 0, 1},
		{"CallerCannotSkip", "$argon2id$c", 7, 2},
	} {
		put(step.hash, step.version)
		if got := version(); got != step.want {
			t.Errorf("%s: PasswordVersion %d, want %d", step.name, got, step.want)
		}
	}
}

func TestTx_FindOrg(t *testing.T) {
	db := MustOpenDB(t)
	o := &storage.Org{ID: "org_a", CreatedAt: testNow}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutOrg(o) })
	mustView(t, db, func(tx *storage.Tx) error {
		t.Run("Found", func(t *testing.T) {
			got, err := tx.FindOrg("org_a")
			if err != nil {
				t.Fatalf("FindOrg(org_a): %v", err)
			}
			if !reflect.DeepEqual(got, o) {
				t.Errorf("FindOrg(org_a): got %+v, want %+v", got, o)
			}
		})
		t.Run("ErrNotFound", func(t *testing.T) {
			if got, err := tx.FindOrg("org_b"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindOrg(org_b): got %+v, %v, want ErrNotFound", got, err)
			}
		})
		return nil
	})
}

// A user record written before roles and appliance administrators existed
// reads as an admin that is no appliance administrator.
func TestTx_FindUser_RecordBeforeRoles(t *testing.T) {
	db := MustOpenDB(t)
	mustUpdate(t, db, func(tx *storage.Tx) error {
		return tx.Bucket([]byte("users")).Put([]byte("old"),
			[]byte(`{"username":"old","org":"default","passwordHash":"$argon2id$x","createdAt":"2025-01-02T03:04:05Z"}`))
	})
	mustView(t, db, func(tx *storage.Tx) error {
		u, err := tx.FindUser("old")
		if err != nil {
			t.Fatal(err)
		}
		if u.Role != "admin" || u.ApplianceAdmin {
			t.Errorf("FindUser: role %q applianceAdmin %v, want admin, false", u.Role, u.ApplianceAdmin)
		}
		all, err := tx.FindUsers("")
		if err != nil || len(all) != 1 || all[0].Role != "admin" {
			t.Errorf("FindUsers: got %+v, %v, want one admin", all, err)
		}
		return nil
	})
}

func TestTx_FindUsersDeleteUser(t *testing.T) {
	db := MustOpenDB(t)
	mustUpdate(t, db, func(tx *storage.Tx) error {
		for _, u := range []*storage.User{
			{Username: "carol", Org: "org_b", Role: "reader"},
			{Username: "alice", Org: "org_a", Role: "admin"},
			{Username: "bob", Org: "org_a", Role: "reader"},
		} {
			if err := tx.PutUser(u); err != nil {
				return err
			}
		}
		return nil
	})
	names := func(org string) []string {
		var out []string
		mustView(t, db, func(tx *storage.Tx) error {
			users, err := tx.FindUsers(org)
			for _, u := range users {
				out = append(out, u.Username)
			}
			return err
		})
		return out
	}
	if got := names("org_a"); !reflect.DeepEqual(got, []string{"alice", "bob"}) {
		t.Errorf("FindUsers(org_a): got %v", got)
	}
	if got := names(""); !reflect.DeepEqual(got, []string{"alice", "bob", "carol"}) {
		t.Errorf("FindUsers(all): got %v", got)
	}
	mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteUser("bob") })
	if got := names("org_a"); !reflect.DeepEqual(got, []string{"alice"}) {
		t.Errorf("after DeleteUser(bob): got %v", got)
	}
	mustUpdate(t, db, func(tx *storage.Tx) error {
		if err := tx.DeleteUser("bob"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("DeleteUser(bob) again: got %v, want ErrNotFound", err)
		}
		return nil
	})
}
