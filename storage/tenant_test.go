package storage_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

func TestTx_Tenancy(t *testing.T) {
	owner := storage.Tenant{Org: "a", Env: storage.Sandbox}
	others := []storage.Tenant{
		{Org: "a", Env: storage.Production},
		{Org: "b", Env: storage.Sandbox},
	}

	t.Run("Isolated", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			if err := tx.PutSupplier(owner, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"}); err != nil {
				return err
			}
			return tx.PutIdempotency(owner, &storage.IdempotencyRecord{Key: "k1", ExpiresAt: testNow.Add(time.Hour)})
		})
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(owner, "V1"); err != nil {
				t.Errorf("FindSupplier(%v, V1): got %v, want the supplier", owner, err)
			}
			for _, o := range others {
				if _, err := tx.FindSupplier(o, "V1"); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("FindSupplier(%v, V1): got %v, want ErrNotFound", o, err)
				}
				list, more, err := tx.FindSuppliers(o, storage.Page{Limit: 10})
				if err != nil || len(list) != 0 || more {
					t.Errorf("FindSuppliers(%v): got %v, %v, %v, want empty, false, nil", o, supplierIDs(list), more, err)
				}
				if _, err := tx.FindIdempotency(o, "k1"); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("FindIdempotency(%v, k1): got %v, want ErrNotFound", o, err)
				}
			}
			return nil
		})
		// The same lookups in a write transaction.
		mustUpdate(t, db, func(tx *storage.Tx) error {
			for _, o := range others {
				if _, err := tx.FindSupplier(o, "V1"); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Update: FindSupplier(%v, V1): got %v, want ErrNotFound", o, err)
				}
				if err := tx.DeleteSupplier(o, "V1"); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("Update: DeleteSupplier(%v, V1): got %v, want ErrNotFound", o, err)
				}
			}
			return nil
		})
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(owner, "V1"); err != nil {
				t.Errorf("FindSupplier(%v, V1) after foreign delete: got %v, want the supplier", owner, err)
			}
			return nil
		})
	})

	t.Run("NeverWrote", func(t *testing.T) {
		db := MustOpenDB(t)
		fresh := storage.Tenant{Org: "nobody", Env: storage.Production}
		mustView(t, db, func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(fresh, "V1"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindSupplier: got %v, want ErrNotFound", err)
			}
			list, more, err := tx.FindSuppliers(fresh, storage.Page{Limit: 10})
			if err != nil || len(list) != 0 || more {
				t.Errorf("FindSuppliers: got %v, %v, %v, want empty, false, nil", supplierIDs(list), more, err)
			}
			if _, err := tx.FindIdempotency(fresh, "k"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindIdempotency: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})

	t.Run("Invalid", func(t *testing.T) {
		db := MustOpenDB(t)
		bad := []storage.Tenant{
			{Org: "", Env: storage.Sandbox},
			{Org: "a", Env: "staging"},
			{Org: "a", Env: ""},
		}
		for _, writable := range []bool{false, true} {
			run := db.View
			if writable {
				run = db.Update
			}
			err := run(context.Background(), func(tx *storage.Tx) error {
				for _, tn := range bad {
					if _, err := tx.FindSupplier(tn, "V1"); err == nil || errors.Is(err, storage.ErrNotFound) {
						t.Errorf("writable=%v FindSupplier(%+v): got %v, want an invalid-tenant error", writable, tn, err)
					}
					if _, _, err := tx.FindSuppliers(tn, storage.Page{Limit: 1}); err == nil {
						t.Errorf("writable=%v FindSuppliers(%+v): got nil error, want an invalid-tenant error", writable, tn)
					}
					if _, err := tx.FindIdempotency(tn, "k"); err == nil || errors.Is(err, storage.ErrNotFound) {
						t.Errorf("writable=%v FindIdempotency(%+v): got %v, want an invalid-tenant error", writable, tn, err)
					}
					if !writable {
						continue
					}
					if err := tx.PutSupplier(tn, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"}); err == nil {
						t.Errorf("PutSupplier(%+v): got nil error, want an invalid-tenant error", tn)
					}
					if err := tx.PutIdempotency(tn, &storage.IdempotencyRecord{Key: "k", ExpiresAt: testNow}); err == nil {
						t.Errorf("PutIdempotency(%+v): got nil error, want an invalid-tenant error", tn)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatalf("writable=%v: %v", writable, err)
			}
		}
		// Nothing was created for the bad tenants.
		mustView(t, db, func(tx *storage.Tx) error {
			if k, _ := tx.Bucket([]byte("tenants")).Cursor().First(); k != nil {
				t.Errorf("tenants bucket: got key %q, want empty", k)
			}
			return nil
		})
	})
}

func TestEnvironment_Valid(t *testing.T) {
	for _, tc := range []struct {
		env  storage.Environment
		want bool
	}{
		{storage.Production, true},
		{storage.Sandbox, true},
		{"", false},
		{"Production", false},
		{"staging", false},
	} {
		if got := tc.env.Valid(); got != tc.want {
			t.Errorf("Environment(%q).Valid(): got %v, want %v", tc.env, got, tc.want)
		}
	}
	if got, want := (storage.Tenant{Org: "a", Env: storage.Sandbox}).String(), "a/sandbox"; got != want {
		t.Errorf("Tenant.String(): got %q, want %q", got, want)
	}
}
