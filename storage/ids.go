package storage

import (
	"crypto/rand"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
)

// idEntropy makes IDs of the same millisecond strictly increasing, so lists
// ordered by ID are in creation order. The monotonic reader is not safe for
// concurrent use: idMu guards it.
var (
	idMu      sync.Mutex
	idEntropy = ulid.Monotonic(rand.Reader, 0)
)

// NewID returns prefix + "_" + a ULID: 26 characters of time-ordered
// randomness, the form of every ID the API gives.
func NewID(prefix string, now time.Time) string {
	idMu.Lock()
	defer idMu.Unlock()
	return prefix + "_" + ulid.MustNew(ulid.Timestamp(now), idEntropy).String()
}
