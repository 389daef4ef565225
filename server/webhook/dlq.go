package webhook

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// Limits of a DLQ list or bulk replay (the OpenAPI document states them
// too).
const (
	DefaultDLQLimit = 100
	MaxDLQLimit     = 1000
)

// DLQQuery is the query of a DLQ list or bulk replay, as written.
type DLQQuery struct {
	EventType string // one of event.Subscribable
	StartDate string // on failedAt, inclusive: an RFC 3339 date-time or a date (from its first instant)
	EndDate   string // the same; a date to its last instant, a date-time to the end of its millisecond
	Limit     string // 1 to MaxDLQLimit
	Cursor    string // the X-Next-Cursor of the page before
}

// ListFilter reads the query of a list page: at most Limit entries
// (DefaultDLQLimit when none is given), after Cursor. It returns every
// problem found as one apierr 400, each on its query field.
func (q DLQQuery) ListFilter() (queue.DLQFilter, error) {
	f, err := q.filter(true)
	if f.Limit == 0 {
		f.Limit = DefaultDLQLimit
	}
	return f, err
}

// BulkFilter reads the query of a bulk replay, which ignores Cursor and
// applies to every matching entry when Limit is not given. It returns
// every problem found as one apierr 400, each on its query field.
func (q DLQQuery) BulkFilter() (queue.DLQFilter, error) {
	return q.filter(false)
}

func (q DLQQuery) filter(paged bool) (queue.DLQFilter, error) {
	f := queue.DLQFilter{EventType: q.EventType}
	var probs apierr.Problems
	if f.EventType != "" && !event.IsSubscribable(f.EventType) {
		probs.Add(apierr.DetailInvalidValue, "query.eventType", "must be one of "+strings.Join(event.Subscribable, ", "))
	}
	for _, p := range []struct {
		name, value string
		dst         *time.Time
		end         bool
	}{{"startDate", q.StartDate, &f.Start, false}, {"endDate", q.EndDate, &f.End, true}} {
		if p.value == "" {
			continue
		}
		t, err := storage.ParseTimeBound(p.value, p.end)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, "query."+p.name, "must be an ISO 8601 date (2026-11-20) or date-time (2026-11-20T10:15:30Z)")
			continue
		}
		*p.dst = t
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		probs.Add(apierr.DetailInvalidValue, "query.endDate", "must not be before startDate")
	}
	if q.Limit != "" {
		n, err := strconv.Atoi(q.Limit)
		if err != nil || n < 1 || n > MaxDLQLimit {
			probs.Add(apierr.DetailInvalidValue, "query.limit", fmt.Sprintf("must be an integer from 1 to %d", MaxDLQLimit))
		} else {
			f.Limit = n
		}
	}
	if paged && q.Cursor != "" {
		c, err := queue.ParseDLQCursor(q.Cursor)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, "query.cursor", "must be the X-Next-Cursor of a page of this list")
		} else {
			f.After = &c
		}
	}
	return f, probs.Err()
}

// DeadLetters returns one page of t's DLQ, newest failure first, as f
// (from ListFilter) selects, and whether more entries follow: the next
// page is the one after the Cursor of the last entry returned. It fails
// when the store does.
func (s *Service) DeadLetters(ctx context.Context, t storage.Tenant, f queue.DLQFilter) ([]queue.DeadLetter, bool, error) {
	var dls []queue.DeadLetter
	var more bool
	err := s.o.DB.View(ctx, func(tx *storage.Tx) error {
		var err error
		dls, more, err = queue.FindDeadLetterPage(tx.Tx, event.Scope(t), f)
		return err
	})
	return dls, more, err
}

// Replay turns t's DLQ entries that f (from BulkFilter, with EventIDs when
// the request named events) selects back into deliveries due now, in the
// caller's transaction, and returns how many entries it took off the DLQ
// (0 when none matched). The dispatcher is woken once it commits. It fails
// only when the store does.
func (s *Service) Replay(tx *storage.Tx, t storage.Tenant, f queue.DLQFilter) (int, error) {
	n, err := queue.ReplayDeadLetters(tx.Tx, event.Scope(t), f, tx.Now())
	if err != nil {
		return 0, err
	}
	if n > 0 {
		tx.OnCommit(s.o.Wake)
	}
	return n, nil
}

// ReplayEvent replays t's DLQ entries of one event (one per webhook that
// did not accept it) like Replay and returns how many; it returns
// apierr.NotFound when the DLQ holds none.
func (s *Service) ReplayEvent(tx *storage.Tx, t storage.Tenant, eventID string) (int, error) {
	n, err := s.Replay(tx, t, queue.DLQFilter{EventIDs: []string{eventID}})
	return n, notInDLQ(n, err, eventID)
}

// Acknowledge deletes t's DLQ entries that f selects for good, in the
// caller's transaction, and returns how many (0 when none matched). It
// fails only when the store does.
func (s *Service) Acknowledge(tx *storage.Tx, t storage.Tenant, f queue.DLQFilter) (int, error) {
	return queue.AckDeadLetters(tx.Tx, event.Scope(t), f)
}

// AcknowledgeEvent acknowledges t's DLQ entries of one event like
// Acknowledge and returns how many; it returns apierr.NotFound when the
// DLQ holds none.
func (s *Service) AcknowledgeEvent(tx *storage.Tx, t storage.Tenant, eventID string) (int, error) {
	n, err := s.Acknowledge(tx, t, queue.DLQFilter{EventIDs: []string{eventID}})
	return n, notInDLQ(n, err, eventID)
}

// notInDLQ is the error of an action on one event that applied to n
// entries: apierr.NotFound when none (it then wrote nothing).
func notInDLQ(n int, err error, eventID string) error {
	if err == nil && n == 0 {
		return apierr.NotFound{Kind: "dead-lettered event", ID: eventID}
	}
	return err
}
