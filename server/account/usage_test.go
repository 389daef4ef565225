package account_test

import (
	"context"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/storage"
)

func TestUsage(t *testing.T) {
	db, err := storage.Open(t.TempDir(), storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	if err := db.Update(ctx, func(tx *storage.Tx) error {
		return tx.CreateAPIKey(&storage.APIKey{ID: "key_1", Org: "default", Env: storage.Sandbox, Hash: []byte("h1")})
	}); err != nil {
		t.Fatal(err)
	}
	lastUsed := func() *time.Time {
		var k *storage.APIKey
		if err := db.View(ctx, func(tx *storage.Tx) (err error) { k, err = tx.FindAPIKey("key_1"); return err }); err != nil {
			t.Fatal(err)
		}
		return k.LastUsedAt
	}
	t1 := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

	u := account.NewUsage()
	u.Touch("key_1", t1)
	u.Touch("key_gone", t1) // deleted meanwhile: skipped
	if got, ok := u.Pending("key_1"); !ok || !got.Equal(t1) {
		t.Errorf("Pending after Touch: got %v, %v; want %v", got, ok, t1)
	}
	// A flush that fails keeps the tally.
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := u.Flush(cancelled, db); err == nil {
		t.Fatal("Flush with a cancelled context: got nil error")
	}
	if got, ok := u.Pending("key_1"); !ok || !got.Equal(t1) || lastUsed() != nil {
		t.Errorf("after a failed flush: pending %v, %v, stored %v; want %v kept, nothing stored", got, ok, lastUsed(), t1)
	}
	if err := u.Flush(ctx, db); err != nil {
		t.Fatal(err)
	}
	if got := lastUsed(); got == nil || !got.Equal(t1) {
		t.Errorf("stored last use: got %v, want %v", got, t1)
	}
	if _, ok := u.Pending("key_1"); ok {
		t.Error("Pending after a flush: still pending")
	}
}
