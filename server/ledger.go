package server

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/anchor"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

type checkpointResponse struct {
	TreeSize int64   `json:"treeSize"`
	RootHash string  `json:"rootHash"`
	Note     string  `json:"note"`
	SignedAt *string `json:"signedAt"` // null for a checkpoint signed before the store recorded the time
}

type publicKeyResponse struct {
	KeyName     string `json:"keyName"`
	VerifierKey string `json:"verifierKey"`
}

type entryResponse struct {
	Index    int64  `json:"index"`
	LeafHash string `json:"leafHash"`
	Data     string `json:"data"` // the canonical bytes, standard base64
}

type inclusionResponse struct {
	Index    int64    `json:"index"`
	TreeSize int64    `json:"treeSize"`
	LeafHash string   `json:"leafHash"`
	RootHash string   `json:"rootHash"`
	Proof    []string `json:"proof"`
}

type consistencyResponse struct {
	From  int64    `json:"from"`
	To    int64    `json:"to"`
	Proof []string `json:"proof"`
}

func (a *App) handleLedgerCheckpoint(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var cp ledger.Checkpoint
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		cp, err = anchor.Latest(tx, tenantFrom(r.Context()))
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, checkpointResponse{TreeSize: cp.Size, RootHash: anchor.Hex(cp.Root), Note: string(cp.Note),
		SignedAt: signedAt(cp)})
}

func signedAt(cp ledger.Checkpoint) *string {
	if cp.SignedAt.IsZero() {
		return nil
	}
	return storage.Optional(storage.FormatTime(cp.SignedAt))
}

func (a *App) handleLedgerPublicKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeJSON(w, r, http.StatusOK, publicKeyResponse{KeyName: a.ledger.KeyName(), VerifierKey: a.ledger.VerifierKey()})
}

// ledgerNumber reads a non-negative integer from the path or query; a
// missing optional one is -1.
func ledgerNumber(probs *apierr.Problems, field, s string, required bool) int64 {
	if s == "" {
		if required {
			probs.Add(apierr.DetailRequired, field, "is required")
		}
		return -1
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		probs.Add(apierr.DetailInvalidValue, field, "must be a non-negative integer")
		return -1
	}
	return n
}

func (a *App) handleLedgerEntry(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	var probs apierr.Problems
	i := ledgerNumber(&probs, "path.index", ps.ByName("index"), true)
	if err := probs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	var e ledger.Entry
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		e, err = ledger.ReadEntry(tx.Tx, anchor.Log(tenantFrom(r.Context())), i)
		return err
	})
	if errors.Is(err, ledger.ErrNotFound) {
		err = apierr.NotFound{Kind: "ledger entry", ID: strconv.FormatInt(i, 10)}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, entryResponse{Index: e.Index, LeafHash: anchor.Hex(e.LeafHash),
		Data: base64.StdEncoding.EncodeToString(e.Data)})
}

// treeSizeOr is size, or the latest checkpoint's size when size is -1.
func treeSizeOr(tx *storage.Tx, t storage.Tenant, size int64) (int64, error) {
	if size >= 0 {
		return size, nil
	}
	cp, err := anchor.Latest(tx, t)
	return cp.Size, err
}

// handleLedgerInclusion proves entry index in the tree of treeSize entries
// (default: the latest checkpoint's).
func (a *App) handleLedgerInclusion(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	q := r.URL.Query()
	var probs apierr.Problems
	i := ledgerNumber(&probs, "query.index", q.Get("index"), true)
	size := ledgerNumber(&probs, "query.treeSize", q.Get("treeSize"), false)
	if err := probs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	var resp inclusionResponse
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if size, err = treeSizeOr(tx, t, size); err != nil {
			return err
		}
		log := anchor.Log(t)
		proof, err := ledger.ProveInclusion(tx.Tx, log, i, size)
		if err != nil {
			return err // ledger.ErrNotFound: a 404 saying what is missing (apierr.From)
		}
		root, err := ledger.TreeHash(tx.Tx, log, size)
		if err != nil {
			return err
		}
		e, err := ledger.ReadEntry(tx.Tx, log, i)
		if err != nil {
			return err
		}
		resp = inclusionResponse{Index: i, TreeSize: size, LeafHash: anchor.Hex(e.LeafHash), RootHash: anchor.Hex(root),
			Proof: anchor.Hexes(proof)}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// handleLedgerConsistency proves the tree of from entries a prefix of the
// tree of to entries (default: the latest checkpoint's size).
func (a *App) handleLedgerConsistency(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	q := r.URL.Query()
	var probs apierr.Problems
	from := ledgerNumber(&probs, "query.from", q.Get("from"), true)
	to := ledgerNumber(&probs, "query.to", q.Get("to"), false)
	if err := probs.Err(); err != nil {
		writeError(w, r, err)
		return
	}
	var resp consistencyResponse
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		t := tenantFrom(r.Context())
		var err error
		if to, err = treeSizeOr(tx, t, to); err != nil {
			return err
		}
		proof, err := ledger.ProveConsistency(tx.Tx, anchor.Log(t), from, to)
		if err != nil {
			return err // ledger.ErrNotFound: a 404 saying what is missing (apierr.From)
		}
		resp = consistencyResponse{From: from, To: to, Proof: anchor.Hexes(proof)}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, resp)
}
