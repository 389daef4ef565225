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
	spare   [][]byte // evicted blocks' buffers, oldest first: see maxSpare
	// spareBytes is what spare holds; at most an eighth of max, the
	// largest block the cache keeps, so the spares add at most that to
	// the memory the cache may hold.
	spareBytes int64
	stats      CacheStats
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
	// users counts the goroutines decoding the block or reading its
	// bytes, and evicted is set when the cache drops it: the last user of
	// an evicted block hands its buffer to the next block decoded. Both
	// under Cache.mu.
	users   int
	evicted bool
}

// maxSpare is how many evicted blocks' buffers a Cache keeps for the
// blocks it decodes next. A full cache evicts about a block for each it
// decodes, so a few are enough; more are kept for layers of blocks of
// different sizes sharing the cache.
const maxSpare = 8

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

// read calls use with the block for key, first calling decode to produce
// its size bytes if the cache does not hold it. decode is given a buffer
// of size bytes to decode into, the bytes of a block evicted and no longer
// read, or nil when there is none. The bytes use is given are shared:
// read only, and not after use returns, when they may be reused.
func (c *Cache) read(key blockKey, size int64, decode func(buf []byte) ([]byte, error), use func(data []byte)) error {
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.lru.MoveToFront(el)
		c.stats.Hits++
		e := el.Value.(*cacheEntry)
		e.users++
		c.mu.Unlock()
		defer c.release(e)
		<-e.ready
		if e.err != nil {
			return e.err
		}
		use(e.data)
		return nil
	}
	c.stats.Misses++
	e := &cacheEntry{key: key, size: size, ready: make(chan struct{}), users: 1}
	el := c.lru.PushFront(e)
	c.entries[key] = el
	c.used += size
	for c.used > c.max && c.lru.Len() > 1 {
		c.remove(c.lru.Back())
		c.stats.Evictions++
	}
	buf := c.takeSpare(size)
	c.mu.Unlock()

	defer c.release(e)
	err := func() error {
		defer close(e.ready)
		data, err := decode(buf)
		if err != nil {
			e.err = err
			return err
		}
		e.data = data
		return nil
	}()
	if err != nil {
		c.mu.Lock()
		if c.entries[key] == el {
			c.remove(el)
		}
		c.mu.Unlock()
		return err
	}
	use(e.data)
	return nil
}

// release ends a user's reading of e.
func (c *Cache) release(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e.users--
	if e.users == 0 && e.evicted {
		c.putSpare(e)
	}
}

// remove drops an entry; c.mu must be held. A goroutine still decoding or
// reading it keeps its bytes until it is done.
func (c *Cache) remove(el *list.Element) {
	e := c.lru.Remove(el).(*cacheEntry)
	delete(c.entries, e.key)
	c.used -= e.size
	e.evicted = true
	if e.users == 0 {
		c.putSpare(e)
	}
}

// putSpare keeps the bytes of e, evicted and no longer read, for a block
// decoded later; c.mu must be held.
func (c *Cache) putSpare(e *cacheEntry) {
	if e.data == nil {
		return
	}
	size := int64(len(e.data))
	for len(c.spare) > 0 && (len(c.spare) == maxSpare || c.spareBytes+size > c.max/8) {
		c.spareBytes -= int64(len(c.spare[0]))
		c.spare = append(c.spare[:0], c.spare[1:]...)
	}
	if size <= c.max/8 {
		c.spare = append(c.spare, e.data)
		c.spareBytes += size
	}
	e.data = nil
}

// takeSpare returns a spare buffer of size bytes, or nil; c.mu must be
// held.
func (c *Cache) takeSpare(size int64) []byte {
	for i := len(c.spare) - 1; i >= 0; i-- {
		if b := c.spare[i]; int64(len(b)) == size {
			c.spare = append(c.spare[:i], c.spare[i+1:]...)
			c.spareBytes -= size
			return b
		}
	}
	return nil
}
