package queue

import (
	"bytes"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// claimPass claims due deliveries inside one write transaction.
//
// It walks webhook_next (one entry per subscription with deliveries, at its
// earliest due time) from the front while entries are due, skips each
// subscription with PerTarget sends in flight at one step, and takes the
// earliest due deliveries of the others, as many as their free slots and
// the free workers allow. So a pass reads O(claimed + subscriptions looked
// at) entries, however long the backlog of a saturated receiver.
type claimPass struct {
	d       *Dispatcher
	tx      *bolt.Tx
	now     int64 // unix nanos
	lease   int64 // unix nanos: the due time of a claimed delivery
	max     int
	counts  map[string]int  // sends in flight per subscription, with this pass's claims
	sending map[string]bool // delivery keys in flight: not claimed again

	claims  []*deliveryClaim
	dropped []*deliveryRecord // of deleted subscriptions or events
	changed bool              // something was written
	bad     error             // the last unreadable record, left where it is
	full    bool              // the free workers are all taken
	next    time.Time
	steps   int
}

func (p *claimPass) run() error {
	if p.max > 0 {
		if err := p.claim(); err != nil {
			return err
		}
	}
	if p.full = len(p.claims) >= p.max; !p.full {
		p.next = p.nextDue()
	}
	return nil
}

// nextEntry is an entry of webhook_next.
type nextEntry struct {
	due   int64
	subID string
}

func (p *claimPass) claim() error {
	var after []byte // the last webhook_next key looked at
	for len(p.claims) < p.max {
		// Collect, then write: a cursor does not survive writes to its
		// bucket. A subscription claimed from moves to a later key and may
		// be met again in the next round, full or with nothing due.
		var subs []nextEntry
		c := p.tx.Bucket(bucketNext).Cursor()
		k, _ := c.First()
		if after != nil {
			if k, _ = c.Seek(after); bytes.Equal(k, after) {
				k, _ = c.Next()
			}
		}
		var last []byte
		for ; k != nil && len(subs) < p.max-len(p.claims); k, _ = c.Next() {
			p.steps++
			at, subID := parseDueKey(k)
			if at.UnixNano() > p.now {
				break
			}
			last = k
			if p.counts[subID] < p.d.perTarget {
				subs = append(subs, nextEntry{due: at.UnixNano(), subID: subID})
			}
		}
		if last == nil {
			return nil
		}
		after = bytes.Clone(last)
		for _, e := range subs {
			if len(p.claims) >= p.max {
				break
			}
			if err := p.claimSub(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// claimSub claims the earliest due deliveries of e's subscription, as many
// as its free slots and the pass's allow, moving each one's due key to the
// lease; it drops what is left of a deleted subscription or event.
func (p *claimPass) claimSub(e nextEntry) error {
	tx, subID := p.tx, e.subID
	before, had := earliestDue(tx, subID)
	if !had || before != e.due {
		// A stale entry: put it where it belongs.
		p.changed = true
		next := tx.Bucket(bucketNext)
		if err := next.Delete(dueKey(time.Unix(0, e.due), subID)); err != nil {
			return err
		}
		if had {
			if err := next.Put(dueKey(time.Unix(0, before), subID), nil); err != nil {
				return err
			}
		}
	}
	if !had || before > p.now {
		return nil
	}
	sub, err := getSubscription(tx, subID)
	if errors.Is(err, ErrNotFound) {
		p.changed = true
		recs, err := dropDeliveries(tx, subID)
		p.dropped = append(p.dropped, recs...)
		return err
	}
	if err != nil {
		p.bad = err
		return nil
	}
	want := min(p.d.perTarget-p.counts[subID], p.max-len(p.claims))
	var takes []*deliveryClaim
	var stale [][]byte
	var drops []*deliveryRecord
	prefix := subDuePrefix(subID)
	due := tx.Bucket(bucketDue)
	c := due.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix) && len(takes) < want; k, _ = c.Next() {
		p.steps++
		at, eventID, ok := parseSubDue(k[len(prefix):])
		if !ok {
			stale = append(stale, bytes.Clone(k))
			continue
		}
		if at > p.now {
			break
		}
		key := deliveryKey(subID, eventID)
		if p.sending[string(key)] {
			continue // in flight past its lease
		}
		// A record that cannot be read stays where it is (and is
		// reported) rather than stopping every other delivery.
		rec, err := getDelivery(tx, key)
		switch {
		case errors.Is(err, ErrNotFound), err == nil && rec.Due != at:
			stale = append(stale, bytes.Clone(k))
			continue
		case err != nil:
			p.bad = err
			continue
		}
		ev, err := getEvent(tx, rec.EventID)
		switch {
		case errors.Is(err, ErrNotFound):
			drops = append(drops, rec)
			continue
		case err != nil:
			p.bad = err
			continue
		}
		takes = append(takes, &deliveryClaim{key: key, rec: *rec, sub: *sub, event: ev.Event})
	}
	if len(stale)+len(drops)+len(takes) == 0 {
		return nil
	}
	p.changed = true
	for _, k := range stale {
		if err := due.Delete(k); err != nil {
			return err
		}
	}
	for _, r := range drops {
		if err := unlinkDelivery(tx, r); err != nil {
			return err
		}
	}
	for _, cl := range takes {
		if err := due.Delete(cl.rec.dueKey()); err != nil {
			return err
		}
		cl.rec.Due = p.lease
		if err := putDeliveryRecord(tx, &cl.rec); err != nil {
			return err
		}
		if err := due.Put(cl.rec.dueKey(), nil); err != nil {
			return err
		}
	}
	p.counts[subID] += len(takes)
	p.claims = append(p.claims, takes...)
	p.dropped = append(p.dropped, drops...)
	return fixNext(tx, subID, before, true)
}

// nextDue returns the earliest due time after p.now of a subscription
// below PerTarget, or zero if there is none; claim has run with workers to
// spare. What is due by p.now and still there could not be claimed: a
// subscription at PerTarget or a delivery in flight past its lease (a
// finished send wakes the loop for those), or an unreadable record (the
// poll tries it again). So a due time the pass has not reached is never
// taken for one it could not claim, and the walk skips only the
// subscriptions at PerTarget: its cost is bounded by the sends in flight.
func (p *claimPass) nextDue() time.Time {
	c := p.tx.Bucket(bucketNext).Cursor()
	for k, _ := c.Seek(dueKey(time.Unix(0, p.now+1), "")); k != nil; k, _ = c.Next() {
		p.steps++
		if at, subID := parseDueKey(k); p.counts[subID] < p.d.perTarget {
			return at
		}
	}
	return time.Time{}
}
