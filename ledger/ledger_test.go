package ledger_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	"golang.org/x/mod/sumdb/note"

	"github.com/eudr/eudr/ledger"
)

// The RFC 6962 (section 2.1) Merkle tree, written from the RFC alone, to
// check the package's proofs independently of the library it uses.

func leafHash(data []byte) []byte {
	h := sha256.Sum256(append([]byte{0}, data...))
	return h[:]
}

func nodeHash(l, r []byte) []byte {
	h := sha256.Sum256(append(append([]byte{1}, l...), r...))
	return h[:]
}

// splitPoint is the largest power of two smaller than n (n > 1).
func splitPoint(n int) int {
	k := 1
	for k*2 < n {
		k *= 2
	}
	return k
}

// mth is MTH(D[n]) over leaf data.
func mth(d [][]byte) []byte {
	switch len(d) {
	case 0:
		h := sha256.Sum256(nil)
		return h[:]
	case 1:
		return leafHash(d[0])
	}
	k := splitPoint(len(d))
	return nodeHash(mth(d[:k]), mth(d[k:]))
}

// rootFromInclusion recomputes the root from leaf m of a tree of n leaves
// and its audit path, as RFC 9162 section 2.1.3.2 verifies it.
func rootFromInclusion(m, n int, leaf []byte, path [][]byte) ([]byte, error) {
	if m >= n {
		return nil, errors.New("index past the tree")
	}
	fn, sn := m, n-1
	r := leaf
	for _, p := range path {
		if sn == 0 {
			return nil, errors.New("path too long")
		}
		if fn%2 == 1 || fn == sn {
			r = nodeHash(p, r)
			if fn%2 == 0 {
				for fn%2 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			r = nodeHash(r, p)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 {
		return nil, errors.New("path too short")
	}
	return r, nil
}

// verifyConsistency checks a consistency proof between trees of m and n
// leaves with roots r1 and r2 (RFC 9162 section 2.1.4.2).
func verifyConsistency(m, n int, r1, r2 []byte, proof [][]byte) error {
	if m == n {
		if len(proof) != 0 || !bytes.Equal(r1, r2) {
			return errors.New("equal sizes need an empty proof and equal roots")
		}
		return nil
	}
	if len(proof) == 0 {
		return errors.New("empty proof")
	}
	if m&(m-1) == 0 { // m is a power of two: prepend r1
		proof = append([][]byte{r1}, proof...)
	}
	fn, sn := m-1, n-1
	for fn%2 == 1 {
		fn >>= 1
		sn >>= 1
	}
	fr, sr := proof[0], proof[0]
	for _, c := range proof[1:] {
		if sn == 0 {
			return errors.New("proof too long")
		}
		if fn%2 == 1 || fn == sn {
			fr = nodeHash(c, fr)
			sr = nodeHash(c, sr)
			if fn%2 == 0 {
				for fn%2 == 0 && fn != 0 {
					fn >>= 1
					sn >>= 1
				}
			}
		} else {
			sr = nodeHash(sr, c)
		}
		fn >>= 1
		sn >>= 1
	}
	if sn != 0 || !bytes.Equal(fr, r1) || !bytes.Equal(sr, r2) {
		return errors.New("roots do not match")
	}
	return nil
}

func openDB(t testing.TB) *bolt.DB {
	t.Helper()
	db, err := bolt.Open(filepath.Join(t.TempDir(), "ledger.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Update(ledger.Init); err != nil {
		t.Fatal(err)
	}
	return db
}

func mustUpdate(t testing.TB, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
}

func mustView(t testing.TB, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	t.Helper()
	if err := db.View(fn); err != nil {
		t.Fatal(err)
	}
}

const testLog = "default/sandbox"

// appendN appends n entries {"n":i} and returns their canonical bytes.
func appendN(t testing.TB, db *bolt.DB, log string, from, n int) [][]byte {
	t.Helper()
	var out [][]byte
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		for i := from; i < from+n; i++ {
			e, err := ledger.Append(tx, log, map[string]any{"n": i, "type": "test"})
			if err != nil {
				return err
			}
			if e.Index != int64(i) {
				return fmt.Errorf("entry %d got index %d", i, e.Index)
			}
			out = append(out, e.Data)
		}
		return nil
	})
	return out
}

func hexes(hs [][]byte) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

func TestAppend_ChainAndTree(t *testing.T) {
	db := openDB(t)
	var data [][]byte
	// Appends in several transactions, one of several entries.
	data = append(data, appendN(t, db, testLog, 0, 1)...)
	data = append(data, appendN(t, db, testLog, 1, 20)...)
	data = append(data, appendN(t, db, testLog, 21, 19)...)

	prev := ""
	for i, d := range data {
		want := fmt.Sprintf(`{"n":%d,"prev":%q,"type":"test"}`, i, prev)
		if string(d) != want {
			t.Fatalf("entry %d: %s, want %s", i, d, want)
		}
		prev = hex.EncodeToString(leafHash(d))
	}

	mustView(t, db, func(tx *bolt.Tx) error {
		if n, err := ledger.Size(tx, testLog); err != nil || n != int64(len(data)) {
			t.Errorf("Size = %d, %v", n, err)
		}
		for n := 1; n <= len(data); n++ {
			root, err := ledger.TreeHash(tx, testLog, int64(n))
			if err != nil {
				return err
			}
			if want := mth(data[:n]); !bytes.Equal(root[:], want) {
				t.Fatalf("TreeHash(%d) = %x, want %x", n, root[:], want)
			}
			for i := range n {
				p, err := ledger.ProveInclusion(tx, testLog, int64(i), int64(n))
				if err != nil {
					return err
				}
				path := make([][]byte, len(p))
				for j := range p {
					path[j] = p[j][:]
				}
				got, err := rootFromInclusion(i, n, leafHash(data[i]), path)
				if err != nil || !bytes.Equal(got, root[:]) {
					t.Fatalf("inclusion of %d in %d: %v (root %x, want %x)", i, n, err, got, root[:])
				}
			}
			for m := 1; m <= n; m++ {
				p, err := ledger.ProveConsistency(tx, testLog, int64(m), int64(n))
				if err != nil {
					return err
				}
				proof := make([][]byte, len(p))
				for j := range p {
					proof[j] = p[j][:]
				}
				if err := verifyConsistency(m, n, mth(data[:m]), mth(data[:n]), proof); err != nil {
					t.Fatalf("consistency %d -> %d: %v (proof %v)", m, n, err, hexes(proof))
				}
			}
		}
		e, err := ledger.ReadEntry(tx, testLog, 7)
		if err != nil || !bytes.Equal(e.Data, data[7]) || e.TransactionHash() != hex.EncodeToString(leafHash(data[7])) {
			t.Errorf("ReadEntry(7) = %+v, %v", e, err)
		}
		for _, bad := range []func() error{
			func() error { _, err := ledger.ReadEntry(tx, testLog, int64(len(data))); return err },
			func() error { _, err := ledger.ReadEntry(tx, "other/log", 0); return err },
			func() error { _, err := ledger.TreeHash(tx, testLog, int64(len(data)+1)); return err },
			func() error { _, err := ledger.ProveInclusion(tx, testLog, 5, 5); return err },
			func() error { _, err := ledger.ProveConsistency(tx, testLog, 0, 5); return err },
			func() error { _, err := ledger.ProveConsistency(tx, testLog, 6, 5); return err },
		} {
			if err := bad(); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("out of range: %v, want ErrNotFound", err)
			}
		}
		return nil
	})
}

func TestAppend_RolledBack(t *testing.T) {
	db := openDB(t)
	appendN(t, db, testLog, 0, 3)
	boom := errors.New("boom")
	err := db.Update(func(tx *bolt.Tx) error {
		if _, err := ledger.Append(tx, testLog, map[string]int{"n": 3}); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// The entry went with the transaction: the next append is index 3
	// and chains to entry 2.
	appendN(t, db, testLog, 3, 1)
	mustView(t, db, func(tx *bolt.Tx) error {
		// No checkpoints: the key is not looked at.
		if n, _, err := ledger.Verify(tx, testLog, "o", "unused"); err != nil || n != 4 {
			t.Errorf("Verify after rollback: %d entries, %v", n, err)
		}
		return nil
	})
}

func TestCanonical(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A int    `json:"a"`
	}
	got, err := ledger.Canonical(struct {
		Type  string  `json:"type"`
		Inner inner   `json:"inner"`
		Text  string  `json:"text"`
		Num   float64 `json:"num"`
		List  []any   `json:"list"`
	}{"x", inner{"<&>", 1}, "A&B", 0.1, []any{map[string]int{"b": 2, "a": 1}, nil}}, "ab")
	want := `{"inner":{"a":1,"z":"<&>"},"list":[{"a":1,"b":2},null],"num":0.1,"prev":"ab","text":"A&B","type":"x"}`
	if err != nil || string(got) != want {
		t.Errorf("Canonical = %s, %v\nwant %s", got, err, want)
	}
	for _, bad := range []any{[]int{1}, "s", nil, map[string]string{"prev": "x"}, func() {}} {
		if _, err := ledger.Canonical(bad, ""); err == nil {
			t.Errorf("Canonical(%#v): no error", bad)
		}
	}
}

// newKey makes a signing key and binds db to it.
func newKey(t testing.TB, db *bolt.DB, name string) ledger.Key {
	t.Helper()
	k, err := ledger.GenerateKey(name)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *bolt.Tx) error { return ledger.BindVerifierKey(tx, k.Verifier) })
	return k
}

func sign(t testing.TB, db *bolt.DB, k ledger.Key) ledger.Checkpoint {
	t.Helper()
	return signAt(t, db, k, signTime)
}

// signTime is when sign signs.
var signTime = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func signAt(t testing.TB, db *bolt.DB, k ledger.Key, at time.Time) ledger.Checkpoint {
	t.Helper()
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	var cp ledger.Checkpoint
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		cp, err = ledger.Sign(tx, testLog, "eudr.test/"+testLog, s, at)
		return err
	})
	return cp
}

func TestCheckpoints(t *testing.T) {
	db := openDB(t)
	k := newKey(t, db, "eudr.test")
	if k.Name() != "eudr.test" {
		t.Errorf("Name = %q", k.Name())
	}
	// One key per store; the key file round-trips; halves must match.
	other, _ := ledger.GenerateKey("eudr.test")
	mustView(t, db, func(tx *bolt.Tx) error {
		if v, err := ledger.VerifierKey(tx); err != nil || v != k.Verifier {
			t.Errorf("VerifierKey = %q, %v", v, err)
		}
		return nil
	})
	if err := db.Update(func(tx *bolt.Tx) error { return ledger.BindVerifierKey(tx, other.Verifier) }); err == nil {
		t.Error("a store bound to a second key")
	}
	raw, _ := ledger.MarshalKey(k)
	if back, err := ledger.ParseKey(raw); err != nil || back != k {
		t.Errorf("ParseKey(MarshalKey(k)) = %+v, %v", back, err)
	}
	mixed, _ := ledger.MarshalKey(ledger.Key{Signer: k.Signer, Verifier: other.Verifier})
	if _, err := ledger.ParseKey(mixed); err == nil {
		t.Error("ParseKey took halves of two keys")
	}
	data := appendN(t, db, testLog, 0, 5)
	cp := sign(t, db, k)
	if cp.Size != 5 || !bytes.Equal(cp.Root[:], mth(data)) || cp.Origin != "eudr.test/"+testLog {
		t.Errorf("checkpoint: %+v", cp)
	}
	if !strings.HasPrefix(string(cp.Note), "eudr.test/"+testLog+"\n5\n") || !strings.Contains(string(cp.Note), "\n\n— eudr.test ") {
		t.Errorf("note: %q", cp.Note)
	}
	if again := sign(t, db, k); !bytes.Equal(again.Note, cp.Note) {
		t.Error("signing an unchanged log made a new checkpoint")
	}
	opened, err := ledger.OpenCheckpoint(cp.Note, k.Verifier)
	if err != nil || opened.Size != 5 || opened.Root != cp.Root {
		t.Errorf("OpenCheckpoint = %+v, %v", opened, err)
	}
	other = newKey(t, openDB(t), "eudr.test")
	if _, err := ledger.OpenCheckpoint(cp.Note, other.Verifier); err == nil {
		t.Error("a checkpoint opened with another key")
	}
	appendN(t, db, testLog, 5, 3)
	cp8 := sign(t, db, k)
	mustView(t, db, func(tx *bolt.Tx) error {
		latest, err := ledger.LatestCheckpoint(tx, testLog)
		if err != nil || latest.Size != 8 || !bytes.Equal(latest.Note, cp8.Note) {
			t.Errorf("LatestCheckpoint = %+v, %v", latest, err)
		}
		entries, cps, err := ledger.Verify(tx, testLog, "eudr.test/"+testLog, k.Verifier)
		if err != nil || entries != 8 || cps != 2 {
			t.Errorf("Verify = %d entries, %d checkpoints, %v", entries, cps, err)
		}
		if _, err := ledger.LatestCheckpoint(tx, "no/log"); !errors.Is(err, ledger.ErrNotFound) {
			t.Errorf("LatestCheckpoint of an empty log: %v", err)
		}
		return nil
	})
}

// tamper rewrites the stored bytes of the log's bucket name under key k.
func tamper(t testing.TB, db *bolt.DB, bucket string, k []byte, v []byte) {
	t.Helper()
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("ledger")).Bucket([]byte(testLog)).Bucket([]byte(bucket)).Put(k, v)
	})
}

func be(i int64) []byte {
	return []byte{byte(i >> 56), byte(i >> 48), byte(i >> 40), byte(i >> 32), byte(i >> 24), byte(i >> 16), byte(i >> 8), byte(i)}
}

func TestVerify_CatchesTampering(t *testing.T) {
	setup := func(t *testing.T) (*bolt.DB, ledger.Key, [][]byte) {
		db := openDB(t)
		k := newKey(t, db, "eudr.test")
		data := appendN(t, db, testLog, 0, 10)
		sign(t, db, k)
		return db, k, data
	}
	verify := func(t *testing.T, db *bolt.DB, k ledger.Key) *ledger.VerifyError {
		var ve *ledger.VerifyError
		mustView(t, db, func(tx *bolt.Tx) error {
			_, _, err := ledger.Verify(tx, testLog, "eudr.test/"+testLog, k.Verifier)
			if !errors.As(err, &ve) {
				t.Fatalf("Verify = %v, want a *VerifyError", err)
			}
			return nil
		})
		return ve
	}

	t.Run("TamperedEntry", func(t *testing.T) {
		db, k, data := setup(t)
		// Same canonical form and prev, one value changed.
		tamper(t, db, "entries", be(4), bytes.Replace(data[4], []byte(`"n":4`), []byte(`"n":9`), 1))
		if ve := verify(t, db, k); ve.Index != 4 || ve.Step != ledger.StepTree {
			t.Errorf("got %v, want entry 4 at step tree", ve)
		}
	})
	t.Run("ReorderedEntries", func(t *testing.T) {
		db, k, data := setup(t)
		tamper(t, db, "entries", be(6), data[7])
		tamper(t, db, "entries", be(7), data[6])
		if ve := verify(t, db, k); ve.Index != 6 || ve.Step != ledger.StepChain {
			t.Errorf("got %v, want entry 6 at step chain", ve)
		}
	})
	t.Run("RewrittenHistory", func(t *testing.T) {
		// Entry 2 changed and every later entry and hash rebuilt to match
		// (a consistent but different log): only the checkpoint, signed
		// over the old root, tells.
		db, k, _ := setup(t)
		var old []byte
		mustUpdate(t, db, func(tx *bolt.Tx) error {
			lb := tx.Bucket([]byte("ledger"))
			old = bytes.Clone(lb.Bucket([]byte(testLog)).Bucket([]byte("checkpoints")).Get(be(10)))
			return lb.DeleteBucket([]byte(testLog))
		})
		mustUpdate(t, db, func(tx *bolt.Tx) error {
			for i := range 10 {
				n := i
				if i == 2 {
					n = 99
				}
				if _, err := ledger.Append(tx, testLog, map[string]any{"n": n, "type": "test"}); err != nil {
					return err
				}
			}
			return nil
		})
		tamper(t, db, "checkpoints", be(10), old)
		if ve := verify(t, db, k); ve.Step != ledger.StepRoot || ve.Checkpoint != 10 {
			t.Errorf("got %v, want the checkpoint of size 10 at step root", ve)
		}
		// Re-signed by whoever holds the key, the rewritten log verifies;
		// only the checkpoint kept outside tells.
		cp, err := ledger.OpenCheckpoint(old, k.Verifier)
		if err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, db, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("ledger")).Bucket([]byte(testLog)).Bucket([]byte("checkpoints")).Delete(be(10))
		})
		sign(t, db, k)
		mustView(t, db, func(tx *bolt.Tx) error {
			if _, _, err := ledger.Verify(tx, testLog, "eudr.test/"+testLog, k.Verifier); err != nil {
				t.Errorf("re-signed log: %v", err)
			}
			if err := ledger.CheckConsistent(tx, testLog, cp); err == nil || !strings.Contains(err.Error(), "rewritten") {
				t.Errorf("CheckConsistent with the old checkpoint: %v", err)
			}
			return nil
		})
	})
	t.Run("ForgedCheckpoint", func(t *testing.T) {
		db, k, data := setup(t)
		// Signed by another key over the right root.
		forger := newKey(t, openDB(t), "eudr.test")
		s, _ := note.NewSigner(forger.Signer)
		msg, err := note.Sign(&note.Note{Text: fmt.Sprintf("eudr.test/%s\n10\n%s\n", testLog, base64.StdEncoding.EncodeToString(mth(data)))}, s)
		if err != nil {
			t.Fatal(err)
		}
		tamper(t, db, "checkpoints", be(10), msg)
		if ve := verify(t, db, k); ve.Checkpoint != 10 || ve.Step != ledger.StepSignature {
			t.Errorf("got %v, want checkpoint 10 at step signature", ve)
		}
	})
	t.Run("MissingHash", func(t *testing.T) {
		db, k, _ := setup(t)
		mustUpdate(t, db, func(tx *bolt.Tx) error {
			return tx.Bucket([]byte("ledger")).Bucket([]byte(testLog)).Bucket([]byte("hashes")).Delete(be(3))
		})
		if ve := verify(t, db, k); ve.Index < 0 || ve.Step != ledger.StepTree {
			t.Errorf("got %v, want an entry at step tree", ve)
		}
	})
	t.Run("NotCanonical", func(t *testing.T) {
		db, k, data := setup(t)
		tamper(t, db, "entries", be(0), append([]byte(" "), data[0]...))
		if ve := verify(t, db, k); ve.Index != 0 || ve.Step != ledger.StepCanonical {
			t.Errorf("got %v, want entry 0 at step canonical", ve)
		}
	})
}

func TestLastSigned(t *testing.T) {
	db := openDB(t)
	k := newKey(t, db, "eudr.test")
	lastSigned := func() (time.Time, bool) {
		var at time.Time
		var ok bool
		mustView(t, db, func(tx *bolt.Tx) error { at, ok = ledger.LastSigned(tx); return nil })
		return at, ok
	}
	if at, ok := lastSigned(); ok {
		t.Errorf("before any checkpoint: LastSigned = %v, true; want false", at)
	}
	t1 := signTime
	appendN(t, db, testLog, 0, 2)
	signAt(t, db, k, t1)
	if at, ok := lastSigned(); !ok || !at.Equal(t1) {
		t.Errorf("after the first checkpoint: LastSigned = %v, %v; want %v", at, ok, t1)
	}
	// Nothing new to sign: the checkpoint of an hour ago stands.
	signAt(t, db, k, t1.Add(time.Hour))
	if at, _ := lastSigned(); !at.Equal(t1) {
		t.Errorf("after signing an unchanged log: LastSigned = %v, want %v", at, t1)
	}
	// A checkpoint of any log is the store's newest.
	t2 := t1.Add(2 * time.Hour)
	appendN(t, db, "other/log", 0, 1)
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		_, err := ledger.Sign(tx, "other/log", "eudr.test/other/log", s, t2)
		return err
	})
	if at, _ := lastSigned(); !at.Equal(t2) {
		t.Errorf("after a checkpoint of another log: LastSigned = %v, want %v", at, t2)
	}
}

// Each log's newest checkpoint carries its own signing time: a checkpoint
// of another log, newer, does not change it.
func TestCheckpointSignedAt(t *testing.T) {
	db := openDB(t)
	k := newKey(t, db, "eudr.test")
	latest := func(log string) ledger.Checkpoint {
		var cp ledger.Checkpoint
		mustView(t, db, func(tx *bolt.Tx) error {
			var err error
			cp, err = ledger.LatestCheckpoint(tx, log)
			return err
		})
		return cp
	}
	t1 := signTime
	appendN(t, db, testLog, 0, 2)
	signAt(t, db, k, t1)
	if got := latest(testLog).SignedAt; !got.Equal(t1) {
		t.Errorf("SignedAt = %v, want %v", got, t1)
	}
	s, err := note.NewSigner(k.Signer)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, db, "other/log", 0, 1)
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		cp, err := ledger.Sign(tx, "other/log", "eudr.test/other/log", s, t1.Add(time.Hour))
		if err == nil && !cp.SignedAt.Equal(t1.Add(time.Hour)) {
			t.Errorf("Sign's SignedAt = %v, want %v", cp.SignedAt, t1.Add(time.Hour))
		}
		return err
	})
	if got := latest(testLog).SignedAt; !got.Equal(t1) {
		t.Errorf("after another log's checkpoint: SignedAt = %v, want %v", got, t1)
	}
	// Signing an unchanged log answers its checkpoint with its own time.
	mustUpdate(t, db, func(tx *bolt.Tx) error {
		cp, err := ledger.Sign(tx, testLog, "eudr.test/"+testLog, s, t1.Add(2*time.Hour))
		if err == nil && !cp.SignedAt.Equal(t1) {
			t.Errorf("unchanged log: SignedAt = %v, want %v", cp.SignedAt, t1)
		}
		return err
	})
}

// The first checkpoint covering an entry is the one signed with it (or
// the next), whatever was signed after: a proof made in it stays the same.
func TestFirstCheckpointCovering(t *testing.T) {
	db := openDB(t)
	k := newKey(t, db, "eudr.test")
	appendN(t, db, testLog, 0, 3)
	first := sign(t, db, k) // size 3
	appendN(t, db, testLog, 3, 2)
	second := sign(t, db, k)      // size 5
	appendN(t, db, testLog, 5, 1) // not signed yet
	mustView(t, db, func(tx *bolt.Tx) error {
		for entry, want := range map[int64]ledger.Checkpoint{0: first, 2: first, 3: second, 4: second} {
			cp, err := ledger.FirstCheckpointCovering(tx, testLog, entry)
			if err != nil || cp.Size != want.Size || cp.Root != want.Root || !bytes.Equal(cp.Note, want.Note) {
				t.Errorf("entry %d: checkpoint of size %d (%v), want %d", entry, cp.Size, err, want.Size)
			}
		}
		for _, entry := range []int64{5, -1} {
			if _, err := ledger.FirstCheckpointCovering(tx, testLog, entry); !errors.Is(err, ledger.ErrNotFound) {
				t.Errorf("entry %d: %v, want ErrNotFound", entry, err)
			}
		}
		return nil
	})
}
