package ledger

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

// Steps of a check, as VerifyError names them.
const (
	StepCanonical  = "canonical" // the entry is not a canonical JSON object
	StepChain      = "chain"     // its prev is not the leaf hash of the entry before
	StepTree       = "tree"      // the stored tree hashes do not match the entries
	StepCheckpoint = "checkpoint"
	StepSignature  = "signature"
	StepRoot       = "root" // a checkpoint's root is not the tree's
)

// VerifyError is the first problem Verify found.
type VerifyError struct {
	Log string
	// Index is the bad entry's index, or -1 when a checkpoint is bad.
	Index int64
	// Checkpoint is the tree size of the bad checkpoint (0 for an entry).
	Checkpoint int64
	Step       string
	Err        error
}

func (e *VerifyError) Error() string {
	if e.Index >= 0 {
		return fmt.Sprintf("log %s: entry %d: %s: %v", e.Log, e.Index, e.Step, e.Err)
	}
	return fmt.Sprintf("log %s: checkpoint of size %d: %s: %v", e.Log, e.Checkpoint, e.Step, e.Err)
}

func (e *VerifyError) Unwrap() error { return e.Err }

// Verify checks a whole log from its first entry: each entry is a canonical
// JSON object whose prev is the leaf hash of the entry before it, the
// stored tree hashes are those the entries give, and every checkpoint is
// signed by verifierKey for origin, over the root of the tree of its size.
// It returns a *VerifyError naming the first bad entry or checkpoint.
func Verify(tx *bolt.Tx, log, origin, verifierKey string) (entries, checkpoints int64, err error) {
	b, err := openLog(tx, log)
	if err != nil {
		return 0, 0, err
	}
	if b.entries == nil {
		return 0, 0, nil
	}
	bad := func(i int64, step string, format string, args ...any) error {
		return &VerifyError{Log: log, Index: i, Step: step, Err: fmt.Errorf(format, args...)}
	}

	// Entries in order. The stored hashes an entry adds are recomputed
	// from the entry and the stored hashes before them, which the entries
	// before it were checked to give: by induction all are then right.
	prev := ""
	want := int64(0)
	c := b.entries.Cursor()
	for k, data := c.First(); k != nil; k, data = c.Next() {
		i := index(k)
		if i != want {
			return want, 0, bad(want, StepChain, "entry %d is missing (the next stored is %d)", want, i)
		}
		if err := checkEntry(data, prev); err != nil {
			return i, 0, bad(i, err.step, "%v", err.err)
		}
		hashes, err := tlog.StoredHashes(i, data, b)
		if err != nil {
			return i, 0, bad(i, StepTree, "%v", err)
		}
		base := tlog.StoredHashIndex(0, i)
		for j, h := range hashes {
			if stored := b.hashes.Get(key(base + int64(j))); !bytes.Equal(stored, h[:]) {
				return i, 0, bad(i, StepTree, "stored hash %d is %x, the entries give %x", base+int64(j), stored, h[:])
			}
		}
		h := tlog.RecordHash(data)
		prev = hex.EncodeToString(h[:])
		want++
	}

	// Checkpoints, each against the tree of its size.
	var n int64
	cc := b.checkpoints.Cursor()
	for k, msg := cc.First(); k != nil; k, msg = cc.Next() {
		size := index(k)
		badCP := func(step, format string, args ...any) error {
			return &VerifyError{Log: log, Index: -1, Checkpoint: size, Step: step, Err: fmt.Errorf(format, args...)}
		}
		cp, err := OpenCheckpoint(msg, verifierKey)
		switch {
		case err != nil:
			return want, n, badCP(StepSignature, "%v", err)
		case cp.Origin != origin:
			return want, n, badCP(StepCheckpoint, "origin %q, want %q", cp.Origin, origin)
		case cp.Size != size:
			return want, n, badCP(StepCheckpoint, "stored for size %d, says %d", size, cp.Size)
		case size > want:
			return want, n, badCP(StepCheckpoint, "signs %d entries, the log holds %d", size, want)
		}
		root, err := tlog.TreeHash(size, b)
		if err != nil {
			return want, n, badCP(StepRoot, "%v", err)
		}
		if root != cp.Root {
			return want, n, badCP(StepRoot, "root %x, the tree of %d entries has %x", cp.Root[:], size, root[:])
		}
		n++
	}
	return want, n, nil
}

type entryError struct {
	step string
	err  error
}

// checkEntry checks that data is a canonical JSON object whose prev is prev.
func checkEntry(data []byte, prev string) *entryError {
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return &entryError{StepCanonical, fmt.Errorf("not a JSON object")}
	}
	got, ok := obj["prev"].(string)
	if !ok {
		return &entryError{StepChain, fmt.Errorf(`no "prev" string member`)}
	}
	if got != prev {
		return &entryError{StepChain, fmt.Errorf("prev is %q, the entry before has leaf hash %q", got, prev)}
	}
	canon, err := encodeCanonical(obj)
	if err != nil || !bytes.Equal(canon, data) {
		return &entryError{StepCanonical, fmt.Errorf("the bytes are not in canonical form (keys sorted, no whitespace)")}
	}
	return nil
}
