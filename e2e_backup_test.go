package main_test

// End-to-end tests of backups: `eudr admin backup` of a running appliance
// and of a stopped data dir, GET /admin/backup, and restores of each as
// docs/operations.md says.

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

// restoreBackup starts a server on a new data dir holding backup as eudr.db.
// restoreBackup restores as docs/operations.md says: the store
// from the backup, and the key files (kept outside the store, backed up on
// their own) from the data dir keysFrom.
func restoreBackup(t *testing.T, backup, keysFrom string) *serverProc {
	t.Helper()
	data, err := os.ReadFile(backup)
	if err != nil {
		t.Fatalf("read backup: %v", err)
	}
	dir := tempDataDir(t)
	if err := os.WriteFile(filepath.Join(dir, "eudr.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"ledger-signing.key", "eu-credentials.key"} {
		key, err := os.ReadFile(filepath.Join(keysFrom, name))
		if err != nil {
			t.Fatalf("key file: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), key, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return startServerIn(t, dir)
}

func TestBackup_HotAndCold(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	sk := p.CreateKey(t, sandbox)
	pk := p.CreateKey(t, production)
	before := []supplier{
		mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-1", "Before One Ltd"),
		mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-2", "Before Two Ltd"),
		mustCreateSupplier(t, p.ProductionURL, pk.Key, "bk-live", "Before Live Ltd"),
	}
	out := tempDataDir(t)

	hot := filepath.Join(out, "hot.db")
	res := runCLI(t, p.DataDir, nil, "admin", "backup", hot)
	if res.Code != 0 || !strings.Contains(res.Stdout, "from the running appliance") {
		t.Fatalf("backup while running: exit %d, stdout %q, stderr %q; want 0 and \"from the running appliance\"", res.Code, res.Stdout, res.Stderr)
	}
	after := mustCreateSupplier(t, p.SandboxURL, sk.Key, "bk-3", "After Ltd")
	// The appliance keeps serving during and after the backup.
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)

	t.Run("RestoreHot", func(t *testing.T) {
		r := restoreBackup(t, hot, p.DataDir)
		for _, s := range before {
			base, key := r.SandboxURL, sk.Key
			if s.ERPVendorID == "bk-live" {
				base, key = r.ProductionURL, pk.Key
			}
			var got supplier
			apitest.Do(t, "GET", base+eudrAPI+"/suppliers/"+s.ERPVendorID, apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
			if got != s {
				t.Errorf("restored %+v, want %+v", got, s)
			}
		}
		apitest.WantError(t, apitest.Do(t, "GET", r.SandboxURL+eudrAPI+"/suppliers/"+after.ERPVendorID, apitest.WithKey(sk.Key), nil), http.StatusNotFound, "NOT_FOUND")
		apitest.Login(t, r.SandboxURL, "admin", testAdminPassword)
		r.Stop(t)
	})
	t.Run("ThroughTheAPI", func(t *testing.T) {
		apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", apitest.WithKey(sk.Key), nil), "JWT_REQUIRED")
		apitest.WantUnauthorized(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", nil, nil), "MISSING_LOGIN_TOKEN")
		r := apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK)
		if ct := r.Header.Get("Content-Type"); ct != "application/octet-stream" {
			t.Errorf("backup Content-Type %q, want application/octet-stream", ct)
		}
		if cl := r.Header.Get("Content-Length"); cl != strconv.Itoa(len(r.Body)) {
			t.Errorf("backup Content-Length %q, body %d bytes", cl, len(r.Body))
		}
		f := filepath.Join(out, "api.db")
		if err := os.WriteFile(f, r.Body, 0o600); err != nil {
			t.Fatal(err)
		}
		rs := restoreBackup(t, f, p.DataDir)
		apitest.Do(t, "GET", rs.SandboxURL+eudrAPI+"/suppliers/"+after.ERPVendorID, apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK)
		rs.Stop(t)
	})
	t.Run("BackupWithoutFile", func(t *testing.T) {
		if res := runCLI(t, p.DataDir, nil, "admin", "backup"); res.Code != 2 {
			t.Errorf("backup without a file: exit %d, want 2", res.Code)
		}
	})

	p.Stop(t)
	// Flags may follow the argument.
	cold := filepath.Join(out, "cold.db")
	res = runCLI(t, p.DataDir, nil, "admin", "backup", cold, "--config", writeEmptyConfig(t))
	if res.Code != 0 || !strings.Contains(res.Stdout, "from the stopped data dir") {
		t.Fatalf("backup while stopped: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
	}
	t.Run("RestoreCold", func(t *testing.T) {
		r := restoreBackup(t, cold, p.DataDir)
		for _, s := range append(before[:2:2], after) {
			var got supplier
			apitest.Do(t, "GET", r.SandboxURL+eudrAPI+"/suppliers/"+s.ERPVendorID, apitest.WithKey(sk.Key), nil).WantStatus(t, http.StatusOK).Decode(t, &got)
			if got != s {
				t.Errorf("restored %+v, want %+v", got, s)
			}
		}
		r.Stop(t)
	})
	t.Run("NoKeyValuesInBackups", func(t *testing.T) {
		for _, f := range []string{hot, cold} {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			fi, _ := os.Stat(f)
			if fi.Mode().Perm() != 0o600 {
				t.Errorf("%s has mode %o, want 0600", f, fi.Mode().Perm())
			}
			for _, k := range []apitest.APIKey{sk, pk} {
				if bytes.Contains(data, []byte(k.Key)) {
					t.Errorf("%s contains the value of %s", f, k.KeyID)
				}
			}
		}
	})
	t.Run("MissingDataDir", func(t *testing.T) {
		res := runCLI(t, filepath.Join(out, "nothing-here"), nil, "admin", "backup", filepath.Join(out, "x.db"))
		if res.Code != 1 {
			t.Errorf("backup of a missing store: exit %d, want 1; stderr %q", res.Code, res.Stderr)
		}
	})
}
