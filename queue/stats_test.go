package queue_test

import (
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
)

func TestDueJobs(t *testing.T) {
	db := whMustOpenDB(t)
	whView(t, db, func(tx *bolt.Tx) error {
		if n, oldest := queue.DueJobs(tx, whT0); n != 0 || !oldest.IsZero() {
			t.Errorf("empty queue: DueJobs = %d, %v; want 0, zero time", n, oldest)
		}
		return nil
	})
	whUpdate(t, db, func(tx *bolt.Tx) error {
		for id, at := range map[string]time.Time{"job_a": whT0.Add(-2 * time.Minute), "job_b": whT0.Add(-time.Minute),
			"job_c": whT0, "job_later": whT0.Add(time.Minute), "job_waiting": whT0.Add(-3 * time.Minute)} {
			if err := queue.Enqueue(tx, queue.Job{ID: id, Kind: "k", RunAt: at}); err != nil {
				return err
			}
		}
		// A job put off (as a claim's lease puts it off) is not due.
		return queue.Reschedule(tx, "job_waiting", whT0.Add(time.Hour))
	})
	whView(t, db, func(tx *bolt.Tx) error {
		n, oldest := queue.DueJobs(tx, whT0)
		if n != 3 || !oldest.Equal(whT0.Add(-2*time.Minute)) {
			t.Errorf("DueJobs at t0 = %d, %v; want 3 (a, b, c), due since %v", n, oldest, whT0.Add(-2*time.Minute))
		}
		return nil
	})
}

func TestForEachJob(t *testing.T) {
	db := whMustOpenDB(t)
	whUpdate(t, db, func(tx *bolt.Tx) error {
		for _, j := range []queue.Job{{ID: "job_2", Kind: "b", RunAt: whT0}, {ID: "job_1", Kind: "a", RunAt: whT0.Add(time.Hour)}} {
			if err := queue.Enqueue(tx, j); err != nil {
				return err
			}
		}
		return nil
	})
	var got []string
	whView(t, db, func(tx *bolt.Tx) error {
		return queue.ForEachJob(tx, func(j queue.Job) error {
			got = append(got, j.ID+":"+j.Kind)
			return nil
		})
	})
	if want := []string{"job_1:a", "job_2:b"}; !slices.Equal(got, want) {
		t.Errorf("ForEachJob: got %v, want %v", got, want)
	}
}

// deliveryLog collects what DispatcherOptions.Observe is told.
type deliveryLog struct {
	mu  sync.Mutex
	got []string // scope outcome
}

func (l *deliveryLog) observe(scope, outcome string, took time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if took <= 0 {
		outcome += " (no latency)"
	}
	l.got = append(l.got, scope+" "+outcome)
}

func (l *deliveryLog) sorted() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Sorted(slices.Values(l.got))
}

func TestDispatcher_Observe(t *testing.T) {
	db := whMustOpenDB(t)
	ok := whNewSink(t, whStatus(http.StatusNoContent))
	failing := whNewSink(t, whStatus(http.StatusInternalServerError))
	gone := whNewSink(t, whStatus(http.StatusGone))
	clock := &whClock{t: whT0}
	var log deliveryLog
	// One client trusts every sink: they share httptest's certificate.
	d := whDispatcher(db, clock, ok.client(5*time.Second), func(o *queue.DispatcherOptions) { o.Observe = log.observe })
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{
		whSub("wh_ok", "org/sandbox", ok.URL(), "polygon.verified"),
		whSub("wh_fail", "org/production", failing.URL(), "polygon.verified"),
		whSub("wh_gone", "org/production", gone.URL(), "polygon.verified"),
	}, whEvent("evt_1", "org/sandbox", "polygon.verified", whT0), whEvent("evt_2", "org/production", "polygon.verified", whT0))
	d.Wake()

	want := []string{"org/production dead_lettered", "org/production retry", "org/sandbox delivered"}
	whEventually(t, "three outcomes observed", func() bool { return len(log.sorted()) >= len(want) })
	// The retry is due a second later on the fake clock, which stands
	// still: nothing more is sent.
	if got := log.sorted(); !slices.Equal(got, want) {
		t.Errorf("observed: got %v, want %v", got, want)
	}
	whView(t, db, func(tx *bolt.Tx) error {
		if n := queue.PendingDeliveries(tx); n != 1 {
			t.Errorf("PendingDeliveries: got %d, want 1 (the retry)", n)
		}
		if got, want := queue.DeadLetters(tx), map[string]int{"org/production": 1}; len(got) != 1 || got["org/production"] != 1 {
			t.Errorf("DeadLetters: got %v, want %v", got, want)
		}
		return nil
	})
}
