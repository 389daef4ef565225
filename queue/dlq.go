package queue

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// DeadLetter is an event a subscription did not accept: one per event and
// subscription, kept until it is replayed or acknowledged.
type DeadLetter struct {
	EventID        string          `json:"eventId"`
	EventType      string          `json:"eventType"`
	SubscriptionID string          `json:"webhookId"`
	TargetURL      string          `json:"targetUrl"`
	Attempts       int             `json:"attempts"`   // attempts of the last cycle
	LastStatus     int             `json:"lastStatus"` // 0 when no HTTP answer
	LastError      string          `json:"lastError"`
	FailedAt       time.Time       `json:"failedAt"`
	Timestamp      time.Time       `json:"timestamp"` // the event's
	Data           json.RawMessage `json:"data"`
}

// DLQFilter selects dead letters of a scope. The zero value selects all.
type DLQFilter struct {
	EventType  string
	Start, End time.Time  // on FailedAt, inclusive; zero = unbounded
	EventIDs   []string   // when not nil: only these events
	After      *DLQCursor // when not nil: only the entries listed after it
	Limit      int        // 0 = no limit
}

// DLQCursor is a position in the order DLQ entries are listed (newest
// FailedAt first, then event ID descending, then subscription ID): that of
// the last entry of a page, from which the next page goes on. It is the
// entry's key in webhook_dlq_failed, so the next page starts with a seek.
// It stays valid when entries come and go: it names a place in the order,
// not an entry.
type DLQCursor struct {
	ref dlqRef
}

// ErrBadCursor is returned by ParseDLQCursor for a string that is not the
// encoding of a cursor.
var ErrBadCursor = errors.New("queue: malformed DLQ cursor")

// Cursor returns the position of dl in the DLQ list order.
func (dl *DeadLetter) Cursor() DLQCursor {
	return DLQCursor{dlqRef{EventID: dl.EventID, SubscriptionID: dl.SubscriptionID, FailedAt: dl.FailedAt.UnixNano()}}
}

// String encodes c for a URL: unpadded base64url of BE(FailedAt unix nanos)
// | event ID | 0 | subscription ID, the key suffix of its index entry.
func (c DLQCursor) String() string {
	return base64.RawURLEncoding.EncodeToString(dlqIndexKey("", &c.ref)[1:])
}

// ParseDLQCursor reads what String wrote, or returns ErrBadCursor.
func ParseDLQCursor(s string) (DLQCursor, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return DLQCursor{}, ErrBadCursor
	}
	r, ok := parseDLQIndex(b, nil)
	if !ok || strings.IndexByte(r.SubscriptionID, 0) >= 0 {
		return DLQCursor{}, ErrBadCursor
	}
	return DLQCursor{r}, nil
}

// upper is the first index key of scope after c's event at c's time: a
// walk backwards from it starts with c's event group.
func (c *DLQCursor) upper(scope string) []byte {
	k := dlqIndexKey(scope, &c.ref)
	return append(k[:len(k)-len(c.ref.SubscriptionID)-1], 1)
}

// dlqRef is a DLQ entry as webhook_dlq_failed shows it: enough to select,
// order and find it without decoding it.
type dlqRef struct {
	EventID        string
	SubscriptionID string
	EventType      string
	FailedAt       int64 // unix nanos
}

// dlqKey is an entry's key in webhook_dlq: scope | 0 | event id | 0 |
// subscription id.
func dlqKey(scope, eventID, subID string) []byte { return scopedKey(scope, eventID, subID) }

// dlqIndexKey is an entry's key in webhook_dlq_failed: scope | 0 |
// BE(failedAt unix nanos) | event id | 0 | subscription id. Its value is
// the event type.
func dlqIndexKey(scope string, r *dlqRef) []byte {
	k := make([]byte, 0, len(scope)+10+len(r.EventID)+len(r.SubscriptionID))
	k = append(append(k, scope...), 0)
	k = binary.BigEndian.AppendUint64(k, uint64(r.FailedAt))
	k = append(append(k, r.EventID...), 0)
	return append(k, r.SubscriptionID...)
}

// parseDLQIndex reads what follows scope | 0 in a webhook_dlq_failed key,
// and its value; ok is false when the key is malformed.
func parseDLQIndex(rest, v []byte) (r dlqRef, ok bool) {
	if len(rest) <= 8 {
		return r, false
	}
	ids := rest[8:]
	i := bytes.IndexByte(ids, 0)
	if i <= 0 || i == len(ids)-1 {
		return r, false
	}
	return dlqRef{
		EventID: string(ids[:i]), SubscriptionID: string(ids[i+1:]), EventType: string(v),
		FailedAt: int64(binary.BigEndian.Uint64(rest[:8])),
	}, true
}

// dlqHead is the part of a stored DeadLetter its index holds.
type dlqHead struct {
	EventType string    `json:"eventType"`
	FailedAt  time.Time `json:"failedAt"`
}

// decodeDLQHead reads the event type and FailedAt of the stored DeadLetter
// v. It stops at the second of them: a DeadLetter is marshalled with both
// before Data, so the data is not read.
func decodeDLQHead(v []byte) (dlqHead, error) {
	var h dlqHead
	dec := json.NewDecoder(bytes.NewReader(v))
	t, err := dec.Token()
	if err != nil {
		return h, err
	}
	if t != json.Delim('{') {
		return h, errors.New("not a JSON object")
	}
	var haveType, haveTime bool
	for dec.More() && !(haveType && haveTime) {
		t, err := dec.Token()
		if err != nil {
			return h, err
		}
		var dst any = new(json.RawMessage)
		switch t {
		case "eventType":
			dst, haveType = &h.EventType, true
		case "failedAt":
			dst, haveTime = &h.FailedAt, true
		}
		if err := dec.Decode(dst); err != nil {
			return h, err
		}
	}
	return h, nil
}

// refOf reads the index entry of the stored DeadLetter v under DLQ key k
// (scope | 0 | event id | 0 | subscription id), and its scope.
func refOf(k, v []byte) (scope string, r dlqRef, err error) {
	parts := strings.Split(string(k), "\x00")
	if len(parts) != 3 {
		return "", r, fmt.Errorf("DLQ key %q: malformed", k)
	}
	h, err := decodeDLQHead(v)
	if err != nil {
		return "", r, fmt.Errorf("decode DLQ entry %q: %w", k, err)
	}
	return parts[0], dlqRef{EventID: parts[1], SubscriptionID: parts[2], EventType: h.EventType, FailedAt: h.FailedAt.UnixNano()}, nil
}

// PutDeadLetter writes dl as the DLQ entry of its event and subscription
// in scope, replacing one there, and indexes it: what the dispatcher does
// when a delivery gives up. It returns an error when the scope or an ID is
// empty or holds a 0 byte.
//
// The appliance never calls it. It is exported for the server package's
// tests, which fill a DLQ with over a thousand entries to page through
// (an export_test.go file is not visible outside this package), and
// running that many deliveries to exhaustion would take minutes.
func PutDeadLetter(tx *bolt.Tx, scope string, dl *DeadLetter) error {
	if !validKeyPart(scope) || !validKeyPart(dl.EventID) || !validKeyPart(dl.SubscriptionID) {
		return fmt.Errorf("queue: DLQ entry %q/%q: invalid scope or id", dl.EventID, dl.SubscriptionID)
	}
	return putDeadLetter(tx, scope, dl)
}

// putDeadLetter writes (or replaces) the DLQ entry of dl's event and
// subscription in scope, and its index entry.
func putDeadLetter(tx *bolt.Tx, scope string, dl *DeadLetter) error {
	key := dlqKey(scope, dl.EventID, dl.SubscriptionID)
	if old := tx.Bucket(bucketDLQ).Get(key); old != nil {
		_, r, err := refOf(key, old)
		if err != nil {
			return err
		}
		if err := tx.Bucket(bucketDLQFailed).Delete(dlqIndexKey(scope, &r)); err != nil {
			return err
		}
	}
	v, err := json.Marshal(dl)
	if err != nil {
		return err
	}
	if err := tx.Bucket(bucketDLQ).Put(key, v); err != nil {
		return err
	}
	r := dlqRef{EventID: dl.EventID, SubscriptionID: dl.SubscriptionID, EventType: dl.EventType, FailedAt: dl.FailedAt.UnixNano()}
	return tx.Bucket(bucketDLQFailed).Put(dlqIndexKey(scope, &r), []byte(r.EventType))
}

// deleteDeadLetter removes the DLQ entry r of scope and its index entry.
func deleteDeadLetter(tx *bolt.Tx, scope string, r *dlqRef) error {
	if err := tx.Bucket(bucketDLQ).Delete(dlqKey(scope, r.EventID, r.SubscriptionID)); err != nil {
		return err
	}
	return tx.Bucket(bucketDLQFailed).Delete(dlqIndexKey(scope, r))
}

// getDeadLetter decodes the DLQ entry r of scope.
func getDeadLetter(tx *bolt.Tx, scope string, r *dlqRef) (*DeadLetter, error) {
	return getRecord[DeadLetter](tx, bucketDLQ, "DLQ entry", dlqKey(scope, r.EventID, r.SubscriptionID))
}

// indexDLQ builds webhook_dlq_failed from webhook_dlq, for a store written
// before the index existed. It reads each entry's head, not its data.
func indexDLQ(tx *bolt.Tx) error {
	idx := tx.Bucket(bucketDLQFailed)
	return tx.Bucket(bucketDLQ).ForEach(func(k, v []byte) error {
		scope, r, err := refOf(k, v)
		if err != nil {
			return err
		}
		return idx.Put(dlqIndexKey(scope, &r), []byte(r.EventType))
	})
}

// dlqBefore reports whether a comes before b in the order DLQ entries are
// listed: newest FailedAt first, then event ID descending, then
// subscription ID ascending.
func dlqBefore(a, b *dlqRef) bool {
	if a.FailedAt != b.FailedAt {
		return a.FailedAt > b.FailedAt
	}
	if a.EventID != b.EventID {
		return a.EventID > b.EventID
	}
	return a.SubscriptionID < b.SubscriptionID
}

// matches reports whether r passes f's type and time bounds and comes
// after its cursor.
func (f *DLQFilter) matches(r *dlqRef) bool {
	return (f.EventType == "" || r.EventType == f.EventType) &&
		(f.Start.IsZero() || r.FailedAt >= f.Start.UnixNano()) &&
		(f.End.IsZero() || r.FailedAt <= f.End.UnixNano()) &&
		(f.After == nil || dlqBefore(&f.After.ref, r))
}

// findDLQ returns the entries of scope matching f, in list order (see
// dlqBefore), cut to f.Limit. It decodes no entry: without f.EventIDs it
// walks webhook_dlq_failed backwards from f.End or f.After, whichever
// comes first in the list (or from the newest), and stops at f.Start or at
// f.Limit matches, so its cost is what it returns plus the entries of
// other types it passes; with f.EventIDs it reads the head of those
// events' entries only.
func findDLQ(tx *bolt.Tx, scope string, f DLQFilter) ([]dlqRef, error) {
	if !validKeyPart(scope) {
		return nil, nil
	}
	if f.EventIDs != nil {
		return findDLQByEvents(tx, scope, f)
	}
	prefix := scopedKey(scope, "")
	c := tx.Bucket(bucketDLQFailed).Cursor()
	// Step back from the first key after the range: scope|0|BE(End+1), or
	// scope|1, which sorts right after every scope|0|... key.
	upper := append([]byte(scope), 1)
	if end := f.End.UnixNano(); !f.End.IsZero() && end >= 0 && end < math.MaxInt64 {
		upper = binary.BigEndian.AppendUint64(bytes.Clone(prefix), uint64(end+1))
	}
	if f.After != nil {
		// The cursor's event group is walked from its end too: the entries
		// of it with a greater subscription ID follow the cursor.
		if after := f.After.upper(scope); bytes.Compare(after, upper) < 0 {
			upper = after
		}
	}
	k, _ := c.Seek(upper)
	var v []byte
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	dlq := tx.Bucket(bucketDLQ)
	var out []dlqRef
	// The index holds an event's entries at one time in ascending
	// subscription order, and the walk goes backwards: each such group is
	// collected, then appended reversed.
	var group []dlqRef
	flush := func() {
		for i := len(group) - 1; i >= 0; i-- {
			out = append(out, group[i])
		}
		group = group[:0]
	}
	for ; k != nil && bytes.HasPrefix(k, prefix); k, v = c.Prev() {
		r, ok := parseDLQIndex(k[len(prefix):], v)
		if !ok {
			return nil, fmt.Errorf("DLQ index key %q: malformed", k)
		}
		if !f.Start.IsZero() && r.FailedAt < f.Start.UnixNano() {
			break
		}
		if len(group) > 0 && (group[0].FailedAt != r.FailedAt || group[0].EventID != r.EventID) {
			flush()
			if f.Limit > 0 && len(out) >= f.Limit {
				break
			}
		}
		if !f.matches(&r) || dlq.Get(dlqKey(scope, r.EventID, r.SubscriptionID)) == nil {
			continue
		}
		group = append(group, r)
	}
	flush()
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// findDLQByEvents is findDLQ for a filter with EventIDs: it looks up each
// event's entries by their key prefix, reads their heads and sorts them.
func findDLQByEvents(tx *bolt.Tx, scope string, f DLQFilter) ([]dlqRef, error) {
	var out []dlqRef
	seen := make(map[string]bool)
	c := tx.Bucket(bucketDLQ).Cursor()
	for _, id := range f.EventIDs {
		if !validKeyPart(id) || seen[id] {
			continue
		}
		seen[id] = true
		prefix := dlqKey(scope, id, "")
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			_, r, err := refOf(k, v)
			if err != nil {
				return nil, err
			}
			if f.matches(&r) {
				out = append(out, r)
			}
		}
	}
	slices.SortFunc(out, func(a, b dlqRef) int {
		if dlqBefore(&a, &b) {
			return -1
		}
		if dlqBefore(&b, &a) {
			return 1
		}
		return 0
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

// FindDeadLetterPage returns the DLQ entries of scope that match f, newest
// FailedAt first (ties: event ID descending, then subscription ID), at most
// f.Limit of them, or an error if one cannot be read. It also reports
// whether more entries match past f.Limit: the next page is then the one
// after the Cursor of the last entry returned (DLQFilter.After). Only the
// entries returned are decoded.
func FindDeadLetterPage(tx *bolt.Tx, scope string, f DLQFilter) ([]DeadLetter, bool, error) {
	limit := f.Limit
	if limit > 0 {
		f.Limit++ // one more, to know whether there is a next page
	}
	refs, err := findDLQ(tx, scope, f)
	if err != nil {
		return nil, false, err
	}
	more := limit > 0 && len(refs) > limit
	if more {
		refs = refs[:limit]
	}
	out := make([]DeadLetter, len(refs))
	for i := range refs {
		dl, err := getDeadLetter(tx, scope, &refs[i])
		if err != nil {
			return nil, false, err
		}
		out[i] = *dl
	}
	return out, more, nil
}

// ReplayDeadLetters turns the matching entries of scope (every entry of
// each matching event: one per subscription) back into pending deliveries
// with attempt 0, due at now, and removes them from the DLQ. Entries whose
// subscription was deleted are removed without a delivery. It returns how
// many entries it took off the DLQ (so 0 means none matched).
//
// It works in the caller's transaction, so the caller bounds the work with
// f.Limit (f.EventIDs bounds it too); without either it goes through every
// matching entry of the scope. An entry is decoded only when its event has
// to be stored again.
func ReplayDeadLetters(tx *bolt.Tx, scope string, f DLQFilter, now time.Time) (int, error) {
	refs, err := findDLQ(tx, scope, f)
	if err != nil {
		return 0, err
	}
	for i := range refs {
		if err := replayDeadLetter(tx, scope, &refs[i], now); err != nil {
			return 0, err
		}
	}
	return len(refs), nil
}

// replayDeadLetter takes the DLQ entry r of scope off the DLQ and, if its
// subscription still exists and has no delivery of the event, makes one.
func replayDeadLetter(tx *bolt.Tx, scope string, r *dlqRef, now time.Time) error {
	switch _, err := FindSubscription(tx, scope, r.SubscriptionID); {
	case errors.Is(err, ErrNotFound):
		return deleteDeadLetter(tx, scope, r)
	case err != nil:
		return err
	}
	if tx.Bucket(bucketDeliveries).Get(deliveryKey(r.SubscriptionID, r.EventID)) != nil {
		return deleteDeadLetter(tx, scope, r) // already on its way
	}
	ev, err := getEvent(tx, r.EventID)
	if errors.Is(err, ErrNotFound) {
		dl, err := getDeadLetter(tx, scope, r)
		if err != nil {
			return err
		}
		ev = &eventRecord{Event: Event{ID: dl.EventID, Scope: scope, Type: dl.EventType, Timestamp: dl.Timestamp, Data: dl.Data}}
	} else if err != nil {
		return err
	}
	if err := deleteDeadLetter(tx, scope, r); err != nil {
		return err
	}
	ev.Pending++
	if err := putEvent(tx, ev); err != nil {
		return err
	}
	d := &deliveryRecord{Scope: scope, EventID: r.EventID, SubscriptionID: r.SubscriptionID, Due: now.UnixNano()}
	return addDelivery(tx, d)
}

// AckDeadLetters deletes the matching entries of scope for good and
// returns how many. It decodes no entry; like ReplayDeadLetters it works
// in the caller's transaction, so the caller bounds the work with f.Limit
// (or f.EventIDs).
func AckDeadLetters(tx *bolt.Tx, scope string, f DLQFilter) (int, error) {
	refs, err := findDLQ(tx, scope, f)
	if err != nil {
		return 0, err
	}
	for i := range refs {
		if err := deleteDeadLetter(tx, scope, &refs[i]); err != nil {
			return 0, err
		}
	}
	return len(refs), nil
}
