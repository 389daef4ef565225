// Package webhook owns a tenant's webhook subscriptions and its
// dead-letter queue: registering a webhook (an https target the
// environment's private-target guard accepts, subscribable event types, no
// second webhook delivering a type to the same URL, a signing secret made
// for it), listing, deleting, rotating its secret, pinging it, the log of
// its delivery attempts, and listing, replaying and acknowledging the
// events it did not accept. The deliveries themselves are the queue
// package's dispatcher; this package records what it delivers.
package webhook

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// Options are what the service needs.
type Options struct {
	DB *storage.DB
	// AllowPrivateTargets holds the environments whose webhooks may target
	// what the private-target guard refuses (loopback, link-local,
	// metadata addresses): a test bench's receiver on 127.0.0.1. Any
	// other environment is guarded.
	AllowPrivateTargets map[storage.Environment]bool
	// Send delivers an event to a subscription now, outside the queue,
	// records the attempt in the subscription's log and returns it
	// (queue.Dispatcher.Send): the ping.
	Send func(ctx context.Context, sub *queue.Subscription, ev queue.Event) queue.Attempt
	// Wake tells the dispatcher that deliveries are due
	// (queue.Dispatcher.Wake); nil when nothing is to be told.
	Wake func()
	// Now is the clock of the pings; time.Now when nil.
	Now func() time.Time
}

// Service manages webhooks and their dead letters.
type Service struct {
	o Options
}

// New returns the service.
func New(o Options) *Service {
	if o.Wake == nil {
		o.Wake = func() {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Service{o: o}
}

// CheckTarget refuses a target that resolves to an address the
// private-target guard refuses, unless t's environment allows private
// targets: a 400 TARGET_NOT_ALLOWED on targetUrl. It resolves the
// target's name, so it is called before the registration's transaction,
// never inside one. A name that does not resolve now is not refused: its
// deliveries fail and are retried like any other.
func (s *Service) CheckTarget(ctx context.Context, t storage.Tenant, target string) error {
	if s.o.AllowPrivateTargets[t.Env] {
		return nil
	}
	if err := netguard.CheckTarget(ctx, target); errors.Is(err, netguard.ErrTargetNotAllowed) {
		return apierr.Validation(apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: "targetUrl",
			Issue: "the target resolves to a loopback, link-local, multicast or unspecified address, which " + string(t.Env) + " does not deliver to"})
	}
	return nil
}

// Register records sub (from Request.Validate, its target checked by
// CheckTarget) as a webhook of t in the caller's transaction, with a new
// signing secret; it sets sub's ID, scope, secret and creation time. It
// writes nothing when it refuses with 409 WEBHOOK_DUPLICATE on eventTypes:
// another webhook of t already delivers one of sub's event types to the
// same URL (scheme and host compared in lower case, the default port
// dropped). It fails when no secret can be made or the store fails.
func (s *Service) Register(tx *storage.Tx, t storage.Tenant, sub *queue.Subscription) error {
	subs, err := queue.FindSubscriptions(tx.Tx, event.Scope(t))
	if err != nil {
		return err
	}
	target := canonicalTarget(sub.TargetURL)
	for _, other := range subs {
		if canonicalTarget(other.TargetURL) != target {
			continue
		}
		for _, et := range sub.EventTypes {
			if slices.Contains(other.EventTypes, et) {
				return apierr.Conflict(apierr.DetailWebhookDuplicate, "eventTypes",
					fmt.Sprintf("webhook %s already delivers %s to this URL", other.ID, et))
			}
		}
	}
	secret, err := webhooksig.NewSecret()
	if err != nil {
		return err
	}
	sub.ID, sub.Scope, sub.Secret, sub.CreatedAt = storage.NewID("wh", tx.Now()), event.Scope(t), secret, tx.Now()
	return queue.PutSubscription(tx.Tx, sub)
}

// List returns t's webhooks, newest first, with their secrets (Redact
// hides them for a listing), or an error when the store fails.
func (s *Service) List(ctx context.Context, t storage.Tenant) ([]*queue.Subscription, error) {
	var subs []*queue.Subscription
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		subs, err = queue.FindSubscriptions(tx.Tx, event.Scope(t))
		return err
	})
	return subs, err
}

// Delete removes t's webhook id in the caller's transaction, with its
// attempt log and its pending deliveries, so nothing more is sent to it;
// its DLQ entries stay. It returns apierr.NotFound when t has no such
// webhook.
func (s *Service) Delete(tx *storage.Tx, t storage.Tenant, id string) error {
	return named(queue.DeleteSubscription(tx.Tx, event.Scope(t), id), id)
}

// Rotate gives t's webhook id a new signing secret in the caller's
// transaction and returns the webhook with it: later deliveries, retries
// and replays are signed with it. It returns apierr.NotFound, writing
// nothing, when t has no such webhook.
func (s *Service) Rotate(tx *storage.Tx, t storage.Tenant, id string) (*queue.Subscription, error) {
	sub, err := queue.FindSubscription(tx.Tx, event.Scope(t), id)
	if err != nil {
		return nil, named(err, id)
	}
	if sub.Secret, err = webhooksig.NewSecret(); err != nil {
		return nil, err
	}
	return sub, queue.PutSubscription(tx.Tx, sub)
}

// Ping sends a signed webhook.ping, whose data names the webhook, to t's
// webhook id now and returns the attempt, which is in the webhook's
// delivery log too. The request is made outside any transaction. A
// failed delivery is not an error (the attempt says how it failed);
// Ping returns apierr.NotFound when t has no such webhook.
func (s *Service) Ping(ctx context.Context, t storage.Tenant, id string) (queue.Attempt, error) {
	var sub *queue.Subscription
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		sub, err = queue.FindSubscription(tx.Tx, event.Scope(t), id)
		return err
	})
	if err != nil {
		return queue.Attempt{}, named(err, id)
	}
	now := s.o.Now().UTC()
	ev := queue.Event{ID: storage.NewID("evt", now), Scope: event.Scope(t), Type: event.WebhookPing, Timestamp: now,
		Data: []byte(`{"webhookId":"` + sub.ID + `"}`)}
	return s.o.Send(ctx, sub, ev), nil
}

// Attempts returns the newest delivery attempts to t's webhook id, newest
// first, at most limit of them (limit <= 0: the whole log, which keeps the
// last 1,000). It returns apierr.NotFound when t has no such webhook.
func (s *Service) Attempts(ctx context.Context, t storage.Tenant, id string, limit int) ([]queue.Attempt, error) {
	var attempts []queue.Attempt
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		attempts, err = queue.FindAttempts(tx.Tx, event.Scope(t), id, limit)
		return err
	})
	return attempts, named(err, id)
}

// Redact shows a signing secret as whsec_**** and its last four
// characters: how a listing shows it, once the registration has shown it
// whole.
func Redact(secret string) string {
	if len(secret) < 4 {
		return webhooksig.SecretPrefix + "****"
	}
	return webhooksig.SecretPrefix + "****" + secret[len(secret)-4:]
}

// named turns the queue's not-found error of webhook id into the
// apierr.NotFound the API answers 404 with.
func named(err error, id string) error {
	if errors.Is(err, queue.ErrNotFound) {
		return apierr.NotFound{Kind: "webhook", ID: id}
	}
	return err
}
