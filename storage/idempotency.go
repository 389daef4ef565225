package storage

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"time"
)

var bucketIdempotency = []byte("idempotency")

// Idempotency record states.
const (
	IdemInFlight  = "in_flight"
	IdemCompleted = "completed"
)

// IdempotencyRecord remembers one Idempotency-Key of a tenant: the request's
// fingerprint and, once completed, the response to replay.
type IdempotencyRecord struct {
	Key         string              `json:"key"`
	Fingerprint string              `json:"fingerprint"`
	State       string              `json:"state"`
	Owner       string              `json:"owner"` // run id of the process handling it while in flight
	Status      int                 `json:"status,omitempty"`
	Header      map[string][]string `json:"header,omitempty"`
	Body        []byte              `json:"body,omitempty"`
	CreatedAt   time.Time           `json:"createdAt"`
	ExpiresAt   time.Time           `json:"expiresAt"`
}

// FindIdempotency returns the tenant's record for key or ErrNotFound. An
// expired record not yet swept is returned too: the caller compares ExpiresAt.
func (tx *Tx) FindIdempotency(t Tenant, key string) (*IdempotencyRecord, error) {
	b, err := tx.tenantBucket(t, bucketIdempotency)
	if err != nil {
		return nil, err
	}
	var r IdempotencyRecord
	if err := getJSON(b, []byte(key), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// PutIdempotency writes a record and indexes its expiry for the sweeper.
func (tx *Tx) PutIdempotency(t Tenant, r *IdempotencyRecord) error {
	b, err := tx.tenantBucket(t, bucketIdempotency)
	if err != nil {
		return err
	}
	if old, err := tx.FindIdempotency(t, r.Key); err == nil && !old.ExpiresAt.Equal(r.ExpiresAt) {
		if err := tx.Bucket(bucketIdemExpiry).Delete(idemExpiryKey(t, old)); err != nil {
			return err
		}
	}
	if err := putJSON(b, []byte(r.Key), r); err != nil {
		return fmt.Errorf("put idempotency record: %w", err)
	}
	return tx.Bucket(bucketIdemExpiry).Put(idemExpiryKey(t, r), nil)
}

// DeleteIdempotency removes the tenant's record for key, if any.
func (tx *Tx) DeleteIdempotency(t Tenant, key string) error {
	old, err := tx.FindIdempotency(t, key)
	if err == ErrNotFound {
		return nil
	}
	if err != nil {
		return err
	}
	b, err := tx.tenantBucket(t, bucketIdempotency)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketIdemExpiry).Delete(idemExpiryKey(t, old)); err != nil {
		return err
	}
	return b.Delete([]byte(key))
}

// SweepIdempotency deletes up to max records that expired before now, oldest
// first, and returns how many it deleted. It reads only expired index entries.
func (tx *Tx) SweepIdempotency(now time.Time, max int) (int, error) {
	idx := tx.Bucket(bucketIdemExpiry)
	c := idx.Cursor()
	n := 0
	for k, _ := c.First(); k != nil && n < max; k, _ = c.First() {
		exp, t, key, ok := parseIdemExpiryKey(k)
		if !ok {
			return n, fmt.Errorf("bad idempotency index key %x", k)
		}
		if !exp.Before(now) {
			break
		}
		b, err := tx.tenantBucket(t, bucketIdempotency)
		if err != nil {
			return n, err
		}
		if err := b.Delete([]byte(key)); err != nil {
			return n, err
		}
		if err := idx.Delete(k); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// idemExpiryKey is BE(expiry unix nanos) | org | 0 | env | 0 | key: sorted by
// expiry, and enough to find the record.
func idemExpiryKey(t Tenant, r *IdempotencyRecord) []byte {
	k := make([]byte, 8, 8+len(t.Org)+len(t.Env)+len(r.Key)+2)
	binary.BigEndian.PutUint64(k, uint64(r.ExpiresAt.UnixNano()))
	k = append(k, t.Org...)
	k = append(k, 0)
	k = append(k, t.Env...)
	k = append(k, 0)
	return append(k, r.Key...)
}

func parseIdemExpiryKey(k []byte) (time.Time, Tenant, string, bool) {
	if len(k) < 10 {
		return time.Time{}, Tenant{}, "", false
	}
	exp := time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))
	parts := bytes.SplitN(k[8:], []byte{0}, 3)
	if len(parts) != 3 {
		return time.Time{}, Tenant{}, "", false
	}
	return exp, Tenant{Org: string(parts[0]), Env: Environment(parts[1])}, string(parts[2]), true
}
