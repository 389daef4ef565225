package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// attemptLogSize is how many attempts the log keeps per subscription.
const attemptLogSize = 1000

// Subscription is a webhook: where a scope's events of some types are sent,
// and the secret they are signed with.
type Subscription struct {
	ID         string    `json:"id"`    // "wh_..." chosen by the caller; time-ordered
	Scope      string    `json:"scope"` // opaque owner, e.g. "default/sandbox"
	TargetURL  string    `json:"targetUrl"`
	EventTypes []string  `json:"eventTypes"`
	Secret     string    `json:"secret"` // whsec_...
	CreatedAt  time.Time `json:"createdAt"`
}

// Event is something that happened in a scope, delivered to every
// subscription of that scope that asked for its type.
type Event struct {
	ID        string          `json:"eventId"`
	Scope     string          `json:"scope"`
	Type      string          `json:"eventType"`
	Timestamp time.Time       `json:"timestamp"`
	Data      json.RawMessage `json:"data"`
}

// Attempt is one try to deliver an event to a subscription, as its log
// shows it.
type Attempt struct {
	EventID      string     `json:"eventId"`
	EventType    string     `json:"eventType"`
	Attempt      int        `json:"attempt"`
	Status       int        `json:"status"` // 0 when no HTTP answer
	LatencyMs    float64    `json:"latencyMs"`
	ErrorClass   string     `json:"errorClass"` // "" on success; see the ErrorClass constants
	Error        string     `json:"error"`
	ResponseBody string     `json:"responseBody"` // first 4 KiB
	At           time.Time  `json:"at"`
	NextRetry    *time.Time `json:"nextRetry,omitempty"`
	DeadLettered bool       `json:"deadLettered"`
}

// eventRecord is an Event with the number of deliveries that still need
// it; the last one to finish deletes it (a DLQ entry keeps its own copy).
type eventRecord struct {
	Event
	Pending int `json:"pending"`
}

// deliveryRecord is one event on its way to one subscription. Its key is
// deliveryKey(SubscriptionID, EventID), so a subscription's deliveries
// share a prefix; Due is the time of its key in webhook_due.
type deliveryRecord struct {
	Scope          string `json:"scope"`
	EventID        string `json:"eventId"`
	SubscriptionID string `json:"subscriptionId"`
	Attempt        int    `json:"attempt"`
	Due            int64  `json:"due"` // unix nanos
}

func (r *deliveryRecord) key() []byte { return deliveryKey(r.SubscriptionID, r.EventID) }

// dueKey is r's key in webhook_due.
func (r *deliveryRecord) dueKey() []byte { return subDueKey(r.SubscriptionID, r.Due, r.EventID) }

func deliveryKey(subID, eventID string) []byte { return scopedKey(subID, eventID) }

// subDueKey is subID | 0 | BE(due unix nanos) | eventID: each
// subscription's deliveries in the order they are due.
func subDueKey(subID string, due int64, eventID string) []byte {
	k := make([]byte, 0, len(subID)+9+len(eventID))
	k = append(append(k, subID...), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(due))
	return append(k, eventID...)
}

// subDuePrefix is the prefix of subID's keys in webhook_due.
func subDuePrefix(subID string) []byte { return scopedKey(subID, "") }

// parseSubDue splits what follows a subDuePrefix in a webhook_due key.
func parseSubDue(rest []byte) (due int64, eventID string, ok bool) {
	if len(rest) <= 8 {
		return 0, "", false
	}
	return int64(binary.BigEndian.Uint64(rest[:8])), string(rest[8:]), true
}

// earliestDue returns when subID's first delivery in webhook_due is due;
// ok is false when it has none.
func earliestDue(tx *bolt.Tx, subID string) (due int64, ok bool) {
	prefix := subDuePrefix(subID)
	k, _ := tx.Bucket(bucketDue).Cursor().Seek(prefix)
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return 0, false
	}
	due, _, ok = parseSubDue(k[len(prefix):])
	return due, ok
}

// fixNext moves subID's webhook_next entry from before (had: it had one)
// to the subscription's earliest due time now, or deletes it when no
// delivery is left. Whatever changes a subscription's keys in webhook_due
// reads earliestDue first and calls fixNext after, in the same
// transaction, so webhook_next holds exactly one entry per subscription
// with deliveries: BE(its earliest due) | subscription id.
func fixNext(tx *bolt.Tx, subID string, before int64, had bool) error {
	after, has := earliestDue(tx, subID)
	if had == has && before == after {
		return nil
	}
	next := tx.Bucket(bucketNext)
	if had {
		if err := next.Delete(dueKey(time.Unix(0, before), subID)); err != nil {
			return err
		}
	}
	if has {
		return next.Put(dueKey(time.Unix(0, after), subID), nil)
	}
	return nil
}

// validKeyPart reports whether s can be part of a scopedKey.
func validKeyPart(s string) bool { return s != "" && strings.IndexByte(s, 0) < 0 }

// PutSubscription creates s or replaces the subscription of the same ID
// (rotation replaces the Secret) and indexes it by scope. It returns an
// error when the ID or scope is empty or holds a 0 byte.
func PutSubscription(tx *bolt.Tx, s *Subscription) error {
	if !validKeyPart(s.ID) || !validKeyPart(s.Scope) {
		return fmt.Errorf("queue: subscription %q: invalid id or scope", s.ID)
	}
	old, err := getSubscription(tx, s.ID)
	switch {
	case err == nil && old.Scope != s.Scope:
		if err := tx.Bucket(bucketSubsByScope).Delete(scopedKey(old.Scope, old.ID)); err != nil {
			return err
		}
	case err != nil && !errors.Is(err, ErrNotFound):
		return err
	}
	v, err := json.Marshal(s)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketSubs).Put([]byte(s.ID), v); err != nil {
		return err
	}
	return tx.Bucket(bucketSubsByScope).Put(scopedKey(s.Scope, s.ID), nil)
}

// getSubscription reads a subscription of any scope; ErrNotFound if absent.
func getSubscription(tx *bolt.Tx, id string) (*Subscription, error) {
	return getRecord[Subscription](tx, bucketSubs, "subscription", []byte(id))
}

// FindSubscription returns the subscription id of scope, or ErrNotFound if
// it does not exist or belongs to another scope.
func FindSubscription(tx *bolt.Tx, scope, id string) (*Subscription, error) {
	s, err := getSubscription(tx, id)
	if err != nil {
		return nil, err
	}
	if s.Scope != scope {
		return nil, fmt.Errorf("subscription %s: %w", id, ErrNotFound)
	}
	return s, nil
}

// FindSubscriptions returns the subscriptions of scope, newest first (IDs
// are time-ordered), or an error if one cannot be read.
func FindSubscriptions(tx *bolt.Tx, scope string) ([]*Subscription, error) {
	if !validKeyPart(scope) {
		return nil, nil
	}
	prefix := scopedKey(scope, "")
	c := tx.Bucket(bucketSubsByScope).Cursor()
	// scope|1 sorts right after every scope|0|id: step back from it.
	k, _ := c.Seek(append([]byte(scope), 1))
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	var subs []*Subscription
	for ; k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Prev() {
		s, err := getSubscription(tx, string(k[len(prefix):]))
		if err != nil {
			return nil, err
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// DeleteSubscription removes subscription id of scope, its attempt log and
// its pending deliveries, so no further request is sent; its DLQ entries
// stay. It returns ErrNotFound if the subscription does not exist in scope.
func DeleteSubscription(tx *bolt.Tx, scope, id string) error {
	if _, err := FindSubscription(tx, scope, id); err != nil {
		return err
	}
	if err := tx.Bucket(bucketSubs).Delete([]byte(id)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketSubsByScope).Delete(scopedKey(scope, id)); err != nil {
		return err
	}
	if _, err := dropDeliveries(tx, id); err != nil {
		return err
	}
	if tx.Bucket(bucketAttempts).Bucket([]byte(id)) != nil {
		return tx.Bucket(bucketAttempts).DeleteBucket([]byte(id))
	}
	return nil
}

// Publish writes ev once and, in the same transaction, one delivery per
// subscription of ev.Scope whose EventTypes contain ev.Type, due at
// ev.Timestamp. It returns how many deliveries it created; with none, the
// event is not stored. It fails if ev lacks an ID, scope, type or
// timestamp, if Data is not JSON, or if an event of that ID is pending.
func Publish(tx *bolt.Tx, ev Event) (int, error) {
	if !validKeyPart(ev.ID) || !validKeyPart(ev.Scope) || ev.Type == "" || ev.Timestamp.IsZero() {
		return 0, fmt.Errorf("queue: event %q: id, scope, type and timestamp are required", ev.ID)
	}
	if len(ev.Data) > 0 && !json.Valid(ev.Data) {
		return 0, fmt.Errorf("queue: event %s: data is not JSON", ev.ID)
	}
	if tx.Bucket(bucketEvents).Get([]byte(ev.ID)) != nil {
		return 0, fmt.Errorf("queue: event %s already published", ev.ID)
	}
	subs, err := FindSubscriptions(tx, ev.Scope)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range subs {
		if !slices.Contains(s.EventTypes, ev.Type) {
			continue
		}
		r := &deliveryRecord{Scope: ev.Scope, EventID: ev.ID, SubscriptionID: s.ID, Due: ev.Timestamp.UnixNano()}
		if err := addDelivery(tx, r); err != nil {
			return 0, err
		}
		n++
	}
	if n == 0 {
		return 0, nil
	}
	return n, putEvent(tx, &eventRecord{Event: ev, Pending: n})
}

func putEvent(tx *bolt.Tx, e *eventRecord) error {
	v, err := json.Marshal(e)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketEvents).Put([]byte(e.ID), v)
}

// getEvent reads an event record; ErrNotFound if absent.
func getEvent(tx *bolt.Tx, id string) (*eventRecord, error) {
	return getRecord[eventRecord](tx, bucketEvents, "event", []byte(id))
}

// releaseEvent notes that one delivery of event id is finished and deletes
// the event when it was the last.
func releaseEvent(tx *bolt.Tx, id string) error {
	e, err := getEvent(tx, id)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if e.Pending--; e.Pending <= 0 {
		return tx.Bucket(bucketEvents).Delete([]byte(id))
	}
	return putEvent(tx, e)
}

// getDelivery reads a delivery record; ErrNotFound if absent.
func getDelivery(tx *bolt.Tx, key []byte) (*deliveryRecord, error) {
	return getRecord[deliveryRecord](tx, bucketDeliveries, "delivery", key)
}

// putDeliveryRecord writes r (not its due key).
func putDeliveryRecord(tx *bolt.Tx, r *deliveryRecord) error {
	v, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return tx.Bucket(bucketDeliveries).Put(r.key(), v)
}

// addDelivery writes the new delivery r and its due key.
func addDelivery(tx *bolt.Tx, r *deliveryRecord) error {
	before, had := earliestDue(tx, r.SubscriptionID)
	if err := putDeliveryRecord(tx, r); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDue).Put(r.dueKey(), nil); err != nil {
		return err
	}
	return fixNext(tx, r.SubscriptionID, before, had)
}

// rescheduleDelivery moves r's due key to due and writes r, with attempt
// and all, as it is then.
func rescheduleDelivery(tx *bolt.Tx, r *deliveryRecord, due int64) error {
	before, had := earliestDue(tx, r.SubscriptionID)
	if err := tx.Bucket(bucketDue).Delete(r.dueKey()); err != nil {
		return err
	}
	r.Due = due
	if err := putDeliveryRecord(tx, r); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDue).Put(r.dueKey(), nil); err != nil {
		return err
	}
	return fixNext(tx, r.SubscriptionID, before, had)
}

// removeDelivery deletes r and its due key and releases its event.
func removeDelivery(tx *bolt.Tx, r *deliveryRecord) error {
	before, had := earliestDue(tx, r.SubscriptionID)
	if err := unlinkDelivery(tx, r); err != nil {
		return err
	}
	return fixNext(tx, r.SubscriptionID, before, had)
}

// unlinkDelivery is removeDelivery without fixNext, for callers that fix
// the subscription's webhook_next entry once for many changes.
func unlinkDelivery(tx *bolt.Tx, r *deliveryRecord) error {
	if err := tx.Bucket(bucketDue).Delete(r.dueKey()); err != nil {
		return err
	}
	if err := tx.Bucket(bucketDeliveries).Delete(r.key()); err != nil {
		return err
	}
	return releaseEvent(tx, r.EventID)
}

// dropDeliveries removes every delivery of subscription subID, with its
// due key (stray due keys too) and its webhook_next entry, and returns the
// deliveries it removed.
func dropDeliveries(tx *bolt.Tx, subID string) ([]*deliveryRecord, error) {
	before, had := earliestDue(tx, subID)
	var recs []*deliveryRecord
	prefix := deliveryKey(subID, "")
	c := tx.Bucket(bucketDeliveries).Cursor()
	for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
		r := new(deliveryRecord)
		if err := json.Unmarshal(v, r); err != nil {
			return nil, fmt.Errorf("decode delivery %q: %w", k, err)
		}
		recs = append(recs, r)
	}
	for _, r := range recs {
		if err := unlinkDelivery(tx, r); err != nil {
			return nil, err
		}
	}
	var stray [][]byte
	prefix = subDuePrefix(subID)
	c = tx.Bucket(bucketDue).Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
		stray = append(stray, bytes.Clone(k))
	}
	for _, k := range stray {
		if err := tx.Bucket(bucketDue).Delete(k); err != nil {
			return nil, err
		}
	}
	return recs, fixNext(tx, subID, before, had)
}

// appendAttempt adds a to the log of subscription subID and deletes what
// falls beyond the last attemptLogSize. A deleted subscription gets no log.
func appendAttempt(tx *bolt.Tx, subID string, a *Attempt) error {
	if tx.Bucket(bucketSubs).Get([]byte(subID)) == nil {
		return nil
	}
	b, err := tx.Bucket(bucketAttempts).CreateBucketIfNotExists([]byte(subID))
	if err != nil {
		return err
	}
	seq, err := b.NextSequence()
	if err != nil {
		return err
	}
	v, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := b.Put(binary.BigEndian.AppendUint64(nil, seq), v); err != nil {
		return err
	}
	if seq <= attemptLogSize {
		return nil
	}
	// Keys are consecutive, so usually this deletes exactly one.
	cut := seq - attemptLogSize
	c := b.Cursor()
	for k, _ := c.First(); k != nil && binary.BigEndian.Uint64(k) <= cut; k, _ = c.First() {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// FindAttempts returns the newest attempts to subscription subID of scope,
// newest first, at most limit (limit <= 0: the whole log, the last 1000).
// It returns ErrNotFound if the subscription does not exist in scope.
func FindAttempts(tx *bolt.Tx, scope, subID string, limit int) ([]Attempt, error) {
	if _, err := FindSubscription(tx, scope, subID); err != nil {
		return nil, err
	}
	b := tx.Bucket(bucketAttempts).Bucket([]byte(subID))
	if b == nil {
		return nil, nil
	}
	var out []Attempt
	c := b.Cursor()
	for k, v := c.Last(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Prev() {
		var a Attempt
		if err := json.Unmarshal(v, &a); err != nil {
			return nil, fmt.Errorf("decode attempt %d of %s: %w", binary.BigEndian.Uint64(k), subID, err)
		}
		out = append(out, a)
	}
	return out, nil
}
