package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// LoadOrCreateKeyFile reads the secret in the file at path or, when there
// is none, writes the one create makes (mode 0600, atomically) and reports
// it created. Secrets live in files of their own, outside the store: a
// copy of the store, a backup say, does not carry them.
func LoadOrCreateKeyFile(path string, create func() ([]byte, error)) (key []byte, created bool, err error) {
	key, err = os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		if key, err = create(); err != nil {
			return nil, false, err
		}
		_, err = WriteFileAtomic(path, func(w io.Writer) (int64, error) {
			n, err := w.Write(key)
			return int64(n), err
		})
		if err == nil {
			err = os.Chmod(path, 0o600)
		}
		created = true
	}
	if err != nil {
		return nil, false, fmt.Errorf("key file %s: %w", path, err)
	}
	return key, created, nil
}
