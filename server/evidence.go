package server

import (
	"encoding/json"
	"net/http"

	"github.com/julienschmidt/httprouter"
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

// handleEvidenceVerify checks an evidence document as GET
// /polygons/{polygonId}/evidence returns it (polygon.Verify): a document
// changed in any way, a forged proof or checkpoint each fail at the step
// that catches them.
func (a *App) handleEvidenceVerify(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var doc map[string]json.RawMessage
	if _, err := decodeJSON(r, &doc); err != nil {
		writeError(w, r, err)
		return
	}
	v, err := a.polygons.Verify(r.Context(), tenantFrom(r.Context()), doc)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, evidenceVerifyResponse{Valid: true, LedgerIndex: v.LedgerIndex, TransactionHash: v.TransactionHash,
		TreeSize: v.TreeSize, RootHash: v.RootHash, EvidenceSHA256: v.EvidenceSHA256, Steps: v.Steps})
}
