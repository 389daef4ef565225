package geotiff

import (
	"container/list"
	"sync"
)

// DefaultCacheBytes is the budget of the cache a File gets when Options
// name none: 64 MiB, some 1,000 LZW tiles of 256 x 256 pixels or 1,600
// Hansen strips of one 40,000-pixel row.
const DefaultCacheBytes = 64 << 20

// Cache keeps decoded blocks, least recently used first out, within a
// budget of bytes. Blocks larger than an eighth of the budget are not kept
// (File.ReadWindow streams them instead), so a cache of 0 bytes keeps
// nothing. When several goroutines need the same block at once it is
// decoded once. A Cache is safe for concurrent use and may be shared by any
// number of Files.
type Cache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	lru     list.List // of *cacheEntry, most recent first
	entries map[blockKey]*list.Element
	stats   CacheStats
}

// CacheStats counts a Cache's work.
type CacheStats struct {
	Hits, Misses, Evictions uint64
	// Bytes and Blocks are what the cache holds now (blocks being decoded
	// included).
	Bytes  int64
	Blocks int
}

type blockKey struct {
	file  uint64
	block int
}

type cacheEntry struct {
	key   blockKey
	size  int64
	data  []byte
	err   error
	ready chan struct{} // closed when data or err is set
}

// NewCache returns a cache of at most maxBytes of decoded blocks.
func NewCache(maxBytes int64) *Cache {
	return &Cache{max: max(maxBytes, 0), entries: make(map[blockKey]*list.Element)}
}

// Stats returns the cache's counters.
func (c *Cache) Stats() CacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Bytes, s.Blocks = c.used, len(c.entries)
	return s
}

// keeps reports whether blocks of size bytes are worth keeping.
func (c *Cache) keeps(size int64) bool { return size <= c.max/8 }

// get returns the block for key, calling decode to produce its size bytes
// if the cache does not hold it. The bytes returned are shared: read only.
func (c *Cache) get(key blockKey, size int64, decode func() ([]byte, error)) ([]byte, error) {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		c.stats.Hits++
		c.mu.Unlock()
		e := el.Value.(*cacheEntry)
		<-e.ready
		if e.err != nil {
			return nil, e.err
		}
		return e.data, nil
	}
	c.stats.Misses++
	e := &cacheEntry{key: key, size: size, ready: make(chan struct{})}
	el := c.lru.PushFront(e)
	c.entries[key] = el
	c.used += size
	for c.used > c.max && c.lru.Len() > 1 {
		c.remove(c.lru.Back())
		c.stats.Evictions++
	}
	c.mu.Unlock()

	defer close(e.ready)
	e.data, e.err = decode()
	if e.err != nil {
		c.mu.Lock()
		if c.entries[key] == el {
			c.remove(el)
		}
		c.mu.Unlock()
		return nil, e.err
	}
	return e.data, nil
}

// remove drops an entry; c.mu must be held. A goroutine still waiting for
// it gets its data all the same.
func (c *Cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.used -= e.size
}
