package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/server/account"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/storage"
)

func TestIdempotencyKey(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		want    string
		wantErr bool
	}{
		{"Empty", "", "", false},
		{"Blank", "   ", "", false},
		{"Plain", "order-42", "order-42", false},
		{"UUID", "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b", "3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b", false},
		{"Quoted", `"order-42"`, "order-42", false},
		{"QuotedEmpty", `""`, "", false},
		{"SurroundingSpaceTrimmed", "  order-42 ", "order-42", false},
		{"Printable", `!#$%&'()*+,-./:;<=>?@[\]^_{|}~`, `!#$%&'()*+,-./:;<=>?@[\]^_{|}~`, false},
		{"OneQuote", `"order`, `"order`, false},
		{"Max255", strings.Repeat("k", 255), strings.Repeat("k", 255), false},
		{"Quoted255", `"` + strings.Repeat("k", 255) + `"`, strings.Repeat("k", 255), false},
		{"Over256", strings.Repeat("k", 256), "", true},
		{"InnerSpace", "order 42", "", true},
		{"QuotedInnerSpace", `"order 42"`, "", true},
		{"Tab", "order\t42", "", true},
		{"Control", "order\x0142", "", true},
		{"NonASCII", "bestellung-ä", "", true},
		{"DEL", "order\x7f", "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := idempotencyKey(tc.in)
			if tc.wantErr {
				e := apierr.From(err)
				if err == nil || e.Status != 400 || len(e.Details) != 1 || e.Details[0].Code != apierr.DetailInvalidValue || e.Details[0].Field != "headers.Idempotency-Key" {
					t.Errorf("idempotencyKey(%q): got %q, %v, want 400 INVALID_VALUE on headers.Idempotency-Key", tc.in, got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("idempotencyKey(%q): got %q, %v, want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestFingerprint(t *testing.T) {
	fp := func(method, target, body string) string {
		return fingerprint(&http.Request{Method: method, URL: &url.URL{Path: target}}, []byte(body))
	}
	base := fp("POST", "/a", `{"x":1}`)
	if len(base) != 64 {
		t.Errorf("fingerprint: got %q, want 64 hex characters", base)
	}
	if again := fp("POST", "/a", `{"x":1}`); again != base {
		t.Errorf("same request twice: got %s and %s, want equal", base, again)
	}
	for name, other := range map[string]string{
		"Method":       fp("PUT", "/a", `{"x":1}`),
		"Path":         fp("POST", "/b", `{"x":1}`),
		"Body":         fp("POST", "/a", `{"x":2}`),
		"BodyBytes":    fp("POST", "/a", `{"x": 1}`),
		"EmptyBody":    fp("POST", "/a", ``),
		"PathVsBody":   fp("POST", "/a\n", `{"x":1}`),
		"MethodInPath": fp("POST /a", "/", `{"x":1}`),
	} {
		if other == base {
			t.Errorf("fingerprint differing by %s: got the same %s", name, base)
		}
	}
}

// idemChain puts h behind the listener's middleware, an API key check and
// a.idempotent(policy, ...): what wrap builds for a write route.
func (ta *testApp) idemChain(policy idemPolicy, h http.Handler) http.Handler {
	route := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := authorize(authKey, infoFrom(r.Context()).who, r.Method); err != nil {
			writeError(w, r, err)
			return
		}
		ta.idempotent(policy, h).ServeHTTP(w, r)
	})
	return ta.traceAndLog(storage.Sandbox, ta.recoverPanics(ta.identify(ta.rateLimit(ta.limitBody(route)))))
}

// countingHandler answers 201 with Location and a custom header, and counts
// its calls.
type countingHandler struct {
	a     *App
	calls atomic.Int32
}

func (h *countingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := h.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	h.a.commit(w, r, func(*storage.Tx) (reply, error) {
		return reply{status: http.StatusCreated,
			header: http.Header{"Location": {"/things/" + fmt.Sprint(n)}, "X-Custom": {"kept"}},
			body:   map[string]any{"call": n, "body": string(body)}}, nil
	})
}

// commitJSON answers v through commit, as write handlers do.
func commitJSON(a *App, w http.ResponseWriter, r *http.Request, status int, v any) {
	a.commit(w, r, func(*storage.Tx) (reply, error) { return reply{status: status, body: v}, nil })
}

func serveTo(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestApp_Idempotent(t *testing.T) {
	sandbox := storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}

	t.Run("Replay", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		h := &countingHandler{a: ta.App}
		chain := ta.idemChain(idemRequired, h)
		first := serveTo(chain, newRequest("POST", "/things", `{"a":1}`, "X-API-Key", key, "Idempotency-Key", "K", "X-Trace-Id", "trace-one"))
		if first.Code != 201 || first.Header().Get("Idempotent-Replayed") != "" {
			t.Fatalf("first: got %d replayed %q, want 201 not replayed", first.Code, first.Header().Get("Idempotent-Replayed"))
		}
		second := serveTo(chain, newRequest("POST", "/things", `{"a":1}`, "X-API-Key", key, "Idempotency-Key", `"K"`, "X-Trace-Id", "trace-two"))
		if n := h.calls.Load(); n != 1 {
			t.Errorf("handler calls after a replay: got %d, want 1", n)
		}
		if second.Code != 201 || second.Body.String() != first.Body.String() {
			t.Errorf("replay: got %d %s, want 201 %s", second.Code, second.Body, first.Body)
		}
		if got := second.Header().Get("Idempotent-Replayed"); got != "true" {
			t.Errorf("Idempotent-Replayed: got %q, want true", got)
		}
		for _, hd := range []string{"Location", "Content-Type", "X-Custom"} {
			if got, want := second.Header().Get(hd), first.Header().Get(hd); got != want || got == "" {
				t.Errorf("replayed %s: got %q, want %q", hd, got, want)
			}
		}
		if got := second.Header().Get("X-Trace-Id"); got != "trace-two" {
			t.Errorf("replayed X-Trace-Id: got %q, want this request's trace-two", got)
		}
		if got := second.Header().Values("X-Trace-Id"); len(got) != 1 {
			t.Errorf("replayed X-Trace-Id values: got %q, want one", got)
		}
		if got := second.Header().Get("X-RateLimit-Remaining"); got != "98" {
			t.Errorf("replayed X-RateLimit-Remaining: got %q, want 98 (this request's count)", got)
		}
		for _, hd := range []string{"X-RateLimit-Remaining", "X-RateLimit-Limit", "X-RateLimit-Reset"} {
			if got := second.Header().Values(hd); len(got) != 1 {
				t.Errorf("replayed %s values: got %q, want one", hd, got)
			}
		}
		ta.view(func(tx *storage.Tx) error {
			r, err := tx.FindIdempotency(sandbox, "K")
			if err != nil {
				return err
			}
			if r.State != storage.IdemCompleted || r.Status != 201 || r.Owner != "" {
				t.Errorf("record: got state %s status %d owner %q, want completed 201 without owner", r.State, r.Status, r.Owner)
			}
			for _, hd := range []string{"X-Trace-Id", "X-Ratelimit-Remaining", "Content-Length"} {
				if _, ok := r.Header[hd]; ok {
					t.Errorf("stored headers: got %s, want it left out", hd)
				}
			}
			if want := testStart.Add(24 * time.Hour); !r.ExpiresAt.Equal(want) {
				t.Errorf("expiresAt: got %v, want %v", r.ExpiresAt, want)
			}
			return nil
		})
	})

	t.Run("OtherFingerprintConflicts", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		h := &countingHandler{a: ta.App}
		chain := ta.idemChain(idemRequired, h)
		serveTo(chain, newRequest("POST", "/things", `{"a":1}`, "X-API-Key", key, "Idempotency-Key", "K"))
		for name, r := range map[string]*http.Request{
			"Body":   newRequest("POST", "/things", `{"a":2}`, "X-API-Key", key, "Idempotency-Key", "K"),
			"Path":   newRequest("POST", "/other", `{"a":1}`, "X-API-Key", key, "Idempotency-Key", "K"),
			"Method": newRequest("PUT", "/things", `{"a":1}`, "X-API-Key", key, "Idempotency-Key", "K"),
		} {
			w := serveTo(chain, r)
			e := wantError(t, w, http.StatusConflict, apierr.CodeConflict, apierr.DetailIdempotencyKeyReused)
			if e.Details[0].Field != "headers.Idempotency-Key" {
				t.Errorf("%s: field got %q, want headers.Idempotency-Key", name, e.Details[0].Field)
			}
		}
		if n := h.calls.Load(); n != 1 {
			t.Errorf("handler calls: got %d, want 1", n)
		}
	})

	t.Run("ScopedPerTenant", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		ta.addOrgUser("acme", "acme-admin", "pw")
		kr, _ := account.ParseKeyRequest("acme", "", "sandbox", nil)
		_, acmeKey, err := ta.accounts.IssueKey(context.Background(), kr)
		if err != nil {
			t.Fatal(err)
		}
		h := &countingHandler{a: ta.App}
		chain := ta.idemChain(idemRequired, h)
		serveTo(chain, newRequest("POST", "/things", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		w := serveTo(chain, newRequest("POST", "/things", `{}`, "X-API-Key", acmeKey, "Idempotency-Key", "K"))
		if w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "" || h.calls.Load() != 2 {
			t.Errorf("same key from another organisation: got %d replayed %q calls %d, want a fresh 201", w.Code, w.Header().Get("Idempotent-Replayed"), h.calls.Load())
		}
	})

	t.Run("Missing", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		h := &countingHandler{a: ta.App}
		w := serveTo(ta.idemChain(idemRequired, h), newRequest("POST", "/things", `{not json`, "X-API-Key", key))
		e := wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)
		if e.Details[0].Field != "headers.Idempotency-Key" || len(e.Details) != 1 {
			t.Errorf("details: got %+v, want only IDEMPOTENCY_KEY_MISSING on headers.Idempotency-Key", e.Details)
		}
		if h.calls.Load() != 0 {
			t.Error("handler ran without an Idempotency-Key on a required route")
		}
		// Optional: the request runs, nothing is remembered.
		opt := ta.idemChain(idemOptional, h)
		for range 2 {
			if w := serveTo(opt, newRequest("POST", "/things", `{}`, "X-API-Key", key)); w.Code != 201 {
				t.Errorf("optional without key: got %d, want 201", w.Code)
			}
		}
		if h.calls.Load() != 2 {
			t.Errorf("optional without key: handler calls got %d, want 2", h.calls.Load())
		}
		// An invalid key is refused even where the header is optional.
		w = serveTo(opt, newRequest("POST", "/things", `{}`, "X-API-Key", key, "Idempotency-Key", "a b"))
		wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailInvalidValue)
	})

	t.Run("InProgress", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		entered, release := make(chan struct{}), make(chan struct{})
		var calls atomic.Int32
		chain := ta.idemChain(idemRequired, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if calls.Add(1) == 1 {
				close(entered)
				<-release
			}
			commitJSON(ta.App, w, r, http.StatusOK, map[string]string{"done": "yes"})
		}))
		var first *httptest.ResponseRecorder
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			first = serveTo(chain, newRequest("POST", "/slow", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		}()
		<-entered
		w := serveTo(chain, newRequest("POST", "/slow", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		close(release)
		wg.Wait()

		e := wantError(t, w, http.StatusLocked, apierr.CodeResourceLocked, apierr.DetailIdempotencyInProgress)
		if e.Details[0].Field != "headers.Idempotency-Key" {
			t.Errorf("field: got %q, want headers.Idempotency-Key", e.Details[0].Field)
		}
		if got := w.Header().Get("Retry-After"); got != "1" {
			t.Errorf("Retry-After: got %q, want 1", got)
		}
		if first.Code != 200 {
			t.Errorf("first request: got %d, want 200", first.Code)
		}
		if calls.Load() != 1 {
			t.Errorf("handler calls: got %d, want 1 (the second was refused)", calls.Load())
		}
		third := serveTo(chain, newRequest("POST", "/slow", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		if third.Code != 200 || third.Header().Get("Idempotent-Replayed") != "true" {
			t.Errorf("after the first finished: got %d replayed %q, want the replay", third.Code, third.Header().Get("Idempotent-Replayed"))
		}
	})

	t.Run("InFlightRecords", func(t *testing.T) {
		const body = `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`
		path := eudrPrefix + "/suppliers"
		for _, tc := range []struct {
			name      string
			owner     func(ta *testApp) string
			expiresIn time.Duration
			wantRun   bool
		}{
			{"OwnRun", func(ta *testApp) string { return ta.runID }, time.Hour, false},
			{"CrashedRun", func(*testApp) string { return "0123456789abcdef" }, time.Hour, true},
			{"OwnRunExpired", func(ta *testApp) string { return ta.runID }, -time.Second, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ta := newTestApp(t)
				_, key := ta.newKey(storage.Sandbox)
				fp := fingerprint(httptest.NewRequest("POST", path, nil), []byte(body))
				now := ta.clock.Now()
				ta.update(func(tx *storage.Tx) error {
					return tx.PutIdempotency(sandbox, &storage.IdempotencyRecord{Key: "K", Fingerprint: fp, State: storage.IdemInFlight,
						Owner: tc.owner(ta), CreatedAt: now.Add(-time.Minute), ExpiresAt: now.Add(tc.expiresIn)})
				})
				w := ta.do("POST", path, body, "X-API-Key", key, "Idempotency-Key", "K")
				var rec *storage.IdempotencyRecord
				ta.view(func(tx *storage.Tx) error {
					var err error
					rec, err = tx.FindIdempotency(sandbox, "K")
					return err
				})
				if !tc.wantRun {
					wantError(t, w, http.StatusLocked, apierr.CodeResourceLocked, apierr.DetailIdempotencyInProgress)
					if got := w.Header().Get("Retry-After"); got != "1" {
						t.Errorf("Retry-After: got %q, want 1", got)
					}
					if rec.State != storage.IdemInFlight || rec.Owner != ta.runID {
						t.Errorf("record after 423: got %s owned by %q, want the first request's in-flight record kept", rec.State, rec.Owner)
					}
					return
				}
				if w.Code != 200 || w.Header().Get("Idempotent-Replayed") != "" {
					t.Fatalf("taken over: got %d %s replayed %q, want 200 from the handler", w.Code, w.Body, w.Header().Get("Idempotent-Replayed"))
				}
				if rec.State != storage.IdemCompleted || rec.Status != 200 {
					t.Errorf("record: got %s %d, want completed 200", rec.State, rec.Status)
				}
				if want := now.Add(24 * time.Hour); !rec.ExpiresAt.Equal(want) {
					t.Errorf("record expiresAt: got %v, want %v (a fresh 24h)", rec.ExpiresAt, want)
				}
				ta.view(func(tx *storage.Tx) error {
					_, err := tx.FindSupplier(sandbox, "V1")
					return err
				})
			})
		}
	})

	t.Run("ExpiredNotReplayed", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		h := &countingHandler{a: ta.App}
		chain := ta.idemChain(idemRequired, h)
		send := func(body string) *httptest.ResponseRecorder {
			return serveTo(chain, newRequest("POST", "/things", body, "X-API-Key", key, "Idempotency-Key", "K"))
		}
		send(`{"a":1}`)
		ta.clock.Advance(24*time.Hour - time.Second)
		if w := send(`{"a":1}`); w.Header().Get("Idempotent-Replayed") != "true" || h.calls.Load() != 1 {
			t.Fatalf("a second before expiry: got replayed %q calls %d, want a replay", w.Header().Get("Idempotent-Replayed"), h.calls.Load())
		}
		ta.clock.Advance(2 * time.Second)
		w := send(`{"a":1}`)
		if w.Code != 201 || w.Header().Get("Idempotent-Replayed") != "" || h.calls.Load() != 2 {
			t.Errorf("after 24h: got %d replayed %q calls %d, want the handler to run again", w.Code, w.Header().Get("Idempotent-Replayed"), h.calls.Load())
		}
		// And the key is free for another payload after expiry.
		ta.clock.Advance(25 * time.Hour)
		if w := send(`{"a":2}`); w.Code != 201 || h.calls.Load() != 3 {
			t.Errorf("other payload after expiry: got %d calls %d, want 201 and a run", w.Code, h.calls.Load())
		}
	})

	t.Run("Sweep", func(t *testing.T) {
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		_, live := ta.newKey(storage.Production)
		send := func(env storage.Environment, k, idem string) {
			t.Helper()
			w := ta.serve(env, newRequest("POST", eudrPrefix+"/suppliers",
				`{"erpVendorId":"`+idem+`","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`,
				"X-API-Key", k, "Idempotency-Key", idem))
			if w.Code != 200 {
				t.Fatalf("POST with %s: got %d %s", idem, w.Code, w.Body)
			}
		}
		send(storage.Sandbox, key, "old")
		send(storage.Production, live, "old-live")
		ta.clock.Advance(12 * time.Hour)
		send(storage.Sandbox, key, "young")
		ta.clock.Advance(12*time.Hour + time.Second)

		ta.sweepIdempotency(context.Background())
		production := storage.Tenant{Org: defaultOrg, Env: storage.Production}
		for _, c := range []struct {
			t    storage.Tenant
			key  string
			want bool
		}{{sandbox, "old", false}, {production, "old-live", false}, {sandbox, "young", true}} {
			ta.view(func(tx *storage.Tx) error {
				_, err := tx.FindIdempotency(c.t, c.key)
				if got := err == nil; got != c.want {
					t.Errorf("record %s of %s after sweep: got present=%v (%v), want %v", c.key, c.t, got, err, c.want)
				}
				if err != nil && !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("record %s: got %v, want ErrNotFound", c.key, err)
				}
				return nil
			})
		}
		ta.clock.Advance(12 * time.Hour)
		ta.sweepIdempotency(context.Background())
		ta.view(func(tx *storage.Tx) error {
			if _, err := tx.FindIdempotency(sandbox, "young"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("young record after its expiry and a sweep: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})

	t.Run("SweepManyRecords", func(t *testing.T) {
		ta := newTestApp(t)
		now := ta.clock.Now()
		ta.update(func(tx *storage.Tx) error {
			for i := range 2500 {
				if err := tx.PutIdempotency(sandbox, &storage.IdempotencyRecord{Key: fmt.Sprint("k", i), State: storage.IdemCompleted,
					CreatedAt: now.Add(-25 * time.Hour), ExpiresAt: now.Add(-time.Hour)}); err != nil {
					return err
				}
			}
			return nil
		})
		ta.sweepIdempotency(context.Background())
		ta.view(func(tx *storage.Tx) error {
			for _, k := range []string{"k0", "k1500", "k2499"} {
				if _, err := tx.FindIdempotency(sandbox, k); !errors.Is(err, storage.ErrNotFound) {
					t.Errorf("record %s of 2500 expired after one sweep: got %v, want ErrNotFound", k, err)
				}
			}
			return nil
		})
	})

	t.Run("ErrorReleasesKey", func(t *testing.T) {
		for _, tc := range []struct {
			name    string
			fail    func(w http.ResponseWriter, r *http.Request)
			status  int
			errCode string
		}{
			{"4xx", func(w http.ResponseWriter, r *http.Request) {
				writeError(w, r, apierr.Validation(apierr.Detail{Code: apierr.DetailRequired, Field: "name", Issue: "is required"}))
			}, 400, apierr.CodeValidationFailed},
			{"5xx", func(w http.ResponseWriter, r *http.Request) {
				writeError(w, r, errors.New("disk full"))
			}, 500, apierr.CodeInternal},
			{"Panic", func(w http.ResponseWriter, r *http.Request) {
				panic("handler bug")
			}, 500, apierr.CodeInternal},
		} {
			t.Run(tc.name, func(t *testing.T) {
				ta := newTestApp(t)
				_, key := ta.newKey(storage.Sandbox)
				var calls atomic.Int32
				chain := ta.idemChain(idemRequired, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if calls.Add(1) == 1 {
						tc.fail(w, r)
						return
					}
					commitJSON(ta.App, w, r, http.StatusOK, map[string]string{"ok": "yes"})
				}))
				w := serveTo(chain, newRequest("POST", "/things", `{"bad":true}`, "X-API-Key", key, "Idempotency-Key", "K"))
				wantError(t, w, tc.status, tc.errCode, "")
				ta.view(func(tx *storage.Tx) error {
					if _, err := tx.FindIdempotency(sandbox, "K"); !errors.Is(err, storage.ErrNotFound) {
						t.Errorf("record after a %d: got %v, want ErrNotFound (key released)", tc.status, err)
					}
					return nil
				})
				// The corrected request may reuse the key: it runs, no 409 or 423.
				w = serveTo(chain, newRequest("POST", "/things", `{"bad":false}`, "X-API-Key", key, "Idempotency-Key", "K"))
				if w.Code != 200 || w.Header().Get("Idempotent-Replayed") != "" {
					t.Errorf("corrected request with the same key: got %d %s, want 200 from the handler", w.Code, w.Body)
				}
				if calls.Load() != 2 {
					t.Errorf("handler calls: got %d, want 2", calls.Load())
				}
			})
		}
	})

	t.Run("AnswerNotCommittedIsNotRemembered", func(t *testing.T) {
		// A handler that answers 2xx without commit stored nothing in its
		// transaction: the key is released rather than replay a guess.
		ta := newTestApp(t)
		_, key := ta.newKey(storage.Sandbox)
		var calls atomic.Int32
		chain := ta.idemChain(idemRequired, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			calls.Add(1)
			w.Write([]byte("plain"))
		}))
		serveTo(chain, newRequest("POST", "/x", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		w := serveTo(chain, newRequest("POST", "/x", `{}`, "X-API-Key", key, "Idempotency-Key", "K"))
		if w.Code != 200 || w.Header().Get("Idempotent-Replayed") != "" || calls.Load() != 2 {
			t.Errorf("second request: got %d replayed %q after %d calls, want 200 from the handler after 2 calls", w.Code, w.Header().Get("Idempotent-Replayed"), calls.Load())
		}
	})

	t.Run("BodyTooLarge", func(t *testing.T) {
		ta := newTestApp(t, "EUDR_LIMITS_MAX_BODY_BYTES=1024")
		_, key := ta.newKey(storage.Sandbox)
		h := &countingHandler{a: ta.App}
		r := newRequest("POST", "/things", "", "X-API-Key", key, "Idempotency-Key", "K", "Content-Type", "application/json")
		r.Body = io.NopCloser(io.MultiReader(strings.NewReader(strings.Repeat(" ", 2000)), strings.NewReader("{}")))
		r.ContentLength = -1 // chunked: only reading finds out
		w := serveTo(ta.idemChain(idemRequired, h), r)
		wantError(t, w, http.StatusRequestEntityTooLarge, apierr.CodePayloadTooLarge, "")
		if h.calls.Load() != 0 {
			t.Error("handler ran on a body over the limit")
		}
		ta.view(func(tx *storage.Tx) error {
			if _, err := tx.FindIdempotency(sandbox, "K"); !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("record after 413: got %v, want ErrNotFound", err)
			}
			return nil
		})
	})
}

func TestApp_IdempotentSuppliers(t *testing.T) {
	ta := newTestApp(t)
	_, key := ta.newKey(storage.Sandbox)
	body := `{"erpVendorId":"V1","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Coop","country":"CI"}`
	first := ta.do("POST", eudrPrefix+"/suppliers", body, "X-API-Key", key, "Idempotency-Key", "S1")
	if first.Code != 200 {
		t.Fatalf("first: got %d %s", first.Code, first.Body)
	}
	ta.clock.Advance(time.Minute)
	second := ta.do("POST", eudrPrefix+"/suppliers", body, "X-API-Key", key, "Idempotency-Key", "S1")
	if second.Code != 200 || second.Body.String() != first.Body.String() || second.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: got %d %s replayed %q, want the first answer again", second.Code, second.Body, second.Header().Get("Idempotent-Replayed"))
	}
	if ct := second.Header().Get("Content-Type"); ct != "application/json" {
		t.Errorf("replayed Content-Type: got %q, want application/json", ct)
	}
	ta.view(func(tx *storage.Tx) error {
		s, err := tx.FindSupplier(storage.Tenant{Org: defaultOrg, Env: storage.Sandbox}, "V1")
		if err != nil {
			return err
		}
		if !s.UpdatedAt.Equal(testStart) {
			t.Errorf("supplier updatedAt: got %v, want %v (the replay did not write)", s.UpdatedAt, testStart)
		}
		return nil
	})
	// Missing key: rejected before the body is looked at.
	w := ta.do("POST", eudrPrefix+"/suppliers", `{garbage`, "X-API-Key", key)
	wantError(t, w, 400, apierr.CodeValidationFailed, apierr.DetailIdempotencyKeyMissing)
}
