package ledger

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"
)

// verifierRecord is where the store records the verifier key its
// checkpoints are signed with: in the ledger's top bucket, next to the
// logs (which are buckets, so a plain key cannot clash).
var verifierRecord = []byte("verifier-key")

// signedRecord, beside it, holds when the store's newest checkpoint (of
// any log) was signed: BE(unix nanos). Each log's bucket holds the same
// record for its own newest checkpoint.
var signedRecord = []byte("last-signed-at")

// Key is a checkpoint signing key in note format: the signer key (secret)
// and the verifier key that clients use.
type Key struct {
	Signer   string `json:"signer"`   // PRIVATE+KEY+<name>+<hash>+<key>
	Verifier string `json:"verifier"` // <name>+<hash>+<key>
}

// Name is the key's name, the first field of the verifier key.
func (k Key) Name() string { return keyName(k.Verifier) }

func keyName(verifierKey string) string { name, _, _ := strings.Cut(verifierKey, "+"); return name }

// GenerateKey makes a new Ed25519 signing key named name.
func GenerateKey(name string) (Key, error) {
	skey, vkey, err := note.GenerateKey(rand.Reader, name)
	if err != nil {
		return Key{}, fmt.Errorf("ledger: generate signing key %q: %w", name, err)
	}
	return Key{Signer: skey, Verifier: vkey}, nil
}

// ParseKey reads a key as MarshalKey wrote it and checks that its two
// halves belong together.
func ParseKey(data []byte) (Key, error) {
	var k Key
	if err := json.Unmarshal(data, &k); err != nil {
		return Key{}, fmt.Errorf("ledger: signing key: %w", err)
	}
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		return Key{}, fmt.Errorf("ledger: signing key: %w", err)
	}
	v, err := note.NewVerifier(k.Verifier)
	if err != nil {
		return Key{}, fmt.Errorf("ledger: verifier key: %w", err)
	}
	msg, err := note.Sign(&note.Note{Text: "key check\n"}, s)
	if err == nil {
		_, err = note.Open(msg, note.VerifierList(v))
	}
	if err != nil {
		return Key{}, errors.New("ledger: the signer and verifier keys do not belong together")
	}
	return k, nil
}

// MarshalKey encodes k for its key file.
func MarshalKey(k Key) ([]byte, error) { return json.MarshalIndent(k, "", "  ") }

// BindVerifierKey records in the store the verifier key its checkpoints
// are signed with, the first time, and refuses another one afterwards: a
// store must not hold checkpoints signed by two keys.
func BindVerifierKey(tx *bolt.Tx, verifierKey string) error {
	got, err := VerifierKey(tx)
	switch {
	case errors.Is(err, ErrNotFound):
		return tx.Bucket(bucketLedger).Put(verifierRecord, []byte(verifierKey))
	case err != nil:
		return err
	case got != verifierKey:
		return fmt.Errorf("ledger: the store's checkpoints are signed with key %s, not %s", got, verifierKey)
	}
	return nil
}

// VerifierKey returns the verifier key the store's checkpoints are signed
// with, or ErrNotFound before the first BindVerifierKey.
func VerifierKey(tx *bolt.Tx) (string, error) {
	root := tx.Bucket(bucketLedger)
	if root == nil {
		return "", ErrNotFound
	}
	v := root.Get(verifierRecord)
	if v == nil {
		return "", ErrNotFound
	}
	return string(v), nil
}

// Checkpoint is a signed tree head: the log's origin, a tree size and its
// root hash, as a C2SP signed note.
type Checkpoint struct {
	Origin string
	Size   int64
	Root   tlog.Hash
	// Note is the whole signed note: the body, a blank line and the
	// signature lines.
	Note []byte
	// SignedAt is when the log's newest checkpoint was signed, as Sign
	// was told; zero for one signed before the store recorded it.
	SignedAt time.Time
}

// checkpointBody is the C2SP tlog-checkpoint body: origin, tree size and
// base64 root hash, one per line.
func checkpointBody(origin string, size int64, root tlog.Hash) string {
	return origin + "\n" + strconv.FormatInt(size, 10) + "\n" + base64.StdEncoding.EncodeToString(root[:]) + "\n"
}

// Sign makes, stores and returns a checkpoint of the log as it stands in
// tx, signed by signer at time at (which LastSigned reports), unless the
// latest checkpoint already covers every entry: then it returns that one.
// A log without entries has none.
func Sign(tx *bolt.Tx, log, origin string, signer note.Signer, at time.Time) (Checkpoint, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return Checkpoint{}, err
	}
	size := b.size()
	if size == 0 {
		return Checkpoint{}, fmt.Errorf("%w: the log %q has no entries to sign", ErrNotFound, log)
	}
	if k, v := b.checkpoints.Cursor().Last(); k != nil && index(k) == size {
		return b.parseNewest(v, size)
	}
	root, err := tlog.TreeHash(size, b)
	if err != nil {
		return Checkpoint{}, err
	}
	msg, err := note.Sign(&note.Note{Text: checkpointBody(origin, size, root)}, signer)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: sign checkpoint: %w", err)
	}
	if err := b.checkpoints.Put(key(size), msg); err != nil {
		return Checkpoint{}, err
	}
	for _, bk := range []*bolt.Bucket{tx.Bucket(bucketLedger), b.log} {
		if err := bk.Put(signedRecord, key(at.UnixNano())); err != nil {
			return Checkpoint{}, err
		}
	}
	return Checkpoint{Origin: origin, Size: size, Root: root, Note: msg, SignedAt: time.Unix(0, at.UnixNano())}, nil
}

// LastSigned reports when the newest checkpoint of any log was signed;
// ok is false when none was signed since the store began recording it.
func LastSigned(tx *bolt.Tx) (at time.Time, ok bool) {
	root := tx.Bucket(bucketLedger)
	if root == nil {
		return time.Time{}, false
	}
	v := root.Get(signedRecord)
	if len(v) != 8 {
		return time.Time{}, false
	}
	return time.Unix(0, index(v)), true
}

// LatestCheckpoint returns the log's newest checkpoint, or ErrNotFound.
func LatestCheckpoint(tx *bolt.Tx, log string) (Checkpoint, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return Checkpoint{}, err
	}
	if b.checkpoints == nil {
		return Checkpoint{}, ErrNotFound
	}
	k, v := b.checkpoints.Cursor().Last()
	if k == nil {
		return Checkpoint{}, ErrNotFound
	}
	return b.parseNewest(v, index(k))
}

// FirstCheckpointCovering returns the log's oldest checkpoint that covers
// entry index: a checkpoint signed with the entry, or after it, which
// never changes once signed (a proof made in it is the same bytes however
// the log grows). It fails with ErrNotFound when none covers it.
func FirstCheckpointCovering(tx *bolt.Tx, log string, entry int64) (Checkpoint, error) {
	b, err := openLog(tx, log)
	if err != nil {
		return Checkpoint{}, err
	}
	if b.checkpoints == nil || entry < 0 {
		return Checkpoint{}, ErrNotFound
	}
	k, v := b.checkpoints.Cursor().Seek(key(entry + 1))
	if k == nil {
		return Checkpoint{}, ErrNotFound
	}
	return parseStored(v, index(k))
}

// parseNewest reads the log's newest checkpoint, stored for size, with
// the time it was signed when the log recorded it.
func (b logBuckets) parseNewest(msg []byte, size int64) (Checkpoint, error) {
	c, err := parseStored(msg, size)
	if v := b.log.Get(signedRecord); err == nil && len(v) == 8 {
		c.SignedAt = time.Unix(0, index(v))
	}
	return c, err
}

// parseStored reads a stored checkpoint's body without checking its
// signature (Verify does); it must be for size.
func parseStored(msg []byte, size int64) (Checkpoint, error) {
	text, _, ok := bytes.Cut(msg, []byte("\n\n"))
	if !ok {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint %d is not a signed note", size)
	}
	c, err := parseBody(string(text) + "\n")
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Size != size {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint stored for size %d says %d", size, c.Size)
	}
	c.Note = bytes.Clone(msg)
	return c, nil
}

// parseBody reads a C2SP checkpoint body (extension lines are ignored).
func parseBody(text string) (Checkpoint, error) {
	lines := strings.SplitN(text, "\n", 4)
	if len(lines) < 4 || lines[0] == "" {
		return Checkpoint{}, errors.New("ledger: a checkpoint has an origin, a size and a root hash line")
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint size %q is not a tree size", lines[1])
	}
	raw, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(raw) != tlog.HashSize {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint root %q is not a base64 SHA-256 hash", lines[2])
	}
	c := Checkpoint{Origin: lines[0], Size: size}
	copy(c.Root[:], raw)
	return c, nil
}

// OpenCheckpoint checks a signed checkpoint against the verifier key
// (note format) and returns it. Signatures by other keys are ignored, as
// C2SP asks, but the verifier's own must be there and valid.
func OpenCheckpoint(msg []byte, verifierKey string) (Checkpoint, error) {
	v, err := note.NewVerifier(verifierKey)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: verifier key: %w", err)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("ledger: checkpoint signature: %w", err)
	}
	c, err := parseBody(n.Text)
	if err != nil {
		return Checkpoint{}, err
	}
	c.Note = bytes.Clone(msg)
	return c, nil
}

// CheckConsistent reports whether the log still agrees with a checkpoint
// kept outside the appliance (from a shipment.linked event or an evidence
// document): the tree of its size has its root. A log rewritten or cut
// short after the checkpoint was taken fails, even if it was re-signed.
func CheckConsistent(tx *bolt.Tx, log string, cp Checkpoint) error {
	b, err := openLog(tx, log)
	if err != nil {
		return err
	}
	if n := b.size(); cp.Size > n {
		return fmt.Errorf("the checkpoint signs %d entries, the log holds %d: entries were removed", cp.Size, n)
	}
	root, err := tlog.TreeHash(cp.Size, b)
	if err != nil {
		return err
	}
	if root != cp.Root {
		return fmt.Errorf("the log's tree of %d entries has root %x, the checkpoint %x: the log was rewritten", cp.Size, root[:], cp.Root[:])
	}
	return nil
}
