package queue_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"
	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue"
)

// Helpers here are prefixed "wh" so they cannot clash with the job tests
// of the same package.

// whT0 is the fake clock's start: 2026-11-20T10:15:30.123Z.
var whT0 = time.Date(2026, 11, 20, 10, 15, 30, 123e6, time.UTC)

// whSecret is a secret as webhooksig.NewSecret makes them, with known key
// bytes 0x01..0x20.
var whSecret, whKey = func() (string, []byte) {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i + 1)
	}
	return "whsec_" + base64.RawURLEncoding.EncodeToString(k), k
}()

var whSandbox = []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second}

// whOpenDB opens (or reopens) the bbolt file at path and runs queue.Init.
func whOpenDB(tb testing.TB, path string) *bolt.DB {
	tb.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	if err := db.Update(queue.Init); err != nil {
		tb.Fatal(err)
	}
	return db
}

// whMustOpenDB opens a fresh store in tb.TempDir, closed at cleanup.
func whMustOpenDB(tb testing.TB) *bolt.DB {
	tb.Helper()
	db := whOpenDB(tb, filepath.Join(tb.TempDir(), "queue.db"))
	tb.Cleanup(func() { db.Close() })
	return db
}

func whUpdate(tb testing.TB, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	tb.Helper()
	if err := db.Update(fn); err != nil {
		tb.Fatal(err)
	}
}

func whView(tb testing.TB, db *bolt.DB, fn func(tx *bolt.Tx) error) {
	tb.Helper()
	if err := db.View(fn); err != nil {
		tb.Fatal(err)
	}
}

// whCount is the number of keys in a bucket of the store (doc.go's map).
func whCount(tb testing.TB, db *bolt.DB, bucket string) int {
	tb.Helper()
	n := 0
	whView(tb, db, func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucket)).ForEach(func(k, v []byte) error { n++; return nil })
	})
	return n
}

// whRequest is what a sink received.
type whRequest struct {
	n      int       // 0-based index at the sink
	at     time.Time // when it arrived, before its body was read
	header http.Header
	body   []byte
	env    map[string]any
}

func (r whRequest) attempt() int { return int(r.env["attempt"].(float64)) }

func (r whRequest) nextRetry() (string, bool) {
	v, ok := r.env["nextRetry"]
	if !ok {
		return "", false
	}
	return v.(string), true
}

// whSink is a TLS receiver; answer decides each response (n counts from 0).
type whSink struct {
	srv    *httptest.Server
	reqs   chan whRequest
	mu     sync.Mutex
	n      int
	answer func(n int, w http.ResponseWriter, r *http.Request)
}

func whNewSink(tb testing.TB, answer func(n int, w http.ResponseWriter, r *http.Request)) *whSink {
	tb.Helper()
	s := &whSink{reqs: make(chan whRequest, 2000), answer: answer}
	s.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at := time.Now()
		body, _ := io.ReadAll(r.Body)
		var env map[string]any
		_ = json.Unmarshal(body, &env)
		s.mu.Lock()
		n := s.n
		s.n++
		s.mu.Unlock()
		s.reqs <- whRequest{n: n, at: at, header: r.Header.Clone(), body: body, env: env}
		if s.answer != nil {
			s.answer(n, w, r)
		}
	}))
	tb.Cleanup(s.srv.Close)
	return s
}

func (s *whSink) URL() string { return s.srv.URL + "/hook" }

// client trusts the sink's certificate and allows its loopback address.
func (s *whSink) client(timeout time.Duration) *http.Client {
	roots := s.srv.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs
	return queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: timeout})
}

// next waits for the next request.
func (s *whSink) next(tb testing.TB) whRequest {
	tb.Helper()
	select {
	case r := <-s.reqs:
		return r
	case <-time.After(10 * time.Second):
		tb.Fatal("no request arrived within 10s")
		return whRequest{}
	}
}

// none checks that no request arrives within d.
func (s *whSink) none(tb testing.TB, d time.Duration) {
	tb.Helper()
	select {
	case r := <-s.reqs:
		tb.Fatalf("got request %d (attempt %v), want none", r.n, r.env["attempt"])
	case <-time.After(d):
	}
}

func whStatus(code int) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(code) }
}

// whRun starts d.Run and stops it (waiting) at cleanup.
func whRun(tb testing.TB, d *queue.Dispatcher) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	tb.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				tb.Errorf("Run: got %v, want nil", err)
			}
		case <-time.After(15 * time.Second):
			tb.Error("Run did not return within 15s of cancel")
		}
	})
}

// whDispatcher is a dispatcher on db with fast polling, no jitter, the
// sandbox schedule and client, and clock c.
func whDispatcher(db *bolt.DB, c *whClock, client *http.Client, mod ...func(*queue.DispatcherOptions)) *queue.Dispatcher {
	o := queue.DispatcherOptions{
		DB:           db,
		PolicyFor:    func(string) queue.Policy { return queue.Policy{Schedule: whSandbox, Client: client} },
		PollInterval: 5 * time.Millisecond,
		Jitter:       -1,
		Now:          c.Now,
		Logger:       zerolog.Nop(),
	}
	for _, m := range mod {
		m(&o)
	}
	return queue.NewDispatcher(o)
}

func whSub(id, scope, target string, types ...string) *queue.Subscription {
	return &queue.Subscription{ID: id, Scope: scope, TargetURL: target, EventTypes: types, Secret: whSecret, CreatedAt: whT0}
}

func whEvent(id, scope, typ string, at time.Time) queue.Event {
	return queue.Event{ID: id, Scope: scope, Type: typ, Timestamp: at, Data: json.RawMessage(`{"polygonIds":["p1"]}`)}
}

// whPublish stores subs and publishes evs in one transaction.
func whPublish(tb testing.TB, db *bolt.DB, subs []*queue.Subscription, evs ...queue.Event) {
	tb.Helper()
	whUpdate(tb, db, func(tx *bolt.Tx) error {
		for _, s := range subs {
			if err := queue.PutSubscription(tx, s); err != nil {
				return err
			}
		}
		for _, ev := range evs {
			if _, err := queue.Publish(tx, ev); err != nil {
				return err
			}
		}
		return nil
	})
}

// whEventually polls cond for up to 10s.
func whEventually(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	tb.Fatalf("%s: not reached within 10s", what)
}

func whDLQ(tb testing.TB, db *bolt.DB, scope string, f queue.DLQFilter) []queue.DeadLetter {
	tb.Helper()
	var dls []queue.DeadLetter
	whView(tb, db, func(tx *bolt.Tx) (err error) {
		dls, _, err = queue.FindDeadLetterPage(tx, scope, f)
		return err
	})
	return dls
}

func whAttempts(tb testing.TB, db *bolt.DB, scope, subID string, limit int) []queue.Attempt {
	tb.Helper()
	var as []queue.Attempt
	whView(tb, db, func(tx *bolt.Tx) (err error) {
		as, err = queue.FindAttempts(tx, scope, subID, limit)
		return err
	})
	return as
}

// whCheckSignatures recomputes both signatures from the spec, without
// webhooksig: hex HMAC-SHA256 of the body keyed by the secret string, and
// Standard Webhooks' base64 HMAC-SHA256 of "id.ts.body" keyed by the bytes
// after whsec_.
func whCheckSignatures(tb testing.TB, r whRequest, secret string, key []byte) {
	tb.Helper()
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(r.body)
	if got, want := r.header.Get("X-Service-Signature"), hex.EncodeToString(m.Sum(nil)); got != want {
		tb.Errorf("X-Service-Signature: got %q, want %q", got, want)
	}
	m = hmac.New(sha256.New, key)
	fmt.Fprintf(m, "%s.%s.%s", r.header.Get("webhook-id"), r.header.Get("webhook-timestamp"), r.body)
	if got, want := r.header.Get("webhook-signature"), "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)); got != want {
		tb.Errorf("webhook-signature: got %q, want %q", got, want)
	}
}

func TestDispatcher_Envelope(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, whStatus(http.StatusNoContent))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "org/sandbox", sink.URL(), "polygon.verified")},
		whEvent("evt_1", "org/sandbox", "polygon.verified", whT0))
	d.Wake()

	r := sink.next(t)
	want := `{"eventType":"polygon.verified","eventId":"evt_1","timestamp":"2026-11-20T10:15:30.123Z",` +
		`"attempt":0,"nextRetry":"2026-11-20T10:15:31.123Z","data":{"polygonIds":["p1"]}}`
	if string(r.body) != want {
		t.Errorf("body:\n got %s\nwant %s", r.body, want)
	}
	for h, want := range map[string]string{
		"Content-Type":         "application/json",
		"User-Agent":           "eudr-webhooks/1",
		"X-Service-Event-Id":   "evt_1",
		"X-Service-Event-Type": "polygon.verified",
		"webhook-id":           "evt_1",
		"webhook-timestamp":    strconv.FormatInt(whT0.Unix(), 10),
	} {
		if got := r.header.Get(h); got != want {
			t.Errorf("header %s: got %q, want %q", h, got, want)
		}
	}
	whCheckSignatures(t, r, whSecret, whKey)

	whEventually(t, "delivery deleted", func() bool { return whCount(t, db, "webhook_deliveries") == 0 })
	if n := whCount(t, db, "webhook_due"); n != 0 {
		t.Errorf("due keys after success: got %d, want 0", n)
	}
	if n := whCount(t, db, "webhook_events"); n != 0 {
		t.Errorf("events after the last delivery: got %d, want 0", n)
	}
	as := whAttempts(t, db, "org/sandbox", "wh_1", 0)
	if len(as) != 1 {
		t.Fatalf("attempt log: got %d entries, want 1", len(as))
	}
	if a := as[0]; a.Status != 204 || a.ErrorClass != "" || a.EventID != "evt_1" || a.EventType != "polygon.verified" ||
		a.Attempt != 0 || a.NextRetry != nil || a.DeadLettered || !a.At.Equal(whT0) || a.LatencyMs <= 0 {
		t.Errorf("attempt: got %+v", a)
	}
}

func TestDispatcher_RetryThenSuccess(t *testing.T) {
	const fails = 3
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n < fails {
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "busy")
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	at := whT0
	for i := 0; i <= fails; i++ {
		r := sink.next(t)
		if r.attempt() != i {
			t.Fatalf("request %d: got attempt %d, want %d", i, r.attempt(), i)
		}
		at = at.Add(whSandbox[i])
		got, ok := r.nextRetry()
		if want := at.Format("2006-01-02T15:04:05.000Z"); !ok || got != want {
			t.Errorf("attempt %d: got nextRetry %q (present %v), want %q", i, got, ok, want)
		}
		if i < fails {
			// Not due before nextRetry.
			clock.Set(at.Add(-time.Millisecond))
			sink.none(t, 30*time.Millisecond)
			clock.Set(at)
		}
	}
	whEventually(t, "delivery deleted", func() bool { return whCount(t, db, "webhook_deliveries") == 0 })
	as := whAttempts(t, db, "s", "wh_1", 0)
	if len(as) != fails+1 {
		t.Fatalf("attempt log: got %d entries, want %d", len(as), fails+1)
	}
	at = whT0
	for i := 0; i <= fails; i++ {
		a := as[fails-i] // newest first
		if a.Attempt != i || !a.At.Equal(at) {
			t.Errorf("log entry of attempt %d: got attempt %d at %v, want at %v", i, a.Attempt, a.At, at)
		}
		at = at.Add(whSandbox[i])
		if i < fails {
			if a.Status != 503 || a.ErrorClass != "http_status" || a.ResponseBody != "busy" || a.NextRetry == nil || !a.NextRetry.Equal(at) {
				t.Errorf("failed attempt %d: got %+v, want 503 http_status with nextRetry %v", i, a, at)
			}
		} else if a.Status != 200 || a.ErrorClass != "" || a.NextRetry != nil {
			t.Errorf("last attempt: got %+v, want a success", a)
		}
	}
	if n := len(whDLQ(t, db, "s", queue.DLQFilter{})); n != 0 {
		t.Errorf("DLQ: got %d entries, want 0", n)
	}
}

func TestDispatcher_DeadLetterAfterFiveFailures(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, whStatus(http.StatusInternalServerError))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	at := whT0
	for i := range queue.MaxAttempts {
		r := sink.next(t)
		if r.attempt() != i {
			t.Fatalf("request %d: got attempt %d", i, r.attempt())
		}
		next, ok := r.nextRetry()
		if i == queue.MaxAttempts-1 {
			if ok {
				t.Errorf("last attempt: got nextRetry %q, want none", next)
			}
			break
		}
		at = at.Add(whSandbox[i])
		if !ok {
			t.Fatalf("attempt %d: nextRetry missing", i)
		}
		clock.Set(at)
	}
	whEventually(t, "DLQ entry", func() bool { return len(whDLQ(t, db, "s", queue.DLQFilter{})) == 1 })
	clock.Add(24 * time.Hour)
	d.Wake()
	sink.none(t, 100*time.Millisecond)

	dl := whDLQ(t, db, "s", queue.DLQFilter{})[0]
	if dl.EventID != "evt_1" || dl.EventType != "job.failed" || dl.SubscriptionID != "wh_1" || dl.TargetURL != sink.URL() ||
		dl.Attempts != 5 || dl.LastStatus != 500 || dl.LastError != "HTTP 500" || !dl.FailedAt.Equal(at) ||
		!dl.Timestamp.Equal(whT0) || string(dl.Data) != `{"polygonIds":["p1"]}` {
		t.Errorf("DLQ entry: got %+v", dl)
	}
	for _, b := range []string{"webhook_deliveries", "webhook_due", "webhook_events"} {
		if n := whCount(t, db, b); n != 0 {
			t.Errorf("%s after the DLQ: got %d keys, want 0", b, n)
		}
	}
	as := whAttempts(t, db, "s", "wh_1", 1)
	if len(as) != 1 || !as[0].DeadLettered || as[0].Attempt != 4 || as[0].NextRetry != nil {
		t.Errorf("last attempt: got %+v, want attempt 4 dead-lettered", as)
	}
}

func TestDispatcher_Gone(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, whStatus(http.StatusGone))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	sink.next(t)
	whEventually(t, "DLQ entry", func() bool { return len(whDLQ(t, db, "s", queue.DLQFilter{})) == 1 })
	dl := whDLQ(t, db, "s", queue.DLQFilter{})[0]
	if dl.Attempts != 1 || dl.LastStatus != 410 {
		t.Errorf("DLQ entry: got attempts %d status %d, want 1 and 410", dl.Attempts, dl.LastStatus)
	}
	clock.Add(time.Hour)
	d.Wake()
	sink.none(t, 50*time.Millisecond)
}

func TestDispatcher_RedirectNotFollowed(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	sink.next(t)
	whEventually(t, "attempt logged", func() bool { return len(whAttempts(t, db, "s", "wh_1", 0)) == 1 })
	sink.none(t, 30*time.Millisecond) // /elsewhere was not requested
	a := whAttempts(t, db, "s", "wh_1", 0)[0]
	if a.Status != 302 || a.ErrorClass != "redirect" || a.NextRetry == nil || !strings.Contains(a.Error, "/elsewhere") {
		t.Errorf("attempt: got %+v, want a failed 302 of class redirect", a)
	}
}

func TestDispatcher_Timeout(t *testing.T) {
	db := whMustOpenDB(t)
	// The receiver never answers: it holds the request until the attempt
	// is logged, then drops it. (Returning when the request's context ends
	// would send an empty 200 that can race the client's timeout.)
	release := make(chan struct{})
	var once sync.Once
	releaseAll := func() { once.Do(func() { close(release) }) }
	sink := whNewSink(t, func(int, http.ResponseWriter, *http.Request) {
		<-release
		panic(http.ErrAbortHandler)
	})
	t.Cleanup(releaseAll) // before the sink's Close, which waits for its handlers
	sink.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(100*time.Millisecond))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	sink.next(t)
	whEventually(t, "attempt logged", func() bool { return len(whAttempts(t, db, "s", "wh_1", 0)) == 1 })
	releaseAll()
	a := whAttempts(t, db, "s", "wh_1", 0)[0]
	if a.Status != 0 || a.ErrorClass != "timeout" || a.Error == "" || a.NextRetry == nil {
		t.Errorf("attempt: got %+v, want class timeout, no status", a)
	}
}

func TestDispatcher_DeleteSubscriptionStops(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, whStatus(http.StatusInternalServerError))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	sink.next(t)
	whEventually(t, "retry scheduled", func() bool { return len(whAttempts(t, db, "s", "wh_1", 0)) == 1 })
	whUpdate(t, db, func(tx *bolt.Tx) error { return queue.DeleteSubscription(tx, "s", "wh_1") })
	clock.Add(time.Hour)
	d.Wake()
	sink.none(t, 100*time.Millisecond)
	for _, b := range []string{"webhook_deliveries", "webhook_due", "webhook_events"} {
		if n := whCount(t, db, b); n != 0 {
			t.Errorf("%s after delete: got %d keys, want 0", b, n)
		}
	}
}

func TestDispatcher_RotationSignsWithNewSecret(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	sub := whSub("wh_1", "s", sink.URL(), "job.failed")
	whPublish(t, db, []*queue.Subscription{sub}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()

	whCheckSignatures(t, sink.next(t), whSecret, whKey)
	whEventually(t, "retry scheduled", func() bool { return len(whAttempts(t, db, "s", "wh_1", 0)) == 1 })

	newKey := []byte(strings.Repeat("k", 32))
	rotated := *sub
	rotated.Secret = "whsec_" + base64.RawURLEncoding.EncodeToString(newKey)
	whUpdate(t, db, func(tx *bolt.Tx) error { return queue.PutSubscription(tx, &rotated) })
	clock.Add(whSandbox[0])
	r := sink.next(t)
	if r.attempt() != 1 {
		t.Fatalf("got attempt %d, want 1", r.attempt())
	}
	whCheckSignatures(t, r, rotated.Secret, newKey)
}

// A delivery claimed by a process that dies before recording the outcome is
// sent again once its lease runs out, by the next process.
func TestDispatcher_CrashAfterClaim(t *testing.T) {
	path := filepath.Join(t.TempDir(), "queue.db")
	release := make(chan struct{})
	sink := whNewSink(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			<-release
		}
	})
	clock := &whClock{t: whT0}

	db1 := whOpenDB(t, path)
	d1 := whDispatcher(db1, clock, sink.client(10*time.Second))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d1.Run(ctx) }()
	whPublish(t, db1, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d1.Wake()
	if r := sink.next(t); r.attempt() != 0 {
		t.Fatalf("first request: got attempt %d, want 0", r.attempt())
	}
	// The "crash": the store goes away while the request is in flight, so
	// the 200 that follows is never recorded.
	if err := db1.Close(); err != nil {
		t.Fatal(err)
	}
	close(release)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: got %v, want nil", err)
	}

	db2 := whOpenDB(t, path)
	t.Cleanup(func() { db2.Close() })
	if n := whCount(t, db2, "webhook_deliveries"); n != 1 {
		t.Fatalf("deliveries after the crash: got %d, want 1", n)
	}
	clock.Set(whT0.Add(30 * time.Second)) // within the 1m lease
	d2 := whDispatcher(db2, clock, sink.client(10*time.Second))
	whRun(t, d2)
	sink.none(t, 50*time.Millisecond)
	clock.Set(whT0.Add(time.Minute))
	r := sink.next(t)
	if r.attempt() != 0 || r.header.Get("X-Service-Event-Id") != "evt_1" {
		t.Errorf("redelivery: got attempt %d of %s, want attempt 0 of evt_1", r.attempt(), r.header.Get("X-Service-Event-Id"))
	}
	whEventually(t, "delivery deleted", func() bool { return whCount(t, db2, "webhook_deliveries") == 0 })
}

// A receiver that hangs holds at most PerTarget workers: another
// subscription's events still go out.
func TestDispatcher_PerTarget(t *testing.T) {
	db := whMustOpenDB(t)
	release := make(chan struct{})
	slow := whNewSink(t, func(int, http.ResponseWriter, *http.Request) { <-release })
	fast := whNewSink(t, whStatus(http.StatusOK))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, slow.client(10*time.Second), func(o *queue.DispatcherOptions) {
		o.Workers, o.PerTarget = 2, 1
	})
	whRun(t, d)
	t.Cleanup(func() { close(release) }) // before the dispatcher stops
	subs := []*queue.Subscription{whSub("wh_1", "s", slow.URL(), "a"), whSub("wh_2", "s", fast.URL(), "b")}
	// The slow subscription's events are due first.
	whPublish(t, db, subs,
		whEvent("evt_1", "s", "a", whT0.Add(-3*time.Second)),
		whEvent("evt_2", "s", "a", whT0.Add(-2*time.Second)),
		whEvent("evt_3", "s", "a", whT0.Add(-time.Second)),
		whEvent("evt_4", "s", "b", whT0))
	d.Wake()

	slow.next(t)
	if r := fast.next(t); r.header.Get("X-Service-Event-Id") != "evt_4" {
		t.Errorf("fast receiver: got %s, want evt_4", r.header.Get("X-Service-Event-Id"))
	}
	slow.none(t, 50*time.Millisecond) // one at a time to the stuck receiver
}

func TestDispatcher_ReplayStartsNewCycle(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusGone)
		}
	})
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	whRun(t, d)
	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "job.failed")}, whEvent("evt_1", "s", "job.failed", whT0))
	d.Wake()
	sink.next(t)
	whEventually(t, "DLQ entry", func() bool { return len(whDLQ(t, db, "s", queue.DLQFilter{})) == 1 })

	clock.Add(time.Hour)
	var n int
	whUpdate(t, db, func(tx *bolt.Tx) (err error) {
		n, err = queue.ReplayDeadLetters(tx, "s", queue.DLQFilter{EventIDs: []string{"evt_1"}}, clock.Now())
		return err
	})
	if n != 1 {
		t.Errorf("replayed: got %d, want 1", n)
	}
	if dls := whDLQ(t, db, "s", queue.DLQFilter{}); len(dls) != 0 {
		t.Errorf("DLQ after replay: got %d entries, want 0", len(dls))
	}
	d.Wake()
	r := sink.next(t)
	if r.attempt() != 0 || string(r.env["timestamp"].(string)) != "2026-11-20T10:15:30.123Z" {
		t.Errorf("replayed request: got attempt %d timestamp %v, want attempt 0 of the original event", r.attempt(), r.env["timestamp"])
	}
	if next, _ := r.nextRetry(); next != "2026-11-20T11:15:31.123Z" {
		t.Errorf("replayed nextRetry: got %q, want now + 1s", next)
	}
	if got := string(r.env["data"].(map[string]any)["polygonIds"].([]any)[0].(string)); got != "p1" {
		t.Errorf("replayed data: got %q, want p1", got)
	}
	whEventually(t, "delivered", func() bool { return whCount(t, db, "webhook_deliveries") == 0 })
}

func TestDispatcher_Jitter(t *testing.T) {
	for _, tc := range []struct {
		rand float64
		want time.Duration
	}{
		{0, 800 * time.Millisecond},     // -20 %
		{0.5, time.Second},              // none
		{0.75, 1100 * time.Millisecond}, // +10 %
	} {
		db := whMustOpenDB(t)
		sink := whNewSink(t, whStatus(http.StatusOK))
		clock := &whClock{t: whT0}
		d := whDispatcher(db, clock, sink.client(5*time.Second), func(o *queue.DispatcherOptions) {
			o.Jitter = 0 // the default, 0.2
			o.Rand = func() float64 { return tc.rand }
		})
		whRun(t, d)
		whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "a")}, whEvent("evt_1", "s", "a", whT0))
		d.Wake()
		next, _ := sink.next(t).nextRetry()
		if want := whT0.Add(tc.want).Format("2006-01-02T15:04:05.000Z"); next != want {
			t.Errorf("Rand %v: got nextRetry %s, want %s", tc.rand, next, want)
		}
	}
}

func TestDispatcher_Send(t *testing.T) {
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(_ int, w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"ok":true}`) })
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	sub := whSub("wh_1", "s", sink.URL(), "job.failed")
	whPublish(t, db, []*queue.Subscription{sub})

	ping := queue.Event{ID: "evt_ping", Scope: "s", Type: "webhook.ping", Timestamp: whT0, Data: json.RawMessage(`{}`)}
	a := d.Send(context.Background(), sub, ping)
	if a.Status != 200 || a.ErrorClass != "" || a.ResponseBody != `{"ok":true}` || a.EventType != "webhook.ping" {
		t.Errorf("Send: got %+v", a)
	}
	r := sink.next(t)
	want := `{"eventType":"webhook.ping","eventId":"evt_ping","timestamp":"2026-11-20T10:15:30.123Z","attempt":0,"data":{}}`
	if string(r.body) != want {
		t.Errorf("ping body:\n got %s\nwant %s", r.body, want)
	}
	whCheckSignatures(t, r, whSecret, whKey)
	if as := whAttempts(t, db, "s", "wh_1", 0); len(as) != 1 || as[0].EventID != "evt_ping" {
		t.Errorf("attempt log: got %+v, want the ping", as)
	}

	t.Run("TargetNotAllowed", func(t *testing.T) {
		d := whDispatcher(db, clock, queue.NewClient(queue.ClientOptions{Timeout: 5 * time.Second}))
		a := d.Send(context.Background(), sub, ping)
		if a.ErrorClass != "target_not_allowed" || a.Status != 0 {
			t.Errorf("Send to loopback: got %+v, want class target_not_allowed", a)
		}
	})
	t.Run("TLS", func(t *testing.T) {
		d := whDispatcher(db, clock, queue.NewClient(queue.ClientOptions{AllowPrivate: true, Timeout: 5 * time.Second}))
		if a := d.Send(context.Background(), sub, ping); a.ErrorClass != "tls" {
			t.Errorf("Send to an untrusted certificate: got %+v, want class tls", a)
		}
	})
	t.Run("Connection", func(t *testing.T) {
		gone := httptest.NewTLSServer(http.NotFoundHandler())
		gone.Close()
		s := *sub
		s.TargetURL = gone.URL
		if a := d.Send(context.Background(), &s, ping); a.ErrorClass != "connection" {
			t.Errorf("Send to a closed port: got %+v, want class connection", a)
		}
	})
}

func TestDispatcher_AttemptLogCap(t *testing.T) {
	if testing.Short() {
		t.Skip("1005 sends")
	}
	db, err := bolt.Open(filepath.Join(t.TempDir(), "queue.db"), 0o600, &bolt.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	whUpdate(t, db, queue.Init)
	big := strings.Repeat("x", 10000)
	sink := whNewSink(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, big)
	})
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, sink.client(5*time.Second))
	sub := whSub("wh_1", "s", sink.URL(), "a")
	whPublish(t, db, []*queue.Subscription{sub})
	const sends = 1005
	for i := 1; i <= sends; i++ {
		clock.Set(whT0.Add(time.Duration(i) * time.Second))
		d.Send(context.Background(), sub, queue.Event{ID: fmt.Sprintf("evt_%d", i), Scope: "s", Type: "webhook.ping", Timestamp: whT0})
		<-sink.reqs
	}
	as := whAttempts(t, db, "s", "wh_1", 0)
	if len(as) != 1000 {
		t.Fatalf("attempt log: got %d entries, want 1000", len(as))
	}
	if first, last := as[0], as[len(as)-1]; first.EventID != "evt_1005" || last.EventID != "evt_6" {
		t.Errorf("attempt log: got %s .. %s, want evt_1005 .. evt_6", first.EventID, last.EventID)
	}
	if len(as[0].ResponseBody) != 4096 || as[0].Status != 400 {
		t.Errorf("response body: got %d bytes (status %d), want 4096", len(as[0].ResponseBody), as[0].Status)
	}
	if as := whAttempts(t, db, "s", "wh_1", 3); len(as) != 3 || as[2].EventID != "evt_1003" {
		t.Errorf("limit 3: got %d entries", len(as))
	}
}

func TestDispatcher_RunStops(t *testing.T) {
	db := whMustOpenDB(t)
	d := whDispatcher(db, &whClock{t: whT0}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	d.Wake()
	d.Wake() // never blocks
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: got %v, want nil on a clean stop", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}

// The loop sleeps until the next due time, not until a poll: with
// PollInterval 1h, a retry 300 ms away and an event stamped 200 ms ahead
// are each sent when due, with no Wake but the publish's.
func TestDispatcher_WakesAtDueTime(t *testing.T) {
	const delay = 300 * time.Millisecond
	db := whMustOpenDB(t)
	sink := whNewSink(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	})
	client := sink.client(5 * time.Second)
	d := queue.NewDispatcher(queue.DispatcherOptions{
		DB:           db,
		PolicyFor:    func(string) queue.Policy { return queue.Policy{Schedule: []time.Duration{delay}, Client: client} },
		PollInterval: time.Hour,
		Jitter:       -1,
		Logger:       zerolog.Nop(),
	})
	whRun(t, d)
	// On time is a few milliseconds; the slack is for a loaded machine
	// with the race detector. A missed timer would wait for PollInterval,
	// an hour: no request within sink.next's 10 s.
	const slack = 3 * time.Second

	whPublish(t, db, []*queue.Subscription{whSub("wh_1", "s", sink.URL(), "a")}, whEvent("evt_1", "s", "a", time.Now()))
	d.Wake()
	r := sink.next(t)
	next, ok := r.nextRetry()
	if !ok {
		t.Fatal("first attempt: no nextRetry")
	}
	due, err := time.Parse(time.RFC3339Nano, next)
	if err != nil {
		t.Fatal(err)
	}
	if r = sink.next(t); r.attempt() != 1 {
		t.Fatalf("second request: got attempt %d, want 1", r.attempt())
	}
	late := r.at.Sub(due)
	t.Logf("retry arrived %v after its nextRetry", late)
	if late < 0 || late > slack {
		t.Errorf("retry arrived %v after its nextRetry, want within [0, %v]", late, slack)
	}

	due = time.Now().Add(200 * time.Millisecond)
	whPublish(t, db, nil, whEvent("evt_2", "s", "a", due))
	d.Wake()
	if r = sink.next(t); r.header.Get("X-Service-Event-Id") != "evt_2" {
		t.Fatalf("third request: got %s, want evt_2", r.header.Get("X-Service-Event-Id"))
	}
	late = r.at.Sub(due)
	t.Logf("event stamped ahead arrived %v after its timestamp", late)
	if late < 0 || late > slack {
		t.Errorf("event stamped ahead arrived %v after its timestamp, want within [0, %v]", late, slack)
	}
	whEventually(t, "deliveries deleted", func() bool { return whCount(t, db, "webhook_deliveries") == 0 })
	whView(t, db, queue.CheckWebhookIndexes)
}

// A receiver that hangs with a large backlog costs the others nothing: a
// second subscription's events, published after the backlog, all go out.
func TestDispatcher_BacklogOfStuckReceiver(t *testing.T) {
	const backlog = 5000
	db := whMustOpenDB(t)
	release := make(chan struct{})
	slow := whNewSink(t, func(int, http.ResponseWriter, *http.Request) { <-release })
	fast := whNewSink(t, whStatus(http.StatusOK))
	clock := &whClock{t: whT0}
	d := whDispatcher(db, clock, slow.client(10*time.Second), func(o *queue.DispatcherOptions) {
		o.Workers, o.PerTarget = 4, 2
		o.PollInterval = time.Hour
	})
	whRun(t, d)
	t.Cleanup(func() { close(release) }) // before the dispatcher stops
	subs := []*queue.Subscription{whSub("wh_1", "s", slow.URL(), "a"), whSub("wh_2", "s", fast.URL(), "b")}
	whUpdate(t, db, func(tx *bolt.Tx) error {
		for _, s := range subs {
			if err := queue.PutSubscription(tx, s); err != nil {
				return err
			}
		}
		for i := range backlog {
			if _, err := queue.Publish(tx, whEvent(fmt.Sprintf("evt_a%d", i), "s", "a", whT0.Add(-time.Hour))); err != nil {
				return err
			}
		}
		return nil
	})
	d.Wake()
	slow.next(t)
	slow.next(t)
	for i := range 50 {
		whPublish(t, db, nil, whEvent(fmt.Sprintf("evt_b%d", i), "s", "b", whT0))
		d.Wake()
	}
	for range 50 {
		fast.next(t)
	}
	slow.none(t, 50*time.Millisecond) // two at a time to the stuck receiver
	whEventually(t, "fast deliveries recorded", func() bool { return whCount(t, db, "webhook_deliveries") == backlog })
	whView(t, db, queue.CheckWebhookIndexes)
}
