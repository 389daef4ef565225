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
	// deliveryScanMax bounds the due keys one claim looks at, so a backlog
	// for saturated receivers cannot make the claim transaction long.
	deliveryScanMax = 10000
	// dispatchErrLogInterval is how often repeated store errors are logged.
	dispatchErrLogInterval = 30 * time.Second
	// dispatchMaxBackoff caps the pause after store errors.
	dispatchMaxBackoff = 30 * time.Second
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
	DB           *bolt.DB
	PolicyFor    func(scope string) Policy // nil: the default Policy
	Workers      int                       // concurrent sends, default 16
	PerTarget    int                       // concurrent sends to one subscription, default 4
	Lease        time.Duration             // how long a claim holds a delivery, default 1m
	PollInterval time.Duration             // how often due deliveries are looked for, default 500ms
	Jitter       float64                   // spread of retry delays, default 0.2 (+-20 %); < 0: none
	Now          func() time.Time          // default time.Now
	Rand         func() float64            // in [0,1), default math/rand/v2
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

	mu      sync.Mutex
	busy    int             // sends in flight
	perSub  map[string]int  // sends in flight per subscription
	sending map[string]bool // delivery keys in flight

	errMu     sync.Mutex
	errLogged time.Time
	errQuiet  int // errors not logged since errLogged
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
		d.poll = 500 * time.Millisecond
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
// flight (each bounded by its client's timeout) and returns nil.
func (d *Dispatcher) Run(ctx context.Context) error {
	d.log.Info().Int("workers", d.workers).Int("per_target", d.perTarget).Msg("webhook dispatcher started")
	var wg sync.WaitGroup
	defer func() {
		d.mu.Lock()
		busy := d.busy
		d.mu.Unlock()
		d.log.Info().Int("in_flight", busy).Msg("webhook dispatcher draining")
		wg.Wait()
		d.log.Info().Msg("webhook dispatcher stopped")
	}()
	// Sends outlive ctx: an answered request whose outcome is not recorded
	// would be sent again.
	sendCtx := context.WithoutCancel(ctx)
	ticker := time.NewTicker(d.poll)
	defer ticker.Stop()
	var backoff time.Duration
	var pausedUntil time.Time
	for {
		if ctx.Err() != nil {
			return nil
		}
		if time.Now().After(pausedUntil) {
			if err := d.dispatch(sendCtx, &wg); err != nil {
				backoff = min(max(2*backoff, d.poll), dispatchMaxBackoff)
				pausedUntil = time.Now().Add(backoff)
				d.storeError(err, "claim deliveries")
			} else {
				backoff = 0
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.wake:
		case <-ticker.C:
		}
	}
}

// storeError logs err at most once per dispatchErrLogInterval.
func (d *Dispatcher) storeError(err error, msg string) {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	if now := time.Now(); now.Sub(d.errLogged) >= dispatchErrLogInterval {
		d.log.Error().Err(err).Int("suppressed", d.errQuiet).Msg(msg)
		d.errLogged, d.errQuiet = now, 0
		return
	}
	d.errQuiet++
}

// deliveryClaim is a delivery taken for one send.
type deliveryClaim struct {
	key   []byte
	rec   deliveryRecord // as claimed, Due = the lease
	sub   Subscription
	event Event
}

// dispatch claims as many due deliveries as there are free workers and
// starts a send for each.
func (d *Dispatcher) dispatch(ctx context.Context, wg *sync.WaitGroup) error {
	d.mu.Lock()
	free := d.workers - d.busy
	d.mu.Unlock()
	if free <= 0 {
		return nil
	}
	claims, err := d.claim(free)
	if err != nil {
		return err
	}
	for _, c := range claims {
		wg.Go(func() {
			defer d.done(c)
			d.deliver(ctx, c)
		})
	}
	return nil
}

// done releases c's worker and per-target slot and looks for more work.
func (d *Dispatcher) done(c *deliveryClaim) {
	d.mu.Lock()
	d.busy--
	if d.perSub[c.sub.ID]--; d.perSub[c.sub.ID] <= 0 {
		delete(d.perSub, c.sub.ID)
	}
	delete(d.sending, string(c.key))
	d.mu.Unlock()
	d.Wake()
}

// errNothingDue rolls back a claim that changed nothing.
var errNothingDue = errors.New("nothing due")

// claim takes up to max due deliveries in one write transaction, skipping
// those whose subscription has perTarget sends in flight, and moves each
// one's due key to now + lease. Deliveries of deleted subscriptions are
// dropped on the way.
func (d *Dispatcher) claim(max int) ([]*deliveryClaim, error) {
	now := d.now()
	lease := now.Add(d.lease).UnixNano()
	d.mu.Lock()
	counts := make(map[string]int, len(d.perSub))
	for k, v := range d.perSub {
		counts[k] = v
	}
	sending := make(map[string]bool, len(d.sending))
	for k := range d.sending {
		sending[k] = true
	}
	d.mu.Unlock()

	var claims []*deliveryClaim
	var dropped []*deliveryRecord
	var bad error
	err := d.db.Update(func(tx *bolt.Tx) error {
		claims, dropped, bad = nil, nil, nil
		due := tx.Bucket(bucketDue)
		var stale [][]byte
		c := due.Cursor()
		scanned := 0
		for k, _ := c.First(); k != nil && len(claims) < max && scanned < deliveryScanMax; k, _ = c.Next() {
			at, id := parseDueKey(k)
			if at.After(now) {
				break
			}
			scanned++
			if sending[id] {
				continue
			}
			// A record that cannot be decoded stays where it is (and is
			// reported) rather than stopping every other delivery.
			rec, err := getDelivery(tx, []byte(id))
			switch {
			case errors.Is(err, ErrNotFound), err == nil && rec.Due != at.UnixNano():
				stale = append(stale, bytes.Clone(k))
				continue
			case err != nil:
				bad = err
				continue
			}
			if counts[rec.SubscriptionID] >= d.perTarget {
				continue
			}
			sub, err := getSubscription(tx, rec.SubscriptionID)
			if err != nil {
				if errors.Is(err, ErrNotFound) {
					dropped = append(dropped, rec)
				} else {
					bad = err
				}
				continue
			}
			ev, err := getEvent(tx, rec.EventID)
			if err != nil {
				if errors.Is(err, ErrNotFound) {
					dropped = append(dropped, rec)
				} else {
					bad = err
				}
				continue
			}
			counts[rec.SubscriptionID]++
			claims = append(claims, &deliveryClaim{key: []byte(id), rec: *rec, sub: *sub, event: ev.Event})
		}
		if len(stale)+len(dropped)+len(claims) == 0 {
			return errNothingDue // roll back: an idle poll writes nothing
		}
		for _, k := range stale {
			if err := due.Delete(k); err != nil {
				return err
			}
		}
		for _, r := range dropped {
			if err := removeDelivery(tx, r); err != nil {
				return err
			}
		}
		for _, cl := range claims {
			if err := due.Delete(dueKey(time.Unix(0, cl.rec.Due), string(cl.key))); err != nil {
				return err
			}
			cl.rec.Due = lease
			if err := putDelivery(tx, &cl.rec); err != nil {
				return err
			}
		}
		return nil
	})
	if errors.Is(err, errNothingDue) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	if bad != nil {
		d.storeError(bad, "skip undecodable delivery")
	}
	for _, r := range dropped {
		d.log.Debug().Str("event_id", r.EventID).Str("webhook_id", r.SubscriptionID).Msg("delivery dropped")
	}
	d.mu.Lock()
	for _, c := range claims {
		d.busy++
		d.perSub[c.sub.ID]++
		d.sending[string(c.key)] = true
	}
	d.mu.Unlock()
	return claims, nil
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

// deliveryOutcome is what recording an attempt does to its delivery.
type deliveryOutcome int

const (
	outcomeDelivered deliveryOutcome = iota
	outcomeRetry
	outcomeDeadLetter
)

// deliver sends one claimed delivery and records the outcome.
func (d *Dispatcher) deliver(ctx context.Context, c *deliveryClaim) {
	p := d.policy(c.sub.Scope)
	n := c.rec.Attempt
	var next *time.Time
	if n < MaxAttempts-1 {
		// Announced in the envelope, and kept exactly if the send fails.
		t := time.UnixMilli(d.now().Add(d.retryDelay(p.Schedule, n)).UnixMilli()).UTC()
		next = &t
	}
	a := d.send(ctx, p.Client, &c.sub, c.event, n, next)
	o := outcomeDelivered
	switch {
	case a.ErrorClass == "":
	case next == nil || a.Status == http.StatusGone:
		o = outcomeDeadLetter
		a.DeadLettered = true
	default:
		o = outcomeRetry
		a.NextRetry = next
	}
	failedAt := d.now()
	err := d.db.Batch(func(tx *bolt.Tx) error { return d.record(tx, c, &a, o, failedAt) })
	l := d.log.With().Str("event_id", c.event.ID).Str("webhook_id", c.sub.ID).Int("attempt", n).Logger()
	if err != nil {
		// The lease runs out and the delivery is sent again.
		d.storeError(err, "record delivery attempt")
		return
	}
	switch o {
	case outcomeDelivered:
		l.Debug().Int("status", a.Status).Float64("latency_ms", a.LatencyMs).Msg("delivered")
	case outcomeRetry:
		l.Warn().Int("status", a.Status).Str("error_class", a.ErrorClass).Str("error", a.Error).
			Time("next_retry", *next).Msg("delivery failed")
	case outcomeDeadLetter:
		l.Warn().Int("status", a.Status).Str("error_class", a.ErrorClass).Str("error", a.Error).
			Msg("delivery dead-lettered")
	}
}

// record applies o to c's delivery, if c still holds its lease, and logs
// the attempt. Batch may run it twice: it only touches the transaction.
func (d *Dispatcher) record(tx *bolt.Tx, c *deliveryClaim, a *Attempt, o deliveryOutcome, failedAt time.Time) error {
	rec, err := getDelivery(tx, c.key)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return err
	}
	if err == nil && rec.Due == c.rec.Due && rec.Attempt == c.rec.Attempt {
		switch o {
		case outcomeDelivered:
			err = removeDelivery(tx, rec)
		case outcomeRetry:
			if err = tx.Bucket(bucketDue).Delete(dueKey(time.Unix(0, rec.Due), string(c.key))); err == nil {
				rec.Attempt++
				rec.Due = a.NextRetry.UnixNano()
				err = putDelivery(tx, rec)
			}
		case outcomeDeadLetter:
			err = putDeadLetter(tx, rec.Scope, &DeadLetter{
				EventID: c.event.ID, EventType: c.event.Type, SubscriptionID: c.sub.ID, TargetURL: c.sub.TargetURL,
				Attempts: c.rec.Attempt + 1, LastStatus: a.Status, LastError: a.Error, FailedAt: failedAt,
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
		d.storeError(err, "record delivery attempt")
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
