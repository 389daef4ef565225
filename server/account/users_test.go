package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func findUser(tb testing.TB, b interface {
	Update(testing.TB, func(*storage.Tx) error)
}, username string) *storage.User {
	tb.Helper()
	var u *storage.User
	b.Update(tb, func(tx *storage.Tx) error {
		var err error
		u, err = tx.FindUser(username)
		return err
	})
	return u
}

func TestService_BootstrapMakesApplianceAdmin(t *testing.T) {
	b, _ := newBootstrapped(t)
	if u := findUser(t, b, account.AdminUsername); !u.ApplianceAdmin || u.Role != account.RoleAdmin {
		t.Errorf("first admin: role %q applianceAdmin %v, want admin, true", u.Role, u.ApplianceAdmin)
	}
}

// A store made before there were appliance administrators: its first admin
// becomes one at the next start, and nobody else does.
func TestService_BootstrapUpgradesFirstAdmin(t *testing.T) {
	b, s := newService(t, account.Options{})
	b.Update(t, func(tx *storage.Tx) error {
		users := tx.Bucket([]byte("users"))
		if err := tx.PutOrg(&storage.Org{ID: account.DefaultOrg}); err != nil {
			return err
		}
		// As the previous version wrote them: no applianceAdmin field.
		if err := users.Put([]byte("admin"), []byte(`{"username":"admin","org":"default","role":"admin","passwordHash":"$argon2id$x","createdAt":"2025-01-02T03:04:05Z"}`)); err != nil {
			return err
		}
		return users.Put([]byte("other"), []byte(`{"username":"other","org":"default","role":"admin","passwordHash":"$argon2id$x","createdAt":"2025-01-02T03:04:05Z"}`))
	})
	if err := s.Bootstrap(context.Background()); err != nil {
		t.Fatal(err)
	}
	if u := findUser(t, b, "admin"); !u.ApplianceAdmin || u.Role != account.RoleAdmin {
		t.Errorf("admin after upgrade: role %q applianceAdmin %v, want admin, true", u.Role, u.ApplianceAdmin)
	}
	if u := findUser(t, b, "other"); u.ApplianceAdmin {
		t.Error("other admin became appliance administrator")
	}
}

func TestParseUserRequest(t *testing.T) {
	for _, tc := range []struct {
		name                string
		org, username, role string
		applianceAdmin      bool
		wantFields          []string
	}{
		{"Admin", "default", "alice", "admin", true, nil},
		{"Reader", "org-b", "bob.smith_2", "reader", false, nil},
		{"Missing", "", "", "", false, []string{"org", "username", "role"}},
		{"BadRole", "default", "alice", "owner", false, []string{"role"}},
		{"BadNames", "a/b", "-alice", "reader", false, []string{"org", "username"}},
		{"TooLong", "default", string(make([]byte, 65)), "reader", false, []string{"username"}},
		{"ReaderApplianceAdmin", "default", "alice", "reader", true, []string{"applianceAdmin"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := account.ParseUserRequest(tc.org, tc.username, tc.role, tc.applianceAdmin)
			if tc.wantFields == nil {
				if err != nil {
					t.Fatalf("got %v, want nil", err)
				}
				return
			}
			e := wantAPIError(t, err, 400, "")
			var got []string
			for _, d := range e.Details {
				got = append(got, d.Field)
			}
			if len(got) != len(tc.wantFields) {
				t.Fatalf("fields: got %v, want %v", got, tc.wantFields)
			}
			for i := range got {
				if got[i] != tc.wantFields[i] {
					t.Errorf("fields: got %v, want %v", got, tc.wantFields)
				}
			}
		})
	}
}

func TestService_AddUser(t *testing.T) {
	b, s := newBootstrapped(t)
	ctx := context.Background()
	ur, _ := account.ParseUserRequest("org-b", "bob", account.RoleReader, false)
	password, err := s.AddUser(ctx, ur)
	if err != nil {
		t.Fatal(err)
	}
	login(t, s, "bob", password)
	u := findUser(t, b, "bob")
	if u.Org != "org-b" || u.Role != account.RoleReader || u.ApplianceAdmin {
		t.Errorf("bob: got %+v", u)
	}
	b.Update(t, func(tx *storage.Tx) error {
		_, err := tx.FindOrg("org-b") // a new organisation is made with its first user
		return err
	})
	ur.Org = account.DefaultOrg
	_, err = s.AddUser(ctx, ur)
	wantAPIError(t, err, 409, apierr.DetailUserExists)
}

func TestService_DeleteUser(t *testing.T) {
	b, s := newBootstrapped(t)
	ctx := context.Background()
	add := func(org, name, role string, applianceAdmin bool) *storage.User {
		ur, err := account.ParseUserRequest(org, name, role, applianceAdmin)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddUser(ctx, ur); err != nil {
			t.Fatal(err)
		}
		return findUser(t, b, name)
	}
	del := func(actor *storage.User, name string) error {
		var err error
		b.Update(t, func(tx *storage.Tx) error {
			err = s.DeleteUser(tx, actor, name)
			return nil
		})
		return err
	}
	root := findUser(t, b, account.AdminUsername)
	orgAdmin := add("org-b", "bella", account.RoleAdmin, false)
	add("org-b", "ben", account.RoleReader, false)
	add(account.DefaultOrg, "dan", account.RoleReader, false)

	wantAPIError(t, del(orgAdmin, "bella"), 409, apierr.DetailCannotDeleteSelf)
	wantAPIError(t, del(orgAdmin, "dan"), 404, "")    // another organisation's user is not found
	wantAPIError(t, del(orgAdmin, "nobody"), 404, "") // and nor is one that does not exist
	if err := del(orgAdmin, "ben"); err != nil {
		t.Errorf("org admin deletes own reader: %v", err)
	}
	if err := del(root, "bella"); err != nil {
		t.Errorf("appliance admin deletes another organisation's admin: %v", err)
	}
	second := add(account.DefaultOrg, "root2", account.RoleAdmin, true)
	wantAPIError(t, del(root, account.AdminUsername), 409, apierr.DetailCannotDeleteSelf)
	if err := del(second, account.AdminUsername); err != nil {
		t.Fatalf("one appliance admin deletes another: %v", err)
	}
	// root2 is now the last one; nobody may delete it (itself included).
	wantAPIError(t, del(&storage.User{Username: "x", Org: account.DefaultOrg, ApplianceAdmin: true}, "root2"), 409, apierr.DetailLastApplianceAdmin)
}

// A login token of a deleted user does not pass for a new user of the same
// name: its password version starts again where the old one's did.
func TestService_VerifyToken_DeletedUserRecreated(t *testing.T) {
	b, s := newBootstrapped(t)
	ctx := context.Background()
	ur, _ := account.ParseUserRequest(account.DefaultOrg, "eve", account.RoleAdmin, false)
	password, err := s.AddUser(ctx, ur)
	if err != nil {
		t.Fatal(err)
	}
	token := login(t, s, "eve", password)
	root := findUser(t, b, account.AdminUsername)
	b.Update(t, func(tx *storage.Tx) error { return s.DeleteUser(tx, root, "eve") })
	b.Clock.Advance(2 * time.Second)
	ur.Role = account.RoleReader
	ur.Org = "org-b"
	if _, err := s.AddUser(ctx, ur); err != nil {
		t.Fatal(err)
	}
	_, err = s.VerifyToken(ctx, token)
	wantAPIError(t, err, 401, "")
}
