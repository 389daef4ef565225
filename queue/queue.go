package queue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrNotFound is returned when a job, subscription, event or DLQ entry does
// not exist (in the scope asked for).
var ErrNotFound = errors.New("not found")

// MaxAttempts is how many times a delivery is tried before it goes to the
// DLQ: the first attempt and four retries (SPEC.md: five attempts).
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
	bucketAttempts    = []byte("webhook_attempts")
	allBuckets        = [][]byte{bucketJobs, bucketJobsDue, bucketSubs, bucketSubsByScope, bucketEvents,
		bucketDeliveries, bucketDue, bucketNext, bucketDLQ, bucketAttempts}
)

// Init creates the package's buckets; the server calls it once at start in
// a write transaction.
func Init(tx *bolt.Tx) error {
	for _, name := range allBuckets {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return fmt.Errorf("create bucket %s: %w", name, err)
		}
	}
	return nil
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
