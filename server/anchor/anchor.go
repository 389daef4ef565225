// Package anchor records what the appliance must be able to prove in the
// tenant's ledger: it holds the checkpoint signing key, appends entries
// and signs checkpoints in the caller's transaction (so an entry commits
// together with the signed checkpoint that covers it and the change it
// records), proves entries, and verifies a store offline.
//
// # Entries
//
// Four kinds of entry are written (see entries.go): polygon.screened when
// a plot is judged, shipment.linked when a batch is locked to a shipment,
// dds.status on every change of a due-diligence statement, and
// report.generated the first time a PDF report's bytes are made.
package anchor

import (
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/rs/zerolog"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/eudr/eudr/ledger"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

// Options say where the signing key lives.
type Options struct {
	// KeyFile is the signing key's file, kept outside the store so that a
	// copy of the store cannot sign; made on first start.
	KeyFile string
	// KeyName names a key made on first start (the checkpoints' origin
	// starts with it).
	KeyName string
	Logger  zerolog.Logger
}

// Ledger appends and signs with the appliance's key.
type Ledger struct {
	key    ledger.Key
	signer note.Signer
}

// Open initialises the ledger buckets and loads the signing key from
// o.KeyFile, creating both on first start, in the caller's transaction.
// The store records the verifier key: a key file that does not match it
// is refused, and a missing one is an error when the store already has
// signed checkpoints (the key is not in store backups).
func Open(tx *storage.Tx, o Options) (*Ledger, error) {
	if err := ledger.Init(tx.Tx); err != nil {
		return nil, err
	}
	bound, err := ledger.VerifierKey(tx.Tx)
	if err != nil && !errors.Is(err, ledger.ErrNotFound) {
		return nil, err
	}
	raw, created, err := storage.LoadOrCreateKeyFile(o.KeyFile, func() ([]byte, error) {
		if bound != "" {
			return nil, fmt.Errorf("missing: the store's checkpoints are signed with %s; restore its key file (it is not in store backups)", bound)
		}
		k, err := ledger.GenerateKey(o.KeyName)
		if err != nil {
			return nil, err
		}
		return ledger.MarshalKey(k)
	})
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	k, err := ledger.ParseKey(raw)
	if err != nil {
		return nil, fmt.Errorf("ledger signing key file %s: %w", o.KeyFile, err)
	}
	if err := ledger.BindVerifierKey(tx.Tx, k.Verifier); err != nil {
		return nil, fmt.Errorf("ledger signing key file %s: %w", o.KeyFile, err)
	}
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		return nil, fmt.Errorf("ledger signing key: %w", err)
	}
	if created {
		o.Logger.Info().Str("file", o.KeyFile).Str("verifier_key", k.Verifier).Msg("created the ledger signing key; back up this file")
	}
	return &Ledger{key: k, signer: s}, nil
}

// KeyName is the signing key's name.
func (l *Ledger) KeyName() string { return l.key.Name() }

// VerifierKey is the public key checkpoints verify with.
func (l *Ledger) VerifierKey() string { return l.key.Verifier }

// Log is the name of the tenant's ledger log.
func Log(t storage.Tenant) string { return t.String() }

// Origin is the checkpoint origin line of the tenant's log: the key name
// and the log, so a checkpoint names the appliance and the log it is of.
func (l *Ledger) Origin(t storage.Tenant) string { return l.key.Name() + "/" + Log(t) }

// Append appends an entry with fields to the tenant's log in the caller's
// transaction and returns it. Callers Sign once their appends are done. It
// fails when fields do not encode or the store fails.
func Append(tx *storage.Tx, t storage.Tenant, fields any) (ledger.Entry, error) {
	e, err := ledger.Append(tx.Tx, Log(t), fields)
	if err != nil {
		return ledger.Entry{}, fmt.Errorf("anchor in the ledger: %w", err)
	}
	return e, nil
}

// Sign signs a checkpoint over every entry of the tenant's log, in the
// transaction that appended them: an entry is committed together with a
// signed checkpoint that covers it. It returns the checkpoint, or the
// error of signing or storing it.
func (l *Ledger) Sign(tx *storage.Tx, t storage.Tenant) (ledger.Checkpoint, error) {
	cp, err := ledger.Sign(tx.Tx, Log(t), l.Origin(t), l.signer, tx.Now())
	if err != nil {
		return ledger.Checkpoint{}, fmt.Errorf("sign ledger checkpoint: %w", err)
	}
	return cp, nil
}

// Latest is the tenant's newest checkpoint; a 404 apierr.Error while the
// log has nothing signed.
func Latest(tx *storage.Tx, t storage.Tenant) (ledger.Checkpoint, error) {
	cp, err := ledger.LatestCheckpoint(tx.Tx, Log(t))
	if errors.Is(err, ledger.ErrNotFound) {
		return cp, &apierr.Error{Status: apierr.StatusNotFound, Code: apierr.CodeNotFound, Message: "the ledger has no entries yet"}
	}
	return cp, err
}

// Proof is an anchored entry with its inclusion proof in a signed tree:
// what GET /jobs lists in ledgerProofs and evidence carries.
type Proof struct {
	Index           int64    `json:"index"`
	TransactionHash string   `json:"transactionHash"`
	TreeSize        int64    `json:"treeSize"`
	RootHash        string   `json:"rootHash"`
	Proof           []string `json:"proof"`
}

// Prove proves each of the tenant's entries in the tree of its latest
// checkpoint (which every committed entry is in), and returns that
// checkpoint. It fails, wrapping ledger.ErrNotFound, when the log has no
// checkpoint or an entry does not exist, and when the store fails.
func Prove(tx *storage.Tx, t storage.Tenant, indexes []int64) ([]Proof, ledger.Checkpoint, error) {
	if len(indexes) == 0 {
		return nil, ledger.Checkpoint{}, nil
	}
	cp, err := ledger.LatestCheckpoint(tx.Tx, Log(t))
	if err != nil {
		return nil, cp, fmt.Errorf("latest checkpoint: %w", err)
	}
	out, err := ProveAt(tx, t, cp, indexes)
	return out, cp, err
}

// ProveAt proves each of the tenant's entries in the tree of checkpoint
// cp, which must cover them. It fails, wrapping ledger.ErrNotFound, for an
// entry that does not exist or that cp does not cover, and when the store
// fails.
func ProveAt(tx *storage.Tx, t storage.Tenant, cp ledger.Checkpoint, indexes []int64) ([]Proof, error) {
	log := Log(t)
	out := make([]Proof, len(indexes))
	for k, i := range indexes {
		e, err := ledger.ReadEntry(tx.Tx, log, i)
		if err != nil {
			return nil, fmt.Errorf("ledger entry %d: %w", i, err)
		}
		p, err := ledger.ProveInclusion(tx.Tx, log, i, cp.Size)
		if err != nil {
			return nil, fmt.Errorf("prove ledger entry %d: %w", i, err)
		}
		out[k] = Proof{Index: i, TransactionHash: e.TransactionHash(), TreeSize: cp.Size,
			RootHash: Hex(cp.Root), Proof: Hexes(p)}
	}
	return out, nil
}

// Hex is a hash in lowercase hex.
func Hex(h tlog.Hash) string { return hex.EncodeToString(h[:]) }

// Hexes are hashes in lowercase hex.
func Hexes[H ~[]tlog.Hash](hs H) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = Hex(h)
	}
	return out
}
