package account_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/storage"
)

var start = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

const adminPassword = "correct horse battery staple"

// newService builds a service on a new bench from o, filling in the store,
// the clock, a token key, a one-hour token TTL and a temp data dir.
func newService(tb testing.TB, o account.Options) (*apitest.Bench, *account.Service) {
	tb.Helper()
	b := apitest.NewBench(tb, start)
	return b, serviceOn(tb, b, o)
}

// serviceOn builds a service on b's store, as newService does.
func serviceOn(tb testing.TB, b *apitest.Bench, o account.Options) *account.Service {
	tb.Helper()
	o.DB, o.Now, o.Logger = b.DB, b.Clock.Now, zerolog.Nop()
	if o.TokenKey == nil {
		b.Update(tb, func(tx *storage.Tx) error {
			var err error
			o.TokenKey, err = account.TokenKey(tx)
			return err
		})
	}
	if o.TokenTTL == 0 {
		o.TokenTTL = time.Hour
	}
	if o.DataDir == "" {
		o.DataDir = tb.TempDir()
	}
	return account.New(o)
}

// newBootstrapped is a service whose store has the first admin, with
// adminPassword.
func newBootstrapped(tb testing.TB) (*apitest.Bench, *account.Service) {
	tb.Helper()
	b, s := newService(tb, account.Options{AdminPassword: adminPassword})
	if err := s.Bootstrap(context.Background()); err != nil {
		tb.Fatal(err)
	}
	return b, s
}

// login logs username in and fails the test unless it succeeds.
func login(tb testing.TB, s *account.Service, username, password string) string {
	tb.Helper()
	token, _, err := s.Login(context.Background(), username, password)
	if err != nil {
		tb.Fatalf("Login(%s): %v", username, err)
	}
	return token
}

// wantAPIError checks that err is answered with status and, when detail is
// not "", that its first detail has that code.
func wantAPIError(tb testing.TB, err error, status int, detail string) *apierr.Error {
	tb.Helper()
	if err == nil {
		tb.Fatalf("got no error, want an API error %d %s", status, detail)
	}
	e := apierr.From(err) // an apierr.Error, or apierr.NotFound as the server answers it
	if e.Status != status {
		tb.Errorf("status: got %d (%v), want %d", e.Status, err, status)
	}
	if detail != "" && (len(e.Details) == 0 || e.Details[0].Code != detail) {
		tb.Errorf("details: got %+v, want %s", e.Details, detail)
	}
	return e
}

func TestService_Bootstrap(t *testing.T) {
	t.Run("GivenPassword", func(t *testing.T) {
		b, s := newService(t, account.Options{AdminPassword: "first-password", DataDir: t.TempDir()})
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		login(t, s, account.AdminUsername, "first-password")
		b.Update(t, func(tx *storage.Tx) error {
			u, err := tx.FindUser(account.AdminUsername)
			if err != nil {
				return err
			}
			if u.Org != account.DefaultOrg || u.Role != account.RoleAdmin || !u.CreatedAt.Equal(start) {
				t.Errorf("admin: got org %q role %q created %v, want %s, %s, %v", u.Org, u.Role, u.CreatedAt, account.DefaultOrg, account.RoleAdmin, start)
			}
			if strings.Contains(u.PasswordHash, "first-password") || !account.CheckPassword(u.PasswordHash, "first-password") {
				t.Errorf("stored password hash %q: want an argon2id hash of the password", u.PasswordHash)
			}
			_, err = tx.FindOrg(account.DefaultOrg)
			return err
		})
	})

	t.Run("GivenPasswordWritesNoFile", func(t *testing.T) {
		dir := t.TempDir()
		_, s := newService(t, account.Options{AdminPassword: "first-password", DataDir: dir})
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(dir, account.InitialPasswordFile)); !os.IsNotExist(err) {
			t.Errorf("%s with a given password: got stat err %v, want no file", account.InitialPasswordFile, err)
		}
	})

	t.Run("GeneratedPassword", func(t *testing.T) {
		dir := t.TempDir()
		_, s := newService(t, account.Options{DataDir: dir})
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, account.InitialPasswordFile)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if mode := fi.Mode().Perm(); mode != 0o600 {
			t.Errorf("%s mode: got %o, want 600", account.InitialPasswordFile, mode)
		}
		content, _ := os.ReadFile(path)
		password := strings.TrimSuffix(string(content), "\n")
		if len(password) < 20 || strings.ContainsAny(password, " \n") {
			t.Errorf("generated password: got %q, want at least 20 characters on one line", content)
		}
		login(t, s, account.AdminUsername, password)

		// Random: another store gets another password.
		otherDir := t.TempDir()
		_, other := newService(t, account.Options{DataDir: otherDir})
		if err := other.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		if again, _ := os.ReadFile(filepath.Join(otherDir, account.InitialPasswordFile)); string(again) == string(content) {
			t.Errorf("generated passwords of two stores: both %q, want random ones", content)
		}
	})

	t.Run("StaleFileOverwritten", func(t *testing.T) {
		// A file left by a start that died before committing the admin is
		// overwritten by the next start, whose password then logs in.
		dir := t.TempDir()
		path := filepath.Join(dir, account.InitialPasswordFile)
		if err := os.WriteFile(path, []byte("stale\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, s := newService(t, account.Options{DataDir: dir})
		if err := s.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		content, _ := os.ReadFile(path)
		password := strings.TrimSpace(string(content))
		if password == "stale" {
			t.Fatal("initial admin password file: got the stale content, want a new password")
		}
		if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
			t.Errorf("mode: got %v, want 0600", fi.Mode().Perm())
		}
		login(t, s, account.AdminUsername, password)
	})

	t.Run("StoreWithUsersKept", func(t *testing.T) {
		b, first := newBootstrapped(t)
		dir := t.TempDir()
		again := serviceOn(t, b, account.Options{DataDir: dir})
		if err := again.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		login(t, again, account.AdminUsername, adminPassword)
		if _, err := os.Stat(filepath.Join(dir, account.InitialPasswordFile)); !os.IsNotExist(err) {
			t.Errorf("%s on a store with users: got stat err %v, want no file", account.InitialPasswordFile, err)
		}
		other := serviceOn(t, b, account.Options{AdminPassword: "second-password"})
		if err := other.Bootstrap(context.Background()); err != nil {
			t.Fatal(err)
		}
		_, _, err := first.Login(context.Background(), account.AdminUsername, "second-password")
		wantAPIError(t, err, apierr.StatusUnauthorized, "")
	})
}

func TestService_ResetPassword(t *testing.T) {
	_, s := newBootstrapped(t)
	ctx := context.Background()
	before := login(t, s, account.AdminUsername, adminPassword)

	password, file, err := s.ResetPassword(ctx, account.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	if len(password) < 20 || password == adminPassword || file != "" {
		t.Errorf("new password: got %q (file %q), want a new random one and no file (there is none)", password, file)
	}
	_, _, err = s.Login(ctx, account.AdminUsername, adminPassword)
	wantAPIError(t, err, apierr.StatusUnauthorized, "")
	after := login(t, s, account.AdminUsername, password)

	// A token issued before the change ends with it (whoever lost the old
	// password may have logged in with it), well before its expiry.
	_, err = s.VerifyToken(ctx, before)
	wantAPIError(t, err, apierr.StatusUnauthorized, "")
	if u, err := s.VerifyToken(ctx, after); err != nil || u.Username != account.AdminUsername {
		t.Errorf("token issued after the reset: got %v, %v; want the admin", u, err)
	}
	if _, _, err := s.ResetPassword(ctx, account.AdminUsername); err != nil {
		t.Fatal(err)
	}
	_, err = s.VerifyToken(ctx, after)
	wantAPIError(t, err, apierr.StatusUnauthorized, "")

	if _, _, err := s.ResetPassword(ctx, "nobody"); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("ResetPassword(nobody): got %v, want an error saying the user does not exist", err)
	}
}

// The generated password's file never holds a stale password: a reset of
// the first admin rewrites it (and says so); without the file there is
// nothing to update.
func TestService_ResetPasswordUpdatesInitialFile(t *testing.T) {
	dir := t.TempDir()
	_, s := newService(t, account.Options{DataDir: dir})
	ctx := context.Background()
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, account.InitialPasswordFile)
	password, file, err := s.ResetPassword(ctx, account.AdminUsername)
	if err != nil {
		t.Fatal(err)
	}
	content, _ := os.ReadFile(path)
	fi, _ := os.Stat(path)
	if file != path || string(content) != password+"\n" || fi == nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("after the reset: file %q, %s holds %q (mode %v); want it named and holding the new password %q, mode 600",
			file, path, content, fi, password)
	}
	login(t, s, account.AdminUsername, strings.TrimSpace(string(content)))

	// A file that cannot be rewritten (here a directory in its place)
	// fails the reset, but the new password, already stored, is returned.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	stuck, file, err := s.ResetPassword(ctx, account.AdminUsername)
	if err == nil || stuck == "" || file != "" || !strings.Contains(err.Error(), "still holds the old one") {
		t.Fatalf("reset with an unwritable file: %q %q %v; want the new password and an error", stuck, file, err)
	}
	login(t, s, account.AdminUsername, stuck)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, file, err := s.ResetPassword(ctx, account.AdminUsername); err != nil || file != "" {
		t.Errorf("reset without the file: %q %v, want no file named", file, err)
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the reset made %s again: %v", path, err)
	}
}

// EUDR_ADMIN_PASSWORD only sets the first admin's password on an empty
// store; on a store with users it changes nothing, and says so.
func TestService_BootstrapWarnsAdminPasswordIgnored(t *testing.T) {
	b, s := newService(t, account.Options{AdminPassword: adminPassword})
	ctx := context.Background()
	if err := s.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	again := account.New(account.Options{DB: b.DB, TokenKey: []byte("the key of this store, 32 bytes."), TokenTTL: time.Hour,
		AdminPassword: "a-different-password", WarnIgnoredPassword: true, Now: b.Clock.Now, Logger: zerolog.New(&logs)})
	if err := again.Bootstrap(ctx); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"level":"warn"`) || !strings.Contains(logs.String(), "is ignored") {
		t.Errorf("second start with another admin password logged %q, want a warning that it is ignored", logs.String())
	}
	if _, _, err := again.Login(ctx, account.AdminUsername, "a-different-password"); err == nil {
		t.Error("the ignored password logs in")
	}
	login(t, again, account.AdminUsername, adminPassword)

	// Without the variable, or for an admin command, nothing is said.
	for name, o := range map[string]account.Options{
		"NoPassword":   {WarnIgnoredPassword: true},
		"AdminCommand": {AdminPassword: "a-different-password"},
	} {
		logs.Reset()
		o.DB, o.TokenKey, o.TokenTTL, o.Now, o.Logger = b.DB, []byte("the key of this store, 32 bytes."), time.Hour, b.Clock.Now, zerolog.New(&logs)
		if err := account.New(o).Bootstrap(ctx); err != nil || logs.Len() != 0 {
			t.Errorf("%s: %v, logged %q; want nothing", name, err, logs.String())
		}
	}
}
