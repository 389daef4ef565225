package queue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CheckWebhookIndexes reports the first broken invariant of the webhook
// buckets (doc.go): every delivery has exactly its due key and every due
// key its delivery; webhook_next holds one entry per subscription with
// deliveries, at its earliest due time, and nothing else; every event's
// pending count is its number of deliveries, and every delivery's event is
// stored; webhook_dlq_failed holds exactly one entry per DLQ entry, at its
// FailedAt and with its event type.
func CheckWebhookIndexes(tx *bolt.Tx) error { return checkWebhookIndexes(tx) }

// NextEntries lists webhook_next as "subscription@due", front first, with
// due as an offset from t0.
func NextEntries(tx *bolt.Tx, t0 time.Time) []string {
	var out []string
	_ = tx.Bucket(bucketNext).ForEach(func(k, _ []byte) error {
		at, sub := parseDueKey(k)
		out = append(out, fmt.Sprintf("%s@%s", sub, at.Sub(t0)))
		return nil
	})
	return out
}

func checkWebhookIndexes(tx *bolt.Tx) error {
	pending := map[string]int{}
	err := tx.Bucket(bucketDeliveries).ForEach(func(k, v []byte) error {
		var r deliveryRecord
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("delivery %q: %w", k, err)
		}
		if !bytes.Equal(k, r.key()) {
			return fmt.Errorf("delivery %q: key does not match record %+v", k, r)
		}
		if tx.Bucket(bucketDue).Get(r.dueKey()) == nil {
			return fmt.Errorf("delivery %q: no due key at %d", k, r.Due)
		}
		pending[r.EventID]++
		return nil
	})
	if err != nil {
		return err
	}
	earliest := map[string]int64{}
	err = tx.Bucket(bucketDue).ForEach(func(k, _ []byte) error {
		i := bytes.IndexByte(k, 0)
		if i < 0 {
			return fmt.Errorf("due key %q: no separator", k)
		}
		sub := string(k[:i])
		due, eventID, ok := parseSubDue(k[i+1:])
		if !ok {
			return fmt.Errorf("due key %q: too short", k)
		}
		r, err := getDelivery(tx, deliveryKey(sub, eventID))
		if err != nil {
			return fmt.Errorf("due key of %s/%s: %w", sub, eventID, err)
		}
		if r.Due != due {
			return fmt.Errorf("due key of %s/%s at %d, record due at %d", sub, eventID, due, r.Due)
		}
		if e, ok := earliest[sub]; !ok || due < e {
			earliest[sub] = due
		}
		return nil
	})
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	err = tx.Bucket(bucketNext).ForEach(func(k, _ []byte) error {
		at, sub := parseDueKey(k)
		e, ok := earliest[sub]
		switch {
		case seen[sub]:
			return fmt.Errorf("webhook_next: second entry of %s", sub)
		case !ok:
			return fmt.Errorf("webhook_next: entry of %s, which has no delivery", sub)
		case at.UnixNano() != e:
			return fmt.Errorf("webhook_next: %s at %d, its earliest due is %d", sub, at.UnixNano(), e)
		}
		seen[sub] = true
		return nil
	})
	if err != nil {
		return err
	}
	for sub := range earliest {
		if !seen[sub] {
			return fmt.Errorf("webhook_next: no entry for %s", sub)
		}
	}
	err = tx.Bucket(bucketEvents).ForEach(func(k, v []byte) error {
		var e eventRecord
		if err := json.Unmarshal(v, &e); err != nil {
			return fmt.Errorf("event %q: %w", k, err)
		}
		if e.Pending != pending[e.ID] || e.Pending <= 0 {
			return fmt.Errorf("event %s: pending %d, deliveries %d", e.ID, e.Pending, pending[e.ID])
		}
		delete(pending, e.ID)
		return nil
	})
	if err != nil {
		return err
	}
	for id, n := range pending {
		return fmt.Errorf("event %s: missing, %d deliveries", id, n)
	}
	return checkDLQIndex(tx)
}

// checkDLQIndex reports the first DLQ entry without its index entry (at
// its FailedAt, with its type), or index entry without its DLQ entry.
func checkDLQIndex(tx *bolt.Tx) error {
	want := map[string]string{} // index key -> event type
	err := tx.Bucket(bucketDLQ).ForEach(func(k, v []byte) error {
		var dl DeadLetter
		if err := json.Unmarshal(v, &dl); err != nil {
			return fmt.Errorf("DLQ entry %q: %w", k, err)
		}
		scope, r, err := refOf(k, v)
		if err != nil {
			return err
		}
		if r.EventID != dl.EventID || r.SubscriptionID != dl.SubscriptionID || r.EventType != dl.EventType || r.FailedAt != dl.FailedAt.UnixNano() {
			return fmt.Errorf("DLQ entry %q: key or head %+v does not match %+v", k, r, dl)
		}
		want[string(dlqIndexKey(scope, &r))] = dl.EventType
		return nil
	})
	if err != nil {
		return err
	}
	err = tx.Bucket(bucketDLQFailed).ForEach(func(k, v []byte) error {
		typ, ok := want[string(k)]
		switch {
		case !ok:
			return fmt.Errorf("DLQ index key %q: no DLQ entry at that time", k)
		case string(v) != typ:
			return fmt.Errorf("DLQ index key %q: type %q, entry's %q", k, v, typ)
		}
		delete(want, string(k))
		return nil
	})
	if err != nil {
		return err
	}
	for k := range want {
		return fmt.Errorf("DLQ index: no key %q", k)
	}
	return nil
}
