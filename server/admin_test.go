package server

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/storage"
)

// TestOpenAdmin_OpensOnlyTheStore: an admin command (eudr admin
// create-key) on a stopped data dir with a raster layer and EU
// credentials opens the store and the accounts, and nothing else: no
// layer is loaded (the raster's tiles are gone, which loading would
// report), no EU client or sealing key is made, and the ledger's key is
// not read (it is gone too, which stops a full start).
func TestOpenAdmin_OpensOnlyTheStore(t *testing.T) {
	dir := t.TempDir()
	cfg := mustLoadConfig(t, dir)
	clock := newFakeClock()
	a, err := New(cfg, Options{Version: "test", Logger: zerolog.Nop(), Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	ta := &testApp{App: a, tb: t, clock: clock, dir: dir}
	writeLossTiles(t, filepath.Join(dir, "rasters", "hansen"))
	ta.importRaster(t, "imp-1", rasterBody("loss-year", "hansen"))
	_, live := ta.newKey(storage.Production)
	if w := putCredentials(ta, live, "https://10.1.2.3/tracesnt"); w.Code != http.StatusOK {
		t.Fatalf("PUT credentials: %d %s", w.Code, w.Body)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}

	// Take away what a full start needs and an admin command must not touch.
	euKey, ledgerKey := cfg.EUSystem.KeyPath(dir), cfg.Ledger.KeyPath(dir)
	for _, p := range []string{filepath.Join(dir, "rasters"), euKey, ledgerKey} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
	if full, err := New(cfg, Options{Version: "test", Logger: zerolog.Nop(), Now: clock.Now}); err == nil {
		full.Close()
		t.Fatal("a full start without the ledger's key file succeeded; the test shows nothing")
	}

	var logs bytes.Buffer
	admin, err := OpenAdmin(cfg, Options{Version: "test", Logger: zerolog.New(&logs).Level(zerolog.DebugLevel), Now: clock.Now})
	if err != nil {
		t.Fatalf("OpenAdmin: %v", err)
	}
	kr, err := account.ParseKeyRequest(defaultOrg, "cli", string(storage.Sandbox), nil)
	if err != nil {
		t.Fatal(err)
	}
	key, value, err := admin.Accounts().IssueKey(context.Background(), kr)
	if err != nil || key.Env != storage.Sandbox || value == "" {
		t.Fatalf("IssueKey: %+v %q %v", key, value, err)
	}
	if err := admin.Close(); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("the admin open logged (it loaded something it need not): %s", logs.String())
	}
	for _, p := range []string{euKey, ledgerKey} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: %v, want it left absent (the admin open makes no EU client and opens no ledger)", p, err)
		}
	}
}
