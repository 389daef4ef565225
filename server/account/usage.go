package account

import (
	"context"
	"sync"
	"time"

	"github.com/eudr/eudr/storage"
)

// Usage tallies when each API key was last used, in memory; Flush writes
// the tally in one transaction (the server does every 30 s and at
// shutdown) instead of a write per request.
type Usage struct {
	mu   sync.Mutex
	last map[string]time.Time
}

// NewUsage returns an empty tally.
func NewUsage() *Usage { return &Usage{last: map[string]time.Time{}} }

// Touch records that key id was used at t.
func (u *Usage) Touch(id string, t time.Time) {
	u.mu.Lock()
	u.last[id] = t
	u.mu.Unlock()
}

// Pending returns the time not yet flushed for key id, if any.
func (u *Usage) Pending(id string) (time.Time, bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	t, ok := u.last[id]
	return t, ok
}

// Flush writes the tally to db and empties it. When the write fails the
// tally is kept for the next try (a newer use wins), and the error is
// returned.
func (u *Usage) Flush(ctx context.Context, db *storage.DB) error {
	u.mu.Lock()
	batch := u.last
	u.last = map[string]time.Time{}
	u.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	err := db.Update(ctx, func(tx *storage.Tx) error { return tx.TouchAPIKeys(batch) })
	if err != nil { // keep the tally for the next try
		u.mu.Lock()
		for id, t := range batch {
			if cur, ok := u.last[id]; !ok || t.After(cur) {
				u.last[id] = t
			}
		}
		u.mu.Unlock()
	}
	return err
}
