package queue

import (
	"context"
	"errors"
	"maps"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"
)

// defaultWorkers is the default size of the pool: goroutines are cheap,
// and each send is bounded by its client's timeout.
const defaultWorkers = 256

// defaultRetrySchedule is the production retry schedule (docs/webhooks.md),
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
	// Workers bounds the sends in flight, default 256. A send lasts at
	// most its client's timeout; a receiver that hangs holds PerTarget
	// workers, so it takes Workers/PerTarget of them hanging at once
	// before other subscriptions' deliveries wait for a worker.
	Workers   int
	PerTarget int           // concurrent sends to one subscription, default 4
	Lease     time.Duration // how long a claim holds a delivery, default 1m
	// PollInterval is the longest the dispatcher sleeps without a Wake,
	// default 5s. It is only a safety net (an unreadable delivery is
	// tried again then): the dispatcher sleeps until the next delivery is
	// due, and Wake (called after a Publish or a replay, and by every
	// finished send) rouses it at once.
	PollInterval time.Duration
	Jitter       float64          // spread of retry delays, default 0.2 (+-20 %); < 0: none
	Now          func() time.Time // default time.Now
	Rand         func() float64   // in [0,1), default math/rand/v2
	Logger       zerolog.Logger
	// Observe, when set, is told of each attempt of a queued delivery once
	// its outcome is recorded: the subscription's scope, the outcome
	// (OutcomeDelivered, OutcomeRetry or OutcomeDeadLettered) and how
	// long the request took.
	Observe func(scope, outcome string, took time.Duration)
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
	observe       func(scope, outcome string, took time.Duration)
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
		observe: o.Observe,
		wake:    make(chan struct{}, 1),
		perSub:  make(map[string]int),
		sending: make(map[string]bool),
	}
	if d.workers <= 0 {
		d.workers = defaultWorkers
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
// PollInterval, whichever comes first; with no worker free, until a Wake.
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
	if p.full || p.next.IsZero() {
		// Nothing can be claimed before a send finishes, or nothing is
		// waiting for a time: a Wake (each finished send calls it, so
		// does a publish) ends the sleep.
		return d.poll
	}
	// p.next is after the pass's clock reading, but may have come while
	// the pass ran: then the loop looks again at once.
	return min(max(p.next.Sub(d.now()), 0), d.poll)
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
			if _, err := d.dispatch(context.Background(), nil, false); err != nil {
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

// Outcomes of a delivery attempt, as DispatcherOptions.Observe names them.
const (
	OutcomeDelivered    = "delivered"     // a 2xx answer: the delivery is done
	OutcomeRetry        = "retry"         // failed, tried again later
	OutcomeDeadLettered = "dead_lettered" // failed for the last time, or 410: moved to the DLQ
)

var outcomeNames = [...]string{outcomeDelivered: OutcomeDelivered, outcomeRetry: OutcomeRetry, outcomeDeadLetter: OutcomeDeadLettered}

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
	// full: every worker is busy, so nothing more can be claimed until a
	// send finishes (which wakes the loop); next is then not looked for.
	full bool
	// next is the earliest due time after the pass's clock reading of a
	// subscription below PerTarget; zero: none.
	next  time.Time
	steps int // index entries read, for tests
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
		return passResult{full: true}, nil
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
		if d.observe != nil {
			d.observe(o.c.sub.Scope, outcomeNames[o.kind], time.Duration(o.a.LatencyMs*float64(time.Millisecond)))
		}
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
	return p.claims, passResult{claimed: len(p.claims), full: p.full, next: p.next, steps: p.steps}, nil
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
	start := d.now() // the attempt's At, and what its retry delay counts from
	var next *time.Time
	if n < MaxAttempts-1 {
		// Announced in the envelope, and kept exactly if the send fails.
		t := time.UnixMilli(start.Add(d.retryDelay(p.Schedule, n)).UnixMilli()).UTC()
		next = &t
	}
	o := &outcome{c: c, a: d.send(ctx, p.Client, &c.sub, c.event, n, start, next), kind: outcomeDelivered}
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
