package queue

import (
	"bytes"
	"encoding/json"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Read-only views of the queue's buckets for monitoring. Each takes the
// caller's transaction, so one read transaction can see all of them at
// one instant.

// DueJobs reports how many jobs are due at now and not held by a claim
// (a claim's lease that ran out makes its job due again), and the due
// time of the one that has waited longest; zero when none is due. It
// costs one step per due job.
func DueJobs(tx *bolt.Tx, now time.Time) (n int, oldest time.Time) {
	idx := tx.Bucket(bucketJobsDue)
	if idx == nil {
		return 0, time.Time{}
	}
	c := idx.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		due, _ := parseDueKey(k)
		if due.After(now) {
			break
		}
		if n == 0 {
			oldest = due
		}
		n++
	}
	return n, oldest
}

// ForEachJob calls fn with each queued job, claimed ones included, in ID
// order, and returns fn's first error. A record that cannot be decoded
// is skipped: the runner drops it when it comes due.
func ForEachJob(tx *bolt.Tx, fn func(Job) error) error {
	b := tx.Bucket(bucketJobs)
	if b == nil {
		return nil
	}
	return b.ForEach(func(_, v []byte) error {
		var rec jobRecord
		if json.Unmarshal(v, &rec) != nil {
			return nil
		}
		return fn(rec.job())
	})
}

// PendingDeliveries counts the deliveries not yet done: waiting to be
// sent, in flight, or waiting to be tried again.
func PendingDeliveries(tx *bolt.Tx) int {
	return countKeys(tx.Bucket(bucketDeliveries))
}

// DeadLetters counts the DLQ entries of each scope that has any. It
// reads keys only, one step per entry.
func DeadLetters(tx *bolt.Tx) map[string]int {
	counts := map[string]int{}
	b := tx.Bucket(bucketDLQ)
	if b == nil {
		return counts
	}
	c := b.Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		scope, _, _ := bytes.Cut(k, []byte{0})
		counts[string(scope)]++
	}
	return counts
}
