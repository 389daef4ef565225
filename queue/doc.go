// Package queue moves opaque work durably through the store's bbolt file:
// jobs for the job runner, and webhook events fanned out to deliveries with
// retries, a dead-letter queue and replay. It knows nothing of polygons,
// DDS or HTTP routes: a job is a kind and a payload, an event is a type and
// JSON data, and a scope is an opaque owner string the caller chooses (the
// server uses "<org>/<environment>").
//
// # Transactions
//
// Writers take the caller's *bbolt.Tx (Enqueue, Publish, PutSubscription,
// ...), so a state change and the work it causes commit together. Runner and
// Dispatcher open their own transactions: one to claim, none while a handler
// or an HTTP request runs, one to record the outcome.
//
// # Leases
//
// Claiming a job or delivery moves its due time to now + lease in the same
// ready index it waits in. If the process dies (kill -9) before recording
// the outcome, the item simply becomes due again when the lease runs out:
// nothing is lost, and work is done at least once. Handlers must therefore
// be idempotent per item.
//
// # Buckets
//
//	queue_jobs           job id -> jobRecord
//	queue_jobs_due       BE(due unix nanos) | job id -> nil
//	webhook_subs         subscription id -> Subscription
//	webhook_subs_scope   scope | 0 | subscription id -> nil
//	webhook_events       event id -> Event
//	webhook_deliveries   delivery id -> deliveryRecord
//	webhook_due          BE(due unix nanos) | delivery id -> nil
//	webhook_dlq          scope | 0 | event id | 0 | subscription id -> DeadLetter
//	webhook_attempts     subscription id (nested bucket): BE(seq) -> Attempt
//
// # Delivery state machine
//
// A delivery is created PENDING by Publish with attempt 0 and is due at
// once. The dispatcher claims it (lease), sends it, and then either deletes
// it (2xx), schedules attempt n+1 at the time announced as nextRetry in the
// envelope (failure, fewer than MaxAttempts attempts), or moves it to the
// DLQ (the MaxAttempts-th failure, or a 410). A deleted subscription drops
// its deliveries. Replay puts a DLQ entry back as a new PENDING delivery with
// attempt 0.
package queue
