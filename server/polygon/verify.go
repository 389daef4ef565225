package polygon

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// The steps of an evidence check, in the order Verify makes them (the
// OpenAPI document lists them too).
const (
	StepDocument   = "document"   // the document hashes to the entry's evidenceSha256
	StepEntry      = "entry"      // the entry's bytes hash to transactionHash
	StepInclusion  = "inclusion"  // the proof puts the entry in the tree with rootHash
	StepCheckpoint = "checkpoint" // the checkpoint is signed by this appliance over that tree
	StepLog        = "log"        // the appliance's log holds the entry and that tree
)

// Verification is what Verify found of a document that checks.
type Verification struct {
	LedgerIndex     int64
	TransactionHash string
	TreeSize        int64
	RootHash        string
	// EvidenceSHA256 is the hash of the document without its ledger
	// member, as its ledger entry records it.
	EvidenceSHA256 string
	// Steps are the steps made, in order: all of them.
	Steps []string
}

// proofFailed is the 422 of a step that does not check.
func proofFailed(step, field, issue string) *apierr.Error {
	return &apierr.Error{Status: apierr.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
		Message: "the evidence does not reproduce: step " + step + " failed",
		Details: []apierr.Detail{{Code: apierr.DetailProofNotReproducible, Field: field, Issue: step + ": " + issue}}}
}

// Verify checks an evidence document of the tenant's as GET
// /polygons/{polygonId}/evidence serves it (its members, decoded one
// level): its hash, its ledger entry, the entry's inclusion proof and the
// signed checkpoint, and that the tenant's log agrees. A document changed
// in any way, a forged proof or checkpoint each fail at the step that
// catches them, with a 422 PROOF_NOT_REPRODUCIBLE naming the step and the
// member; a document without a well-formed ledger member is a 400. It
// deletes the "ledger" member from doc.
func (s *Service) Verify(ctx context.Context, t storage.Tenant, doc map[string]json.RawMessage) (*Verification, error) {
	rawLedger, ok := doc["ledger"]
	if !ok || bytes.Equal(bytes.TrimSpace(rawLedger), []byte("null")) {
		return nil, apierr.Validation(apierr.Detail{Code: apierr.DetailRequired, Field: "ledger",
			Issue: "the evidence must carry its ledger entry and proof, as GET /polygons/{polygonId}/evidence returns it"})
	}
	var l anchor.DocumentLedger
	dec := json.NewDecoder(bytes.NewReader(rawLedger))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return nil, apierr.Validation(apierr.Detail{Code: apierr.DetailInvalidValue, Field: "ledger", Issue: "not a ledger member of evidence: " + err.Error()})
	}
	delete(doc, "ledger")

	// 1. The document's hash, recomputed from its canonical JSON.
	canon, err := ledger.CanonicalJSON(doc)
	if err != nil {
		return nil, proofFailed(StepDocument, "body", err.Error())
	}
	sum := sha256.Sum256(canon)
	docHash := hex.EncodeToString(sum[:])

	// 2. The entry: its bytes give transactionHash, and it records that
	// document hash.
	data, err := base64.StdEncoding.DecodeString(l.Data)
	if err != nil {
		return nil, proofFailed(StepEntry, "ledger.data", "not standard base64")
	}
	leaf := tlog.RecordHash(data)
	if anchor.Hex(leaf) != l.TransactionHash {
		return nil, proofFailed(StepEntry, "ledger.transactionHash",
			fmt.Sprintf("the entry's bytes hash to %s, not %s", anchor.Hex(leaf), l.TransactionHash))
	}
	var entry struct {
		EvidenceSHA256 string `json:"evidenceSha256"`
	}
	if err := json.Unmarshal(data, &entry); err != nil || entry.EvidenceSHA256 == "" {
		return nil, proofFailed(StepEntry, "ledger.data", "the entry records no evidence hash")
	}
	if entry.EvidenceSHA256 != docHash {
		return nil, proofFailed(StepDocument, "body",
			fmt.Sprintf("the document hashes to %s; the ledger entry records %s", docHash, entry.EvidenceSHA256))
	}

	// 3. The inclusion proof, in the tree whose root the checkpoint signs.
	root, err := parseHexHash(l.RootHash)
	if err != nil {
		return nil, proofFailed(StepInclusion, "ledger.rootHash", "not a hex SHA-256 hash")
	}
	proof := make(tlog.RecordProof, len(l.Proof))
	for i, p := range l.Proof {
		if proof[i], err = parseHexHash(p); err != nil {
			return nil, proofFailed(StepInclusion, fmt.Sprintf("ledger.proof[%d]", i), "not a hex SHA-256 hash")
		}
	}
	if err := tlog.CheckRecord(proof, l.TreeSize, root, l.Index, leaf); err != nil {
		return nil, proofFailed(StepInclusion, "ledger.proof", fmt.Sprintf(
			"the proof does not put entry %d in a tree of %d entries with root %s", l.Index, l.TreeSize, l.RootHash))
	}

	// 4. The checkpoint: signed by this appliance, for that tree.
	cp, err := ledger.OpenCheckpoint([]byte(l.Checkpoint), s.o.Ledger.VerifierKey())
	if err != nil {
		return nil, proofFailed(StepCheckpoint, "ledger.checkpoint", err.Error())
	}
	if cp.Origin != s.o.Ledger.Origin(t) || cp.Size != l.TreeSize || cp.Root != root {
		return nil, proofFailed(StepCheckpoint, "ledger.checkpoint", fmt.Sprintf(
			"the checkpoint signs %d entries of %s with root %s, not the proof's tree", cp.Size, cp.Origin, anchor.Hex(cp.Root)))
	}

	// 5. The appliance's log still holds that entry and that tree.
	err = s.o.DB.View(ctx, func(tx *storage.Tx) error {
		e, err := ledger.ReadEntry(tx.Tx, anchor.Log(t), l.Index)
		if err != nil || !bytes.Equal(e.Data, data) {
			return proofFailed(StepLog, "ledger.index", fmt.Sprintf("the ledger's entry %d is not this entry", l.Index))
		}
		th, err := ledger.TreeHash(tx.Tx, anchor.Log(t), l.TreeSize)
		if err != nil || th != root {
			return proofFailed(StepLog, "ledger.treeSize", fmt.Sprintf("the ledger's tree of %d entries has another root", l.TreeSize))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Verification{LedgerIndex: l.Index, TransactionHash: l.TransactionHash, TreeSize: l.TreeSize,
		RootHash: l.RootHash, EvidenceSHA256: docHash,
		Steps: []string{StepDocument, StepEntry, StepInclusion, StepCheckpoint, StepLog}}, nil
}

// parseHexHash reads a hash as the API writes it: lowercase hex (anchor.Hex).
func parseHexHash(h string) (tlog.Hash, error) {
	var out tlog.Hash
	if len(h) != 2*tlog.HashSize {
		return out, fmt.Errorf("hash %q is not %d hex digits", h, 2*tlog.HashSize)
	}
	_, err := hex.Decode(out[:], []byte(h))
	return out, err
}
