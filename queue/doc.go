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
// Dispatcher open their own transactions, and none while a handler or an
// HTTP request runs: the Runner one to claim and one to record each
// outcome; the Dispatcher one per pass of its loop, which records the
// outcomes of the sends finished since the last pass and claims due
// deliveries for the free workers. A pass that finds nothing to do rolls
// back, so an idle dispatcher writes nothing.
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
//	webhook_events       event id -> eventRecord (Event, pending deliveries)
//	webhook_deliveries   subscription id | 0 | event id -> deliveryRecord
//	webhook_due          subscription id | 0 | BE(due unix nanos) | event id -> nil
//	webhook_next         BE(earliest due unix nanos) | subscription id -> nil
//	webhook_dlq          scope | 0 | event id | 0 | subscription id -> DeadLetter
//	webhook_dlq_failed   scope | 0 | BE(failedAt unix nanos) | event id | 0 | subscription id -> event type
//	webhook_attempts     subscription id (nested bucket): BE(seq) -> Attempt
//
// webhook_due orders each subscription's deliveries by due time, and
// webhook_next holds one entry per subscription that has deliveries, at the
// due time of its first one; every change of a subscription's deliveries
// moves that entry in the same transaction. A claim walks webhook_next from
// the front while entries are due, skips a subscription with PerTarget
// sends in flight at one step, and takes the earliest due deliveries of
// the others: its cost is the deliveries claimed and the subscriptions
// looked at, not the backlog. Unless it took every free worker, the pass
// then seeks webhook_next past its own clock reading and takes the first
// entry of a subscription below its limit as the time to look again: what
// is due by that reading and still there is what the pass could not claim
// (a subscription at its limit, a delivery in flight past its lease, an
// unreadable record). So an entry that falls due while a pass runs is
// looked for at once, and the seek passes over at most the subscriptions
// at their limit. A finished send wakes the dispatcher, which is what
// those subscriptions and a pass that took every free worker wait for;
// PollInterval is only a safety net.
//
// webhook_dlq_failed holds one entry per DLQ entry, written and deleted
// with it in the same transaction (dead-lettering, replay, ack). Listing a
// scope's DLQ walks it backwards from the end of the time range, filters
// on its keys and values, and decodes only the entries it returns, so
// FindDeadLetterPage with a Limit costs what it returns, not the DLQ's size.
// A page's cursor (DLQCursor) is the suffix of its last entry's key in
// the index, so the next page starts with a seek there and costs what it
// returns too, however deep into the DLQ it is. With EventIDs the entries
// are looked up by their webhook_dlq keys instead. Init builds the index
// for a store that has none.
//
// # Delivery state machine
//
// Publish stores an event once, with the number of deliveries it made
// (pending), and a PENDING delivery with attempt 0 per subscription of its
// scope that asked for its type, due at the event's timestamp; an event
// nobody subscribed to is not stored. The dispatcher claims a delivery
// (lease), sends it, and then either deletes it (2xx), schedules attempt
// n+1 at the time announced as nextRetry in the envelope (failure, fewer
// than MaxAttempts attempts), or moves it to the DLQ (the MaxAttempts-th
// failure, or a 410); a DLQ entry keeps its own copy of the event. The
// event is deleted with its last delivery. A deleted subscription drops its
// deliveries (and its attempt log; its DLQ entries stay). Replay puts a DLQ
// entry back as a new PENDING delivery with attempt 0, due at the time of
// the replay, and stores the event again if it is gone.
//
// # Retry timing
//
// A retry's delay counts from the start of the failed attempt: deliver
// reads the clock once, for the attempt's At and for the nextRetry it
// announces, and a failure is rescheduled at exactly that time. The
// dispatcher sends it then, within a pass or two, whatever else is due or
// in flight, unless the attempt itself lasted longer than the delay (then
// as soon as it has failed) or every worker is busy. A send lasts at most
// its client's timeout, and a receiver that hangs holds at most PerTarget
// workers: only Workers/PerTarget receivers hanging at once (64 with the
// defaults) make other subscriptions' deliveries wait for a worker.
package queue
