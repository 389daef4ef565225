package queue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// ErrNotFound is returned when a job, subscription, event or DLQ entry does
// not exist (in the scope asked for).
var ErrNotFound = errors.New("not found")

// MaxAttempts is how many times a delivery is tried before it goes to the
// DLQ: the first attempt and four retries, five attempts in all
// (docs/webhooks.md).
const MaxAttempts = 5

var (
	bucketJobs        = []byte("queue_jobs")
	bucketJobsDue     = []byte("queue_jobs_due")
	bucketSubs        = []byte("webhook_subs")
	bucketSubsByScope = []byte("webhook_subs_scope")
	bucketEvents      = []byte("webhook_events")
	bucketDeliveries  = []byte("webhook_deliveries")
	bucketDue         = []byte("webhook_due")
	bucketNext        = []byte("webhook_next")
	bucketDLQ         = []byte("webhook_dlq")
	bucketDLQFailed   = []byte("webhook_dlq_failed")
	bucketAttempts    = []byte("webhook_attempts")
	allBuckets        = [][]byte{bucketJobs, bucketJobsDue, bucketSubs, bucketSubsByScope, bucketEvents,
		bucketDeliveries, bucketDue, bucketNext, bucketDLQ, bucketDLQFailed, bucketAttempts}
)

// Init creates the package's buckets; the server calls it once at start in
// a write transaction. On a store written before webhook_dlq_failed
// existed it also builds that index from the DLQ, reading each entry's
// head (not its data) once.
func Init(tx *bolt.Tx) error {
	newDLQIndex := tx.Bucket(bucketDLQFailed) == nil
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	if newDLQIndex {
		if err := indexDLQ(tx); err != nil {
			return fmt.Errorf("index DLQ: %w", err)
		}
	}
	return nil
}

const (
	// errLogInterval is how often a background loop logs an error that
	// keeps happening.
	errLogInterval = time.Minute
	// minBackoff and maxBackoff bound a background loop's pause after a
	// failed store transaction; it doubles with each failure in a row.
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
)

// nextBackoff is the pause after another failure in a row, prev being the
// last pause (0 after a success).
func nextBackoff(prev time.Duration) time.Duration {
	return min(max(2*prev, minBackoff), maxBackoff)
}

// errLog logs an error at most once per errLogInterval, with how many it
// suppressed since the last line. Its zero value is ready, and it is safe
// for concurrent use.
type errLog struct {
	mu         sync.Mutex
	last       time.Time // when it last logged
	suppressed int       // errors not logged since last
}

// report logs err with msg on l as an error, unless it logged one less
// than errLogInterval ago.
func (e *errLog) report(l zerolog.Logger, err error, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if now := time.Now(); e.last.IsZero() || now.Sub(e.last) >= errLogInterval {
		l.Error().Err(err).Int("suppressed", e.suppressed).Msg(msg)
		e.last, e.suppressed = now, 0
		return
	}
	e.suppressed++
}

// dueKey is BE(unix nanos of due) | id: a cursor's First is the next item due.
func dueKey(due time.Time, id string) []byte {
	k := make([]byte, 8, 8+len(id))
	binary.BigEndian.PutUint64(k, uint64(due.UnixNano()))
	return append(k, id...)
}

// parseDueKey splits a dueKey.
func parseDueKey(k []byte) (time.Time, string) {
	return time.Unix(0, int64(binary.BigEndian.Uint64(k[:8]))), string(k[8:])
}

// getRecord decodes the JSON record under key in bucket; what names it in
// errors. ErrNotFound (wrapped) when there is none.
func getRecord[T any](tx *bolt.Tx, bucket []byte, what string, key []byte) (*T, error) {
	v := tx.Bucket(bucket).Get(key)
	if v == nil {
		return nil, fmt.Errorf("%s %q: %w", what, key, ErrNotFound)
	}
	rec := new(T)
	if err := json.Unmarshal(v, rec); err != nil {
		return nil, fmt.Errorf("decode %s %q: %w", what, key, err)
	}
	return rec, nil
}

// scopedKey joins parts with 0 bytes: scope | 0 | a | 0 | b.
func scopedKey(parts ...string) []byte {
	var k []byte
	for i, p := range parts {
		if i > 0 {
			k = append(k, 0)
		}
		k = append(k, p...)
	}
	return k
}
