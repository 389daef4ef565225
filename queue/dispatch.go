package queue

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue/webhooksig"
)

// Error classes of a failed Attempt.
const (
	ErrorClassTimeout          = "timeout"
	ErrorClassConnection       = "connection"
	ErrorClassTLS              = "tls"
	ErrorClassTargetNotAllowed = "target_not_allowed"
	ErrorClassHTTPStatus       = "http_status"
	ErrorClassRedirect         = "redirect"
)

const (
	// responseBodyMax is how much of a receiver's answer an Attempt keeps.
	responseBodyMax = 4 << 10
	// responseDrainMax is how much more of an answer is read (and dropped) so the
	// connection can be reused; a longer answer closes it.
	responseDrainMax = 64 << 10
	// envelopeTimeLayout is RFC 3339 in UTC with milliseconds.
	envelopeTimeLayout = "2006-01-02T15:04:05.000Z07:00"
	webhookUserAgent   = "eudr-webhooks/1"
)

// defaultRetrySchedule is the production retry schedule (API.md section 9),
// used when a Policy has none.
var defaultRetrySchedule = []time.Duration{30 * time.Second, 2 * time.Minute, 10 * time.Minute, time.Hour}

// Policy is how deliveries of one scope are sent.
type Policy struct {
	// Schedule is the delay before retries 1..MaxAttempts-1; a shorter one
	// repeats its last delay, an empty one is the production default.
	Schedule []time.Duration
	// Client sends (NewClient); nil is NewClient with private targets
	// refused and the 10 s timeout.
	Client *http.Client
}

// DispatcherOptions configures a Dispatcher; zero fields take defaults.
type DispatcherOptions struct {
	DB        *bolt.DB
	PolicyFor func(scope string) Policy // nil: the default Policy
	Workers   int                       // concurrent sends, default 16
	PerTarget int                       // concurrent sends to one subscription, default 4
	Lease     time.Duration             // how long a claim holds a delivery, default 1m
	// PollInterval is the longest the dispatcher sleeps without a Wake,
	// default 5s. It is only a safety net: the dispatcher sleeps until the
	// next delivery is due, and Wake (called after a Publish or a replay)
	// rouses it at once.
	PollInterval time.Duration
	Jitter       float64          // spread of retry delays, default 0.2 (+-20 %); < 0: none
	Now          func() time.Time // default time.Now
	Rand         func() float64   // in [0,1), default math/rand/v2
	Logger       zerolog.Logger
}

// Dispatcher sends due deliveries with a bounded pool of workers, records
// each attempt, and reschedules failures or moves them to the DLQ.
type Dispatcher struct {
	db            *bolt.DB
	policyFor     func(string) Policy
	workers       int
	perTarget     int
	lease         time.Duration
	poll          time.Duration
	jitter        float64
	now           func() time.Time
	rand          func() float64
	log           zerolog.Logger
	defaultClient *http.Client
	wake          chan struct{}

	mu       sync.Mutex
	busy     int             // sends in flight
	perSub   map[string]int  // sends in flight per subscription
	sending  map[string]bool // delivery keys claimed and not yet recorded
	finished []*outcome      // sends done, outcomes not yet recorded

	errs errLog // store errors, from the loop and from Send
}

// NewDispatcher returns a Dispatcher; Run starts it.
func NewDispatcher(o DispatcherOptions) *Dispatcher {
	d := &Dispatcher{
		db: o.DB, policyFor: o.PolicyFor, workers: o.Workers, perTarget: o.PerTarget,
		lease: o.Lease, poll: o.PollInterval, jitter: o.Jitter, now: o.Now, rand: o.Rand,
		log:     o.Logger,
		wake:    make(chan struct{}, 1),
		perSub:  make(map[string]int),
		sending: make(map[string]bool),
	}
	if d.workers <= 0 {
		d.workers = 16
	}
	if d.perTarget <= 0 {
		d.perTarget = 4
	}
	if d.lease <= 0 {
		d.lease = time.Minute
	}
	if d.poll <= 0 {
		d.poll = 5 * time.Second
	}
	if d.jitter == 0 {
		d.jitter = 0.2
	}
	if d.now == nil {
		d.now = time.Now
	}
	if d.rand == nil {
		d.rand = rand.Float64
	}
	d.defaultClient = NewClient(ClientOptions{Timeout: 10 * time.Second})
	return d
}

// Wake tells the dispatcher that deliveries may be due now. It never
// blocks, and wakes arriving together are handled by one look.
func (d *Dispatcher) Wake() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// Run sends due deliveries until ctx is done, then waits for the sends in
// flight (each bounded by its client's timeout), records their outcomes
// and returns nil.
//
// Each pass of its loop is one write transaction that records the outcomes
// of the sends finished since the last pass and claims due deliveries for
// the free workers. Between passes it sleeps until the earliest due time of
// a subscription with a free slot, a Wake (a publish, a finished send) or
// PollInterval, whichever comes first.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.log.Info().Int("workers", d.workers).Int("per_target", d.perTarget).Msg("webhook dispatcher started")
	var wg sync.WaitGroup
	// Sends outlive ctx: an answered request whose outcome is not recorded
	// would be sent again.
	sendCtx := context.WithoutCancel(ctx)
	timer := time.NewTimer(d.poll)
	defer timer.Stop()
	var backoff time.Duration
	var pausedUntil time.Time
	for ctx.Err() == nil {
		var wait time.Duration
		if until := time.Until(pausedUntil); until > 0 {
			wait = until
		} else if p, err := d.dispatch(sendCtx, &wg, true); err != nil {
			backoff = nextBackoff(backoff)
			pausedUntil = time.Now().Add(backoff)
			wait = backoff
			d.errs.report(d.log, err, "claim deliveries")
		} else {
			backoff = 0
			wait = d.sleepAfter(p)
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
		case <-d.wake:
		case <-timer.C:
		}
	}
	d.drain(&wg)
	return nil
}

// sleepAfter is how long the loop may sleep after pass p: until the next
// due time, at most the poll interval.
func (d *Dispatcher) sleepAfter(p passResult) time.Duration {
	if p.next.IsZero() {
		return d.poll // nothing to wait for but a Wake
	}
	wait := p.next.Sub(d.now())
	if wait > 0 {
		return min(wait, d.poll)
	}
	if p.claimed > 0 {
		return 0 // the workers ran out: look again (a finished send wakes us anyway)
	}
	// Due but not claimable: still in flight past its lease (its end wakes
	// the loop) or unreadable (reported; the poll tries again).
	return d.poll
}

// drain waits for the sends in flight and records their outcomes.
func (d *Dispatcher) drain(wg *sync.WaitGroup) {
	d.mu.Lock()
	busy := d.busy
	d.mu.Unlock()
	d.log.Info().Int("in_flight", busy).Msg("webhook dispatcher draining")
	for {
		d.mu.Lock()
		busy, finished := d.busy, len(d.finished)
		d.mu.Unlock()
		if finished > 0 {
			if _, err := d.dispatch(nil, nil, false); err != nil {
				d.errs.report(d.log, err, "record delivery attempts")
			}
			continue
		}
		if busy == 0 {
			break
		}
		<-d.wake // each finished send wakes
	}
	wg.Wait()
	d.log.Info().Msg("webhook dispatcher stopped")
}

// deliveryClaim is a delivery taken for one send.
type deliveryClaim struct {
	key   []byte
	rec   deliveryRecord // as claimed, Due = the lease
	sub   Subscription
	event Event
}

// deliveryOutcome is what recording an attempt does to its delivery.
type deliveryOutcome int

const (
	outcomeDelivered deliveryOutcome = iota
	outcomeRetry
	outcomeDeadLetter
)

// outcome is a finished send waiting to be recorded.
type outcome struct {
	c        *deliveryClaim
	a        Attempt
	kind     deliveryOutcome
	failedAt time.Time
}

// passResult is what one pass did.
type passResult struct {
	claimed int
	next    time.Time // earliest due of a subscription below PerTarget; zero: none
	steps   int       // index entries read, for tests
}

// dispatch runs one pass: in one write transaction it records the outcomes
// of the finished sends and, if claim, claims due deliveries for the free
// workers; then it starts a send for each claim.
func (d *Dispatcher) dispatch(ctx context.Context, wg *sync.WaitGroup, claim bool) (passResult, error) {
	d.mu.Lock()
	finished := d.finished
	d.finished = nil
	free := d.workers - d.busy
	counts := maps.Clone(d.perSub)
	sending := maps.Clone(d.sending)
	d.mu.Unlock()
	if !claim {
		free = 0
	}
	if len(finished) == 0 && free <= 0 {
		return passResult{}, nil
	}
	// Recorded in this pass, so claimable again if due.
	for _, o := range finished {
		delete(sending, string(o.c.key))
	}
	recorded := finished
	claims, res, err := d.pass(finished, free, counts, sending)
	if err != nil && len(finished) > 0 {
		// One outcome may have failed them all: record each alone (a
		// failure leaves its delivery to be sent again when the lease runs
		// out), then claim.
		recorded = d.recordEach(finished)
		claims, res, err = d.pass(nil, free, counts, sending)
	}
	d.mu.Lock()
	for _, o := range finished {
		delete(d.sending, string(o.c.key))
	}
	for _, c := range claims {
		d.busy++
		d.perSub[c.sub.ID]++
		d.sending[string(c.key)] = true
	}
	d.mu.Unlock()
	for _, o := range recorded {
		d.logOutcome(o)
	}
	for _, c := range claims {
		wg.Go(func() { d.deliver(ctx, c) })
	}
	return res, err
}

// errNothingDue rolls back a pass that changed nothing.
var errNothingDue = errors.New("nothing due")

// pass records finished in one write transaction and claims up to free
// due deliveries, given the sends in flight per subscription (counts) and
// the delivery keys not to claim (sending). An idle pass rolls back.
func (d *Dispatcher) pass(finished []*outcome, free int, counts map[string]int, sending map[string]bool) ([]*deliveryClaim, passResult, error) {
	now := d.now().UnixNano()
	var p *claimPass
	err := d.db.Update(func(tx *bolt.Tx) error {
		for _, o := range finished {
			if err := d.record(tx, o); err != nil {
				return err
			}
		}
		p = &claimPass{d: d, tx: tx, now: now, lease: now + int64(d.lease), max: free,
			counts: make(map[string]int, len(counts)), sending: sending}
		maps.Copy(p.counts, counts)
		if err := p.run(); err != nil {
			return err
		}
		if len(finished) == 0 && !p.changed {
			return errNothingDue
		}
		return nil
	})
	if err != nil && !errors.Is(err, errNothingDue) {
		return nil, passResult{}, err
	}
	if p.bad != nil {
		d.errs.report(d.log, p.bad, "skip unreadable delivery")
	}
	for _, r := range p.dropped {
		d.log.Debug().Str("event_id", r.EventID).Str("webhook_id", r.SubscriptionID).Msg("delivery dropped")
	}
	return p.claims, passResult{claimed: len(p.claims), next: p.next, steps: p.steps}, nil
}

// recordEach records each outcome in a transaction of its own and returns
// those recorded.
func (d *Dispatcher) recordEach(finished []*outcome) []*outcome {
	var ok []*outcome
	for _, o := range finished {
		if err := d.db.Update(func(tx *bolt.Tx) error { return d.record(tx, o) }); err != nil {
			d.errs.report(d.log, err, "record delivery attempt")
			continue
		}
		ok = append(ok, o)
	}
	return ok
}

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
	next    time.Time
	steps   int
}

func (p *claimPass) run() error {
	if p.max > 0 {
		if err := p.claim(); err != nil {
			return err
		}
	}
	p.next = p.nextDue()
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

// nextDue returns the earliest due time of a subscription below PerTarget
// (a finished send wakes the loop for the others), or zero if there is
// none.
func (p *claimPass) nextDue() time.Time {
	c := p.tx.Bucket(bucketNext).Cursor()
	for k, _ := c.First(); k != nil; k, _ = c.Next() {
		p.steps++
		if at, subID := parseDueKey(k); p.counts[subID] < p.d.perTarget {
			return at
		}
	}
	return time.Time{}
}

// policy returns the Policy of scope with its defaults filled in.
func (d *Dispatcher) policy(scope string) Policy {
	var p Policy
	if d.policyFor != nil {
		p = d.policyFor(scope)
	}
	if len(p.Schedule) == 0 {
		p.Schedule = defaultRetrySchedule
	}
	if p.Client == nil {
		p.Client = d.defaultClient
	}
	return p
}

// retryDelay is the jittered delay after failed attempt n (0-based).
func (d *Dispatcher) retryDelay(schedule []time.Duration, n int) time.Duration {
	base := schedule[min(n, len(schedule)-1)]
	if d.jitter > 0 {
		base = time.Duration(float64(base) * (1 + d.jitter*(2*d.rand()-1)))
	}
	return base
}

// deliver sends one claimed delivery, frees its worker and per-target slot
// and hands the outcome to the loop, which records it in its next pass.
func (d *Dispatcher) deliver(ctx context.Context, c *deliveryClaim) {
	p := d.policy(c.sub.Scope)
	n := c.rec.Attempt
	var next *time.Time
	if n < MaxAttempts-1 {
		// Announced in the envelope, and kept exactly if the send fails.
		t := time.UnixMilli(d.now().Add(d.retryDelay(p.Schedule, n)).UnixMilli()).UTC()
		next = &t
	}
	o := &outcome{c: c, a: d.send(ctx, p.Client, &c.sub, c.event, n, next), kind: outcomeDelivered}
	switch {
	case o.a.ErrorClass == "":
	case next == nil || o.a.Status == http.StatusGone:
		o.kind = outcomeDeadLetter
		o.a.DeadLettered = true
	default:
		o.kind = outcomeRetry
		o.a.NextRetry = next
	}
	o.failedAt = d.now()
	d.mu.Lock()
	d.busy--
	if d.perSub[c.sub.ID]--; d.perSub[c.sub.ID] <= 0 {
		delete(d.perSub, c.sub.ID)
	}
	d.finished = append(d.finished, o)
	d.mu.Unlock()
	d.Wake()
}

// logOutcome logs a recorded outcome.
func (d *Dispatcher) logOutcome(o *outcome) {
	a := &o.a
	l := d.log.With().Str("event_id", o.c.event.ID).Str("webhook_id", o.c.sub.ID).Int("attempt", a.Attempt).Logger()
	switch o.kind {
	case outcomeDelivered:
		l.Debug().Int("status", a.Status).Float64("latency_ms", a.LatencyMs).Msg("delivered")
	case outcomeRetry:
		l.Warn().Int("status", a.Status).Str("error_class", a.ErrorClass).Str("error", a.Error).
			Time("next_retry", *a.NextRetry).Msg("delivery failed")
	case outcomeDeadLetter:
		l.Warn().Int("status", a.Status).Str("error_class", a.ErrorClass).Str("error", a.Error).
			Msg("delivery dead-lettered")
	}
}

// record applies o to its delivery, if the claim still holds the lease,
// and logs the attempt.
func (d *Dispatcher) record(tx *bolt.Tx, o *outcome) error {
	c, a := o.c, &o.a
	rec, err := getDelivery(tx, c.key)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && rec.Due == c.rec.Due && rec.Attempt == c.rec.Attempt {
		switch o.kind {
		case outcomeDelivered:
			err = removeDelivery(tx, rec)
		case outcomeRetry:
			rec.Attempt++
			err = rescheduleDelivery(tx, rec, a.NextRetry.UnixNano())
		case outcomeDeadLetter:
			err = putDeadLetter(tx, rec.Scope, &DeadLetter{
				EventID: c.event.ID, EventType: c.event.Type, SubscriptionID: c.sub.ID, TargetURL: c.sub.TargetURL,
				Attempts: c.rec.Attempt + 1, LastStatus: a.Status, LastError: a.Error, FailedAt: o.failedAt,
				Timestamp: c.event.Timestamp, Data: c.event.Data,
			})
			if err == nil {
				err = removeDelivery(tx, rec)
			}
		}
		if err != nil {
			return err
		}
	}
	// else: the subscription was deleted or another claim took over; the
	// attempt is still logged.
	return appendAttempt(tx, c.sub.ID, a)
}

// Send delivers ev to sub once, synchronously and outside the queue (the
// ping), logs the attempt in sub's log and returns it. The envelope has
// attempt 0 and no nextRetry.
func (d *Dispatcher) Send(ctx context.Context, sub *Subscription, ev Event) Attempt {
	a := d.send(ctx, d.policy(sub.Scope).Client, sub, ev, 0, nil)
	if err := d.db.Update(func(tx *bolt.Tx) error { return appendAttempt(tx, sub.ID, &a) }); err != nil {
		d.errs.report(d.log, err, "record delivery attempt")
	}
	return a
}

// webhookEnvelope is the body of a delivery (SPEC.md 2.2).
type webhookEnvelope struct {
	EventType string          `json:"eventType"`
	EventID   string          `json:"eventId"`
	Timestamp string          `json:"timestamp"`
	Attempt   int             `json:"attempt"`
	NextRetry string          `json:"nextRetry,omitempty"`
	Data      json.RawMessage `json:"data"`
}

func formatEnvelopeTime(t time.Time) string { return t.UTC().Format(envelopeTimeLayout) }

// send makes one HTTP request of ev to sub and returns the attempt, with
// ErrorClass "" on a 2xx answer.
func (d *Dispatcher) send(ctx context.Context, client *http.Client, sub *Subscription, ev Event, n int, next *time.Time) Attempt {
	a := d.sendOnce(ctx, client, sub, ev, n, next)
	a.Error = capError(a.Error)
	return a
}

// sendOnce makes one delivery request and describes how it went.
func (d *Dispatcher) sendOnce(ctx context.Context, client *http.Client, sub *Subscription, ev Event, n int, next *time.Time) Attempt {
	now := d.now()
	a := Attempt{EventID: ev.ID, EventType: ev.Type, Attempt: n, At: now}
	env := webhookEnvelope{EventType: ev.Type, EventID: ev.ID, Timestamp: formatEnvelopeTime(ev.Timestamp), Attempt: n, Data: ev.Data}
	if next != nil {
		env.NextRetry = formatEnvelopeTime(*next)
	}
	if len(env.Data) == 0 {
		env.Data = json.RawMessage(`{}`)
	}
	body, err := json.Marshal(env)
	if err != nil {
		a.ErrorClass, a.Error = ErrorClassConnection, "encode envelope: "+err.Error()
		return a
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.TargetURL, bytes.NewReader(body))
	if err != nil {
		a.ErrorClass, a.Error = ErrorClassConnection, err.Error()
		return a
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", webhookUserAgent)
	h.Set(webhooksig.HeaderSignature, webhooksig.Sign(sub.Secret, body))
	h.Set(webhooksig.HeaderEventID, ev.ID)
	h.Set(webhooksig.HeaderEventType, ev.Type)
	h.Set(webhooksig.HeaderWebhookID, ev.ID)
	h.Set(webhooksig.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(webhooksig.HeaderWebhookSignature, webhooksig.SignStandard(sub.Secret, ev.ID, now, body))

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		a.LatencyMs = elapsedMs(start)
		a.ErrorClass, a.Error = classifySendError(err), err.Error()
		return a
	}
	// A read error (the timeout striking mid-answer) leaves what was read:
	// the status has arrived and decides.
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, responseBodyMax))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrainMax))
	resp.Body.Close()
	a.LatencyMs = elapsedMs(start)
	a.Status = resp.StatusCode
	a.ResponseBody = string(kept)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.ErrorClass = ErrorClassRedirect
		a.Error = fmt.Sprintf("HTTP %d: redirect not followed", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			a.Error += " (to " + loc + ")"
		}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		a.ErrorClass = ErrorClassHTTPStatus
		a.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return a
}

// errorMax bounds an attempt's error text, which the receiver partly
// writes (a Location, a TLS alert) and which is logged and stored.
const errorMax = 512

// capError cuts an attempt's error text to errorMax bytes.
func capError(s string) string {
	if len(s) <= errorMax {
		return s
	}
	return strings.ToValidUTF8(s[:errorMax], "") + "..."
}

func elapsedMs(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// classifySendError names the class of a transport error.
func classifySendError(err error) string {
	var ne net.Error
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.Is(err, ErrTargetNotAllowed):
		return ErrorClassTargetNotAllowed
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrorClassTimeout
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &invalid), errors.As(err, &recErr), errors.As(err, &alert),
		strings.Contains(err.Error(), "tls: "):
		return ErrorClassTLS
	default:
		return ErrorClassConnection
	}
}
