package account

import (
	"sync"

	"github.com/eudr/eudr/storage"
)

// keyCache holds key records by the SHA-256 of a value, so authenticating a
// request costs a map lookup instead of a read transaction and a decode.
// Every key change in this process (create, rotate, revoke) clears it once
// committed; the store is the truth. No other process writes keys while
// the appliance runs: it holds the data dir's lock.
type keyCache struct {
	mu   sync.RWMutex
	gen  uint64
	keys map[[32]byte]*storage.APIKey
}

// maxCachedKeys bounds the cache; only values that matched a key are cached,
// so it cannot be filled with guesses.
const maxCachedKeys = 10_000

func newKeyCache() *keyCache { return &keyCache{keys: map[[32]byte]*storage.APIKey{}} }

// get returns the cached record and the generation to pass to put.
func (c *keyCache) get(hash [32]byte) (*storage.APIKey, uint64) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.keys[hash], c.gen
}

// put caches a record read from the store, unless a key changed since the
// read began (gen is stale): then the record may be old.
func (c *keyCache) put(hash [32]byte, k *storage.APIKey, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if len(c.keys) >= maxCachedKeys {
		clear(c.keys)
	}
	c.keys[hash] = k
}

// invalidate drops everything; called after every committed key change.
func (c *keyCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.keys)
}
