package main_test

// End-to-end test of examples/walkthrough.sh, the README's walk-through, run
// as a user runs it against the built binary.

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// walkthroughTimeout bounds one run of the script: a dozen jobs and the
// simulated EU system's validation delay, on a slow machine.
const walkthroughTimeout = 5 * time.Minute

// requireTools skips t when a tool the script needs is missing, except under
// CI (CI set), where .ci/run installs them and a missing one is a failure.
func requireTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (.ci/run installs it)", tool)
			}
			t.Skipf("%s is not installed", tool)
		}
	}
}

// runWalkthrough runs the script against p's sandbox with extra environment
// variables and returns its stdout, failing t when it does not exit 0.
func runWalkthrough(t *testing.T, p *serverProc, extra ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), walkthroughTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join("examples", "walkthrough.sh"))
	cmd.Env = append(baseEnv(), "EUDR_URL="+p.SandboxURL, "EUDR_DATA_DIR="+p.DataDir, "EUDR_BIN="+eudrBin)
	cmd.Env = append(cmd.Env, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("walkthrough.sh: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// checkWalkthroughOutput checks the outcomes each step of the script prints.
func checkWalkthroughOutput(t *testing.T, out string) {
	t.Helper()
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`"externalId":"F-1","polygonId":"pol_\w+_000000","eudrStatus":"HIGH_RISK","failureReason":"DEFORESTATION_AFTER_CUTOFF"`),
		regexp.MustCompile(`"externalId":"F-2","polygonId":"pol_\w+_000001","eudrStatus":"COMPLIANT","failureReason":null`),
		regexp.MustCompile(`"status":"VERIFIED","riskScore":25,"riskLevel":"NEGLIGIBLE"`),
		regexp.MustCompile(`"status":"LINKED","transactionHash":"[0-9a-f]{64}","ledgerIndex":\d+`),
		regexp.MustCompile(`\{"valid":true,"ledgerIndex":\d+,"steps":\["document","entry","inclusion","checkpoint","log"\]\}`),
		regexp.MustCompile(`"status":"VALIDATED","referenceNumber":"\w+","verificationNumber":"\w+","history":\["DRAFT","SUBMITTED","VALIDATED"\]`),
		regexp.MustCompile(`"status":"REVOKED"`),
		// eudr webhooks listen received and verified the sandbox's deliveries.
		regexp.MustCompile(`(?m)^Ready: listening on https://127\.0\.0\.1:\d+, subscription wh_\w+, events polygon\.verified,`),
		regexp.MustCompile(`(?m)^\{"eventType":"polygon\.verified","eventId":"evt_\w+","verified":true\}$`),
		regexp.MustCompile(`(?m)^\{"eventType":"dds\.validated","eventId":"evt_\w+","verified":true\}$`),
		regexp.MustCompile(`(?m)^Done: plot pol_\w+_000001, batch bat_\w+, shipment SHP-[\w-]+, statement dds_\w+\.$`),
	} {
		if !want.MatchString(out) {
			t.Errorf("the output has no match for %s:\n%s", want, out)
		}
	}
	for i := 1; i <= 14; i++ {
		if !strings.Contains(out, "\n== "+strconv.Itoa(i)+". ") {
			t.Errorf("the output has no step %d:\n%s", i, out)
		}
	}
}

// The walk-through works on a store whose admin password was generated (read
// from initial-admin-password), and runs again on the same appliance.
func TestWalkthroughScript_GeneratedPassword(t *testing.T) {
	requireTools(t, "bash", "curl", "jq")
	p := startServer(t, "EUDR_ADMIN_PASSWORD=")
	if _, err := os.Stat(filepath.Join(p.DataDir, "initial-admin-password")); err != nil {
		t.Fatalf("no initial-admin-password: %v", err)
	}
	checkWalkthroughOutput(t, runWalkthrough(t, p))
	checkWalkthroughOutput(t, runWalkthrough(t, p))
	checkNoWebhooksLeft(t, p)
}

// checkNoWebhooksLeft checks that the walk-through's eudr webhooks listen
// deleted its subscription when the script stopped it.
func checkNoWebhooksLeft(t *testing.T, p *serverProc) {
	t.Helper()
	var subs []webhookReg
	apitest.Do(t, "GET", webhooksURL(p.SandboxURL), apitest.WithKey(p.CreateKey(t, sandbox).Key), nil).WantStatus(t, http.StatusOK).Decode(t, &subs)
	if len(subs) != 0 {
		t.Errorf("subscriptions are left after the walk-through: %+v", subs)
	}
}

// The walk-through works on a store whose admin password was set with
// EUDR_ADMIN_PASSWORD (no initial-admin-password file), and a wrong password
// stops it at the first step with the appliance's INVALID_CREDENTIALS.
func TestWalkthroughScript_PasswordFromEnvironment(t *testing.T) {
	requireTools(t, "bash", "curl", "jq")
	p := startServer(t)
	if _, err := os.Stat(filepath.Join(p.DataDir, "initial-admin-password")); !os.IsNotExist(err) {
		t.Fatalf("initial-admin-password exists (err %v) though EUDR_ADMIN_PASSWORD was set", err)
	}
	checkWalkthroughOutput(t, runWalkthrough(t, p, "EUDR_ADMIN_PASSWORD="+testAdminPassword))

	cmd := exec.Command("bash", filepath.Join("examples", "walkthrough.sh"))
	cmd.Env = append(baseEnv(), "EUDR_URL="+p.SandboxURL, "EUDR_DATA_DIR="+p.DataDir, "EUDR_ADMIN_PASSWORD=wrong")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf("with a wrong password: exit code %d (%v), want 1\nstdout:\n%s", code, err, stdout.String())
	}
	if !strings.Contains(stderr.String(), "HTTP 401") || !strings.Contains(stderr.String(), `"INVALID_CREDENTIALS"`) {
		t.Errorf("with a wrong password, stderr does not show the 401 and its detail:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), "== 2.") {
		t.Errorf("the script went on after the failed login:\n%s", stdout.String())
	}
}
