package account

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// sessionTouchEvery is how stale a session's recorded last use may get
// before a request records it again: a write per request would cost an
// fsync each, and idle expiry needs no finer grain.
const sessionTouchEvery = time.Minute

// Session is a signed-in console session as a request sees it.
type Session struct {
	User *storage.User
	Env  storage.Environment
	// ExpiresAt is when the session ends unless used before; MaxExpiresAt
	// when it ends however much it is used.
	ExpiresAt, MaxExpiresAt time.Time
	// CSRFToken must come back in X-CSRF-Token with every request that
	// is not GET or HEAD.
	CSRFToken string
}

// SignIn checks a user's password as Login does and starts a console
// session on env's listener. It returns the session id, for the cookie
// only (the store keeps its SHA-256), and the session. Sessions that have
// ended are removed on the way, and so is the session replaces names (the
// cookie the browser signed in with before, "" for none): a browser holds
// one session per listener, and the one it drops must not live on.
func (s *Service) SignIn(ctx context.Context, username, password string, env storage.Environment, replaces string) (string, *Session, error) {
	user, err := s.checkUser(ctx, username, password)
	if err != nil {
		return "", nil, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, err
	}
	id := base64.RawURLEncoding.EncodeToString(b)
	now := s.o.Now()
	rec := &storage.Session{Username: user.Username, Env: env, PasswordVersion: user.PasswordVersion, CreatedAt: now, LastSeenAt: now}
	err = s.o.DB.Update(ctx, func(tx *storage.Tx) error {
		if _, err := tx.DeleteSessions(func(old *storage.Session) bool { return !now.Before(s.expiry(old)) }); err != nil {
			return err
		}
		if replaces != "" {
			if err := tx.DeleteSession(sessionHash(replaces)); err != nil {
				return err
			}
		}
		return tx.PutSession(sessionHash(id), rec)
	})
	if err != nil {
		return "", nil, fmt.Errorf("store session: %w", err)
	}
	return id, s.sessionOf(id, user, rec), nil
}

// VerifySession returns the session a cookie's id names on env's listener,
// recording its use. It returns an apierr 401 for an unknown, signed-out
// or ended session (idle, too old, its user deleted or its password
// changed), and 403 WRONG_ENVIRONMENT for a session of the other listener.
func (s *Service) VerifySession(ctx context.Context, id string, env storage.Environment) (*Session, error) {
	hash := sessionHash(id)
	var rec *storage.Session
	var user *storage.User
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		if rec, err = tx.FindSession(hash); err != nil {
			return err
		}
		user, err = tx.FindUser(rec.Username)
		return err
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, apierr.Unauthorized()
	}
	if err != nil {
		return nil, err
	}
	now := s.o.Now()
	if !now.Before(s.expiry(rec)) || user.PasswordVersion != rec.PasswordVersion || rec.CreatedAt.Before(user.CreatedAt) {
		return nil, apierr.Unauthorized()
	}
	if rec.Env != env {
		return nil, apierr.Forbidden(apierr.DetailWrongEnvironment,
			fmt.Sprintf("this session was made on the %s listener; sign in on this one", rec.Env))
	}
	if now.Sub(rec.LastSeenAt) >= sessionTouchEvery {
		rec.LastSeenAt = now
		if err := s.o.DB.Update(ctx, func(tx *storage.Tx) error {
			if _, err := tx.FindSession(hash); err != nil {
				return err // signed out meanwhile: do not bring it back
			}
			return tx.PutSession(hash, rec)
		}); err != nil && !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
	}
	return s.sessionOf(id, user, rec), nil
}

// SignOut ends the session a cookie's id names; an unknown one is no error.
func (s *Service) SignOut(ctx context.Context, id string) error {
	return s.o.DB.Update(ctx, func(tx *storage.Tx) error { return tx.DeleteSession(sessionHash(id)) })
}

// CheckCSRF reports whether token is the CSRF token of the session id.
func (s *Service) CheckCSRF(id, token string) bool {
	return subtle.ConstantTimeCompare([]byte(token), []byte(s.csrfToken(id))) == 1
}

// csrfToken is derived from the session id with the store's token key, so
// it needs no storage and is worth nothing without the session: an
// attacker's page can neither read the cookie nor compute the token.
func (s *Service) csrfToken(id string) string {
	m := hmac.New(sha256.New, s.o.TokenKey)
	m.Write([]byte("csrf\x00" + id))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// expiry is when a session ends: SessionIdle after its last use, or
// SessionMax after sign-in, whichever is first.
func (s *Service) expiry(rec *storage.Session) time.Time {
	idle, hard := rec.LastSeenAt.Add(s.o.SessionIdle), rec.CreatedAt.Add(s.o.SessionMax)
	if hard.Before(idle) {
		return hard
	}
	return idle
}

func (s *Service) sessionOf(id string, user *storage.User, rec *storage.Session) *Session {
	return &Session{User: user, Env: rec.Env, ExpiresAt: s.expiry(rec), MaxExpiresAt: rec.CreatedAt.Add(s.o.SessionMax),
		CSRFToken: s.csrfToken(id)}
}

func sessionHash(id string) []byte {
	h := sha256.Sum256([]byte(id))
	return h[:]
}
