package storage_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/storage"
)

func TestDB_Backup(t *testing.T) {
	tn := storage.Tenant{Org: "a", Env: storage.Production}

	t.Run("ConsistentWhileWriting", func(t *testing.T) {
		db := MustOpenDB(t)
		const before = 50
		for i := range before {
			mustUpdate(t, db, func(tx *storage.Tx) error {
				return tx.PutSupplier(tn, &storage.Supplier{ID: fmt.Sprintf("sup_a%04d", i), ERPVendorID: fmt.Sprintf("A%04d", i)})
			})
		}

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		var written atomic.Int64
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				err := db.Update(context.Background(), func(tx *storage.Tx) error {
					return tx.PutSupplier(tn, &storage.Supplier{
						ID:          fmt.Sprintf("sup_b%06d", i),
						ERPVendorID: fmt.Sprintf("B%06d", i),
						Name:        string(bytes.Repeat([]byte{'x'}, 512)),
					})
				})
				if err != nil {
					t.Errorf("concurrent PutSupplier %d: %v", i, err)
					return
				}
				written.Add(1)
			}
		}()
		// Let the writer get going so the backup overlaps real writes.
		for written.Load() < 20 {
			time.Sleep(time.Millisecond)
		}

		target := filepath.Join(t.TempDir(), storage.FileName)
		var announced int64 = -1
		var buf bytes.Buffer
		n, err := db.Backup(context.Background(), &buf, func(size int64) { announced = size })
		if err != nil {
			cancel()
			wg.Wait()
			t.Fatalf("Backup: %v", err)
		}
		if got, want := n, int64(buf.Len()); got != want {
			t.Errorf("Backup returned %d bytes, want %d (written)", got, want)
		}
		if got, want := announced, n; got != want {
			t.Errorf("Backup announced size: got %d, want %d", got, want)
		}
		fn, err := db.BackupFile(context.Background(), target)
		cancel()
		wg.Wait()
		if err != nil {
			t.Fatalf("BackupFile(%s): %v", target, err)
		}
		if written.Load() < 21 {
			t.Logf("only %d concurrent writes", written.Load())
		}

		fi, err := os.Stat(target)
		if err != nil {
			t.Fatalf("stat backup: %v", err)
		}
		if got, want := fi.Size(), fn; got != want {
			t.Errorf("backup file size: got %d, want %d (returned)", got, want)
		}
		checkBackup(t, target, before)

		// The in-memory backup is a store too.
		target2 := filepath.Join(t.TempDir(), storage.FileName)
		if err := os.WriteFile(target2, buf.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		checkBackup(t, target2, before)
	})

	t.Run("FileModeAndNoTemp", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutOrg(&storage.Org{ID: "org_1"}) })
		dir := t.TempDir()
		target := filepath.Join(dir, "backup.db")
		// An existing file under the name is replaced.
		if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		n, err := db.BackupFile(context.Background(), target)
		if err != nil {
			t.Fatalf("BackupFile: %v", err)
		}
		fi, err := os.Stat(target)
		if err != nil {
			t.Fatalf("stat backup: %v", err)
		}
		if got, want := fi.Mode().Perm(), os.FileMode(0o600); got != want {
			t.Errorf("backup mode: got %v, want %v", got, want)
		}
		if got := fi.Size(); got != n || n <= 0 {
			t.Errorf("backup size: got %d, want %d (returned, > 0)", got, n)
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) != 1 || entries[0].Name() != "backup.db" {
			var names []string
			for _, e := range entries {
				names = append(names, e.Name())
			}
			t.Errorf("files in backup dir: got %v, want [backup.db]", names)
		}
	})

	t.Run("CancelledContext", func(t *testing.T) {
		db := MustOpenDB(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		dir := t.TempDir()
		target := filepath.Join(dir, "backup.db")
		if _, err := db.BackupFile(ctx, target); !errors.Is(err, context.Canceled) {
			t.Errorf("BackupFile(cancelled ctx): got %v, want context.Canceled", err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("files after cancelled BackupFile: got %d, want 0", len(entries))
		}
	})
}

// checkBackup opens the backup at path with bbolt (consistency check) and
// with storage.Open read-only, and wants suppliers A0000..A<before-1>.
func checkBackup(t *testing.T, path string, before int) {
	t.Helper()
	bdb, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: time.Second})
	if err != nil {
		t.Fatalf("bolt.Open(backup): %v", err)
	}
	err = bdb.View(func(btx *bolt.Tx) error {
		for err := range btx.Check() {
			t.Errorf("backup check: %v", err)
		}
		return nil
	})
	bdb.Close()
	if err != nil {
		t.Fatalf("backup View: %v", err)
	}

	if base := filepath.Base(path); base != storage.FileName {
		t.Fatalf("backup named %s, want %s", base, storage.FileName)
	}
	db := MustOpenDBAt(t, filepath.Dir(path), storage.Options{ReadOnly: true})
	s, err := db.Status(context.Background())
	if err != nil {
		t.Fatalf("backup Status: %v", err)
	}
	if got, want := s.SchemaVersion, storage.SchemaVersion; got != want {
		t.Errorf("backup SchemaVersion: got %d, want %d", got, want)
	}
	tn := storage.Tenant{Org: "a", Env: storage.Production}
	mustView(t, db, func(tx *storage.Tx) error {
		for i := range before {
			id := fmt.Sprintf("A%04d", i)
			s, err := tx.FindSupplier(tn, id)
			if err != nil {
				t.Errorf("backup FindSupplier(%s): got %v, want the supplier", id, err)
				continue
			}
			if got, want := s.ID, fmt.Sprintf("sup_a%04d", i); got != want {
				t.Errorf("backup FindSupplier(%s).ID: got %q, want %q", id, got, want)
			}
		}
		all, more, err := tx.FindSuppliers(tn, storage.Page{Limit: 1 << 20})
		if err != nil {
			t.Fatalf("backup FindSuppliers: %v", err)
		}
		if more || len(all) < before {
			t.Errorf("backup FindSuppliers: got %d (more=%v), want >= %d (more=false)", len(all), more, before)
		}
		// Every ID in the index resolves: the copy is one consistent state.
		for _, s := range all {
			if s.ERPVendorID == "" {
				t.Errorf("backup supplier %s has no ERPVendorID", s.ID)
			}
		}
		return nil
	})
}

func TestWriteFileAtomic(t *testing.T) {
	t.Run("OK", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out")
		n, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
			m, err := io.WriteString(w, "hello")
			return int64(m), err
		})
		if err != nil {
			t.Fatalf("WriteFileAtomic: %v", err)
		}
		if n != 5 {
			t.Errorf("WriteFileAtomic returned %d, want 5", n)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "hello" {
			t.Errorf("content: got %q, want %q", got, "hello")
		}
	})

	t.Run("WriteErrorLeavesNothing", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out")
		boom := errors.New("boom")
		n, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
			io.WriteString(w, "partial")
			return 7, boom
		})
		if !errors.Is(err, boom) {
			t.Errorf("WriteFileAtomic: got %v, want %v", err, boom)
		}
		if n != 0 {
			t.Errorf("WriteFileAtomic on error returned %d bytes, want 0", n)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat %s after failed write: got %v, want not exist", path, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("files after failed write: got %d (%s...), want 0", len(entries), entries[0].Name())
		}
	})

	t.Run("WriteErrorKeepsExisting", func(t *testing.T) {
		dir := t.TempDir()
		path := filepath.Join(dir, "out")
		if err := os.WriteFile(path, []byte("previous"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
			io.WriteString(w, "partial")
			return 7, errors.New("boom")
		})
		if err == nil {
			t.Fatalf("WriteFileAtomic: got nil error, want boom")
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "previous" {
			t.Errorf("content after failed write: got %q, want %q", got, "previous")
		}
	})

	t.Run("MissingDir", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "no", "such", "out")
		_, err := storage.WriteFileAtomic(path, func(w io.Writer) (int64, error) {
			t.Errorf("write called, want no call when the temp file cannot be created")
			return 0, nil
		})
		if err == nil {
			t.Errorf("WriteFileAtomic into missing dir: got nil error, want an error")
		}
	})
}
