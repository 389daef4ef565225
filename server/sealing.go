package server

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"errors"
	"fmt"

	"github.com/eudr/eudr/storage"
)

// sealKeySize is the AES-256 key size.
const sealKeySize = 32

// sealer encrypts secrets kept in the store (the EU system auth key) with
// AES-256-GCM under a key kept outside it, in its own file: a copy of the
// store alone does not reveal them.
type sealer struct {
	aead cipher.AEAD
}

// loadSealer reads the key file at path, creating it with a new random key
// (mode 0600) on first use.
func loadSealer(path string) (*sealer, error) {
	key, _, err := storage.LoadOrCreateKeyFile(path, func() ([]byte, error) {
		key := make([]byte, sealKeySize)
		_, err := rand.Read(key)
		return key, err
	})
	if err != nil {
		return nil, err
	}
	if len(key) != sealKeySize {
		return nil, fmt.Errorf("secrets key file %s: holds %d bytes, not %d", path, len(key), sealKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &sealer{aead: aead}, nil
}

// seal encrypts plaintext bound to context (a ciphertext opens only with
// the same context: one tenant's secret cannot be moved to another's).
// The random nonce comes first.
func (s *sealer) seal(plaintext []byte, context string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return s.aead.Seal(nonce, nonce, plaintext, []byte(context))
}

// open decrypts what seal made with the same context.
func (s *sealer) open(sealed []byte, context string) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed secret is too short")
	}
	pt, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(context))
	if err != nil {
		return nil, errors.New("sealed secret does not open with this key file (was the key file replaced?)")
	}
	return pt, nil
}
