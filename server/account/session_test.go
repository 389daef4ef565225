package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestService_Sessions(t *testing.T) {
	b, s := newBootstrapped(t)
	ctx := context.Background()
	id, sess, err := s.SignIn(ctx, account.AdminUsername, adminPassword, storage.Production, "")
	if err != nil {
		t.Fatal(err)
	}
	if !sess.ExpiresAt.Equal(start.Add(30*time.Minute)) || !sess.MaxExpiresAt.Equal(start.Add(12*time.Hour)) {
		t.Errorf("expiry: got %v and %v, want 30m and 12h from sign-in", sess.ExpiresAt, sess.MaxExpiresAt)
	}
	t.Run("CSRF", func(t *testing.T) {
		other, _, err := s.SignIn(ctx, account.AdminUsername, adminPassword, storage.Production, "")
		if err != nil {
			t.Fatal(err)
		}
		if !s.CheckCSRF(id, sess.CSRFToken) || s.CheckCSRF(other, sess.CSRFToken) || s.CheckCSRF(id, "") {
			t.Error("a CSRF token must match its own session only")
		}
	})
	t.Run("WrongPassword", func(t *testing.T) {
		_, _, err := s.SignIn(ctx, account.AdminUsername, "wrong", storage.Production, "")
		wantAPIError(t, err, 401, apierr.DetailInvalidCredentials)
	})
	t.Run("OtherEnvironment", func(t *testing.T) {
		_, err := s.VerifySession(ctx, id, storage.Sandbox)
		wantAPIError(t, err, 403, apierr.DetailWrongEnvironment)
	})
	t.Run("Unknown", func(t *testing.T) {
		_, err := s.VerifySession(ctx, "nope", storage.Production)
		wantAPIError(t, err, 401, "")
	})
	t.Run("EndedSessionsPruned", func(t *testing.T) {
		b.Clock.Advance(31 * time.Minute)
		if _, _, err := s.SignIn(ctx, account.AdminUsername, adminPassword, storage.Production, ""); err != nil {
			t.Fatal(err)
		}
		n := 0
		b.Update(t, func(tx *storage.Tx) error {
			var err error
			n, err = tx.DeleteSessions(func(*storage.Session) bool { return true })
			return err
		})
		if n != 1 {
			t.Errorf("sessions left after a sign-in: %d, want only the new one", n)
		}
	})
}

// A session of a deleted user does not pass for a new user of the same
// name.
func TestService_VerifySession_DeletedUserRecreated(t *testing.T) {
	b, s := newBootstrapped(t)
	ctx := context.Background()
	ur, _ := account.ParseUserRequest(account.DefaultOrg, "eve", account.RoleAdmin, false)
	password, err := s.AddUser(ctx, ur)
	if err != nil {
		t.Fatal(err)
	}
	id, _, err := s.SignIn(ctx, "eve", password, storage.Production, "")
	if err != nil {
		t.Fatal(err)
	}
	root := findUser(t, b, account.AdminUsername)
	b.Update(t, func(tx *storage.Tx) error { return s.DeleteUser(tx, root, "eve") })
	b.Clock.Advance(time.Second)
	if _, err := s.AddUser(ctx, ur); err != nil {
		t.Fatal(err)
	}
	_, err = s.VerifySession(ctx, id, storage.Production)
	wantAPIError(t, err, 401, "")
}
