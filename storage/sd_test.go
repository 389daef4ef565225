package storage_test

import (
	"context"
	"errors"
	"testing"

	"github.com/eudr/eudr/storage"
)

// TestSD_FindByEachName: a declaration is found by its ID, and once filed
// by its sdIdentifier and reference number; lists are newest first, by
// status, paged.
func TestSD_FindByEachName(t *testing.T) {
	db := MustOpenDB(t)
	ctx := context.Background()
	tn := storage.Tenant{Org: "acme", Env: storage.Sandbox}
	err := db.Update(ctx, func(tx *storage.Tx) error {
		if _, err := tx.FindSD(tn, "sd_1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("empty store: %v", err)
		}
		for _, d := range []*storage.SD{
			{ID: "sd_1", Status: storage.SDValidated, SDIdentifier: "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21", ReferenceNumber: "S26FRNMNBSA96Q"},
			{ID: "sd_2", Status: storage.SDDraft, InternalReference: "LOT-7"},
			{ID: "sd_3", Status: storage.SDValidated, InternalReference: "LOT-7"},
		} {
			if err := tx.PutSD(tn, d); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	err = db.View(ctx, func(tx *storage.Tx) error {
		for _, ref := range []string{"sd_1", "0b7e3b52-1f7a-4a8e-9b0d-6c2e5f4a3d21", "S26FRNMNBSA96Q"} {
			if d, err := tx.FindSD(tn, ref); err != nil || d.ID != "sd_1" {
				t.Errorf("FindSD(%s) = %v, %v", ref, d, err)
			}
		}
		if _, err := tx.FindSD(storage.Tenant{Org: "acme", Env: storage.Production}, "sd_1"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("other environment: %v", err)
		}
		list, more, err := tx.FindSDs(tn, storage.SDFilter{Status: storage.SDValidated}, storage.Page{Limit: 1})
		if err != nil || len(list) != 1 || list[0].ID != "sd_3" || !more {
			t.Errorf("first page %v, %v, %v", list, more, err)
		}
		list, more, err = tx.FindSDs(tn, storage.SDFilter{Status: storage.SDValidated}, storage.Page{Limit: 1, After: "sd_3"})
		if err != nil || len(list) != 1 || list[0].ID != "sd_1" || more {
			t.Errorf("second page %v, %v, %v", list, more, err)
		}
		list, _, err = tx.FindSDs(tn, storage.SDFilter{InternalReference: "LOT-7"}, storage.Page{Limit: 10})
		if err != nil || len(list) != 2 || list[0].ID != "sd_3" || list[1].ID != "sd_2" {
			t.Errorf("by internal reference %v, %v", list, err)
		}
		list, _, err = tx.FindSDs(tn, storage.SDFilter{Status: storage.SDDraft, InternalReference: "LOT-7"}, storage.Page{Limit: 10})
		if err != nil || len(list) != 1 || list[0].ID != "sd_2" {
			t.Errorf("by status and internal reference %v, %v", list, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
