// Package account owns who may use the appliance: organisations, users and
// their passwords, the login tokens a password buys, and API keys (made,
// listed, rotated and revoked; each value shown once and stored only as its
// SHA-256). It creates the first organisation and admin of a new store and
// answers, for the server's authentication, whose key or token a request
// carries.
package account

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/storage"
)

// What a new store starts with.
const (
	// DefaultOrg is the organisation of the first admin.
	DefaultOrg = "default"
	// AdminUsername is the first admin's name.
	AdminUsername = "admin"
	// RoleAdmin is the role that may manage keys and users of its
	// organisation, and write (RoleReader in users.go only reads).
	RoleAdmin = "admin"
	// InitialPasswordFile is written in the data dir when the first admin's
	// password was generated rather than given.
	InitialPasswordFile = "initial-admin-password"
)

// Options are what the service needs.
type Options struct {
	DB *storage.DB
	// TokenKey signs and verifies login tokens (HS256); TokenKey(tx) loads
	// the store's.
	TokenKey []byte
	// TokenTTL is how long a login token lasts.
	TokenTTL time.Duration
	// SessionIdle ends a console session unused for that long, SessionMax
	// any at that age (30m and 12h when 0).
	SessionIdle, SessionMax time.Duration
	// AdminPassword is the first admin's password. When it is empty,
	// Bootstrap generates one and writes it to DataDir/InitialPasswordFile.
	AdminPassword string
	// WarnIgnoredPassword makes Bootstrap warn when AdminPassword is set
	// on a store that already has users (it is ignored there): for the
	// running appliance; admin commands leave it off and stay quiet.
	WarnIgnoredPassword bool
	DataDir             string
	// HashSlots is how many password checks may run at once (one per CPU
	// when 0): each argon2id run holds 19 MiB. HashWait is how long a login
	// waits for a slot before it is answered 503 (5s when 0).
	HashSlots int
	HashWait  time.Duration
	// Now is the clock of token issue and expiry; time.Now when nil.
	Now    func() time.Time
	Logger zerolog.Logger
}

// Service signs users in and manages API keys.
type Service struct {
	o         Options
	keys      *keyCache
	hashSlots chan struct{}
}

// New returns the service.
func New(o Options) *Service {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.HashSlots <= 0 {
		o.HashSlots = runtime.NumCPU()
	}
	if o.HashWait <= 0 {
		o.HashWait = 5 * time.Second
	}
	if o.SessionIdle <= 0 {
		o.SessionIdle = 30 * time.Minute
	}
	if o.SessionMax <= 0 {
		o.SessionMax = 12 * time.Hour
	}
	return &Service{o: o, keys: newKeyCache(), hashSlots: make(chan struct{}, o.HashSlots)}
}

// TokenKey returns the key that signs login tokens, kept in the store so
// that tokens outlive a restart; the first call makes it, in a writable
// transaction. It returns the store's error on failure.
func TokenKey(tx *storage.Tx) ([]byte, error) {
	key, err := tx.Secret("jwt", 32)
	if err != nil {
		return nil, fmt.Errorf("load token key: %w", err)
	}
	return key, nil
}

// Bootstrap creates, on a store without users, organisation DefaultOrg and
// its admin AdminUsername, appliance administrator, with the configured
// password, or with a random one written to DataDir/InitialPasswordFile. A
// store with users is left as it is, but for a store made before there
// were appliance administrators: its first admin becomes one. It fails when the file or the records cannot be written.
func (s *Service) Bootstrap(ctx context.Context) error {
	var hasUsers bool
	if err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		hasUsers = tx.HasUsers()
		return nil
	}); err != nil {
		return err
	}
	if hasUsers {
		if s.o.AdminPassword != "" && s.o.WarnIgnoredPassword {
			s.o.Logger.Warn().Str("user", AdminUsername).
				Msg("admin_password (EUDR_ADMIN_PASSWORD) is ignored: it only sets the first admin's password on an empty store; use eudr admin reset-password to change it")
		}
		if err := s.o.DB.Update(ctx, upgradeApplianceAdmin); err != nil {
			return fmt.Errorf("make the first admin appliance administrator: %w", err)
		}
		return nil
	}
	password, file := s.o.AdminPassword, ""
	if password == "" {
		// The file is on disk before the user is committed: a crash in
		// between leaves a stale file that the next start overwrites, never
		// an admin whose password nobody knows.
		password, file = randomPassword(), filepath.Join(s.o.DataDir, InitialPasswordFile)
		if _, err := storage.WriteFileAtomic(file, func(w io.Writer) (int64, error) {
			n, err := io.WriteString(w, password+"\n")
			return int64(n), err
		}); err != nil {
			return fmt.Errorf("write initial admin password: %w", err)
		}
	}
	hash, err := HashPassword(password)
	if err != nil {
		return err
	}
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		if err := tx.PutOrg(&storage.Org{ID: DefaultOrg, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.PutUser(&storage.User{Username: AdminUsername, Org: DefaultOrg, Role: RoleAdmin, ApplianceAdmin: true, PasswordHash: hash, CreatedAt: tx.Now()})
	})
	if err != nil {
		if file != "" {
			os.Remove(file)
		}
		return fmt.Errorf("create first admin: %w", err)
	}
	if file != "" {
		s.o.Logger.Warn().Str("user", AdminUsername).Str("password_file", file).
			Msg("created the first admin with a generated password; read it from the file, then delete the file")
	}
	return nil
}

// ResetPassword gives the user a new random password and returns it.
// Login tokens issued before stop working (their password version is
// older). When the user is the first admin and the file of its generated
// password (InitialPasswordFile in the data dir) is still there, the file
// is rewritten with the new password, so that it never holds a stale one,
// and its path is returned as updatedFile ("" otherwise). It fails when
// the user does not exist or the store cannot be written; when only the
// file cannot be, the new password is returned with the error.
func (s *Service) ResetPassword(ctx context.Context, username string) (password, updatedFile string, err error) {
	password = randomPassword()
	hash, err := HashPassword(password) // slow: before the write transaction
	if err != nil {
		return "", "", err
	}
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		u, err := tx.FindUser(username)
		if errors.Is(err, storage.ErrNotFound) {
			return fmt.Errorf("user %q does not exist", username)
		}
		if err != nil {
			return err
		}
		u.PasswordHash = hash
		return tx.PutUser(u)
	})
	if err != nil {
		return "", "", err
	}
	if username != AdminUsername || s.o.DataDir == "" {
		return password, "", nil
	}
	file := filepath.Join(s.o.DataDir, InitialPasswordFile)
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return password, "", nil
	}
	if _, err := storage.WriteFileAtomic(file, func(w io.Writer) (int64, error) {
		n, err := io.WriteString(w, password+"\n")
		return int64(n), err
	}); err != nil {
		// The store holds the new password already: it is returned with
		// the error, or nobody would know it.
		return password, "", fmt.Errorf("the password was changed, but %s still holds the old one: %w", file, err)
	}
	return password, file, nil
}
