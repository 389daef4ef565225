package server

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

// TestLedger_KeyFile: the signing key is made on first start in its own
// file; a restart keeps it; a missing or different key file stops the
// start rather than sign the store's log with a new key.
func TestLedger_KeyFile(t *testing.T) {
	dir := t.TempDir()
	ta := newTestAppAt(t, dir, newFakeClock())
	verifier := ta.ledger.VerifierKey()
	path := filepath.Join(dir, "ledger-signing.key")
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v, %v", fi, err)
	}
	if raw, _ := os.ReadFile(filepath.Join(dir, "eudr.db")); strings.Contains(string(raw), "PRIVATE+KEY") {
		t.Error("the store holds the private key")
	}
	if err := ta.Close(); err != nil {
		t.Fatal(err)
	}
	open := func() (*App, error) {
		return New(mustLoadConfig(t, dir), Options{Version: "test", Logger: zerolog.New(io.Discard)})
	}
	a, err := open()
	if err != nil || a.ledger.VerifierKey() != verifier {
		t.Fatalf("restart: %v (key %v)", err, a)
	}
	a.Close()

	saved, _ := os.ReadFile(path)
	os.Remove(path)
	if a, err := open(); err == nil || !strings.Contains(err.Error(), "restore its key file") {
		if a != nil {
			a.Close()
		}
		t.Errorf("start without the key file: %v", err)
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a new key file was made for a store bound to another key")
	}
	other := newTestApp(t) // another appliance's key file
	otherKey, _ := os.ReadFile(filepath.Join(other.dir, "ledger-signing.key"))
	os.WriteFile(path, otherKey, 0o600)
	if a, err := open(); err == nil || !strings.Contains(err.Error(), "signed with key") {
		if a != nil {
			a.Close()
		}
		t.Errorf("start with another key file: %v", err)
	}
	os.WriteFile(path, saved, 0o600)
	if a, err := open(); err != nil {
		t.Errorf("start with the key file restored: %v", err)
	} else {
		a.Close()
	}
}
