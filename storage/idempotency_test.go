package storage_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

var (
	idemA  = storage.Tenant{Org: "a", Env: storage.Sandbox}
	idemB  = storage.Tenant{Org: "b", Env: storage.Production}
	idemAP = storage.Tenant{Org: "a", Env: storage.Production}
)

func idemRecord(key string, expires time.Time) *storage.IdempotencyRecord {
	return &storage.IdempotencyRecord{
		Key:         key,
		Fingerprint: "fp-" + key,
		State:       storage.IdemInFlight,
		Owner:       "run_1",
		CreatedAt:   testNow,
		ExpiresAt:   expires,
	}
}

// sweep runs SweepIdempotency in its own transaction.
func sweep(t *testing.T, db *storage.DB, now time.Time, max int) int {
	t.Helper()
	var n int
	mustUpdate(t, db, func(tx *storage.Tx) error {
		var err error
		n, err = tx.SweepIdempotency(now, max)
		return err
	})
	return n
}

// idemExists reports whether tenant tn has a record for key.
func idemExists(t *testing.T, db *storage.DB, tn storage.Tenant, key string) bool {
	t.Helper()
	var found bool
	mustView(t, db, func(tx *storage.Tx) error {
		_, err := tx.FindIdempotency(tn, key)
		switch {
		case err == nil:
			found = true
		case errors.Is(err, storage.ErrNotFound):
		default:
			return err
		}
		return nil
	})
	return found
}

// idemIndexLen counts the entries of the expiry index.
func idemIndexLen(t *testing.T, db *storage.DB) int {
	t.Helper()
	n := 0
	mustView(t, db, func(tx *storage.Tx) error {
		return tx.Bucket([]byte("idempotency_expiry")).ForEach(func(k, v []byte) error { n++; return nil })
	})
	return n
}

func TestTx_PutIdempotency(t *testing.T) {
	t.Run("RoundTrip", func(t *testing.T) {
		db := MustOpenDB(t)
		want := &storage.IdempotencyRecord{
			Key:         "order-42",
			Fingerprint: "sha256:abcd",
			State:       storage.IdemCompleted,
			Owner:       "run_7",
			Status:      201,
			Header: map[string][]string{
				"Content-Type": {"application/json"},
				"Location":     {"/v1/suppliers/V1"},
				"X-Multi":      {"one", "two"},
			},
			Body:      []byte("{\"id\":\"sup_1\"}\n\x00\xff"),
			CreatedAt: testNow,
			ExpiresAt: testNow.Add(24 * time.Hour),
		}
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, want) })
		mustView(t, db, func(tx *storage.Tx) error {
			got, err := tx.FindIdempotency(idemA, "order-42")
			if err != nil {
				t.Fatalf("FindIdempotency(order-42): %v", err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("FindIdempotency(order-42): got %+v, want %+v", got, want)
			}
			if _, err := tx.FindIdempotency(idemA, "order-43"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("FindIdempotency(order-43): got %v, want ErrNotFound", err)
			}
			return nil
		})
		if got, want := idemIndexLen(t, db), 1; got != want {
			t.Errorf("expiry index entries: got %d, want %d", got, want)
		}
	})

	t.Run("ReplaceSameExpiry", func(t *testing.T) {
		db := MustOpenDB(t)
		exp := testNow.Add(time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", exp)) })
		done := idemRecord("k", exp)
		done.State, done.Status, done.Body = storage.IdemCompleted, 200, []byte("ok")
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, done) })
		mustView(t, db, func(tx *storage.Tx) error {
			got, err := tx.FindIdempotency(idemA, "k")
			if err != nil {
				t.Fatalf("FindIdempotency(k): %v", err)
			}
			if got.State != storage.IdemCompleted || string(got.Body) != "ok" {
				t.Errorf("FindIdempotency(k): got state %q body %q, want %q %q", got.State, got.Body, storage.IdemCompleted, "ok")
			}
			return nil
		})
		if got, want := idemIndexLen(t, db), 1; got != want {
			t.Errorf("expiry index entries: got %d, want %d", got, want)
		}
		if got, want := sweep(t, db, exp.Add(time.Nanosecond), 10), 1; got != want {
			t.Errorf("sweep after expiry: got %d, want %d", got, want)
		}
	})

	t.Run("ReplaceNewExpiryNoStaleIndex", func(t *testing.T) {
		db := MustOpenDB(t)
		oldExp := testNow.Add(time.Hour)
		newExp := testNow.Add(3 * time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", oldExp)) })
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", newExp)) })
		if got, want := idemIndexLen(t, db), 1; got != want {
			t.Errorf("expiry index entries after re-put: got %d, want %d", got, want)
		}
		between := testNow.Add(2 * time.Hour)
		if got := sweep(t, db, between, 10); got != 0 {
			t.Errorf("sweep at %v (between old and new expiry): got %d deleted, want 0", between, got)
		}
		if !idemExists(t, db, idemA, "k") {
			t.Fatalf("record k after sweep between expiries: got not found, want it kept")
		}
		if got := sweep(t, db, newExp.Add(time.Second), 10); got != 1 {
			t.Errorf("sweep after new expiry: got %d deleted, want 1", got)
		}
		if idemExists(t, db, idemA, "k") {
			t.Errorf("record k after sweep past new expiry: got found, want deleted")
		}
	})

	t.Run("ReplaceEarlierExpiry", func(t *testing.T) {
		db := MustOpenDB(t)
		oldExp := testNow.Add(3 * time.Hour)
		newExp := testNow.Add(time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", oldExp)) })
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", newExp)) })
		if got := sweep(t, db, testNow.Add(2*time.Hour), 10); got != 1 {
			t.Errorf("sweep after new (earlier) expiry: got %d deleted, want 1", got)
		}
		if got, want := idemIndexLen(t, db), 0; got != want {
			t.Errorf("expiry index entries after sweep: got %d, want %d", got, want)
		}
	})
}

func TestTx_DeleteIdempotency(t *testing.T) {
	t.Run("RemovesRecordAndIndex", func(t *testing.T) {
		db := MustOpenDB(t)
		exp := testNow.Add(time.Hour)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			if err := tx.PutIdempotency(idemA, idemRecord("k1", exp)); err != nil {
				return err
			}
			return tx.PutIdempotency(idemA, idemRecord("k2", exp))
		})
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.DeleteIdempotency(idemA, "k1") })
		if idemExists(t, db, idemA, "k1") {
			t.Errorf("k1 after delete: got found, want ErrNotFound")
		}
		if !idemExists(t, db, idemA, "k2") {
			t.Errorf("k2 after deleting k1: got not found, want kept")
		}
		if got, want := idemIndexLen(t, db), 1; got != want {
			t.Errorf("expiry index entries after delete: got %d, want %d", got, want)
		}
		if got, want := sweep(t, db, exp.Add(time.Hour), 10), 1; got != want {
			t.Errorf("sweep after delete: got %d deleted, want %d (k2 only)", got, want)
		}
	})

	t.Run("Missing", func(t *testing.T) {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord("k", testNow)) })
		err := db.Update(t.Context(), func(tx *storage.Tx) error {
			if err := tx.DeleteIdempotency(idemA, "other"); err != nil {
				return err
			}
			return tx.DeleteIdempotency(idemB, "k")
		})
		if err != nil {
			t.Errorf("DeleteIdempotency(missing): got %v, want nil", err)
		}
		if !idemExists(t, db, idemA, "k") {
			t.Errorf("k after deleting other keys: got not found, want kept")
		}
	})
}

func TestTx_SweepIdempotency(t *testing.T) {
	setup := func(t *testing.T) *storage.DB {
		db := MustOpenDB(t)
		mustUpdate(t, db, func(tx *storage.Tx) error {
			for _, r := range []struct {
				tn  storage.Tenant
				key string
				exp time.Duration
			}{
				{idemA, "a1", 1 * time.Minute},
				{idemB, "b1", 2 * time.Minute},
				{idemAP, "ap1", 3 * time.Minute},
				{idemA, "a2", 4 * time.Minute},
				{idemB, "b2", 10 * time.Minute},
				{idemA, "a3", 20 * time.Minute},
			} {
				if err := tx.PutIdempotency(r.tn, idemRecord(r.key, testNow.Add(r.exp))); err != nil {
					return err
				}
			}
			return nil
		})
		return db
	}
	type rec struct {
		tn  storage.Tenant
		key string
	}
	all := []rec{{idemA, "a1"}, {idemB, "b1"}, {idemAP, "ap1"}, {idemA, "a2"}, {idemB, "b2"}, {idemA, "a3"}}
	wantLeft := func(t *testing.T, db *storage.DB, left ...rec) {
		t.Helper()
		keep := map[rec]bool{}
		for _, r := range left {
			keep[r] = true
		}
		for _, r := range all {
			if got, want := idemExists(t, db, r.tn, r.key), keep[r]; got != want {
				t.Errorf("%v/%s exists: got %v, want %v", r.tn, r.key, got, want)
			}
		}
		if got, want := idemIndexLen(t, db), len(left); got != want {
			t.Errorf("expiry index entries: got %d, want %d", got, want)
		}
	}

	t.Run("OnlyExpiredAcrossTenants", func(t *testing.T) {
		db := setup(t)
		if got, want := sweep(t, db, testNow.Add(5*time.Minute), 100), 4; got != want {
			t.Errorf("sweep at +5m: got %d, want %d", got, want)
		}
		wantLeft(t, db, rec{idemB, "b2"}, rec{idemA, "a3"})
	})

	t.Run("ExpiresAtEqualNowKept", func(t *testing.T) {
		db := setup(t)
		if got, want := sweep(t, db, testNow.Add(2*time.Minute), 100), 1; got != want {
			t.Errorf("sweep at +2m: got %d, want %d (strictly before now)", got, want)
		}
		wantLeft(t, db, rec{idemB, "b1"}, rec{idemAP, "ap1"}, rec{idemA, "a2"}, rec{idemB, "b2"}, rec{idemA, "a3"})
	})

	t.Run("RespectsMaxOldestFirst", func(t *testing.T) {
		db := setup(t)
		now := testNow.Add(time.Hour)
		if got, want := sweep(t, db, now, 2), 2; got != want {
			t.Errorf("sweep max=2: got %d, want %d", got, want)
		}
		wantLeft(t, db, rec{idemAP, "ap1"}, rec{idemA, "a2"}, rec{idemB, "b2"}, rec{idemA, "a3"})
		if got, want := sweep(t, db, now, 3), 3; got != want {
			t.Errorf("second sweep max=3: got %d, want %d", got, want)
		}
		wantLeft(t, db, rec{idemA, "a3"})
		if got, want := sweep(t, db, now, 0), 0; got != want {
			t.Errorf("sweep max=0: got %d, want %d", got, want)
		}
		wantLeft(t, db, rec{idemA, "a3"})
		if got, want := sweep(t, db, now, 10), 1; got != want {
			t.Errorf("third sweep: got %d, want %d", got, want)
		}
		wantLeft(t, db)
		if got, want := sweep(t, db, now, 10), 0; got != want {
			t.Errorf("sweep of empty index: got %d, want %d", got, want)
		}
	})

	t.Run("NothingExpired", func(t *testing.T) {
		db := setup(t)
		if got := sweep(t, db, testNow, 100); got != 0 {
			t.Errorf("sweep at now: got %d, want 0", got)
		}
		wantLeft(t, db, all...)
	})

	t.Run("KeyWithSeparatorBytes", func(t *testing.T) {
		db := MustOpenDB(t)
		key := "weird\x00key/with\x00zeros"
		mustUpdate(t, db, func(tx *storage.Tx) error { return tx.PutIdempotency(idemA, idemRecord(key, testNow)) })
		if got := sweep(t, db, testNow.Add(time.Second), 10); got != 1 {
			t.Errorf("sweep of key %q: got %d, want 1", key, got)
		}
		if idemExists(t, db, idemA, key) {
			t.Errorf("key %q after sweep: got found, want deleted", key)
		}
	})
}
