package storage_test

import (
	"reflect"
	"testing"

	"github.com/eudr/eudr/storage"
)

// TestFindShipments: each shipment is listed once, by its latest link,
// newest first, in pages, and the batch filter keeps that batch's only.
func TestFindShipments(t *testing.T) {
	db := MustOpenDB(t)
	tn := storage.Tenant{Org: "org_1", Env: storage.Sandbox}
	links := []*storage.ShipmentLink{
		{ID: "lnk_1", BatchID: "bat_A", ShipmentID: "SHP-1", Status: storage.LinkFailed},
		{ID: "lnk_2", BatchID: "bat_B", ShipmentID: "SHP-2", Status: storage.LinkLinked},
		{ID: "lnk_3", BatchID: "bat_A", ShipmentID: "SHP-1", Status: storage.LinkLinked}, // SHP-1 linked again
		{ID: "lnk_4", BatchID: "bat_C", ShipmentID: "SHP-3", Status: storage.LinkPending},
	}
	mustUpdate(t, db, func(tx *storage.Tx) error {
		for _, l := range links {
			if err := tx.PutShipmentLink(tn, l); err != nil {
				return err
			}
		}
		return nil
	})
	find := func(batchID string, p storage.Page) ([]string, bool) {
		t.Helper()
		var ids []string
		var more bool
		mustView(t, db, func(tx *storage.Tx) error {
			list, m, err := tx.FindShipments(tn, batchID, p)
			for _, l := range list {
				ids = append(ids, l.ID)
			}
			more = m
			return err
		})
		return ids, more
	}
	for _, c := range []struct {
		batchID  string
		page     storage.Page
		want     []string
		wantMore bool
	}{
		{"", storage.Page{Limit: 10}, []string{"lnk_4", "lnk_3", "lnk_2"}, false},
		{"", storage.Page{Limit: 2}, []string{"lnk_4", "lnk_3"}, true},
		{"", storage.Page{Limit: 2, After: "lnk_3"}, []string{"lnk_2"}, false},
		{"bat_A", storage.Page{Limit: 10}, []string{"lnk_3"}, false},
		{"bat_Z", storage.Page{Limit: 10}, nil, false},
	} {
		if got, more := find(c.batchID, c.page); !reflect.DeepEqual(got, c.want) || more != c.wantMore {
			t.Errorf("FindShipments(%q, %+v): got %v more=%v, want %v more=%v", c.batchID, c.page, got, more, c.want, c.wantMore)
		}
	}
	// Another tenant has none.
	mustView(t, db, func(tx *storage.Tx) error {
		list, more, err := tx.FindShipments(storage.Tenant{Org: "org_2", Env: storage.Sandbox}, "", storage.Page{Limit: 10})
		if len(list) != 0 || more || err != nil {
			t.Errorf("another tenant: %v %v %v", list, more, err)
		}
		return nil
	})
}
