package account

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Key values: prefix + 32 base62 characters.
const (
	livePrefix  = "sk_live_"
	testPrefix  = "sk_test_"
	keyBodyLen  = 32
	base62Chars = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
)

// keyPrefix is the value prefix of an environment's keys.
func keyPrefix(env storage.Environment) string {
	if env == storage.Production {
		return livePrefix
	}
	return testPrefix
}

// NewKeyValue returns a new key value of env: sk_live_ (production) or
// sk_test_ (sandbox) and 32 base62 characters from crypto/rand (rejection
// sampling keeps them uniform).
func NewKeyValue(env storage.Environment) string {
	prefix := keyPrefix(env)
	var sb strings.Builder
	sb.WriteString(prefix)
	buf := make([]byte, 64)
	for sb.Len() < len(prefix)+keyBodyLen {
		if _, err := rand.Read(buf); err != nil {
			panic(err) // crypto/rand never fails on Linux; if it does, nothing is safe
		}
		for _, b := range buf {
			if b < 248 && sb.Len() < len(prefix)+keyBodyLen { // 248 = 4*62
				sb.WriteByte(base62Chars[b%62])
			}
		}
	}
	return sb.String()
}

// WellFormedKey reports whether v has the form of a key value: a known
// prefix and 32 base62 characters. Values of any other form are refused
// before any lookup.
func WellFormedKey(v string) bool {
	var body string
	switch {
	case strings.HasPrefix(v, livePrefix):
		body = v[len(livePrefix):]
	case strings.HasPrefix(v, testPrefix):
		body = v[len(testPrefix):]
	default:
		return false
	}
	if len(body) != keyBodyLen {
		return false
	}
	for i := 0; i < len(body); i++ {
		if strings.IndexByte(base62Chars, body[i]) < 0 {
			return false
		}
	}
	return true
}

// VerifyKey returns the key whose current value is value, for a request to
// env's listener. It refuses in this order: a malformed,
// unknown or revoked value is an apierr 401; then a key of the other
// environment is 403 WRONG_ENVIRONMENT, then a rotated-out value 403
// KEY_ROTATED (the 403s name headers.Authorization; the caller names the
// header the value came in). When the store fails it returns that error,
// wrapped (a 500 to the API). The record returned may be shared with other
// callers: do not change it.
func (s *Service) VerifyKey(ctx context.Context, value string, env storage.Environment) (*storage.APIKey, error) {
	if !WellFormedKey(value) {
		return nil, apierr.Unauthorized()
	}
	hash := sha256.Sum256([]byte(value))
	key, gen := s.keys.get(hash)
	if key == nil {
		err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
			var err error
			key, err = tx.FindAPIKeyByHash(hash[:])
			return err
		})
		if errors.Is(err, storage.ErrNotFound) {
			return nil, apierr.Unauthorized()
		}
		if err != nil { // the store failed: not the caller's fault
			return nil, fmt.Errorf("look up api key: %w", err)
		}
		s.keys.put(hash, key, gen)
	}
	switch {
	case key.RevokedAt != nil:
		return nil, apierr.Unauthorized()
	case key.Env != env:
		return nil, apierr.Forbidden(apierr.DetailWrongEnvironment, "a "+string(key.Env)+" key cannot be used on the "+string(env)+" listener")
	case string(key.Hash) != string(hash[:]):
		return nil, apierr.Forbidden(apierr.DetailKeyRotated, "this key value was rotated; use the new value")
	}
	return key, nil
}
