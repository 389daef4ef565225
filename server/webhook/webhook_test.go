package webhook_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/apitest"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/storage"
)

var (
	tenant = storage.Tenant{Org: "default", Env: storage.Sandbox}
	start  = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
)

// fixture is a service on a bench whose sends and wakes are recorded.
type fixture struct {
	b     *apitest.Bench
	s     *webhook.Service
	sent  []queue.Event
	wakes int
}

func newFixture(tb testing.TB) *fixture {
	f := &fixture{b: apitest.NewBench(tb, start)}
	f.s = webhook.New(webhook.Options{DB: f.b.DB, Now: f.b.Clock.Now, Wake: func() { f.wakes++ },
		Send: func(_ context.Context, sub *queue.Subscription, ev queue.Event) queue.Attempt {
			f.sent = append(f.sent, ev)
			return queue.Attempt{EventID: ev.ID, EventType: ev.Type, Status: 200, At: ev.Timestamp}
		}})
	return f
}

// register validates and registers a webhook of t.
func (f *fixture) register(t storage.Tenant, target string, types ...string) (*queue.Subscription, error) {
	req := webhook.Request{TargetURL: target, EventTypes: types}
	sub, err := req.Validate()
	if err != nil {
		return nil, err
	}
	err = f.b.DB.Update(context.Background(), func(tx *storage.Tx) error { return f.s.Register(tx, t, sub) })
	return sub, err
}

func (f *fixture) list(tb testing.TB, t storage.Tenant) []*queue.Subscription {
	tb.Helper()
	subs, err := f.s.List(context.Background(), t)
	if err != nil {
		tb.Fatal(err)
	}
	return subs
}

// wantAPIError checks that err is the apierr envelope status/code with
// one detail of detailCode on field.
func wantAPIError(tb testing.TB, err error, status int, code, detailCode, field string) *apierr.Error {
	tb.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) {
		tb.Fatalf("error %v, want an apierr %d %s", err, status, code)
	}
	if e.Status != status || e.Code != code || !slices.ContainsFunc(e.Details, func(d apierr.Detail) bool {
		return d.Code == detailCode && d.Field == field
	}) {
		tb.Fatalf("error %d %s %+v, want %d %s with %s on %s", e.Status, e.Code, e.Details, status, code, detailCode, field)
	}
	return e
}

func wantNotFound(tb testing.TB, err error, kind, id string) {
	tb.Helper()
	var nf apierr.NotFound
	if !errors.As(err, &nf) || nf.Kind != kind || nf.ID != id || !errors.Is(err, storage.ErrNotFound) {
		tb.Errorf("error %v, want apierr.NotFound of %s %s", err, kind, id)
	}
}

func TestRequest_Validate(t *testing.T) {
	long := "https://hooks.example.com/" + strings.Repeat("a", webhook.MaxTargetURLLen)
	for _, tc := range []struct {
		name       string
		req        webhook.Request
		field      string
		detailCode string
		issue      string
	}{
		{"NoURL", webhook.Request{EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailRequired, "is required"},
		{"TooLong", webhook.Request{TargetURL: long, EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailInvalidValue, "must be at most 2048 bytes"},
		{"PlainHTTP", webhook.Request{TargetURL: "http://hooks.example.com/x", EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailInvalidValue, "plain HTTP is refused"},
		{"NoHost", webhook.Request{TargetURL: "https:///x", EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailInvalidValue, "with a host"},
		{"Credentials", webhook.Request{TargetURL: "https://u:p@hooks.example.com/x", EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailInvalidValue, "must not carry credentials"},
		{"Fragment", webhook.Request{TargetURL: "https://hooks.example.com/x#f", EventTypes: []string{event.JobFailed}}, "targetUrl", apierr.DetailInvalidValue, "#fragment"},
		{"NoTypes", webhook.Request{TargetURL: "https://hooks.example.com/x"}, "eventTypes", apierr.DetailRequired, "at least one event type"},
		{"Ping", webhook.Request{TargetURL: "https://hooks.example.com/x", EventTypes: []string{event.JobFailed, event.WebhookPing}}, "eventTypes[1]", apierr.DetailInvalidValue, `unsupported event type "webhook.ping"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.req.Validate()
			e := wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, tc.detailCode, tc.field)
			if len(e.Details) != 1 || !strings.Contains(e.Details[0].Issue, tc.issue) {
				t.Errorf("details %+v, want one saying %q", e.Details, tc.issue)
			}
		})
	}

	// Every problem at once.
	_, err := (&webhook.Request{TargetURL: "http://x", EventTypes: []string{"nope", "job.failed", "also.nope"}}).Validate()
	e := wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailInvalidValue, "eventTypes[2]")
	if len(e.Details) != 3 {
		t.Errorf("details %+v, want targetUrl, eventTypes[0] and eventTypes[2]", e.Details)
	}

	sub, err := (&webhook.Request{TargetURL: "https://hooks.example.com/x",
		EventTypes: []string{event.ReportReady, event.JobFailed, event.ReportReady}}).Validate()
	if err != nil || sub.TargetURL != "https://hooks.example.com/x" || !slices.Equal(sub.EventTypes, []string{event.ReportReady, event.JobFailed}) {
		t.Errorf("Validate: %+v, %v; want the target and each type once, in order", sub, err)
	}
}

func TestService_CheckTarget(t *testing.T) {
	b := apitest.NewBench(t, start)
	s := webhook.New(webhook.Options{DB: b.DB, AllowPrivateTargets: map[storage.Environment]bool{storage.Sandbox: true}})
	live := storage.Tenant{Org: "default", Env: storage.Production}
	for _, target := range []string{"https://127.0.0.1/x", "https://[::1]:8443/x", "https://169.254.169.254/latest"} {
		err := s.CheckTarget(context.Background(), live, target)
		e := wantAPIError(t, err, apierr.StatusBadRequest, apierr.CodeValidationFailed, apierr.DetailTargetNotAllowed, "targetUrl")
		if len(e.Details) == 1 && !strings.Contains(e.Details[0].Issue, "which production does not deliver to") {
			t.Errorf("%s: issue %q does not name the environment", target, e.Details[0].Issue)
		}
		// The sandbox allows them here.
		if err := s.CheckTarget(context.Background(), tenant, target); err != nil {
			t.Errorf("sandbox %s: %v, want it allowed", target, err)
		}
	}
	// Private networks are where on-premises receivers live.
	for _, target := range []string{"https://10.1.2.3/x", "https://192.168.1.10:8443/x", "https://93.184.215.14/x"} {
		if err := s.CheckTarget(context.Background(), live, target); err != nil {
			t.Errorf("production %s: %v, want it allowed", target, err)
		}
	}
	// Without the option every environment is guarded.
	guarded := webhook.New(webhook.Options{DB: b.DB})
	if err := guarded.CheckTarget(context.Background(), tenant, "https://127.0.0.1/x"); err == nil {
		t.Error("sandbox without AllowPrivateTargets: loopback allowed")
	}
}

func TestService_Register(t *testing.T) {
	f := newFixture(t)
	first, err := f.register(tenant, "https://Hooks.Example.com/eudr", event.JobFailed, event.ReportReady)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(first.ID, "wh_") || first.Scope != event.Scope(tenant) || !first.CreatedAt.Equal(start) ||
		!strings.HasPrefix(first.Secret, webhooksig.SecretPrefix) || len(first.Secret) < len(webhooksig.SecretPrefix)+32 {
		t.Errorf("registered %+v, want an ID, the tenant's scope, the clock's time and a whsec_ secret", first)
	}
	if got := f.list(t, tenant); len(got) != 1 || got[0].Secret != first.Secret || got[0].TargetURL != "https://Hooks.Example.com/eudr" {
		t.Fatalf("stored %+v, want the webhook as registered", got)
	}

	for _, tc := range []struct {
		name   string
		tenant storage.Tenant
		target string
		types  []string
		dup    string // the type refused, "" when accepted
	}{
		{"SameURL", tenant, "https://Hooks.Example.com/eudr", []string{event.PolygonVerified, event.JobFailed}, event.JobFailed},
		{"HostCase", tenant, "https://hooks.example.com/eudr", []string{event.ReportReady}, event.ReportReady},
		{"DefaultPort", tenant, "https://hooks.example.com:443/eudr", []string{event.JobFailed}, event.JobFailed},
		{"OtherTypes", tenant, "https://hooks.example.com/eudr", []string{event.PolygonVerified}, ""},
		{"PathCase", tenant, "https://hooks.example.com/EUDR", []string{event.JobFailed}, ""},
		{"OtherPort", tenant, "https://hooks.example.com:8443/eudr", []string{event.JobFailed}, ""},
		{"OtherTenant", storage.Tenant{Org: "default", Env: storage.Production}, "https://hooks.example.com/eudr", []string{event.JobFailed}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.list(t, tc.tenant))
			sub, err := f.register(tc.tenant, tc.target, tc.types...)
			after := len(f.list(t, tc.tenant))
			if tc.dup == "" {
				if err != nil || after != before+1 {
					t.Errorf("register: %v, %d webhooks then %d; want it accepted", err, before, after)
				}
				return
			}
			e := wantAPIError(t, err, apierr.StatusConflict, apierr.CodeConflict, apierr.DetailWebhookDuplicate, "eventTypes")
			if want := "webhook " + first.ID + " already delivers " + tc.dup + " to this URL"; len(e.Details) != 1 || e.Details[0].Issue != want {
				t.Errorf("details %+v, want %q", e.Details, want)
			}
			if after != before || sub.ID != "" {
				t.Errorf("a refused registration wrote: %d webhooks then %d, ID %q", before, after, sub.ID)
			}
		})
	}

	// An IPv6 host without its default port is the same URL.
	v6, err := f.register(tenant, "https://[::1]/x", event.JobFailed)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.register(tenant, "https://[::1]:443/x", event.JobFailed)
	if e := wantAPIError(t, err, apierr.StatusConflict, apierr.CodeConflict, apierr.DetailWebhookDuplicate, "eventTypes"); !strings.Contains(e.Details[0].Issue, v6.ID) {
		t.Errorf("details %+v, want them to name %s", e.Details, v6.ID)
	}

	// Newest first.
	subs := f.list(t, tenant)
	if !slices.IsSortedFunc(subs, func(a, b *queue.Subscription) int { return strings.Compare(b.ID, a.ID) }) || subs[len(subs)-1].ID != first.ID {
		t.Errorf("list order %v, want newest first", subs)
	}
}

func TestRedact(t *testing.T) {
	for secret, want := range map[string]string{
		"whsec_abcdefghijklmnop": "whsec_****mnop",
		"abc":                    "whsec_****",
	} {
		if got := webhook.Redact(secret); got != want {
			t.Errorf("Redact(%q) = %q, want %q", secret, got, want)
		}
	}
}

func TestService_RotateAndDelete(t *testing.T) {
	f := newFixture(t)
	sub, err := f.register(tenant, "https://hooks.example.com/x", event.JobFailed)
	if err != nil {
		t.Fatal(err)
	}
	var rotated *queue.Subscription
	f.b.Update(t, func(tx *storage.Tx) error {
		var err error
		rotated, err = f.s.Rotate(tx, tenant, sub.ID)
		return err
	})
	stored := f.list(t, tenant)[0]
	if rotated.ID != sub.ID || rotated.Secret == sub.Secret || !strings.HasPrefix(rotated.Secret, webhooksig.SecretPrefix) ||
		stored.Secret != rotated.Secret || stored.TargetURL != sub.TargetURL || !slices.Equal(stored.EventTypes, sub.EventTypes) {
		t.Errorf("rotated %+v, stored %+v; want a new secret, the rest kept", rotated, stored)
	}

	// Another tenant's webhook is not found, and stays.
	other := storage.Tenant{Org: "other", Env: storage.Sandbox}
	err = f.b.DB.Update(context.Background(), func(tx *storage.Tx) error { return f.s.Delete(tx, other, sub.ID) })
	wantNotFound(t, err, "webhook", sub.ID)
	err = f.b.DB.Update(context.Background(), func(tx *storage.Tx) error {
		_, err := f.s.Rotate(tx, other, sub.ID)
		return err
	})
	wantNotFound(t, err, "webhook", sub.ID)
	if got := f.list(t, tenant); len(got) != 1 || got[0].Secret != rotated.Secret {
		t.Fatalf("after another tenant's delete and rotate: %+v", got)
	}

	f.b.Update(t, func(tx *storage.Tx) error { return f.s.Delete(tx, tenant, sub.ID) })
	if got := f.list(t, tenant); len(got) != 0 {
		t.Errorf("after delete: %+v", got)
	}
	err = f.b.DB.Update(context.Background(), func(tx *storage.Tx) error { return f.s.Delete(tx, tenant, sub.ID) })
	wantNotFound(t, err, "webhook", sub.ID)
	_, err = f.s.Ping(context.Background(), tenant, sub.ID)
	wantNotFound(t, err, "webhook", sub.ID)
	_, err = f.s.Attempts(context.Background(), tenant, sub.ID, 0)
	wantNotFound(t, err, "webhook", sub.ID)
	if len(f.sent) != 0 {
		t.Errorf("sent %d pings to no webhook", len(f.sent))
	}
}

func TestService_PingEvent(t *testing.T) {
	f := newFixture(t)
	sub, err := f.register(tenant, "https://hooks.example.com/x", event.JobFailed)
	if err != nil {
		t.Fatal(err)
	}
	f.b.Clock.Advance(time.Minute)
	if _, err := f.s.Ping(context.Background(), tenant, sub.ID); err != nil {
		t.Fatal(err)
	}
	if len(f.sent) != 1 {
		t.Fatalf("%d sends, want 1", len(f.sent))
	}
	ev := f.sent[0]
	var data map[string]string
	if err := json.Unmarshal(ev.Data, &data); err != nil || len(data) != 1 || data["webhookId"] != sub.ID {
		t.Errorf("ping data %s, want {\"webhookId\":%q}", ev.Data, sub.ID)
	}
	if ev.Type != event.WebhookPing || ev.Scope != event.Scope(tenant) || !ev.Timestamp.Equal(start.Add(time.Minute)) ||
		!strings.HasPrefix(ev.ID, "evt_") {
		t.Errorf("ping %+v, want a webhook.ping of the tenant's scope at the clock's time", ev)
	}
	_, err = f.s.Ping(context.Background(), storage.Tenant{Org: "default", Env: storage.Production}, sub.ID)
	wantNotFound(t, err, "webhook", sub.ID)
	if len(f.sent) != 1 {
		t.Errorf("a ping of another tenant's webhook was sent")
	}
}

// A ping through the real dispatcher reaches the receiver signed with the
// webhook's secret and is the first entry of the webhook's log.
func TestService_PingDelivered(t *testing.T) {
	b := apitest.NewBench(t, start)
	rc := apitest.NewReceiver(t)
	pem, err := os.ReadFile(rc.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(pem)
	client := queue.NewClient(queue.ClientOptions{AllowPrivate: true, RootCAs: roots, Timeout: time.Minute})
	// The dispatcher signs with the real time, which the receiver checks.
	d := queue.NewDispatcher(queue.DispatcherOptions{DB: b.DB.Bolt(), Logger: zerolog.Nop(),
		PolicyFor: func(string) queue.Policy { return queue.Policy{Client: client} }})
	s := webhook.New(webhook.Options{DB: b.DB, AllowPrivateTargets: map[storage.Environment]bool{storage.Sandbox: true},
		Send: d.Send, Wake: d.Wake, Now: b.Clock.Now})

	sub, err := (&webhook.Request{TargetURL: rc.URL("/ping"), EventTypes: []string{event.JobFailed}}).Validate()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.CheckTarget(context.Background(), tenant, sub.TargetURL); err != nil {
		t.Fatal(err)
	}
	b.Update(t, func(tx *storage.Tx) error { return s.Register(tx, tenant, sub) })
	rc.SetSecret("/ping", sub.Secret)

	at, err := s.Ping(context.Background(), tenant, sub.ID)
	if err != nil {
		t.Fatal(err)
	}
	reqs := rc.Requests("/ping", at.EventID)
	if at.Status != 200 || at.ErrorClass != "" || len(reqs) != 1 || reqs[0].SigErr != nil ||
		reqs[0].Env.EventType != event.WebhookPing || reqs[0].Env.Attempt != 0 {
		t.Fatalf("attempt %+v, receiver %+v; want one signed webhook.ping answered 200", at, reqs)
	}
	log, err := s.Attempts(context.Background(), tenant, sub.ID, 10)
	if err != nil || len(log) != 1 || log[0].EventID != at.EventID || log[0].EventType != event.WebhookPing || log[0].Status != 200 {
		t.Errorf("log %+v, %v; want the ping's attempt", log, err)
	}
}
