package main_test

// End-to-end tests of `eudr ledger verify` on a stopped store, then on one
// tampered with bbolt directly.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/storage"
)

// ledOutput is a CLI run's stdout and stderr together.
func ledOutput(r cliResult) string { return r.Stdout + r.Stderr }

// ledTamper opens the stopped store with bbolt itself and runs fn on the
// sandbox log's entries and checkpoints buckets in one write transaction.
func ledTamper(t testing.TB, dataDir string, fn func(entries, checkpoints *bolt.Bucket) error) {
	t.Helper()
	db, err := bolt.Open(filepath.Join(dataDir, storage.FileName), 0o600, &bolt.Options{Timeout: 2 * time.Second})
	if err != nil {
		t.Fatalf("open the store with bbolt: %v", err)
	}
	defer db.Close()
	err = db.Update(func(tx *bolt.Tx) error {
		root := tx.Bucket([]byte("ledger"))
		if root == nil {
			return fmt.Errorf("no ledger bucket")
		}
		log := root.Bucket([]byte(ledSandboxLog))
		if log == nil {
			return fmt.Errorf("no bucket ledger/%s", ledSandboxLog)
		}
		entries, cps := log.Bucket([]byte("entries")), log.Bucket([]byte("checkpoints"))
		if entries == nil || cps == nil {
			return fmt.Errorf("no entries or checkpoints bucket in ledger/%s", ledSandboxLog)
		}
		return fn(entries, cps)
	})
	if err != nil {
		t.Fatalf("tamper with the store: %v", err)
	}
}

func ledKey(i int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(i)) }

// ledVerifyOK runs `eudr ledger verify` and wants exit 0 with the sandbox
// log ok with entries entries.
func ledVerifyOK(t testing.TB, dataDir string, entries int) {
	t.Helper()
	r := runCLI(t, dataDir, nil, "ledger", "verify")
	if r.Code != 0 {
		t.Fatalf("eudr ledger verify: exit %d\nstdout: %s\nstderr: %s", r.Code, r.Stdout, r.Stderr)
	}
	ledCheckOKLine(t, r.Stdout, entries)
}

func ledCheckOKLine(t testing.TB, stdout string, entries int) {
	t.Helper()
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, ledSandboxLog+":") {
			if !strings.Contains(line, "ok") || !regexp.MustCompile(`\b`+strconv.Itoa(entries)+` entries`).MatchString(line) {
				t.Errorf("eudr ledger verify: %q, want ok with %d entries", line, entries)
			}
			return
		}
	}
	t.Errorf("eudr ledger verify says nothing of %s:\n%s", ledSandboxLog, stdout)
}

// ledVerifyBad runs `eudr ledger verify` and wants a non-zero exit whose
// output names what (e.g. "entry 2:").
func ledVerifyBad(t testing.TB, dataDir, what string) {
	t.Helper()
	r := runCLI(t, dataDir, nil, "ledger", "verify")
	out := ledOutput(r)
	if r.Code == 0 || !strings.Contains(out, what) || !strings.Contains(out, ledSandboxLog) {
		t.Errorf("eudr ledger verify on a tampered store: exit %d, want non-zero naming %q in %s\nstdout: %s\nstderr: %s",
			r.Code, what, ledSandboxLog, r.Stdout, r.Stderr)
	}
	if strings.Contains(r.Stdout, ledSandboxLog+": ok") {
		t.Errorf("eudr ledger verify calls the tampered log ok: %s", r.Stdout)
	}
}

func TestLedger_VerifyCLI(t *testing.T) {
	t.Parallel()
	p := startServer(t, noRateLimit...)
	key := p.createKey(t, sandbox)
	f := ledFlow(t, p, key)
	var cp ledCheckpoint
	ledGet(t, p.SandboxURL, key, "/ledger/checkpoint", &cp)
	if cp.TreeSize != 4 || len(f.linkJob.LedgerProofs) != 1 || f.linkJob.LedgerProofs[0].Index != 3 {
		t.Fatalf("after the flow: checkpoint %+v, link proof %+v; want 4 entries, the link at 3", cp, f.linkJob.LedgerProofs)
	}
	pubKey := string(ledGet(t, p.SandboxURL, key, "/ledger/public-key", nil).Body)

	// The running appliance holds the store.
	r := runCLI(t, p.DataDir, nil, "ledger", "verify")
	if r.Code == 0 || !strings.Contains(r.Stderr, "in use") {
		t.Errorf("eudr ledger verify while serving: exit %d, stderr %q; want non-zero and \"in use\"", r.Code, r.Stderr)
	}
	p.Stop(t)

	// Stopped: every log checks.
	ledVerifyOK(t, p.DataDir, 4)

	// Restarted: the same signing key and log; a new link chains on.
	p = p.Restart(t)
	if got := string(ledGet(t, p.SandboxURL, key, "/ledger/public-key", nil).Body); got != pubKey {
		t.Errorf("public key after a restart: %s, before: %s", got, pubKey)
	}
	var cp2 ledCheckpoint
	ledGet(t, p.SandboxURL, key, "/ledger/checkpoint", &cp2)
	if cp2 != cp {
		t.Errorf("checkpoint after a restart: %+v, before: %+v", cp2, cp)
	}
	batch2 := ledVerified(t, p.SandboxURL, key, "V-LED", f.polygonIDs[0])
	acc := ledAccepted(t, ledLink(t, p.SandboxURL, key, batch2, "SHP-LED-2"), "linkId", "jobId")
	if j := ledWaitJob(t, p.SandboxURL, key, acc["jobId"], ledLinkJobType); j.Status != "COMPLETED" || len(j.LedgerProofs) != 1 || j.LedgerProofs[0].Index != 4 {
		t.Fatalf("link after a restart: %+v", j)
	}
	if n := len(ledWalk(t, p.SandboxURL, key)); n != 5 {
		t.Errorf("the log holds %d entries after the second link, want 5", n)
	}
	p.Stop(t)
	ledVerifyOK(t, p.DataDir, 5)

	// --config works the same (the data dir from the file, no EUDR_DATA_DIR).
	cfg := filepath.Join(t.TempDir(), "eudr.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+strconv.Quote(p.DataDir)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cliTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, eudrBin, "ledger", "verify", "--config", cfg)
	cmd.Env = baseEnv()
	out, err := cmd.Output()
	if err != nil {
		t.Errorf("eudr ledger verify --config: %v\nstdout: %s", err, out)
	}
	ledCheckOKLine(t, string(out), 5)

	// A checkpoint kept from before the second link still matches the log;
	// another verifier key does not sign it.
	// It is taken in every form a user may have kept it: the bare note
	// (as jq -j or jq -r gives it, or without its final newline), the JSON
	// of GET /ledger/checkpoint (as an archive's checkpoint.json holds it
	// too), an evidence document with its proof.
	cpJSON, _ := json.Marshal(cp)
	noteJSON, _ := json.Marshal(cp.Note)
	for name, content := range map[string]string{
		"checkpoint-4.note":      cp.Note,
		"checkpoint-4-jq-r.note": cp.Note + "\n",
		"checkpoint-4-cut.note":  strings.TrimSuffix(cp.Note, "\n"),
		"checkpoint-4.json":      string(cpJSON),
		"evidence.json":          `{"polygonId":"pol_x","ledger":{"index":0,"checkpoint":` + string(noteJSON) + `}}`,
	} {
		cpFile := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(cpFile, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := runCLI(t, p.DataDir, nil, "ledger", "verify", "--checkpoint", cpFile); r.Code != 0 || !strings.Contains(r.Stdout, "consistent with checkpoint") {
			t.Errorf("verify --checkpoint %s: exit %d\nstdout %s\nstderr %s", name, r.Code, r.Stdout, r.Stderr)
		}
	}
	other, err := ledger.GenerateKey("eudr-appliance")
	if err != nil {
		t.Fatal(err)
	}
	if r := runCLI(t, p.DataDir, nil, "ledger", "verify", "--key", other.Verifier); r.Code == 0 || !strings.Contains(r.Stdout+r.Stderr, "signature") {
		t.Errorf("verify --key OTHER: exit %d\nstdout %s\nstderr %s", r.Code, r.Stdout, r.Stderr)
	}
	// A data dir without a store is an error, and verify creates nothing.
	empty := filepath.Join(t.TempDir(), "no-appliance")
	if r := runCLI(t, empty, nil, "ledger", "verify"); r.Code == 0 {
		t.Errorf("verify of an empty data dir: exit 0\nstdout %s", r.Stdout)
	}
	if _, err := os.Stat(empty); !os.IsNotExist(err) {
		t.Errorf("verify of a missing data dir created it: %v", err)
	}

	// (a) One digit changed inside entry 1 (still canonical JSON).
	var orig1 []byte
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error {
		orig1 = bytes.Clone(entries.Get(ledKey(1)))
		i := bytes.Index(orig1, []byte(`"evidenceSha256":"`))
		if i < 0 {
			return fmt.Errorf("entry 1 has no evidenceSha256: %s", orig1)
		}
		v := bytes.Clone(orig1)
		j := i + len(`"evidenceSha256":"`)
		for v[j] < '0' || v[j] > '9' {
			j++
		}
		v[j] = '0' + (v[j]-'0'+1)%10
		if !json.Valid(v) {
			return fmt.Errorf("the changed entry is not JSON: %s", v)
		}
		return entries.Put(ledKey(1), v)
	})
	ledVerifyBad(t, p.DataDir, "entry 1:")
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error { return entries.Put(ledKey(1), orig1) })
	ledVerifyOK(t, p.DataDir, 5)

	// (b) Entries 1 and 3 swapped.
	swap := func(entries, _ *bolt.Bucket) error {
		e1, e3 := bytes.Clone(entries.Get(ledKey(1))), bytes.Clone(entries.Get(ledKey(3)))
		if err := entries.Put(ledKey(1), e3); err != nil {
			return err
		}
		return entries.Put(ledKey(3), e1)
	}
	ledTamper(t, p.DataDir, swap)
	ledVerifyBad(t, p.DataDir, "entry 1:")
	ledTamper(t, p.DataDir, swap)
	ledVerifyOK(t, p.DataDir, 5)

	// (c) The newest checkpoint replaced by one signed by another key.
	var origCP []byte
	ledTamper(t, p.DataDir, func(_, cps *bolt.Bucket) error {
		k, v := cps.Cursor().Last()
		if k == nil || binary.BigEndian.Uint64(k) != 5 {
			return fmt.Errorf("the newest checkpoint is for %x, want tree size 5", k)
		}
		origCP = bytes.Clone(v)
		return cps.Put(bytes.Clone(k), ledResign(t, v))
	})
	ledVerifyBad(t, p.DataDir, "checkpoint of size 5")
	ledTamper(t, p.DataDir, func(_, cps *bolt.Bucket) error { return cps.Put(ledKey(5), origCP) })
	ledVerifyOK(t, p.DataDir, 5)

	// (d) The newest entry removed: the checkpoint signs more than the log holds.
	ledTamper(t, p.DataDir, func(entries, _ *bolt.Bucket) error { return entries.Delete(ledKey(4)) })
	ledVerifyBad(t, p.DataDir, "checkpoint of size 5")
}
