// Package event names the events the appliance publishes, defines each one's
// data, and publishes them: an event is recorded once and fanned out to a
// delivery per matching webhook in the caller's transaction, so it exists
// exactly when the change it reports does.
package event

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/storage"
)

// Event types: a delivery's eventType.
const (
	PolygonVerified   = "polygon.verified"
	PolygonFailed     = "polygon.failed"
	BatchRiskAssessed = "batch.risk_assessed"
	ShipmentLinked    = "shipment.linked"
	DDSSubmitted      = "dds.submitted"
	DDSValidated      = "dds.validated"
	DDSRejected       = "dds.rejected"
	DDSAmended        = "dds.amended"
	JobFailed         = "job.failed"
	ReportReady       = "report.ready"
	WebhookPing       = "webhook.ping" // sent on demand, not subscribable
)

// Subscribable are the types a webhook may subscribe to: all but
// webhook.ping.
var Subscribable = []string{PolygonVerified, PolygonFailed, BatchRiskAssessed,
	ShipmentLinked, DDSSubmitted, DDSValidated, DDSRejected, DDSAmended, JobFailed, ReportReady}

// IsSubscribable reports whether a webhook may subscribe to eventType.
func IsSubscribable(eventType string) bool { return slices.Contains(Subscribable, eventType) }

// Scope is the queue scope of a tenant: queue keeps it opaque.
func Scope(t storage.Tenant) string { return t.String() }

// EnvOfScope is the environment of a scope made by Scope.
func EnvOfScope(scope string) storage.Environment {
	return storage.Environment(scope[strings.LastIndexByte(scope, '/')+1:])
}

// Publisher publishes events and wakes the webhook dispatcher once they
// are committed.
type Publisher struct {
	wake func()
}

// NewPublisher returns a Publisher that calls wake once for each event it
// published, after the transaction that published it commits (never for a
// transaction rolled back); wake may be nil.
func NewPublisher(wake func()) *Publisher {
	if wake == nil {
		wake = func() {}
	}
	return &Publisher{wake: wake}
}

// Publish records an event of the tenant with data as its JSON payload in
// the caller's transaction, and fans it out to the subscriptions that
// want it. It returns the event and the number of deliveries made, or an
// error when data does not encode or the queue cannot record it.
func (p *Publisher) Publish(tx *storage.Tx, t storage.Tenant, eventType string, data any) (queue.Event, int, error) {
	raw, err := json.Marshal(data)
	if err != nil {
		return queue.Event{}, 0, fmt.Errorf("encode %s data: %w", eventType, err)
	}
	ev := queue.Event{ID: storage.NewID("evt", tx.Now()), Scope: Scope(t), Type: eventType, Timestamp: tx.Now(), Data: raw}
	n, err := queue.Publish(tx.Tx, ev)
	if err != nil {
		return queue.Event{}, 0, fmt.Errorf("publish %s: %w", eventType, err)
	}
	tx.OnCommit(p.wake)
	return ev, n, nil
}
