package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/julienschmidt/httprouter"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

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
// written once to <data_dir>/initial-admin-password. It also loads the login
// token key, creating it on first start.
func (a *App) bootstrap(ctx context.Context) error {
	var generated string
	err := a.db.Update(ctx, func(tx *storage.Tx) error {
		var err error
		if a.jwtKey, err = tx.Secret("jwt", 32); err != nil {
			return fmt.Errorf("load token key: %w", err)
		}
		if tx.HasUsers() {
			return nil
		}
		password := a.cfg.AdminPassword
		if password == "" {
			password = randomPassword()
			generated = password
		}
		hash, err := hashPassword(password)
		if err != nil {
			return err
		}
		if err := tx.PutOrg(&storage.Org{ID: defaultOrg, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		return tx.PutUser(&storage.User{Username: adminUsername, Org: defaultOrg, Role: roleAdmin, PasswordHash: hash, CreatedAt: tx.Now()})
	})
	if err != nil {
		return fmt.Errorf("bootstrap: %w", err)
	}
	if generated != "" {
		path := filepath.Join(a.cfg.DataDir, InitialPasswordFile)
		if err := os.WriteFile(path, []byte(generated+"\n"), 0o600); err != nil {
			return fmt.Errorf("write initial admin password: %w", err)
		}
		a.log.Warn().Str("user", adminUsername).Str("password_file", path).
			Msg("created the first admin with a generated password; read it from the file, then delete the file")
	}
	return nil
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
	if err := decodeJSON(r, &req); err != nil {
		writeError(w, r, err)
		return
	}
	var probs Problems
	if req.Username == "" {
		probs.Add(DetailRequired, "username", "is required")
	}
	if req.Password == "" {
		probs.Add(DetailRequired, "password", "is required")
	}
	if err := probs.Err(); err != nil {
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
	if user == nil {
		checkPassword(dummyHash, password)
		return nil, unauthorized()
	}
	if !checkPassword(user.PasswordHash, password) {
		return nil, unauthorized()
	}
	now := a.now()
	exp := now.Add(a.cfg.Auth.TokenTTL)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Issuer:    jwtIssuer,
		Subject:   user.Username,
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(exp),
	}).SignedString(a.jwtKey)
	if err != nil {
		return nil, fmt.Errorf("sign token: %w", err)
	}
	return &loginResponse{Token: token, ExpiresAt: formatTime(exp)}, nil
}

// userPrincipal verifies a login token and loads its user.
func (a *App) userPrincipal(r *http.Request, token string, env storage.Environment) principal {
	p := principal{field: "headers.Authorization", err: unauthorized()}
	var claims jwt.RegisteredClaims
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
	}); err != nil {
		return p
	}
	return principal{user: user, tenant: storage.Tenant{Org: user.Org, Env: env}, field: p.field}
}
