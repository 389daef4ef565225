// Package ledger keeps append-only, tamper-evident logs in a bbolt store:
// one log per name (the server uses one per organisation and environment).
//
// Each entry is a JSON object in canonical form (keys sorted at every level,
// no whitespace, no HTML escaping) that includes "prev", the hex leaf hash of
// the entry before it ("" for the first): the entries form a hash chain. The
// log is also an RFC 6962 Merkle tree over the entries, leaf hash
// SHA-256(0x00 || bytes), which is the entry's transaction hash. The tree is
// kept as the stored hashes of golang.org/x/mod/sumdb/tlog, about two per
// entry, so that a tree hash or a proof costs O(log n) reads however long
// the log grows. Checkpoints (tree size and root hash) are C2SP signed notes
// made with golang.org/x/mod/sumdb/note.
//
// Every function works inside the caller's bbolt transaction, so an entry
// is appended in the same transaction as the change it records: both are
// committed, or neither.
package ledger

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/tlog"
)

var (
	bucketLedger      = []byte("ledger")
	bucketEntries     = []byte("entries")
	bucketHashes      = []byte("hashes")
	bucketCheckpoints = []byte("checkpoints")
)

// ErrNotFound is returned for an entry or checkpoint the log does not hold.
var ErrNotFound = errors.New("ledger: not found")

// MaxEntrySize bounds an entry's canonical bytes.
const MaxEntrySize = 1 << 20

// Entry is one entry of a log.
type Entry struct {
	Index int64
	// LeafHash is tlog.RecordHash(Data): SHA-256(0x00 || Data).
	LeafHash tlog.Hash
	// Data is the entry's canonical JSON, "prev" included.
	Data []byte
}

// TransactionHash is the leaf hash in lowercase hex.
func (e Entry) TransactionHash() string { return hex.EncodeToString(e.LeafHash[:]) }

// Init creates the ledger's top bucket. Call it once when the store opens.
func Init(tx *bolt.Tx) error {
	_, err := tx.CreateBucketIfNotExists(bucketLedger)
	return err
}

// logBuckets holds the buckets of one log; all nil when the log does not
// exist in a read-only transaction.
type logBuckets struct {
	log                          *bolt.Bucket // holds the three below and the log's signedRecord
	entries, hashes, checkpoints *bolt.Bucket
}

func openLog(tx *bolt.Tx, log string) (logBuckets, error) {
	if log == "" {
		return logBuckets{}, errors.New("ledger: empty log name")
	}
	root := tx.Bucket(bucketLedger)
	if root == nil {
		return logBuckets{}, errors.New("ledger: store not initialised (Init not called)")
	}
	lb := root.Bucket([]byte(log))
	if lb == nil {
		if !tx.Writable() {
			return logBuckets{}, nil
		}
		var err error
		if lb, err = root.CreateBucket([]byte(log)); err != nil {
			return logBuckets{}, fmt.Errorf("ledger: create log %q: %w", log, err)
		}
		for _, name := range [][]byte{bucketEntries, bucketHashes, bucketCheckpoints} {
			if _, err := lb.CreateBucket(name); err != nil {
				return logBuckets{}, fmt.Errorf("ledger: create log %q: %w", log, err)
			}
		}
	}
	return logBuckets{log: lb, entries: lb.Bucket(bucketEntries), hashes: lb.Bucket(bucketHashes),
		checkpoints: lb.Bucket(bucketCheckpoints)}, nil
}

func key(i int64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], uint64(i))
	return k[:]
}

func index(k []byte) int64 { return int64(binary.BigEndian.Uint64(k)) }

// size is the number of entries: one past the last index.
func (b logBuckets) size() int64 {
	if b.entries == nil {
		return 0
	}
	k, _ := b.entries.Cursor().Last()
	if k == nil {
		return 0
	}
	return index(k) + 1
}

// ReadHashes reads stored hashes: a tlog.HashReader over the log.
func (b logBuckets) ReadHashes(indexes []int64) ([]tlog.Hash, error) {
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		var v []byte
		if b.hashes != nil {
			v = b.hashes.Get(key(x))
		}
		if len(v) != tlog.HashSize {
			return nil, fmt.Errorf("ledger: stored hash %d missing", x)
		}
		copy(out[i][:], v)
	}
	return out, nil
}

// Logs returns the names of every log in the store.
func Logs(tx *bolt.Tx) ([]string, error) {
	root := tx.Bucket(bucketLedger)
	if root == nil {
		return nil, nil
	}
	var names []string
	err := root.ForEachBucket(func(k []byte) error {
		names = append(names, string(k))
		return nil
	})
	return names, err
}

// Size returns the number of entries in the log.
func Size(tx *bolt.Tx, log string) (int64, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return 0, err
	}
	return b.size(), nil
}

// Append adds an entry to the log inside tx. fields must encode to a JSON
// object without a "prev" member; Append adds "prev" (the hex leaf hash of
// the last entry, "" for the first) and stores the canonical bytes, and
// the tree hashes the new entry adds.
func Append(tx *bolt.Tx, log string, fields any) (Entry, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return Entry{}, err
	}
	n := b.size()
	prev := ""
	if n > 0 {
		last := b.entries.Get(key(n - 1))
		h := tlog.RecordHash(last)
		prev = hex.EncodeToString(h[:])
	}
	data, err := Canonical(fields, prev)
	if err != nil {
		return Entry{}, err
	}
	if len(data) > MaxEntrySize {
		return Entry{}, fmt.Errorf("ledger: entry of %d bytes is over %d", len(data), MaxEntrySize)
	}
	hashes, err := tlog.StoredHashes(n, data, b)
	if err != nil {
		return Entry{}, fmt.Errorf("ledger: hashes of entry %d: %w", n, err)
	}
	base := tlog.StoredHashIndex(0, n)
	for i, h := range hashes {
		if err := b.hashes.Put(key(base+int64(i)), bytes.Clone(h[:])); err != nil {
			return Entry{}, err
		}
	}
	if err := b.entries.Put(key(n), data); err != nil {
		return Entry{}, err
	}
	return Entry{Index: n, LeafHash: tlog.RecordHash(data), Data: data}, nil
}

// Canonical returns the canonical bytes of an entry of fields whose
// previous leaf hash is prev (hex, "" for the first entry): the JSON object
// with "prev" added, keys sorted at every level, no whitespace and no HTML
// escaping. Numbers keep their written form.
func Canonical(fields any, prev string) ([]byte, error) {
	obj, err := toObject(fields)
	if err != nil {
		return nil, err
	}
	if _, ok := obj["prev"]; ok {
		return nil, errors.New(`ledger: an entry may not set "prev"`)
	}
	obj["prev"] = prev
	return encodeCanonical(obj)
}

// CanonicalJSON returns v, which must encode to a JSON object, in the
// canonical form of entries: keys sorted at every level, no whitespace, no
// HTML escaping, numbers as written. Documents whose hash an entry records
// are kept in this form, so that anyone can recompute the hash from the
// document's JSON.
func CanonicalJSON(v any) ([]byte, error) {
	obj, err := toObject(v)
	if err != nil {
		return nil, err
	}
	return encodeCanonical(obj)
}

// toObject encodes v and decodes it back as a generic JSON object, keeping
// numbers as written.
func toObject(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("ledger: encode entry: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, fmt.Errorf("ledger: an entry must be a JSON object, not %.40s", raw)
	}
	return obj, nil
}

// encodeCanonical writes v as JSON with map keys sorted (encoding/json
// sorts them), no whitespace and no HTML escaping.
func encodeCanonical(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("ledger: encode entry: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// ReadEntry returns entry i of the log, or ErrNotFound. Data is a copy.
func ReadEntry(tx *bolt.Tx, log string, i int64) (Entry, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return Entry{}, err
	}
	if b.entries == nil || i < 0 {
		return Entry{}, ErrNotFound
	}
	v := b.entries.Get(key(i))
	if v == nil {
		return Entry{}, ErrNotFound
	}
	return Entry{Index: i, LeafHash: tlog.RecordHash(v), Data: bytes.Clone(v)}, nil
}

// checkSize refuses a tree size the log cannot answer for.
func checkSize(b logBuckets, size int64) error {
	if size < 0 || size > b.size() {
		return fmt.Errorf("%w: tree size %d (the log holds %d entries)", ErrNotFound, size, b.size())
	}
	return nil
}

// TreeHash returns the root hash of the log's first size entries.
func TreeHash(tx *bolt.Tx, log string, size int64) (tlog.Hash, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return tlog.Hash{}, err
	}
	if err := checkSize(b, size); err != nil {
		return tlog.Hash{}, err
	}
	return tlog.TreeHash(size, b)
}

// ProveInclusion returns the RFC 6962 inclusion proof of entry i in the
// tree of the log's first size entries.
func ProveInclusion(tx *bolt.Tx, log string, i, size int64) (tlog.RecordProof, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return nil, err
	}
	if err := checkSize(b, size); err != nil {
		return nil, err
	}
	if i < 0 || i >= size {
		return nil, fmt.Errorf("%w: entry %d is not in a tree of %d entries", ErrNotFound, i, size)
	}
	return tlog.ProveRecord(size, i, b)
}

// ProveConsistency returns the RFC 6962 consistency proof that the tree of
// the first from entries is a prefix of the tree of the first to entries.
func ProveConsistency(tx *bolt.Tx, log string, from, to int64) (tlog.TreeProof, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return nil, err
	}
	if err := checkSize(b, to); err != nil {
		return nil, err
	}
	if from < 1 || from > to {
		return nil, fmt.Errorf("%w: no consistency proof from %d to %d entries", ErrNotFound, from, to)
	}
	return tlog.ProveTree(to, from, b)
}
