package main_test

// End-to-end tests of the admin commands of the CLI: `eudr admin
// create-key`, `eudr admin create-user` and `eudr admin reset-password`,
// refused while the appliance runs, and what they made working after a
// restart.

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/apitest"
)

func TestCLI_CreateKey(t *testing.T) {
	t.Parallel()
	p := startServer(t)

	t.Run("RunningAppliance", func(t *testing.T) {
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox")
		if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
			t.Errorf("create-key on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
		}
		if sandboxKeyPattern.MatchString(strings.TrimSpace(res.Stdout)) {
			t.Errorf("create-key on a running appliance printed a key")
		}
		apitest.Do(t, "GET", p.SandboxURL+"/readyz", nil, nil).WantStatus(t, http.StatusOK)
	})
	p.Stop(t)

	var sandboxKey, liveReadKey string
	t.Run("StoppedAppliance", func(t *testing.T) {
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox", "--name", "from-cli")
		sandboxKey = strings.TrimSpace(res.Stdout)
		if res.Code != 0 || !sandboxKeyPattern.MatchString(sandboxKey) || strings.Count(res.Stdout, "\n") != 1 {
			t.Fatalf("create-key --env sandbox: exit %d, stdout %q, stderr %q; want 0 and one sk_test_ line", res.Code, res.Stdout, res.Stderr)
		}
		if strings.Contains(res.Stderr, "no setting") {
			t.Errorf("create-key with settings only: warned %q", res.Stderr)
		}
		// A misspelt variable is ignored, with a warning on stderr naming
		// the setting it most likely meant.
		res = runCLI(t, p.DataDir, []string{"EUDR_SHUTDOWN_TIMOUT=5s"}, "admin", "create-key", "--org", "default", "--env", "production", "--scopes", "read")
		liveReadKey = strings.TrimSpace(res.Stdout)
		if res.Code != 0 || !productionKeyPattern.MatchString(liveReadKey) {
			t.Fatalf("create-key --env production: exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
		}
		if !strings.Contains(res.Stderr, "EUDR_SHUTDOWN_TIMOUT") || !strings.Contains(res.Stderr, "EUDR_SHUTDOWN_TIMEOUT") {
			t.Errorf("create-key with EUDR_SHUTDOWN_TIMOUT set: stderr %q, want a warning naming it and EUDR_SHUTDOWN_TIMEOUT", res.Stderr)
		}
	})
	t.Run("BadUsage", func(t *testing.T) {
		for _, args := range [][]string{
			{"admin", "create-key", "--env", "staging"},
			{"admin", "create-key"},
			{"admin", "create-key", "--env", "sandbox", "--scopes", "read,admin"},
			{"admin", "create-key", "--env", "sandbox", "--bogus"},
		} {
			if res := runCLI(t, p.DataDir, nil, args...); res.Code != 2 || res.Stdout != "" {
				t.Errorf("eudr %v: exit %d, stdout %q; want 2 and nothing", args, res.Code, res.Stdout)
			}
		}
		res := runCLI(t, p.DataDir, nil, "admin", "create-key", "--env", "sandbox", "--org", "nope")
		if res.Code != 1 || !strings.Contains(res.Stderr, "nope") {
			t.Errorf("unknown org: exit %d, stderr %q; want 1 and the org named", res.Code, res.Stderr)
		}
	})
	if sandboxKey == "" {
		t.FailNow()
	}

	p = p.Restart(t)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/health", apitest.WithKey(sandboxKey), nil).WantStatus(t, http.StatusOK)
	mustCreateSupplier(t, p.SandboxURL, sandboxKey, "cli-1", "CLI Ltd")
	apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/suppliers", apitest.WithKey(liveReadKey), nil).WantStatus(t, http.StatusOK)
	apitest.WantForbidden(t, postSupplier(t, p.ProductionURL, liveReadKey, apitest.NewIdemKey(), supplierBody("cli-2", "X")), "SCOPE_REQUIRED")
	apitest.WantForbidden(t, apitest.Do(t, "GET", p.ProductionURL+eudrAPI+"/health", apitest.WithKey(sandboxKey), nil), "WRONG_ENVIRONMENT")
	var list []map[string]any
	apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK).Decode(t, &list)
	names := map[string]bool{}
	for _, k := range list {
		names[fmt.Sprint(k["name"])] = true
		if k["prefix"] == sandboxKey[:12] && k["name"] != "from-cli" {
			t.Errorf("CLI key listed with name %v, want from-cli", k["name"])
		}
	}
	if !names["from-cli"] || len(list) != 2 {
		t.Errorf("listed keys %v, want the two CLI keys, one named from-cli", list)
	}
}

func TestCLI_ResetPassword(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	keys := enterpriseAPI + "/api-keys"
	before := apitest.Login(t, p.SandboxURL, "admin", p.AdminPassword)
	res := runCLI(t, p.DataDir, nil, "admin", "reset-password")
	if res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
		t.Errorf("reset-password on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
	}
	p.Stop(t)

	res = runCLI(t, p.DataDir, nil, "admin", "reset-password")
	password := strings.TrimSpace(res.Stdout)
	if res.Code != 0 || len(password) < 16 {
		t.Fatalf("reset-password: exit %d, stdout %q, stderr %q; want 0 and a password", res.Code, res.Stdout, res.Stderr)
	}
	if res := runCLI(t, p.DataDir, nil, "admin", "reset-password", "--user", "nobody"); res.Code != 1 || !strings.Contains(res.Stderr, "does not exist") {
		t.Errorf("reset-password --user nobody: exit %d, stderr %q; want 1 and \"does not exist\"", res.Code, res.Stderr)
	}

	q := p.Restart(t)
	after := apitest.Login(t, q.SandboxURL, "admin", password)
	r := apitest.Do(t, "POST", q.SandboxURL+enterpriseAPI+"/auth/login", nil, map[string]string{"username": "admin", "password": p.AdminPassword})
	apitest.WantLoginFailed(t, r)
	// The token of the old password ended with it; the new one works.
	apitest.WantUnauthorized(t, apitest.Do(t, "GET", q.SandboxURL+keys, apitest.Bearer(before), nil))
	apitest.Do(t, "GET", q.SandboxURL+keys, apitest.Bearer(after), nil).WantStatus(t, http.StatusOK)
}

// Users made by `eudr admin create-user` sign in after a restart with the
// password it printed, and have their role: a reader reads and manages
// nothing, an organisation's admin manages keys but takes no backup.
func TestCLI_CreateUser(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	if res := runCLI(t, p.DataDir, nil, "admin", "create-user", "--username", "rita", "--role", "reader"); res.Code == 0 || !strings.Contains(res.Stderr, "in use") {
		t.Errorf("create-user on a running appliance: exit %d, stderr %q; want non-zero and \"in use\"", res.Code, res.Stderr)
	}
	p.Stop(t)

	create := func(args ...string) string {
		t.Helper()
		res := runCLI(t, p.DataDir, nil, append([]string{"admin", "create-user"}, args...)...)
		password := strings.TrimSpace(res.Stdout)
		if res.Code != 0 || len(password) < 20 || strings.Count(res.Stdout, "\n") != 1 {
			t.Fatalf("create-user %v: exit %d, stdout %q, stderr %q; want 0 and one password line", args, res.Code, res.Stdout, res.Stderr)
		}
		return password
	}
	reader := create("--username", "rita", "--role", "reader")
	orgAdmin := create("--org", "acme", "--username", "oscar", "--role", "admin")
	for _, args := range [][]string{
		{"admin", "create-user", "--username", "x"},
		{"admin", "create-user", "--username", "x", "--role", "owner"},
		{"admin", "create-user", "--username", "x", "--role", "reader", "--appliance-admin"},
	} {
		if res := runCLI(t, p.DataDir, nil, args...); res.Code != 2 || res.Stdout != "" {
			t.Errorf("eudr %v: exit %d, stdout %q; want 2 and nothing", args, res.Code, res.Stdout)
		}
	}
	if res := runCLI(t, p.DataDir, nil, "admin", "create-user", "--username", "rita", "--role", "admin"); res.Code != 1 || !strings.Contains(res.Stderr, "rita") {
		t.Errorf("create-user of a taken name: exit %d, stderr %q; want 1 and the name", res.Code, res.Stderr)
	}

	p = p.Restart(t)
	readerToken := apitest.Login(t, p.SandboxURL, "rita", reader)
	apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/api-keys", apitest.Bearer(readerToken), nil), "ADMIN_REQUIRED")
	apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/users", apitest.Bearer(readerToken), nil), "ADMIN_REQUIRED")

	adminToken := apitest.Login(t, p.SandboxURL, "oscar", orgAdmin)
	apitest.WantForbidden(t, apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/admin/backup", apitest.Bearer(adminToken), nil), "APPLIANCE_ADMIN_REQUIRED")
	var users []map[string]any
	apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/users", apitest.Bearer(adminToken), nil).WantStatus(t, http.StatusOK).Decode(t, &users)
	if len(users) != 1 || users[0]["username"] != "oscar" || users[0]["org"] != "acme" {
		t.Errorf("acme's users: got %v, want oscar alone", users)
	}
	apitest.Do(t, "GET", p.SandboxURL+enterpriseAPI+"/users?org=*", apitest.Bearer(p.Login(t)), nil).WantStatus(t, http.StatusOK).Decode(t, &users)
	if len(users) != 3 || users[0]["username"] != "admin" || users[0]["applianceAdmin"] != true {
		t.Errorf("every user: got %v, want admin (appliance administrator), oscar and rita", users)
	}
}

// writeEmptyConfig writes a YAML config file that sets nothing.
func writeEmptyConfig(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "eudr.yaml")
	if err := os.WriteFile(path, []byte("# defaults and EUDR_ variables only\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every subcommand's --help prints its usage and flags on stdout and
// exits 0; an unknown flag is still a usage error (2).
func TestCLI_Help(t *testing.T) {
	t.Parallel()
	dir := tempDataDir(t)
	for _, c := range []struct {
		args  []string
		flags []string
		texts []string // what else the help must say
	}{
		{[]string{"serve", "--help"}, []string{"-config"}, nil},
		{[]string{"admin", "create-key", "--help"}, []string{"-env", "-org", "-scopes", "-name"}, nil},
		{[]string{"admin", "reset-password", "-h"}, []string{"-user"}, nil},
		{[]string{"admin", "create-user", "-h"}, []string{"-org", "-username", "-role", "-appliance-admin"}, nil},
		{[]string{"admin", "backup", "--help"}, []string{"-config"}, nil},
		// The formats FILE and --coverage FILE take.
		{[]string{"layers", "import", "--help"}, []string{"-kind", "-raster", "-coverage"},
			[]string{"GeoJSON FeatureCollection", "Polygon and MultiPolygon", "[longitude, latitude] in WGS84", "required for deforestation", "not with --raster"}},
		{[]string{"ledger", "verify", "--help"}, []string{"-key", "-checkpoint"}, nil},
		{[]string{"webhooks", "listen", "--help"}, []string{"-url", "-api-key", "-events", "-listen", "-forward-to", "-json"}, nil},
	} {
		res := runCLI(t, dir, nil, c.args...)
		if res.Code != 0 || !strings.Contains(res.Stdout, "Usage:\n  eudr "+strings.Join(c.args[:len(c.args)-1], " ")) || res.Stderr != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 0 and its usage", c.args, res.Code, res.Stdout, res.Stderr)
		}
		for _, f := range c.flags {
			if !strings.Contains(res.Stdout, "  "+f+" ") && !strings.Contains(res.Stdout, "  "+f+"\n") {
				t.Errorf("%v: flag %s not listed in %q", c.args, f, res.Stdout)
			}
		}
		for _, text := range c.texts {
			if !strings.Contains(strings.Join(strings.Fields(res.Stdout), " "), text) {
				t.Errorf("%v: %q not said in %q", c.args, text, res.Stdout)
			}
		}
	}
	if res := runCLI(t, dir, nil, "admin", "create-key", "--no-such-flag"); res.Code != 2 {
		t.Errorf("unknown flag: exit %d, want 2", res.Code)
	}
}
