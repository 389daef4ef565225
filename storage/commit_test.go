package storage_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

// commitLog collects what Options.ObserveCommit is told.
type commitLog struct {
	mu    sync.Mutex
	times []time.Duration
}

func (l *commitLog) observe(d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.times = append(l.times, d)
}

func (l *commitLog) took() []time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]time.Duration(nil), l.times...)
}

func TestDB_ObserveCommit(t *testing.T) {
	put := func(id string) func(tx *storage.Tx) error {
		return func(tx *storage.Tx) error { return tx.PutOrg(&storage.Org{ID: id}) }
	}

	t.Run("OncePerUpdate", func(t *testing.T) {
		var log commitLog
		db := MustOpenDBAt(t, t.TempDir(), storage.Options{ObserveCommit: log.observe})
		mustUpdate(t, db, put("org_1"))
		mustUpdate(t, db, put("org_2"))
		got := log.took()
		if len(got) != 2 {
			t.Fatalf("after two Updates: %d commits observed, want 2", len(got))
		}
		for i, d := range got {
			if d <= 0 {
				t.Errorf("commit %d took %v, want a positive duration", i, d)
			}
		}
	})

	t.Run("NotOnRollbackOrRead", func(t *testing.T) {
		var log commitLog
		db := MustOpenDBAt(t, t.TempDir(), storage.Options{ObserveCommit: log.observe})
		boom := errors.New("boom")
		err := db.Update(context.Background(), func(tx *storage.Tx) error {
			if err := put("org_1")(tx); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			t.Fatalf("Update: got %v, want %v", err, boom)
		}
		mustView(t, db, func(tx *storage.Tx) error { return nil })
		if got := log.took(); len(got) != 0 {
			t.Errorf("after a rolled back Update and a View: %d commits observed, want 0", len(got))
		}
	})

	t.Run("OncePerBatchCommit", func(t *testing.T) {
		var log commitLog
		db := MustOpenDBAt(t, t.TempDir(), storage.Options{ObserveCommit: log.observe})
		// Calls that share a transaction share its commit: as many
		// observations as distinct transactions the calls committed in.
		var mu sync.Mutex
		txs := map[int]bool{}
		var wg sync.WaitGroup
		for i := range 16 {
			wg.Go(func() {
				err := db.Batch(context.Background(), func(tx *storage.Tx) error {
					mu.Lock()
					txs[tx.ID()] = true
					mu.Unlock()
					return put("org_" + string(rune('a'+i)))(tx)
				})
				if err != nil {
					t.Errorf("Batch %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if got := len(log.took()); got != len(txs) {
			t.Errorf("16 Batch calls in %d transactions: %d commits observed, want %d", len(txs), got, len(txs))
		}
	})
}
