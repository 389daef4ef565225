package server

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/julienschmidt/httprouter"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// evidenceVerifyResponse is the answer of POST /evidence/verify when every
// step checks.
type evidenceVerifyResponse struct {
	Valid           bool     `json:"valid"`
	LedgerIndex     int64    `json:"ledgerIndex"`
	TransactionHash string   `json:"transactionHash"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	EvidenceSHA256  string   `json:"evidenceSha256"`
	Steps           []string `json:"steps"`
}

// The steps of an evidence check, in the order they are made.
const (
	verifyStepDocument   = "document"   // the document hashes to the entry's evidenceSha256
	verifyStepEntry      = "entry"      // the entry's bytes hash to transactionHash
	verifyStepInclusion  = "inclusion"  // the proof puts the entry in the tree with rootHash
	verifyStepCheckpoint = "checkpoint" // the checkpoint is signed by this appliance over that tree
	verifyStepLog        = "log"        // the appliance's log holds the entry and that tree
)

// proofFailed is the 422 of a step that does not check.
func proofFailed(step, field, issue string) *apierr.Error {
	return &apierr.Error{Status: http.StatusUnprocessableEntity, Code: apierr.CodeBusinessRule,
		Message: "the evidence does not reproduce: step " + step + " failed",
		Details: []apierr.Detail{{Code: apierr.DetailProofNotReproducible, Field: field, Issue: step + ": " + issue}}}
}

// handleEvidenceVerify checks an evidence document as GET
// /polygons/{polygonId}/evidence returns it: its hash, its ledger entry,
// the entry's inclusion proof and the signed checkpoint, and that the
// appliance's own log agrees. A document changed in any way, a forged
// proof or checkpoint each fail at the step that catches them.
func (a *App) handleEvidenceVerify(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var doc map[string]json.RawMessage
	if _, err := decodeJSON(r, &doc); err != nil {
		writeError(w, r, err)
		return
	}
	resp, err := a.verifyEvidence(r, doc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, resp)
}

func (a *App) verifyEvidence(r *http.Request, doc map[string]json.RawMessage) (*evidenceVerifyResponse, error) {
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
		return nil, proofFailed(verifyStepDocument, "body", err.Error())
	}
	sum := sha256.Sum256(canon)
	docHash := hex.EncodeToString(sum[:])

	// 2. The entry: its bytes give transactionHash, and it records that
	// document hash.
	data, err := base64.StdEncoding.DecodeString(l.Data)
	if err != nil {
		return nil, proofFailed(verifyStepEntry, "ledger.data", "not standard base64")
	}
	leaf := tlog.RecordHash(data)
	if anchor.Hex(leaf) != l.TransactionHash {
		return nil, proofFailed(verifyStepEntry, "ledger.transactionHash",
			fmt.Sprintf("the entry's bytes hash to %s, not %s", anchor.Hex(leaf), l.TransactionHash))
	}
	var entry struct {
		EvidenceSHA256 string `json:"evidenceSha256"`
	}
	if err := json.Unmarshal(data, &entry); err != nil || entry.EvidenceSHA256 == "" {
		return nil, proofFailed(verifyStepEntry, "ledger.data", "the entry records no evidence hash")
	}
	if entry.EvidenceSHA256 != docHash {
		return nil, proofFailed(verifyStepDocument, "body",
			fmt.Sprintf("the document hashes to %s; the ledger entry records %s", docHash, entry.EvidenceSHA256))
	}

	// 3. The inclusion proof, in the tree whose root the checkpoint signs.
	root, err := parseHexHash(l.RootHash)
	if err != nil {
		return nil, proofFailed(verifyStepInclusion, "ledger.rootHash", "not a hex SHA-256 hash")
	}
	proof := make(tlog.RecordProof, len(l.Proof))
	for i, p := range l.Proof {
		if proof[i], err = parseHexHash(p); err != nil {
			return nil, proofFailed(verifyStepInclusion, fmt.Sprintf("ledger.proof[%d]", i), "not a hex SHA-256 hash")
		}
	}
	if err := tlog.CheckRecord(proof, l.TreeSize, root, l.Index, leaf); err != nil {
		return nil, proofFailed(verifyStepInclusion, "ledger.proof", fmt.Sprintf(
			"the proof does not put entry %d in a tree of %d entries with root %s", l.Index, l.TreeSize, l.RootHash))
	}

	// 4. The checkpoint: signed by this appliance, for that tree.
	t := tenantFrom(r.Context())
	cp, err := ledger.OpenCheckpoint([]byte(l.Checkpoint), a.ledger.VerifierKey())
	if err != nil {
		return nil, proofFailed(verifyStepCheckpoint, "ledger.checkpoint", err.Error())
	}
	if cp.Origin != a.ledger.Origin(t) || cp.Size != l.TreeSize || cp.Root != root {
		return nil, proofFailed(verifyStepCheckpoint, "ledger.checkpoint", fmt.Sprintf(
			"the checkpoint signs %d entries of %s with root %s, not the proof's tree", cp.Size, cp.Origin, anchor.Hex(cp.Root)))
	}

	// 5. The appliance's log still holds that entry and that tree.
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		e, err := ledger.ReadEntry(tx.Tx, anchor.Log(t), l.Index)
		if err != nil || !bytes.Equal(e.Data, data) {
			return proofFailed(verifyStepLog, "ledger.index", fmt.Sprintf("the ledger's entry %d is not this entry", l.Index))
		}
		th, err := ledger.TreeHash(tx.Tx, anchor.Log(t), l.TreeSize)
		if err != nil || th != root {
			return proofFailed(verifyStepLog, "ledger.treeSize", fmt.Sprintf("the ledger's tree of %d entries has another root", l.TreeSize))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &evidenceVerifyResponse{Valid: true, LedgerIndex: l.Index, TransactionHash: l.TransactionHash,
		TreeSize: l.TreeSize, RootHash: l.RootHash, EvidenceSHA256: docHash,
		Steps: []string{verifyStepDocument, verifyStepEntry, verifyStepInclusion, verifyStepCheckpoint, verifyStepLog}}, nil
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
