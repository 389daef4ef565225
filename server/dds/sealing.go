package dds

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

// Sealer encrypts secrets kept in the store (the EU system auth key) with
// AES-256-GCM under a key kept outside it, in its own file: a copy of the
// store alone does not reveal them.
type Sealer struct {
	aead cipher.AEAD
}

// LoadSealer reads the key file at path, creating it with a new random key
// (mode 0600) on first use. It fails when the file cannot be read or
// written, or holds a key of another size.
func LoadSealer(path string) (*Sealer, error) {
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
	return &Sealer{aead: aead}, nil
}

// Seal encrypts plaintext bound to context (a ciphertext opens only with
// the same context: one tenant's secret cannot be moved to another's).
// The random nonce comes first.
func (s *Sealer) Seal(plaintext []byte, context string) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(plaintext)+s.aead.Overhead())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail
	}
	return s.aead.Seal(nonce, nonce, plaintext, []byte(context))
}

// Open decrypts what Seal made with the same context. It fails when sealed
// was made with another key or context, or was altered.
func (s *Sealer) Open(sealed []byte, context string) ([]byte, error) {
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
