package account

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// jwtIssuer is the issuer of every login token; a token of another issuer
// is refused.
const jwtIssuer = "eudr"

// tokenLeeway is how far past its expiry a token is still accepted, for
// clocks slightly apart.
const tokenLeeway = 5 * time.Second

// LoginRequest is the body of POST /auth/login.
type LoginRequest struct {
	Username string `json:"username"`
	Password string `json:"password"`
}

// Validate returns an apierr 400 naming every missing field, or nil.
func (req *LoginRequest) Validate() error {
	var probs apierr.Problems
	if req.Username == "" {
		probs.Add(apierr.DetailRequired, "username", "is required")
	}
	if req.Password == "" {
		probs.Add(apierr.DetailRequired, "password", "is required")
	}
	return probs.Err()
}

// tokenClaims are a login token's claims. PasswordVersion is the user's
// when the token was issued: a token ends when the password changes (a
// reset after a leak must shut out whoever logged in with the old one),
// not only when it expires.
type tokenClaims struct {
	jwt.RegisteredClaims
	PasswordVersion int `json:"pwv,omitempty"`
}

// Login checks a user's password and returns a signed token (HS256) and
// when it expires (TokenTTL from now). A wrong password and an unknown user
// are the same apierr 401, and cost the same time; when too many logins
// are checking passwords at once it returns an apierr 503 with Retry-After.
func (s *Service) Login(ctx context.Context, username, password string) (string, time.Time, error) {
	user, err := s.checkUser(ctx, username, password)
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.o.Now()
	exp := now.Add(s.o.TokenTTL)
	token, err := jwt.NewWithClaims(jwt.SigningMethodHS256, tokenClaims{
		RegisteredClaims: jwt.RegisteredClaims{
			Issuer:    jwtIssuer,
			Subject:   user.Username,
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(exp),
		},
		PasswordVersion: user.PasswordVersion,
	}).SignedString(s.o.TokenKey)
	if err != nil {
		return "", time.Time{}, fmt.Errorf("sign token: %w", err)
	}
	return token, exp, nil
}

// checkUser returns the user whose password is password. A wrong password
// and an unknown user are the same apierr 401, and cost the same time;
// when too many sign-ins are checking passwords at once it returns an
// apierr 503 with Retry-After.
func (s *Service) checkUser(ctx context.Context, username, password string) (*storage.User, error) {
	var user *storage.User
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
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
	ok, err := s.checkPasswordBounded(ctx, hash, password)
	if err != nil {
		return nil, err
	}
	if !ok || user == nil {
		return nil, apierr.InvalidCredentials()
	}
	return user, nil
}

// VerifyToken returns the user a login token was issued to. It returns an
// apierr 401 for a token that is not one of this store's (another key,
// algorithm or issuer), has no expiry or has expired, names an unknown
// user, or was issued under a password the user has since changed.
func (s *Service) VerifyToken(ctx context.Context, token string) (*storage.User, error) {
	var claims tokenClaims
	_, err := jwt.ParseWithClaims(token, &claims, func(*jwt.Token) (any, error) { return s.o.TokenKey, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
		jwt.WithIssuer(jwtIssuer),
		jwt.WithExpirationRequired(),
		jwt.WithTimeFunc(s.o.Now),
		jwt.WithLeeway(tokenLeeway),
	)
	if err != nil {
		return nil, apierr.Unauthorized()
	}
	var user *storage.User
	if err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		user, err = tx.FindUser(claims.Subject)
		return err
	}); err != nil || user.PasswordVersion != claims.PasswordVersion || issuedBefore(claims.IssuedAt, user.CreatedAt) {
		return nil, apierr.Unauthorized()
	}
	return user, nil
}

// issuedBefore reports whether a token was issued before the user was
// created: a token of a deleted user must not pass for a new user of the
// same name, whose password version starts again at 0. Token times are
// whole seconds.
func issuedBefore(iat *jwt.NumericDate, created time.Time) bool {
	return iat == nil || iat.Time.Before(created.Truncate(time.Second))
}
