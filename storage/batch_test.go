package storage_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/eudr/eudr/storage"
)

func TestDB_Batch(t *testing.T) {
	db := MustOpenDB(t)
	tn := storage.Tenant{Org: "a", Env: storage.Sandbox}
	errBusiness := errors.New("business rule")

	// Concurrent calls, every third one failing: the others commit, each
	// failure reaches only its own caller.
	var wg sync.WaitGroup
	errs := make([]error, 30)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = db.Batch(context.Background(), func(tx *storage.Tx) error {
				if err := tx.PutSupplier(tn, &storage.Supplier{ID: fmt.Sprintf("sup_%02d", i), ERPVendorID: fmt.Sprintf("V%02d", i)}); err != nil {
					return err
				}
				if i%3 == 0 {
					return errBusiness
				}
				return nil
			})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		want := error(nil)
		if i%3 == 0 {
			want = errBusiness
		}
		if !errors.Is(err, want) && err != want {
			t.Errorf("call %d: got %v, want %v", i, err, want)
		}
	}
	mustView(t, db, func(tx *storage.Tx) error {
		for i := range errs {
			_, err := tx.FindSupplier(tn, fmt.Sprintf("V%02d", i))
			if stored := err == nil; stored != (i%3 != 0) {
				t.Errorf("supplier of call %d: stored %v, want %v", i, stored, i%3 != 0)
			}
		}
		return nil
	})

	t.Run("PanicReachesTheCaller", func(t *testing.T) {
		// Like Update: the panic is the caller's, for its own recovery; the
		// store stays usable.
		func() {
			defer func() {
				if p := recover(); p != "handler bug" {
					t.Errorf("recovered %v, want the fn's panic", p)
				}
			}()
			db.Batch(context.Background(), func(*storage.Tx) error { panic("handler bug") })
		}()
		if err := db.Batch(context.Background(), func(*storage.Tx) error { return nil }); err != nil {
			t.Errorf("Batch after a panic: %v", err)
		}
	})
	t.Run("CancelledContext", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ran := false
		if err := db.Batch(ctx, func(*storage.Tx) error { ran = true; return nil }); !errors.Is(err, context.Canceled) || ran {
			t.Errorf("Batch with a cancelled ctx: got %v (ran %v), want context.Canceled without running", err, ran)
		}
	})
}
