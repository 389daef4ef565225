package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/julienschmidt/httprouter"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

const (
	defaultOrg    = "default"
	adminUsername = "admin"
	roleAdmin     = "admin"
	// InitialPasswordFile is written in the data dir when the first admin's
	// password was generated rather than given.
	InitialPasswordFile = "initial-admin-password"
	jwtIssuer           = "eudr"
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
)

// bootstrap runs on every start: on an empty store it creates organisation
// "default" and user "admin" with EUDR_ADMIN_PASSWORD, or a random password
// written to <data_dir>/initial-admin-password. It also loads the login
// token key, creating it on first start.
func (a *App) bootstrap(ctx context.Context) error {
	var hasUsers bool
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		if a.jwtKey, err = tx.Secret("jwt", 32); err != nil {
			return fmt.Errorf("load token key: %w", err)
		}
		hasUsers = tx.HasUsers()
		return nil
	})
	if err != nil || hasUsers {
		return err
	}
	password, file := a.cfg.AdminPassword, ""
	if password == "" {
		// The file is on disk before the user is committed: a crash in
		// between leaves a stale file that the next start overwrites, never
		// an admin whose password nobody knows.
		password, file = randomPassword(), filepath.Join(a.cfg.DataDir, InitialPasswordFile)
		if _, err := storage.WriteFileAtomic(file, func(w io.Writer) (int64, error) {
			n, err := io.WriteString(w, password+"\n")
			return int64(n), err
		}); err != nil {
			return fmt.Errorf("write initial admin password: %w", err)
		}
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	err = a.db.Update(ctx, func(tx *storage.Tx) error {
		if err := tx.PutOrg(&storage.Org{ID: defaultOrg, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.PutUser(&storage.User{Username: adminUsername, Org: defaultOrg, Role: roleAdmin, PasswordHash: hash, CreatedAt: tx.Now()})
	})
	if err != nil {
		if file != "" {
			os.Remove(file)
		}
		return fmt.Errorf("create first admin: %w", err)
	}
	if file != "" {
		a.log.Warn().Str("user", adminUsername).Str("password_file", file).
			Msg("created the first admin with a generated password; read it from the file, then delete the file")
	}
	return nil
}

// ResetPassword gives a user a new random password and returns it: the way
// back in when the admin password is lost. `eudr admin reset-password` runs
// it on a stopped appliance's data dir. The user's login tokens issued
// before it are refused from then on (storage.User.PasswordVersion).
func (a *App) ResetPassword(ctx context.Context, username string) (string, error) {
	password := randomPassword()
	hash, err := hashPassword(password)
	if err != nil {
		return "", err
	}
	err = a.db.Update(ctx, func(tx *storage.Tx) error {
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
		return "", err
	}
	return password, nil
}

func randomPassword() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// hashPassword returns an argon2id PHC string.
func hashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// checkPassword verifies password against an argon2id or bcrypt hash.
func checkPassword(hash, password string) bool {
	if strings.HasPrefix(hash, "$2") {
		return bcrypt.CompareHashAndPassword([]byte(hash), []byte(password)) == nil
	}
	parts := strings.Split(hash, "$") // "", argon2id, v=19, m=..,t=..,p=.., salt, key
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var version int
	var mem, t uint32
	var threads uint8
	if _, err := fmt.Sscanf(parts[2], "v=%d", &version); err != nil || version != argon2.Version {
		return false
	}
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &mem, &t, &threads); err != nil {
		return false
	}
	salt, err1 := base64.RawStdEncoding.DecodeString(parts[4])
	want, err2 := base64.RawStdEncoding.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// checkPasswordBounded runs checkPassword in one of a few slots: each
// argon2id run holds 19 MiB, so logins without a bound could exhaust memory.
// When no slot frees up in time the answer is 503 with Retry-After.
func (a *App) checkPasswordBounded(ctx context.Context, hash, password string) (bool, error) {
	timer := time.NewTimer(a.hashWait)
	defer timer.Stop()
	select {
	case a.hashSlots <- struct{}{}:
		defer func() { <-a.hashSlots }()
		return checkPassword(hash, password), nil
	case <-timer.C:
		return false, &apierr.Error{Status: http.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable, RetryAfter: 1,
			Message: "too many logins at once; retry shortly"}
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// dummyHash is checked against when the user does not exist, so a login's
// time does not tell which usernames exist.
var dummyHash, _ = hashPassword("not a password")

type loginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

type loginResponse struct {
	Token     string `json:"token"`
	ExpiresAt string `json:"expiresAt"`
}

func (a *App) handleLogin(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req loginRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var probs apierr.Problems
	if req.Username == "" {
		probs.Add(apierr.DetailRequired, "username", "is required")
	}
	if req.Password == "" {
		probs.Add(apierr.DetailRequired, "password", "is required")
	}
	if err := mergeProblems(decoded, probs.Err()); err != nil {
		writeError(w, r, err)
		return
	}
	resp, err := a.login(r.Context(), req.Username, req.Password)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// login checks a user's password and issues a signed token (HS256) that
// expires after auth.token_ttl.
func (a *App) login(ctx context.Context, username, password string) (*loginResponse, error) {
	var user *storage.User
	err := a.db.View(ctx, func(tx *storage.Tx) error {
		var err error
		user, err = tx.FindUser(username)
		return err
	})
	if err != nil && !errors.Is(err, storage.ErrNotFound) {
		return nil, err
	}
	hash := dummyHash // an unknown user costs the same time as a known one
	if user != nil {
		hash = user.PasswordHash
	}
	ok, err := a.checkPasswordBounded(ctx, hash, password)
	if err != nil {
		return nil, err
	}
	if !ok || user == nil {
		return nil, apierr.Unauthorized()
	}
	now := a.now()
	exp := now.Add(a.cfg.Auth.TokenTTL)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    jwtIssuer,
			Subject:   user.Username,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		PasswordVersion: user.PasswordVersion,
	}).SignedString(a.jwtKey)
	if err != nil {
		return nil, fmt.Errorf("sign token: %w", err)
	}
	return &loginResponse{Token: token, ExpiresAt: storage.FormatTime(exp)}, nil
}

// tokenClaims are a login token's claims. PasswordVersion is the user's
// when the token was issued: a token ends when the password changes (a
// reset after a leak must shut out whoever logged in with the old one),
// not only when it expires.
type tokenClaims struct {
	jwt.RegisteredClaims
	PasswordVersion int `json:"pwv,omitempty"`
}

// userPrincipal verifies a login token and loads its user. A token issued
// under another password version than the user's is refused (401).
func (a *App) userPrincipal(r *http.Request, token string, env storage.Environment) principal {
	p := principal{field: "headers.Authorization", err: apierr.Unauthorized()}
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return a.jwtKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(jwtIssuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(a.now),
		jwt.WithLeeway(5*time.Second),
	)
	if err != nil {
		return p
	}
	var user *storage.User
	if err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		user, err = tx.FindUser(claims.Subject)
		return err
	}); err != nil || user.PasswordVersion != claims.PasswordVersion {
		return p
	}
	return principal{user: user, tenant: storage.Tenant{Org: user.Org, Env: env}, field: p.field}
}
