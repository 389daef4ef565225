package dds_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"reflect"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/storage"
)

// FindProved proves each change of a statement's history in one
// checkpoint, the first that covers the last change, so that the answer
// stays the same however the log grows; the entries name the statement
// and the SHA-256 of its stored statement.
func TestService_FindProved(t *testing.T) {
	r := newRig(t, nil)
	v := r.validated(t, "bat_1")
	ctx := context.Background()
	first, err := r.s.FindProved(ctx, sandbox, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Entries) != len(v.History) || first.Checkpoint == "" {
		t.Fatalf("%d entries for %d changes, checkpoint %q", len(first.Entries), len(v.History), first.Checkpoint)
	}
	sum := sha256.Sum256(v.Statement)
	last := first.Entries[len(first.Entries)-1]
	for i, e := range first.Entries {
		data, err := base64.StdEncoding.DecodeString(e.Data)
		var entry anchor.DDSEntry
		if err == nil {
			err = json.Unmarshal(data, &entry)
		}
		if err != nil || e.Index != *v.History[i].LedgerIndex || entry.DDSID != v.ID || entry.Status != v.History[i].Status ||
			entry.StatementSHA256 != hex.EncodeToString(sum[:]) || e.Checkpoint != first.Checkpoint || e.TreeSize != last.Index+1 {
			t.Errorf("entry %d: %+v (%s, %v)", i, e, data, err)
			continue
		}
		root, _ := hex.DecodeString(e.RootHash)
		var proof tlog.RecordProof
		for _, h := range e.Proof {
			b, _ := hex.DecodeString(h)
			proof = append(proof, tlog.Hash(b))
		}
		if err := tlog.CheckRecord(proof, e.TreeSize, tlog.Hash(root), e.Index, tlog.RecordHash(data)); err != nil {
			t.Errorf("entry %d is not proved in its tree: %v", e.Index, err)
		}
	}

	// The log grows: the same answer.
	r.validated(t, "bat_2")
	again, err := r.s.FindProved(ctx, sandbox, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Entries, first.Entries) || again.Checkpoint != first.Checkpoint {
		t.Errorf("after the log grew, the proofs changed: %+v, were %+v", again.Entries, first.Entries)
	}
	if _, err := r.s.FindProved(ctx, sandbox, "dds_nope"); !isNotFound(err) {
		t.Errorf("an unknown statement: %v, want not found", err)
	}
	if _, err := r.s.FindProved(ctx, storage.Tenant{Org: "other", Env: storage.Sandbox}, v.ID); !isNotFound(err) {
		t.Errorf("another organisation's statement: %v, want not found", err)
	}
}
