package server

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"
	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// ledgerSigner holds the appliance's checkpoint signing key.
type ledgerSigner struct {
	key    ledger.Key
	signer note.Signer
}

// openLedger initialises the ledger buckets and loads the checkpoint
// signing key from its file (ledger.key_file), creating both on first
// start. The key is kept outside the store, so that a copy of the store
// cannot sign; the store records the verifier key, and a key file that
// does not match it is refused rather than replaced.
func (a *App) openLedger(tx *storage.Tx) error {
	if err := ledger.Init(tx.Tx); err != nil {
		return err
	}
	path := a.cfg.Ledger.keyFile(a.cfg.DataDir)
	bound, err := ledger.VerifierKey(tx.Tx)
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		return err
	}
	raw, created, err := storage.LoadOrCreateKeyFile(path, func() ([]byte, error) {
		if bound != "" {
			return nil, fmt.Errorf("missing: the store's checkpoints are signed with %s; restore its key file (it is not in store backups)", bound)
		}
		k, err := ledger.GenerateKey(a.cfg.Ledger.KeyName)
		if err != nil {
			return nil, err
		}
		return ledger.MarshalKey(k)
	})
	if err != nil {
		return fmt.Errorf("ledger signing key: %w", err)
	}
	k, err := ledger.ParseKey(raw)
	if err != nil {
		return fmt.Errorf("ledger signing key file %s: %w", path, err)
	}
	if err := ledger.BindVerifierKey(tx.Tx, k.Verifier); err != nil {
		return fmt.Errorf("ledger signing key file %s: %w", path, err)
	}
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		return fmt.Errorf("ledger signing key: %w", err)
	}
	if created {
		a.log.Info().Str("file", path).Str("verifier_key", k.Verifier).Msg("created the ledger signing key; back up this file")
	}
	a.ledger = ledgerSigner{key: k, signer: s}
	return nil
}

// logOf is the name of the tenant's ledger log.
func logOf(t storage.Tenant) string { return t.String() }

// originOf is the checkpoint origin line of the tenant's log: the key name
// and the log, so a checkpoint names the appliance and the log it is of.
func (a *App) originOf(t storage.Tenant) string { return a.ledger.key.Name() + "/" + logOf(t) }

// anchor appends an entry to the tenant's log in the caller's transaction.
// Callers sign a checkpoint (signCheckpoint) once their appends are done.
func anchor(tx *storage.Tx, t storage.Tenant, fields any) (ledger.Entry, error) {
	e, err := ledger.Append(tx.Tx, logOf(t), fields)
	if err != nil {
		return ledger.Entry{}, fmt.Errorf("anchor in the ledger: %w", err)
	}
	return e, nil
}

// signCheckpoint signs a checkpoint over every entry of the tenant's log,
// in the transaction that appended them: an entry is committed together
// with a signed checkpoint that covers it.
func (a *App) signCheckpoint(tx *storage.Tx, t storage.Tenant) (ledger.Checkpoint, error) {
	cp, err := ledger.Sign(tx.Tx, logOf(t), a.originOf(t), a.ledger.signer)
	if err != nil {
		return ledger.Checkpoint{}, fmt.Errorf("sign ledger checkpoint: %w", err)
	}
	return cp, nil
}

func hexHash(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

func hexHashes[H ~[]tlog.Hash](hs H) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hexHash(h)
	}
	return out
}

type checkpointResponse struct {
	TreeSize int64  `json:"treeSize"`
	RootHash string `json:"rootHash"`
	Note     string `json:"note"`
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

// noEntries is the 404 of a log that has nothing signed yet.
func noEntries() *apierr.Error {
	return &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: "the ledger has no entries yet"}
}

// ledgerError maps ledger.ErrNotFound to a 404 saying what is missing.
func ledgerError(err error) error {
	if errors.Is(err, ledger.ErrNotFound) {
		return &apierr.Error{Status: http.StatusNotFound, Code: apierr.CodeNotFound, Message: err.Error()}
	}
	return err
}

// latestCheckpoint reads the tenant's newest checkpoint in tx.
func latestCheckpoint(tx *storage.Tx, t storage.Tenant) (ledger.Checkpoint, error) {
	cp, err := ledger.LatestCheckpoint(tx.Tx, logOf(t))
	if errors.Is(err, ledger.ErrNotFound) {
		return cp, noEntries()
	}
	return cp, err
}

func (a *App) handleLedgerCheckpoint(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var cp ledger.Checkpoint
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		cp, err = latestCheckpoint(tx, tenantFrom(r.Context()))
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, checkpointResponse{TreeSize: cp.Size, RootHash: hexHash(cp.Root), Note: string(cp.Note)})
}

func (a *App) handleLedgerPublicKey(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	writeJSON(w, r, http.StatusOK, publicKeyResponse{KeyName: a.ledger.key.Name(), VerifierKey: a.ledger.key.Verifier})
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
		e, err = ledger.ReadEntry(tx.Tx, logOf(tenantFrom(r.Context())), i)
		return err
	})
	if errors.Is(err, ledger.ErrNotFound) {
		err = apierr.NotFound{Kind: "ledger entry", ID: strconv.FormatInt(i, 10)}
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, entryResponse{Index: e.Index, LeafHash: hexHash(e.LeafHash),
		Data: base64.StdEncoding.EncodeToString(e.Data)})
}

// treeSizeOr is size, or the latest checkpoint's size when size is -1.
func treeSizeOr(tx *storage.Tx, t storage.Tenant, size int64) (int64, error) {
	if size >= 0 {
		return size, nil
	}
	cp, err := latestCheckpoint(tx, t)
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
		log := logOf(t)
		proof, err := ledger.ProveInclusion(tx.Tx, log, i, size)
		if err != nil {
			return ledgerError(err)
		}
		root, err := ledger.TreeHash(tx.Tx, log, size)
		if err != nil {
			return err
		}
		e, err := ledger.ReadEntry(tx.Tx, log, i)
		if err != nil {
			return err
		}
		resp = inclusionResponse{Index: i, TreeSize: size, LeafHash: hexHash(e.LeafHash), RootHash: hexHash(root),
			Proof: hexHashes(proof)}
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
		proof, err := ledger.ProveConsistency(tx.Tx, logOf(t), from, to)
		if err != nil {
			return ledgerError(err)
		}
		resp = consistencyResponse{From: from, To: to, Proof: hexHashes(proof)}
		return nil
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, r, http.StatusOK, resp)
}

// ledgerProof is an anchored entry with its inclusion proof in a signed
// tree: what GET /jobs lists in ledgerProofs and evidence carries.
type ledgerProof struct {
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
}

// proveEntries proves each of the tenant's entries in the tree of its
// latest checkpoint (which every committed entry is in).
func proveEntries(tx *bolt.Tx, t storage.Tenant, indexes []int64) ([]ledgerProof, ledger.Checkpoint, error) {
	if len(indexes) == 0 {
		return nil, ledger.Checkpoint{}, nil
	}
	cp, err := ledger.LatestCheckpoint(tx, logOf(t))
	if err != nil {
		return nil, cp, fmt.Errorf("latest checkpoint: %w", err)
	}
	out, err := proveEntriesAt(tx, t, cp, indexes)
	return out, cp, err
}

// proveEntriesAt proves each of the tenant's entries in the tree of
// checkpoint cp, which must cover them.
func proveEntriesAt(tx *bolt.Tx, t storage.Tenant, cp ledger.Checkpoint, indexes []int64) ([]ledgerProof, error) {
	log := logOf(t)
	out := make([]ledgerProof, len(indexes))
	for k, i := range indexes {
		e, err := ledger.ReadEntry(tx, log, i)
		if err != nil {
			return nil, fmt.Errorf("ledger entry %d: %w", i, err)
		}
		p, err := ledger.ProveInclusion(tx, log, i, cp.Size)
		if err != nil {
			return nil, fmt.Errorf("prove ledger entry %d: %w", i, err)
		}
		out[k] = ledgerProof{Index: i, TransactionHash: e.TransactionHash(), TreeSize: cp.Size,
			RootHash: hexHash(cp.Root), Proof: hexHashes(p)}
	}
	return out, nil
}

// VerifyLedger checks every log in the store offline (eudr ledger verify):
// the chain, the tree and every checkpoint's signature and root, against
// verifierKey ("" for the one the store records). Each checkpoint in
// trusted, kept outside the appliance, must also still match its log. It
// prints one line per log and per trusted checkpoint to w and returns the
// first problem, naming the log and the bad entry or checkpoint.
func VerifyLedger(tx *storage.Tx, verifierKey string, trusted map[string][]byte, w io.Writer) error {
	if verifierKey == "" {
		var err error
		if verifierKey, err = ledger.VerifierKey(tx.Tx); errors.Is(err, ledger.ErrNotFound) {
			return errors.New("the store has no ledger: is this the appliance's data dir?")
		} else if err != nil {
			return err
		}
	}
	name, _, _ := strings.Cut(verifierKey, "+")
	logs, err := ledger.Logs(tx.Tx)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "verifier key %s\n", verifierKey)
	for _, log := range logs {
		entries, cps, err := ledger.Verify(tx.Tx, log, name+"/"+log, verifierKey)
		if err != nil {
			fmt.Fprintf(w, "%s: BAD after %d good entries: %v\n", log, entries, err)
			return err
		}
		fmt.Fprintf(w, "%s: ok, %d entries, %d checkpoints\n", log, entries, cps)
	}
	for _, file := range slices.Sorted(maps.Keys(trusted)) {
		cp, err := ledger.OpenCheckpoint(trusted[file], verifierKey)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", file, err)
		}
		log, ok := strings.CutPrefix(cp.Origin, name+"/")
		if !ok || !slices.Contains(logs, log) {
			return fmt.Errorf("checkpoint %s: no log of origin %s in the store", file, cp.Origin)
		}
		if err := ledger.CheckConsistent(tx.Tx, log, cp); err != nil {
			fmt.Fprintf(w, "%s: BAD against checkpoint %s: %v\n", log, file, err)
			return fmt.Errorf("log %s against checkpoint %s: %w", log, file, err)
		}
		fmt.Fprintf(w, "%s: consistent with checkpoint %s (%d entries)\n", log, file, cp.Size)
	}
	return nil
}
