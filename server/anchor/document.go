package anchor

import (
	"bytes"
	"encoding/base64"
	"fmt"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/storage"
)

// DocumentLedger is the "ledger" member of an anchored document as served
// (a plot's evidence): the entry that anchors the document, its inclusion
// proof in the tree of the latest checkpoint, and that checkpoint.
type DocumentLedger struct {
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	Data            string   `json:"data"` // the entry's canonical bytes, standard base64
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
	Checkpoint      string   `json:"checkpoint"` // the signed note
}

// WithProof returns the stored document doc (canonical JSON) with a
// "ledger" member added: entry index of the tenant's log, proved in the
// latest checkpoint. The document's own bytes are left as they are, so its
// hash recomputes from the answer without the "ledger" member. It fails
// when doc is not a JSON object, when the entry cannot be proved (as
// Prove), and when the store fails.
func WithProof(tx *storage.Tx, t storage.Tenant, doc []byte, index *int64) ([]byte, error) {
	var cp *ledger.Checkpoint
	if index != nil {
		latest, err := ledger.LatestCheckpoint(tx.Tx, Log(t))
		if err != nil {
			return nil, fmt.Errorf("latest checkpoint: %w", err)
		}
		cp = &latest
	}
	return WithProofAt(tx, t, doc, index, cp)
}

// WithFirstProof is WithProof with the proof made in the first
// checkpoint that covers the entry (ledger.FirstCheckpointCovering): the
// same bytes however the log grows, for a document whose hash is kept.
func WithFirstProof(tx *storage.Tx, t storage.Tenant, doc []byte, index *int64) ([]byte, error) {
	var cp *ledger.Checkpoint
	if index != nil {
		first, err := ledger.FirstCheckpointCovering(tx.Tx, Log(t), *index)
		if err != nil {
			return nil, fmt.Errorf("checkpoint covering entry %d: %w", *index, err)
		}
		cp = &first
	}
	return WithProofAt(tx, t, doc, index, cp)
}

// ProveEntryAt is entry index of the tenant's log with its bytes and its
// inclusion proof in the tree of checkpoint cp, which must cover it. It
// fails when the entry or the tree cannot be read.
func ProveEntryAt(tx *storage.Tx, t storage.Tenant, cp ledger.Checkpoint, index int64) (DocumentLedger, error) {
	proofs, err := ProveAt(tx, t, cp, []int64{index})
	if err != nil {
		return DocumentLedger{}, err
	}
	e, err := ledger.ReadEntry(tx.Tx, Log(t), index)
	if err != nil {
		return DocumentLedger{}, fmt.Errorf("ledger entry %d: %w", index, err)
	}
	p := proofs[0]
	return DocumentLedger{Index: p.Index, TransactionHash: p.TransactionHash,
		Data: base64.StdEncoding.EncodeToString(e.Data), TreeSize: p.TreeSize, RootHash: p.RootHash,
		Proof: p.Proof, Checkpoint: string(cp.Note)}, nil
}

// WithProofAt is WithProof with the proof made in the tree of checkpoint
// cp, which must cover entry index (cp may be nil when index is). It fails
// as WithProof does, and when index is given without cp.
func WithProofAt(tx *storage.Tx, t storage.Tenant, doc []byte, index *int64, cp *ledger.Checkpoint) ([]byte, error) {
	var l *DocumentLedger
	if index != nil {
		if cp == nil {
			return nil, fmt.Errorf("prove ledger entry %d: no checkpoint", *index)
		}
		dl, err := ProveEntryAt(tx, t, *cp, *index)
		if err != nil {
			return nil, err
		}
		l = &dl
	}
	lj, err := storage.MarshalJSON(l)
	if err != nil {
		return nil, err
	}
	doc = bytes.TrimSpace(doc)
	if len(doc) < 2 || doc[len(doc)-1] != '}' {
		return nil, fmt.Errorf("stored evidence is not a JSON object")
	}
	out := make([]byte, 0, len(doc)+len(lj)+12)
	out = append(out, doc[:len(doc)-1]...)
	if len(doc) > 2 {
		out = append(out, ',')
	}
	out = append(out, `"ledger":`...)
	out = append(out, lj...)
	return append(out, '}'), nil
}
