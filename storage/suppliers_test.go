package storage_test

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

var supT = storage.Tenant{Org: "a", Env: storage.Sandbox}

// findSupplier looks one supplier up in its own read transaction.
func findSupplier(t *testing.T, db *storage.DB, tn storage.Tenant, erp string) (*storage.Supplier, error) {
	t.Helper()
	var s *storage.Supplier
	var ferr error
	mustView(t, db, func(tx *storage.Tx) error {
		s, ferr = tx.FindSupplier(tn, erp)
		return nil
	})
	return s, ferr
}

// findPage reads one page in its own read transaction.
func findPage(t *testing.T, db *storage.DB, tn storage.Tenant, p storage.Page) ([]string, bool) {
	t.Helper()
	var ids []string
	var more bool
	mustView(t, db, func(tx *storage.Tx) error {
		list, m, err := tx.FindSuppliers(tn, p)
		if err != nil {
			return fmt.Errorf("FindSuppliers(%+v): %w", p, err)
		}
		ids, more = supplierIDs(list), m
		return nil
	})
	return ids, more
}

func TestTx_PutSupplier(t *testing.T) {
	t.Run("Insert", func(t *testing.T) {
		db := MustOpenDB(t)
		want := &storage.Supplier{
			ID:             "sup_1",
			ERPVendorID:    "V1",
			EUOperatorUUID: "0b6a3f4e-1111-4222-8333-944455556666",
			Name:           "Cocoa Coop",
			Country:        "CI",
			EORI:           "CI123",
			Role:           "supplier",
			CreatedAt:      testNow,
			UpdatedAt:      testNow,
		}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutSupplier(supT, want) })
		got, err := findSupplier(t, db, supT, "V1")
		if err != nil {
			t.Fatalf("FindSupplier(V1): %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FindSupplier(V1): got %+v, want %+v", got, want)
		}
		if ids, more := findPage(t, db, supT, storage.Page{Limit: 10}); !reflect.DeepEqual(ids, []string{"sup_1"}) || more {
			t.Errorf("FindSuppliers: got %v more=%v, want [sup_1] more=false", ids, more)
		}
	})

	t.Run("UpsertKeepsIDAndCreatedAt", func(t *testing.T) {
		db := MustOpenDB(t)
		created := testNow
		updated := testNow.Add(time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.PutSupplier(supT, &storage.Supplier{
				ID: "sup_1", ERPVendorID: "V1", Name: "Old", Country: "GH", Role: "supplier",
				EUOperatorUUID: "uuid-old", CreatedAt: created, UpdatedAt: created,
			})
		})
		second := &storage.Supplier{
			ID: "sup_2", ERPVendorID: "V1", Name: "New", Country: "CI", Role: "trader",
			EUOperatorUUID: "uuid-new", EORI: "CI9", CreatedAt: updated, UpdatedAt: updated,
		}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutSupplier(supT, second) })
		want := &storage.Supplier{
			ID: "sup_1", ERPVendorID: "V1", Name: "New", Country: "CI", Role: "trader",
			EUOperatorUUID: "uuid-new", EORI: "CI9", CreatedAt: created, UpdatedAt: updated,
		}
		if !reflect.DeepEqual(second, want) {
			t.Errorf("PutSupplier's argument after upsert: got %+v, want %+v (ID, CreatedAt copied in)", second, want)
		}
		got, err := findSupplier(t, db, supT, "V1")
		if err != nil {
			t.Fatalf("FindSupplier(V1): %v", err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("FindSupplier(V1): got %+v, want %+v", got, want)
		}
		if ids, more := findPage(t, db, supT, storage.Page{Limit: 10}); !reflect.DeepEqual(ids, []string{"sup_1"}) || more {
			t.Errorf("FindSuppliers after upsert: got %v more=%v, want [sup_1] more=false", ids, more)
		}
	})

	t.Run("SameVendorOtherTenant", func(t *testing.T) {
		db := MustOpenDB(t)
		other := storage.Tenant{Org: "a", Env: storage.Production}
		mustUpdate(t, db, func(tx *storage.Tx) error {
			if err := tx.PutSupplier(supT, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1", Name: "sandbox"}); err != nil {
				return err
			}
			return tx.PutSupplier(other, &storage.Supplier{ID: "sup_2", ERPVendorID: "V1", Name: "production"})
		})
		for tn, want := range map[storage.Tenant]string{supT: "sup_1", other: "sup_2"} {
			s, err := findSupplier(t, db, tn, "V1")
			if err != nil || s.ID != want {
				t.Errorf("FindSupplier(%v, V1): got %+v, %v, want ID %s", tn, s, err, want)
			}
		}
	})
}

func TestTx_DeleteSupplier(t *testing.T) {
	t.Run("Deletes", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			if err := tx.PutSupplier(supT, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"}); err != nil {
				return err
			}
			return tx.PutSupplier(supT, &storage.Supplier{ID: "sup_2", ERPVendorID: "V2"})
		})
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteSupplier(supT, "V1") })
		if _, err := findSupplier(t, db, supT, "V1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("FindSupplier(V1) after delete: got %v, want ErrNotFound", err)
		}
		if _, err := findSupplier(t, db, supT, "V2"); err != nil {
			t.Errorf("FindSupplier(V2) after deleting V1: got %v, want found", err)
		}
		if ids, more := findPage(t, db, supT, storage.Page{Limit: 10}); !reflect.DeepEqual(ids, []string{"sup_2"}) || more {
			t.Errorf("FindSuppliers after delete: got %v more=%v, want [sup_2] more=false", ids, more)
		}
		// Re-creating the vendor after a delete takes the new ID.
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.PutSupplier(supT, &storage.Supplier{ID: "sup_3", ERPVendorID: "V1"})
		})
		if s, err := findSupplier(t, db, supT, "V1"); err != nil || s.ID != "sup_3" {
			t.Errorf("FindSupplier(V1) after re-create: got %+v, %v, want ID sup_3", s, err)
		}
	})

	t.Run("ErrNotFound", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			return tx.PutSupplier(supT, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"})
		})
		err := db.Update(t.Context(), func(tx *storage.Tx) error { return tx.DeleteSupplier(supT, "V9") })
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("DeleteSupplier(V9): got %v, want ErrNotFound", err)
		}
		err = db.Update(t.Context(), func(tx *storage.Tx) error {
			if err := tx.DeleteSupplier(supT, "V1"); err != nil {
				return err
			}
			return tx.DeleteSupplier(supT, "V1")
		})
		if !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("second DeleteSupplier(V1): got %v, want ErrNotFound", err)
		}
	})
}

func TestTx_FindSuppliers(t *testing.T) {
	// setup stores sup_1..sup_5 (V1..V5), inserted in a shuffled order so
	// that the order comes from the IDs, not from insertion.
	setup := func(t *testing.T) *storage.DB {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			for _, i := range []int{3, 1, 5, 2, 4} {
				s := &storage.Supplier{ID: fmt.Sprintf("sup_%d", i), ERPVendorID: fmt.Sprintf("V%d", i)}
				if err := tx.PutSupplier(supT, s); err != nil {
					return err
				}
			}
			return nil
		})
		return db
	}

	t.Run("Pages", func(t *testing.T) {
		db := setup(t)
		for _, tc := range []struct {
			page     storage.Page
			want     []string
			wantMore bool
		}{
			{storage.Page{Limit: 2}, []string{"sup_5", "sup_4"}, true},
			{storage.Page{After: "sup_4", Limit: 2}, []string{"sup_3", "sup_2"}, true},
			{storage.Page{After: "sup_2", Limit: 2}, []string{"sup_1"}, false},
			{storage.Page{After: "sup_1", Limit: 2}, []string{}, false},
			{storage.Page{After: "sup_3", Limit: 2}, []string{"sup_2", "sup_1"}, false},
			{storage.Page{Limit: 5}, []string{"sup_5", "sup_4", "sup_3", "sup_2", "sup_1"}, false},
			{storage.Page{Limit: 100}, []string{"sup_5", "sup_4", "sup_3", "sup_2", "sup_1"}, false},
			{storage.Page{Limit: 4}, []string{"sup_5", "sup_4", "sup_3", "sup_2"}, true},
			// An After beyond every ID starts from the newest.
			{storage.Page{After: "sup_9", Limit: 2}, []string{"sup_5", "sup_4"}, true},
			// An After before every ID gives nothing.
			{storage.Page{After: "sup_0", Limit: 2}, []string{}, false},
		} {
			ids, more := findPage(t, db, supT, tc.page)
			if !reflect.DeepEqual(ids, tc.want) || more != tc.wantMore {
				t.Errorf("FindSuppliers(%+v): got %v more=%v, want %v more=%v", tc.page, ids, more, tc.want, tc.wantMore)
			}
		}
	})

	t.Run("ReturnsRecords", func(t *testing.T) {
		db := setup(t)
		mustView(t, db, func(tx *storage.Tx) error {
			list, _, err := tx.FindSuppliers(supT, storage.Page{Limit: 5})
			if err != nil {
				return err
			}
			for _, s := range list {
				if want := "V" + s.ID[len("sup_"):]; s.ERPVendorID != want {
					t.Errorf("supplier %s: got ERPVendorID %q, want %q", s.ID, s.ERPVendorID, want)
				}
			}
			return nil
		})
	})

	t.Run("AfterDeletedID", func(t *testing.T) {
		db := setup(t)
		ids, more := findPage(t, db, supT, storage.Page{Limit: 2})
		if !reflect.DeepEqual(ids, []string{"sup_5", "sup_4"}) || !more {
			t.Fatalf("first page: got %v more=%v, want [sup_5 sup_4] more=true", ids, more)
		}
		// The last item of the page is deleted before the next page is read.
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteSupplier(supT, "V4") })
		ids, more = findPage(t, db, supT, storage.Page{After: "sup_4", Limit: 2})
		if want := []string{"sup_3", "sup_2"}; !reflect.DeepEqual(ids, want) || !more {
			t.Errorf("FindSuppliers(After: sup_4 (deleted), Limit 2): got %v more=%v, want %v more=true", ids, more, want)
		}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteSupplier(supT, "V2") })
		ids, more = findPage(t, db, supT, storage.Page{After: "sup_2", Limit: 2})
		if want := []string{"sup_1"}; !reflect.DeepEqual(ids, want) || more {
			t.Errorf("FindSuppliers(After: sup_2 (deleted), Limit 2): got %v more=%v, want %v more=false", ids, more, want)
		}
	})

	t.Run("Empty", func(t *testing.T) {
		db := MustOpenDB(t)
		if ids, more := findPage(t, db, supT, storage.Page{Limit: 10}); len(ids) != 0 || more {
			t.Errorf("FindSuppliers on empty store: got %v more=%v, want [] more=false", ids, more)
		}
		// All suppliers deleted: buckets exist but are empty.
		mustUpdate(t, db, func(tx *storage.Tx) error {
			if err := tx.PutSupplier(supT, &storage.Supplier{ID: "sup_1", ERPVendorID: "V1"}); err != nil {
				return err
			}
			return tx.DeleteSupplier(supT, "V1")
		})
		if ids, more := findPage(t, db, supT, storage.Page{Limit: 10}); len(ids) != 0 || more {
			t.Errorf("FindSuppliers after deleting all: got %v more=%v, want [] more=false", ids, more)
		}
	})

	t.Run("AfterNotFoundInCommittedUpdate", func(t *testing.T) {
		db := MustOpenDB(t)
		// A write transaction that looks a vendor up, tolerates its
		// absence and commits (say, to decide between insert and update).
		err := db.Update(t.Context(), func(tx *storage.Tx) error {
			if _, err := tx.FindSupplier(supT, "V1"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindSupplier(V1) on empty tenant: got %v, want ErrNotFound", err)
			}
			return nil
		})
		if err != nil {
			t.Fatalf("Update: %v", err)
		}
		var ids []string
		var more bool
		err = func() (err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return db.View(t.Context(), func(tx *storage.Tx) error {
				list, m, err := tx.FindSuppliers(supT, storage.Page{Limit: 10})
				ids, more = supplierIDs(list), m
				return err
			})
		}()
		if err != nil || len(ids) != 0 || more {
			t.Errorf("FindSuppliers after a failed lookup: got %v more=%v err=%v, want [] more=false err=nil", ids, more, err)
		}
	})
}
