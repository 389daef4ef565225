package dds_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/eudr/eudr/server/dds"
)

func TestLoadSealer(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "eu-credentials.key")
	s, err := dds.LoadSealer(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
		t.Fatalf("key file: %v %v, want 32 bytes, mode 0600", fi, err)
	}
	sealed := s.Seal([]byte("s3cret"), "org/production")
	again, err := dds.LoadSealer(path)
	if err != nil {
		t.Fatal(err)
	}
	if pt, err := again.Open(sealed, "org/production"); err != nil || string(pt) != "s3cret" {
		t.Errorf("opened with the key file loaded again: %q, %v", pt, err)
	}
	if sealed2 := s.Seal([]byte("s3cret"), "org/production"); string(sealed2) == string(sealed) {
		t.Errorf("two seals of the same secret are equal: the nonce is not random")
	}

	other, err := dds.LoadSealer(filepath.Join(dir, "other.key"))
	if err != nil {
		t.Fatal(err)
	}
	tampered := append([]byte{}, sealed...)
	tampered[len(tampered)-1] ^= 1
	for name, open := range map[string]func() ([]byte, error){
		"OtherContext": func() ([]byte, error) { return s.Open(sealed, "org/sandbox") },
		"OtherKey":     func() ([]byte, error) { return other.Open(sealed, "org/production") },
		"Tampered":     func() ([]byte, error) { return s.Open(tampered, "org/production") },
		"TooShort":     func() ([]byte, error) { return s.Open(sealed[:5], "org/production") },
	} {
		if pt, err := open(); err == nil {
			t.Errorf("%s: opened as %q, want an error", name, pt)
		}
	}

	short := filepath.Join(dir, "short.key")
	if err := os.WriteFile(short, make([]byte, 16), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := dds.LoadSealer(short); err == nil {
		t.Errorf("a 16-byte key file was taken")
	}
}
