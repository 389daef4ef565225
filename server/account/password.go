package account

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"strings"
	"time"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"

	"github.com/eudr/eudr/server/apierr"
)

// argon2id parameters: OWASP's recommended minimum (19 MiB, 2 passes).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
)

// HashPassword returns an argon2id PHC string of password with a fresh
// salt, as storage.User.PasswordHash holds it. It fails only when the
// system's random source does.
func HashPassword(password string) (string, error) {
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// CheckPassword reports whether password is the one hashed in hash, an
// argon2id PHC string or a bcrypt hash. A malformed hash matches nothing.
func CheckPassword(hash, password string) bool {
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

// checkPasswordBounded runs CheckPassword in one of the service's slots:
// each argon2id run holds 19 MiB, so logins without a bound could exhaust
// memory. When no slot frees up in time the answer is 503 with Retry-After.
func (s *Service) checkPasswordBounded(ctx context.Context, hash, password string) (bool, error) {
	timer := time.NewTimer(s.o.HashWait)
	defer timer.Stop()
	select {
	case s.hashSlots <- struct{}{}:
		defer func() { <-s.hashSlots }()
		return CheckPassword(hash, password), nil
	case <-timer.C:
		return false, &apierr.Error{Status: apierr.StatusServiceUnavailable, Code: apierr.CodeServiceUnavailable, RetryAfter: 1,
			Message: "too many logins at once; retry shortly"}
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// dummyHash is checked against when the user does not exist, so a login's
// time does not tell which usernames exist.
var dummyHash, _ = HashPassword("not a password")

// randomPassword is 18 random bytes, base64url: 24 characters on one line.
func randomPassword() string {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux; if it does, nothing is safe
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
