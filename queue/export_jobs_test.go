package queue

import (
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ErrJobExists is the unexported sentinel Enqueue wraps for a duplicate ID.
var ErrJobExists = errJobExists

// SetClaimHook makes r call f after each claim pass (from Run's goroutine)
// with the number of jobs claimed. Call it before Run.
func SetClaimHook(r *Runner, f func(n int)) { r.claimed = f }

// JobDue reports when job id is next due (the end of its lease while it is
// claimed) and how many times it has been claimed; ok is false when it is not
// queued.
func JobDue(tx *bolt.Tx, id string) (due time.Time, attempts int, ok bool, err error) {
	rec, err := getJobRecord(tx, id)
	if err != nil || rec == nil {
		return time.Time{}, 0, false, err
	}
	if tx.Bucket(bucketJobsDue).Get(dueKey(rec.Due, id)) == nil {
		return time.Time{}, 0, false, errNoDueKey
	}
	return rec.Due, rec.Attempt, true, nil
}

// DueKeys counts the entries of the due index.
func DueKeys(tx *bolt.Tx) int { return countKeys(tx.Bucket(bucketJobsDue)) }

var errNoDueKey = errors.New("job record without its due key")
