package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/storage"
)

// testNow is the fixed clock of stores opened by MustOpenDB.
var testNow = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// MustOpenDB opens a writable store in a new temp dir with a fixed clock and
// closes it when the test ends.
func MustOpenDB(tb testing.TB) *storage.DB {
	tb.Helper()
	return MustOpenDBAt(tb, tb.TempDir(), storage.Options{Now: func() time.Time { return testNow }})
}

// MustOpenDBAt opens the store in dir with opts and closes it when the test
// ends.
func MustOpenDBAt(tb testing.TB, dir string, opts storage.Options) *storage.DB {
	tb.Helper()
	db, err := storage.Open(dir, opts)
	if err != nil {
		tb.Fatalf("Open(%s, %+v): %v", dir, opts, err)
	}
	tb.Cleanup(func() {
		if err := db.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return db
}

// mustUpdate runs fn in a write transaction and fails the test on error.
func mustUpdate(tb testing.TB, db *storage.DB, fn func(tx *storage.Tx) error) {
	tb.Helper()
	if err := db.Update(context.Background(), fn); err != nil {
		tb.Fatalf("Update: %v", err)
	}
}

// mustView runs fn in a read transaction and fails the test on error.
func mustView(tb testing.TB, db *storage.DB, fn func(tx *storage.Tx) error) {
	tb.Helper()
	if err := db.View(context.Background(), fn); err != nil {
		tb.Fatalf("View: %v", err)
	}
}

// writeSchemaVersion sets meta/schema_version of the closed store in dir,
// bypassing package storage.
func writeSchemaVersion(tb testing.TB, dir string, v string) {
	tb.Helper()
	bdb, err := bolt.Open(filepath.Join(dir, storage.FileName), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatalf("bolt.Open: %v", err)
	}
	defer bdb.Close()
	err = bdb.Update(func(btx *bolt.Tx) error {
		meta := btx.Bucket([]byte("meta"))
		if meta == nil {
			return errors.New("no meta bucket")
		}
		return meta.Put([]byte("schema_version"), []byte(v))
	})
	if err != nil {
		tb.Fatalf("write schema_version %s: %v", v, err)
	}
}

// openWithin calls storage.Open and fails the test if it has not returned
// after d (a lost lock timeout would otherwise hang until the test deadline).
func openWithin(t *testing.T, dir string, opts storage.Options, d time.Duration) (*storage.DB, error) {
	t.Helper()
	type result struct {
		db  *storage.DB
		err error
	}
	done := make(chan result, 1)
	go func() {
		db, err := storage.Open(dir, opts)
		done <- result{db, err}
	}()
	select {
	case r := <-done:
		return r.db, r.err
	case <-time.After(d):
		// Reap the late Open once the store holding the lock is closed
		// (cleanups run in reverse order, so it may still be open here).
		go func() {
			if r := <-done; r.err == nil {
				r.db.Close()
			}
		}()
		t.Fatalf("Open(%s, ReadOnly=%v) still blocked after %v, want ErrInUse within a few seconds", dir, opts.ReadOnly, d)
		return nil, nil
	}
}

func TestDB_Open(t *testing.T) {
	t.Run("CreatesDirAndFile", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "nested", "data")
		db := MustOpenDBAt(t, dir, storage.Options{})
		if got, want := db.Path(), filepath.Join(dir, storage.FileName); got != want {
			t.Errorf("Path() = %q, want %q", got, want)
		}
		fi, err := os.Stat(filepath.Join(dir, storage.FileName))
		if err != nil {
			t.Fatalf("stat store file: %v", err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("store file mode: got %v, want %v", got, want)
		}
		di, err := os.Stat(dir)
		if err != nil {
			t.Fatalf("stat data dir: %v", err)
		}
		if !di.IsDir() {
			t.Errorf("data dir %s: got mode %v, want a directory", dir, di.Mode())
		}
	})

	t.Run("RecordsSchemaVersion", func(t *testing.T) {
		db := MustOpenDB(t)
		s, err := db.Status(context.Background())
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		if got, want := s.SchemaVersion, storage.SchemaVersion; got != want {
			t.Errorf("SchemaVersion: got %d, want %d", got, want)
		}
		if s.SizeBytes <= 0 {
			t.Errorf("SizeBytes: got %d, want > 0", s.SizeBytes)
		}
		mustView(t, db, func(tx *storage.Tx) error {
			v := tx.Bucket([]byte("meta")).Get([]byte("schema_version"))
			if got, want := string(v), strconv.Itoa(storage.SchemaVersion); got != want {
				t.Errorf("meta schema_version: got %q, want %q", got, want)
			}
			return nil
		})
	})

	t.Run("Reopen", func(t *testing.T) {
		dir := t.TempDir()
		t1 := storage.Tenant{Org: "a", Env: storage.Sandbox}
		db, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatalf("first Open: %v", err)
		}
		if err := db.Update(context.Background(), func(tx *storage.Tx) error {
			return tx.PutSupplier(t1, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1", Name: "one"})
		}); err != nil {
			t.Fatalf("PutSupplier: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		db = MustOpenDBAt(t, dir, storage.Options{})
		s, err := db.Status(context.Background())
		if err != nil {
			t.Fatalf("Status after reopen: %v", err)
		}
		if got, want := s.SchemaVersion, storage.SchemaVersion; got != want {
			t.Errorf("SchemaVersion after reopen: got %d, want %d", got, want)
		}
		mustView(t, db, func(tx *storage.Tx) error {
			s, err := tx.FindSupplier(t1, "V1")
			if err != nil {
				t.Fatalf("FindSupplier(V1) after reopen: got error %v, want the supplier", err)
			}
			if got, want := s.Name, "one"; got != want {
				t.Errorf("FindSupplier(V1).Name: got %q, want %q", got, want)
			}
			return nil
		})
	})

	t.Run("ErrInUse", func(t *testing.T) {
		dir := t.TempDir()
		MustOpenDBAt(t, dir, storage.Options{})
		for _, ro := range []bool{false, true} {
			start := time.Now()
			db, err := openWithin(t, dir, storage.Options{ReadOnly: ro}, 5*time.Second)
			elapsed := time.Since(start)
			if err == nil {
				db.Close()
				t.Fatalf("second Open(ReadOnly=%v) while open: got nil error, want ErrInUse", ro)
			}
			if !errors.Is(err, storage.ErrInUse) {
				t.Errorf("second Open(ReadOnly=%v): got %v, want ErrInUse", ro, err)
			}
			if elapsed > 5*time.Second {
				t.Errorf("second Open(ReadOnly=%v) took %v, want < 5s", ro, elapsed)
			}
		}
	})

	t.Run("ErrInUseWhileReadOnlyHolds", func(t *testing.T) {
		dir := t.TempDir()
		db, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		db.Close()
		MustOpenDBAt(t, dir, storage.Options{ReadOnly: true})
		db, err = openWithin(t, dir, storage.Options{}, 5*time.Second)
		if err == nil {
			db.Close()
			t.Fatalf("writable Open while a read-only Open holds the store: got nil error, want ErrInUse")
		}
		if !errors.Is(err, storage.ErrInUse) {
			t.Errorf("writable Open while read-only holds: got %v, want ErrInUse", err)
		}
	})

	t.Run("ReadOnlyMissing", func(t *testing.T) {
		dir := filepath.Join(t.TempDir(), "missing")
		db, err := storage.Open(dir, storage.Options{ReadOnly: true})
		if err == nil {
			db.Close()
			t.Fatalf("Open(ReadOnly) of missing store: got nil error, want an error")
		}
		if !errors.Is(err, storage.ErrReadOnlyNotFound) {
			t.Errorf("Open(ReadOnly) of missing store: got %v, want errReadOnlyNotFound", err)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat %s after read-only Open: got %v, want it not to exist", dir, err)
		}
	})

	t.Run("ReadOnlyExisting", func(t *testing.T) {
		dir := t.TempDir()
		tn := storage.Tenant{Org: "a", Env: storage.Production}
		db, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		if err := db.Update(context.Background(), func(tx *storage.Tx) error {
			return tx.PutSupplier(tn, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"})
		}); err != nil {
			t.Fatalf("PutSupplier: %v", err)
		}
		db.Close()

		ro := MustOpenDBAt(t, dir, storage.Options{ReadOnly: true})
		// A second reader shares the lock.
		MustOpenDBAt(t, dir, storage.Options{ReadOnly: true})
		s, err := ro.Status(context.Background())
		if err != nil {
			t.Fatalf("Status: %v", err)
		}
		if got, want := s.SchemaVersion, storage.SchemaVersion; got != want {
			t.Errorf("SchemaVersion: got %d, want %d", got, want)
		}
		mustView(t, ro, func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(tn, "V1"); err != nil {
				t.Errorf("FindSupplier(V1) read-only: got %v, want the supplier", err)
			}
			return nil
		})
		err = ro.Update(context.Background(), func(tx *storage.Tx) error {
			return tx.PutOrg(&storage.Org{ID: "x"})
		})
		if err == nil {
			t.Errorf("Update on read-only store: got nil error, want an error")
		}
	})

	t.Run("SchemaTooNew", func(t *testing.T) {
		dir := t.TempDir()
		db, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		db.Close()
		writeSchemaVersion(t, dir, strconv.Itoa(storage.SchemaVersion+1))
		for _, ro := range []bool{false, true} {
			db, err := storage.Open(dir, storage.Options{ReadOnly: ro})
			if err == nil {
				db.Close()
				t.Fatalf("Open(ReadOnly=%v) of schema %d: got nil error, want refusal", ro, storage.SchemaVersion+1)
			}
			if !errors.Is(err, storage.ErrSchemaTooNew) {
				t.Errorf("Open(ReadOnly=%v) of schema %d: got %v, want errSchemaTooNew", ro, storage.SchemaVersion+1, err)
			}
		}
		// A refused Open releases the file: the lock is not leaked.
		writeSchemaVersion(t, dir, strconv.Itoa(storage.SchemaVersion))
		MustOpenDBAt(t, dir, storage.Options{})
	})

	t.Run("SchemaGarbage", func(t *testing.T) {
		dir := t.TempDir()
		db, err := storage.Open(dir, storage.Options{})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		db.Close()
		writeSchemaVersion(t, dir, "one")
		if db, err := storage.Open(dir, storage.Options{}); err == nil {
			db.Close()
			t.Errorf(`Open with schema_version "one": got nil error, want an error`)
		}
	})
}

func TestDB_Update(t *testing.T) {
	t.Run("NowIsInjectedClockInUTC", func(t *testing.T) {
		zone := time.FixedZone("CET", 3600)
		base := time.Date(2025, 6, 1, 12, 0, 0, 0, zone)
		var calls atomic.Int64
		clock := func() time.Time { return base.Add(time.Duration(calls.Add(1)) * time.Second) }
		db := MustOpenDBAt(t, t.TempDir(), storage.Options{Now: clock})

		check := func(name string, tx *storage.Tx) {
			t.Helper()
			first := tx.Now()
			if got, want := first.Location(), time.UTC; got != want {
				t.Errorf("%s: tx.Now().Location(): got %v, want %v", name, got, want)
			}
			if first.Before(base) || first.After(base.Add(time.Minute)) {
				t.Errorf("%s: tx.Now(): got %v, want the injected clock near %v", name, first, base.UTC())
			}
			if second := tx.Now(); !second.Equal(first) {
				t.Errorf("%s: second tx.Now(): got %v, want %v (fixed per transaction)", name, second, first)
			}
		}
		mustUpdate(t, db, func(tx *storage.Tx) error { check("Update", tx); return nil })
		mustView(t, db, func(tx *storage.Tx) error { check("View", tx); return nil })
	})

	t.Run("CancelledContext", func(t *testing.T) {
		db := MustOpenDB(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		err := db.Update(ctx, func(tx *storage.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Update(cancelled ctx): got %v, want context.Canceled", err)
		}
		if ran {
			t.Errorf("Update(cancelled ctx): fn ran, want it not to run")
		}
		ran = false
		err = db.View(ctx, func(tx *storage.Tx) error { ran = true; return nil })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("View(cancelled ctx): got %v, want context.Canceled", err)
		}
		if ran {
			t.Errorf("View(cancelled ctx): fn ran, want it not to run")
		}
		if _, err := db.Status(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Status(cancelled ctx): got %v, want context.Canceled", err)
		}
	})

	t.Run("ErrorRollsBack", func(t *testing.T) {
		db := MustOpenDB(t)
		tn := storage.Tenant{Org: "a", Env: storage.Sandbox}
		boom := errors.New("boom")
		err := db.Update(context.Background(), func(tx *storage.Tx) error {
			if err := tx.PutSupplier(tn, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"}); err != nil {
				return err
			}
			if err := tx.PutOrg(&storage.Org{ID: "org_1"}); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update: got %v, want %v", err, boom)
		}
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(tn, "V1"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindSupplier(V1) after rollback: got %v, want ErrNotFound", err)
			}
			if _, err := tx.FindOrg("org_1"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindOrg(org_1) after rollback: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}

// supplierIDs returns the IDs of ss in order.
func supplierIDs(ss []*storage.Supplier) []string {
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.ID
	}
	return ids
}
