package main_test

// End-to-end test of a second signal during the drain: `eudr serve` stops
// at once, and the store it leaves opens and has everything it accepted.

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

// secondSignalExitCode is the exit code of a second Ctrl-C: 128 + SIGINT.
const secondSignalExitCode = 130

// findLog returns the first JSON log line of p with message msg and the
// fields of want, or nil.
func findLog(p *serverProc, msg string, want map[string]any) map[string]any {
	for _, l := range p.Logs() {
		if l["message"] != msg {
			continue
		}
		ok := true
		for k, v := range want {
			ok = ok && fmt.Sprint(l[k]) == fmt.Sprint(v)
		}
		if ok {
			return l
		}
	}
	return nil
}

func TestServe_SecondSignalStopsAtOnce(t *testing.T) {
	t.Parallel()
	// A drain of up to ten minutes, which a slow job would take whole; a
	// misspelt variable, which is warned of.
	p := startServer(t, "EUDR_SHUTDOWN_TIMEOUT=10m", jobsLeaseEnv, "EUDR_SHUTDOWN_TIMOUT=5s")
	if l := findLog(p, "EUDR_ variables that are no setting are ignored", map[string]any{"level": "warn"}); l == nil ||
		fmt.Sprint(l["variables"]) != "[EUDR_SHUTDOWN_TIMOUT]" || fmt.Sprint(l["did_you_mean"]) != "map[EUDR_SHUTDOWN_TIMOUT:EUDR_SHUTDOWN_TIMEOUT]" {
		t.Errorf("no warning of EUDR_SHUTDOWN_TIMOUT suggesting EUDR_SHUTDOWN_TIMEOUT: got %v", l)
	}
	key := p.createKey(t, sandbox)
	mustCreateSupplier(t, p.SandboxURL, key, "sig-1", "Signal Ltd")
	jobID := queueJob(t, p, key, map[string]any{"items": 1000, "itemMillis": 1000}) // over 16 minutes
	waitUntil(t, 30*time.Second, "the job to be part way", func() bool {
		j := getJob(t, p.SandboxURL, key, jobID)
		return j.Status == "RUNNING" && j.Progress.Processed > 0
	})

	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, 10*time.Second, "the drain to begin", func() bool {
		return findLog(p, "draining: finishing in-flight requests and jobs; a second signal stops at once",
			map[string]any{"signal": "interrupt", "shutdown_timeout": "10m0s"}) != nil &&
			findLog(p, "job runner draining", map[string]any{"in_flight": 1}) != nil
	})
	if p.Exited() {
		t.Fatal("exited before the second signal, with a job running")
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	code, ok := p.Wait(stopTimeout)
	if !ok {
		t.Fatalf("still running %s after the second signal", stopTimeout)
	}
	if code != secondSignalExitCode {
		t.Errorf("exit code %d after a second SIGINT, want %d", code, secondSignalExitCode)
	}
	if findLog(p, "second signal: stopping at once; in-flight requests are cut off, unfinished jobs run again after their lease",
		map[string]any{"level": "warn", "signal": "interrupt", "exit_code": secondSignalExitCode}) == nil {
		t.Errorf("no log line of the second signal: %s", p.LogText())
	}
	if slices.ContainsFunc(p.LogLines(), func(l string) bool { return strings.Contains(l, `"message":"stopped"`) }) {
		t.Error("logged a clean stop after a second signal")
	}

	// The store is whole: the ledger checks out offline, and a restart
	// has the supplier and the job, which runs on once its lease lapses.
	if res := runCLI(t, p.DataDir, nil, "ledger", "verify"); res.Code != 0 {
		t.Errorf("ledger verify after the second signal: exit %d\nstdout: %s\nstderr: %s", res.Code, res.Stdout, res.Stderr)
	}
	p = p.Restart(t)
	apitest.Do(t, "GET", p.SandboxURL+eudrAPI+"/suppliers/sig-1", apitest.WithKey(key), nil).WantStatus(t, http.StatusOK)
	j := getJob(t, p.SandboxURL, key, jobID)
	if j.Status != "RUNNING" || j.Progress.Processed == 0 {
		t.Fatalf("the job after the restart: %s with %d items done, want RUNNING part way", j.Status, j.Progress.Processed)
	}
	waitUntil(t, jobsLease+30*time.Second, "the job to run on", func() bool {
		return getJob(t, p.SandboxURL, key, jobID).Progress.Processed > j.Progress.Processed
	})
}
