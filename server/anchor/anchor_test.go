package anchor_test

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

var tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}

func openStore(tb testing.TB, dir string) *storage.DB {
	tb.Helper()
	db, err := storage.Open(dir, storage.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	return db
}

func openLedger(db *storage.DB, keyFile string) (*anchor.Ledger, error) {
	var l *anchor.Ledger
	err := db.Update(context.Background(), func(tx *storage.Tx) error {
		var err error
		l, err = anchor.Open(tx, anchor.Options{KeyFile: keyFile, KeyName: "test.example", Logger: zerolog.Nop()})
		return err
	})
	return l, err
}

func TestOpen_KeyFile(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir)
	keyFile := filepath.Join(dir, "ledger.key")
	l, err := openLedger(db, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file: %v %v, want it made with mode 0600", fi, err)
	}
	if l.KeyName() != "test.example" || !strings.HasPrefix(l.VerifierKey(), "test.example+") {
		t.Errorf("key %s / %s, want one named test.example", l.KeyName(), l.VerifierKey())
	}
	again, err := openLedger(db, keyFile)
	if err != nil || again.VerifierKey() != l.VerifierKey() {
		t.Fatalf("reopen: %v, key %s, want the same key %s", err, again.VerifierKey(), l.VerifierKey())
	}

	t.Run("Replaced", func(t *testing.T) {
		other := filepath.Join(t.TempDir(), "other.key")
		if _, err := openLedger(openStore(t, t.TempDir()), other); err != nil {
			t.Fatal(err)
		}
		if _, err := openLedger(db, other); err == nil {
			t.Error("a key file that does not match the store's verifier key was accepted")
		}
	})
	t.Run("Missing", func(t *testing.T) {
		if _, err := openLedger(db, filepath.Join(t.TempDir(), "gone.key")); err == nil || !strings.Contains(err.Error(), "restore its key file") {
			t.Errorf("missing key file of a store with a bound key: got %v, want an error saying to restore it", err)
		}
	})
}

func TestLedger_AppendSignProve(t *testing.T) {
	dir := t.TempDir()
	db := openStore(t, dir)
	l, err := openLedger(db, filepath.Join(dir, "ledger.key"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	err = db.View(ctx, func(tx *storage.Tx) error {
		_, err := anchor.Latest(tx, tenant)
		return err
	})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != apierr.StatusNotFound {
		t.Errorf("Latest of an empty log: got %v, want a 404", err)
	}

	var entries []ledger.Entry
	err = db.Update(ctx, func(tx *storage.Tx) error {
		for _, id := range []string{"lnk_1", "lnk_2", "lnk_3"} {
			en, err := anchor.Append(tx, tenant, anchor.ShipmentEntry{Type: anchor.EntryShipmentLinked, LinkID: id})
			if err != nil {
				return err
			}
			entries = append(entries, en)
		}
		_, err := l.Sign(tx, tenant)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx *storage.Tx) error {
		cp, err := anchor.Latest(tx, tenant)
		if err != nil {
			return err
		}
		if cp.Size != 3 || cp.Origin != l.Origin(tenant) {
			t.Errorf("checkpoint of %d entries of %s, want 3 of %s", cp.Size, cp.Origin, l.Origin(tenant))
		}
		proofs, pcp, err := anchor.Prove(tx, tenant, []int64{0, 2})
		if err != nil {
			return err
		}
		for k, i := range []int64{0, 2} {
			p := proofs[k]
			hashes := make(tlog.RecordProof, len(p.Proof))
			for j, s := range p.Proof {
				b, _ := hex.DecodeString(s)
				copy(hashes[j][:], b)
			}
			if err := tlog.CheckRecord(hashes, pcp.Size, pcp.Root, i, entries[i].LeafHash); err != nil || p.TransactionHash != entries[i].TransactionHash() {
				t.Errorf("proof of entry %d: %v (hash %s, want %s)", i, err, p.TransactionHash, entries[i].TransactionHash())
			}
		}
		var out bytes.Buffer
		if err := anchor.Verify(tx, "", nil, &out); err != nil || !strings.Contains(out.String(), "ok, 3 entries, 1 checkpoints") {
			t.Errorf("Verify: %v\n%s", err, out.String())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestCheckpointNote(t *testing.T) {
	const note = "bench.test/default/sandbox\n3\nAAAA\n\n— bench.test abcd\n"
	quoted, _ := json.Marshal(note)
	for name, in := range map[string]string{
		"Bare":              note,
		"NoFinalNewline":    strings.TrimSuffix(note, "\n"),
		"ExtraNewline":      note + "\n", // jq -r .note
		"CheckpointJSON":    `{"treeSize":3,"rootHash":"ab","note":` + string(quoted) + `}`,
		"EvidenceDocument":  `{"polygonId":"pol_1","ledger":{"index":2,"checkpoint":` + string(quoted) + `}}`,
		"IndentedWithSpace": "\n  " + `{"note": ` + string(quoted) + "}\n",
	} {
		got, err := anchor.CheckpointNote([]byte(in))
		if err != nil || string(got) != note {
			t.Errorf("%s: got %q, %v; want the note", name, got, err)
		}
	}
	for name, in := range map[string]string{
		"OtherJSON":  `{"treeSize":3}`,
		"BrokenJSON": `{"note":`,
	} {
		if _, err := anchor.CheckpointNote([]byte(in)); err == nil {
			t.Errorf("%s: got no error", name)
		}
	}
}
