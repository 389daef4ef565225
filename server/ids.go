package server

import (
	"crypto/rand"
	"time"

	"github.com/oklog/ulid/v2"
)

// newID returns prefix + "_" + a ULID: 26 characters of time-ordered
// randomness, so IDs sort by creation time (API.md).
func newID(prefix string, now time.Time) string {
	return prefix + "_" + ulid.MustNew(ulid.Timestamp(now), rand.Reader).String()
}
