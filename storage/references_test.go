package storage_test

import (
	"errors"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

// TestReferenceLookup: a look-up is kept per tenant under its reference
// number, the latest replacing the one before; none is ErrNotFound, in a
// store that never had one too.
func TestReferenceLookup(t *testing.T) {
	db := MustOpenDB(t)
	tn := storage.Tenant{Org: "a", Env: storage.Sandbox}
	other := storage.Tenant{Org: "b", Env: storage.Sandbox}
	mustView(t, db, func(tx *storage.Tx) error {
		if _, err := tx.FindReferenceLookup(tn, "26FRYUI34JTQKB"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("empty store: %v, want ErrNotFound", err)
		}
		return nil
	})
	at := time.Date(2026, 5, 20, 9, 50, 0, 0, time.UTC)
	mustUpdate(t, db, func(tx *storage.Tx) error {
		if err := tx.PutReferenceLookup(tn, &storage.ReferenceLookup{ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "WRONG123", LookedUpAt: at}); err != nil {
			return err
		}
		return tx.PutReferenceLookup(tn, &storage.ReferenceLookup{ReferenceNumber: "26FRYUI34JTQKB", VerificationNumber: "SEKUYXPP",
			Found: true, Usability: "EXISTING_USABLE", Statement: []byte(`{"activityType":"IMPORT"}`), LookedUpAt: at.Add(time.Minute), Actor: "key_1"})
	})
	mustView(t, db, func(tx *storage.Tx) error {
		l, err := tx.FindReferenceLookup(tn, "26FRYUI34JTQKB")
		if err != nil {
			return err
		}
		if !l.Found || l.Usability != "EXISTING_USABLE" || l.VerificationNumber != "SEKUYXPP" || string(l.Statement) != `{"activityType":"IMPORT"}` || !l.LookedUpAt.Equal(at.Add(time.Minute)) || l.Actor != "key_1" {
			t.Errorf("look-up %+v", l)
		}
		if _, err := tx.FindReferenceLookup(other, "26FRYUI34JTQKB"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("another tenant: %v, want ErrNotFound", err)
		}
		return nil
	})
}
