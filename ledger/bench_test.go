package ledger_test

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/ledger"
)

// benchEntry is about the size of a screening result's entry.
func benchEntry(i int) map[string]any {
	return map[string]any{"type": "polygon.screened", "polygonId": "pol_01JD3R7F5G6H7J8K9M0N1P2Q3R_000042",
		"evidenceSha256": "9f2c1e4d5b6a7f8091a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708", "n": i}
}

// BenchmarkAppend is one entry per committed (fsynced) transaction.
func BenchmarkAppend(b *testing.B) {
	db := openDB(b)
	i := 0
	for b.Loop() {
		if err := db.Update(func(tx *bolt.Tx) error {
			_, err := ledger.Append(tx, testLog, benchEntry(i))
			return err
		}); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
}

// BenchmarkAppendBatched is 1,000 entries per committed transaction, as a
// job recording a chunk of results does.
func BenchmarkAppendBatched(b *testing.B) {
	const per = 1000
	db := openDB(b)
	i := 0
	for b.Loop() {
		if err := db.Update(func(tx *bolt.Tx) error {
			for range per {
				if _, err := ledger.Append(tx, testLog, benchEntry(i)); err != nil {
					return err
				}
				i++
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*per)/b.Elapsed().Seconds(), "appends/s")
}

var (
	millionOnce sync.Once
	millionDB   *bolt.DB
	millionErr  error
)

// millionLog is a log of 1,000,000 entries, built once per run (about half
// a minute) in a temporary directory.
func millionLog(b *testing.B) *bolt.DB {
	millionOnce.Do(func() {
		dir, err := os.MkdirTemp("", "ledger-bench")
		if err != nil {
			millionErr = err
			return
		}
		db, err := bolt.Open(filepath.Join(dir, "ledger.db"), 0o600, &bolt.Options{NoSync: true})
		if err != nil {
			millionErr = err
			return
		}
		millionErr = db.Update(ledger.Init)
		for i := 0; i < 1_000_000 && millionErr == nil; i += 10_000 {
			millionErr = db.Update(func(tx *bolt.Tx) error {
				for j := range 10_000 {
					if _, err := ledger.Append(tx, testLog, benchEntry(i+j)); err != nil {
						return err
					}
				}
				return nil
			})
		}
		millionDB = db
	})
	if millionErr != nil {
		b.Fatal(millionErr)
	}
	return millionDB
}

// BenchmarkProveInclusion1M is one inclusion proof of a random entry
// against the whole tree of 1,000,000 entries, in a read transaction.
func BenchmarkProveInclusion1M(b *testing.B) {
	db := millionLog(b)
	rng := rand.New(rand.NewPCG(1, 2))
	b.ResetTimer()
	for b.Loop() {
		if err := db.View(func(tx *bolt.Tx) error {
			_, err := ledger.ProveInclusion(tx, testLog, rng.Int64N(1_000_000), 1_000_000)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTreeHash1M is the root of the tree of 1,000,000 entries.
func BenchmarkTreeHash1M(b *testing.B) {
	db := millionLog(b)
	b.ResetTimer()
	for b.Loop() {
		if err := db.View(func(tx *bolt.Tx) error {
			_, err := ledger.TreeHash(tx, testLog, 1_000_000)
			return err
		}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMain removes the million-entry log a benchmark built.
func TestMain(m *testing.M) {
	code := m.Run()
	if millionDB != nil {
		path := millionDB.Path()
		millionDB.Close()
		os.RemoveAll(filepath.Dir(path))
	}
	os.Exit(code)
}
