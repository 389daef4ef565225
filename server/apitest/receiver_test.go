package apitest_test

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apitest"
)

// trustingClient is an HTTPS client that trusts only the certificate in
// caFile, as the appliance does with EUDR_WEBHOOKS_CA_FILE.
func trustingClient(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pemBytes, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pemBytes) {
		t.Fatalf("%s holds no PEM certificate", caFile)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// envelope is a delivery body of event id.
func envelope(id string) []byte {
	b, _ := json.Marshal(map[string]any{"eventType": "job.failed", "eventId": id, "timestamp": "2026-11-20T10:00:00.000Z",
		"attempt": 0, "nextRetry": nil, "data": map[string]any{"jobId": "job_1"}})
	return b
}

// post sends body to url signed as the dispatcher signs it: with secret,
// as event id, at ts; it returns the status.
func post(t *testing.T, c *http.Client, url, secret, id string, ts time.Time, body []byte) int {
	t.Helper()
	status, err := tryPost(c, url, secret, id, ts, body)
	if err != nil {
		t.Fatal(err)
	}
	return status
}

// tryPost is post returning an error, for goroutines other than the test's.
func tryPost(c *http.Client, url, secret, id string, ts time.Time, body []byte) (int, error) {
	req, err := signedRequest(url, secret, id, ts, body)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// signedRequest is the request post sends.
func signedRequest(url, secret, id string, ts time.Time, body []byte) (*http.Request, error) {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(webhooksig.HeaderEventID, id)
	req.Header.Set(webhooksig.HeaderSignature, webhooksig.Sign(secret, body))
	req.Header.Set(webhooksig.HeaderWebhookID, id)
	req.Header.Set(webhooksig.HeaderWebhookTimestamp, strconv.FormatInt(ts.Unix(), 10))
	req.Header.Set(webhooksig.HeaderWebhookSignature, webhooksig.SignStandard(secret, id, ts, body))
	return req, nil
}

func newSecret(t *testing.T) string {
	t.Helper()
	s, err := webhooksig.NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestReceiver_VerifiesEachDelivery(t *testing.T) {
	rc := apitest.NewReceiver(t)
	c := trustingClient(t, rc.CAFile)
	secret, other := newSecret(t), newSecret(t)
	rc.SetSecret("/hook", secret)
	if u := rc.URL("/hook"); !strings.HasPrefix(u, "https://127.0.0.1:"+rc.Port()+"/") {
		t.Errorf("URL(/hook) = %q, want https://127.0.0.1:%s/hook", u, rc.Port())
	}
	now := time.Now()

	if got := post(t, c, rc.URL("/hook"), secret, "evt_good", now, envelope("evt_good")); got != http.StatusOK {
		t.Errorf("a delivery signed with the path's secret: status %d, want 200", got)
	}
	if !rc.IsDelivered("/hook", "evt_good") {
		t.Errorf("the good delivery is not marked delivered")
	}
	reqs := rc.Requests("/hook", "evt_good")
	if len(reqs) != 1 {
		t.Fatalf("Requests(/hook, evt_good): %d, want 1", len(reqs))
	}
	d := reqs[0]
	if d.SigErr != nil || d.EnvErr != nil || d.Nth != 1 || d.Status != http.StatusOK || d.Method != "POST" {
		t.Errorf("good delivery recorded as SigErr %v, EnvErr %v, Nth %d, Status %d, Method %s", d.SigErr, d.EnvErr, d.Nth, d.Status, d.Method)
	}
	if want := []string{"attempt", "data", "eventId", "eventType", "nextRetry", "timestamp"}; !slices.Equal(d.Keys, want) {
		t.Errorf("Keys %q, want %q", d.Keys, want)
	}
	if d.Env.EventType != "job.failed" || d.Env.EventID != "evt_good" || d.Env.NextRetry != nil || string(d.Env.Data) != `{"jobId":"job_1"}` {
		t.Errorf("Env %+v (data %s)", d.Env, d.Env.Data)
	}
	apitest.CheckSignatures(t, d, secret)
	if errs := failures(t, func(tb testing.TB) { apitest.CheckSignatures(tb, d, other) }); len(errs) < 2 {
		t.Errorf("CheckSignatures with another secret reported %q, want both signatures refused", errs)
	}

	bad := []struct {
		name, path, secret, id string
		ts                     time.Time
		body                   []byte
		want                   error // SigErr; nil: EnvErr instead
	}{
		{"OtherSecret", "/hook", other, "evt_other", now, envelope("evt_other"), webhooksig.ErrMismatch},
		{"StaleTimestamp", "/hook", secret, "evt_stale", now.Add(-2 * webhooksig.DefaultTolerance), envelope("evt_stale"), webhooksig.ErrTimestamp},
		{"NoSecretForPath", "/elsewhere", secret, "evt_path", now, envelope("evt_path"), apitest.ErrNoSecret},
		{"NotAnEnvelope", "/hook", secret, "evt_array", now, []byte(`[1,2]`), nil},
	}
	for _, b := range bad {
		t.Run(b.name, func(t *testing.T) {
			if got := post(t, c, rc.URL(b.path), b.secret, b.id, b.ts, b.body); got != http.StatusUnauthorized {
				t.Errorf("status %d, want 401", got)
			}
			reqs := rc.Requests(b.path, "")
			last := reqs[len(reqs)-1]
			if b.want != nil && !errors.Is(last.SigErr, b.want) {
				t.Errorf("SigErr %v, want %v", last.SigErr, b.want)
			}
			if b.want == nil && last.EnvErr == nil {
				t.Errorf("EnvErr nil for body %s", b.body)
			}
			if last.Status != http.StatusUnauthorized || rc.IsDelivered(b.path, b.id) {
				t.Errorf("recorded Status %d, delivered %v; want 401 and not delivered", last.Status, rc.IsDelivered(b.path, b.id))
			}
		})
	}
	// A body changed after signing.
	body := envelope("evt_tampered")
	req, _ := http.NewRequest("POST", rc.URL("/hook"), bytes.NewReader(bytes.Replace(body, []byte("job_1"), []byte("job_2"), 1)))
	req.Header.Set(webhooksig.HeaderSignature, webhooksig.Sign(secret, body))
	req.Header.Set(webhooksig.HeaderWebhookID, "evt_tampered")
	req.Header.Set(webhooksig.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	req.Header.Set(webhooksig.HeaderWebhookSignature, webhooksig.SignStandard(secret, "evt_tampered", now, body))
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized || rc.IsDelivered("/hook", "evt_tampered") {
		t.Errorf("tampered body: status %d, want 401 and not delivered", resp.StatusCode)
	}

	if got := rc.Delivered("/hook"); len(got) != 1 || !got["evt_good"] {
		t.Errorf("Delivered(/hook) = %v, want only evt_good", got)
	}
	if n := len(rc.Requests("", "")); n != 6 {
		t.Errorf("Requests(\"\", \"\"): %d, want all 6", n)
	}
}

func TestReceiver_Policy(t *testing.T) {
	rc := apitest.NewReceiver(t)
	c := trustingClient(t, rc.CAFile)
	secret := newSecret(t)
	rc.SetSecret("/p", secret)
	rc.SetPolicy(apitest.FailFirst(2))

	for i, want := range []int{500, 500, 200} {
		if got := post(t, c, rc.URL("/p"), secret, "evt_a", time.Now(), envelope("evt_a")); got != want {
			t.Errorf("request %d of evt_a: status %d, want %d", i+1, got, want)
		}
		if delivered := rc.IsDelivered("/p", "evt_a"); delivered != (want == 200) {
			t.Errorf("after request %d (status %d): delivered %v", i+1, want, delivered)
		}
	}
	for i, d := range rc.Requests("/p", "evt_a") {
		if d.Nth != i+1 {
			t.Errorf("request %d: Nth %d", i+1, d.Nth)
		}
	}
	// The count is per event.
	if got := post(t, c, rc.URL("/p"), secret, "evt_b", time.Now(), envelope("evt_b")); got != 500 {
		t.Errorf("first request of evt_b: status %d, want 500", got)
	}

	// A policy cannot accept what does not verify.
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer { return apitest.Answer{Status: http.StatusAccepted} })
	if got := post(t, c, rc.URL("/p"), newSecret(t), "evt_c", time.Now(), envelope("evt_c")); got != http.StatusUnauthorized {
		t.Errorf("badly signed under an accepting policy: status %d, want 401", got)
	}

	// While the policy holds an answer, the request is in flight and its
	// Status is 0.
	arrived, release := make(chan struct{}), make(chan struct{})
	defer func() {
		select {
		case <-release:
		default:
			close(release)
		}
	}()
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer {
		arrived <- struct{}{}
		<-release
		return apitest.Answer{Status: http.StatusNoContent}
	})
	status := make(chan int, 1)
	go func() {
		s, err := tryPost(c, rc.URL("/p"), secret, "evt_d", time.Now(), envelope("evt_d"))
		if err != nil {
			t.Errorf("POST evt_d: %v", err)
		}
		status <- s
	}()
	select {
	case <-arrived:
	case s := <-status:
		t.Fatalf("evt_d answered %d before the policy held it", s)
	}
	if n := rc.InFlight(); n != 1 {
		t.Errorf("InFlight() = %d while an answer is held, want 1", n)
	}
	if reqs := rc.Requests("/p", "evt_d"); len(reqs) != 1 || reqs[0].Status != 0 {
		t.Errorf("held request recorded as %+v, want one with Status 0", reqs)
	}
	close(release)
	if got := <-status; got != http.StatusNoContent {
		t.Errorf("released answer: status %d, want 204", got)
	}
	if n := rc.InFlight(); n != 0 || !rc.IsDelivered("/p", "evt_d") {
		t.Errorf("after the answer: InFlight() = %d, delivered %v; want 0 and true", n, rc.IsDelivered("/p", "evt_d"))
	}
}

// The policy's Body is the answer's body, which the appliance logs; a
// delivery that does not verify gets none of it.
func TestReceiver_AnswerBody(t *testing.T) {
	rc := apitest.NewReceiver(t)
	c := trustingClient(t, rc.CAFile)
	secret := newSecret(t)
	rc.SetSecret("/p", secret)
	rc.SetPolicy(func(*apitest.Delivery) apitest.Answer { return apitest.Answer{Status: http.StatusGone, Body: "gone"} })
	for _, tc := range []struct {
		secret, want string
		status       int
	}{{secret, "gone", http.StatusGone}, {newSecret(t), "", http.StatusUnauthorized}} {
		req, err := signedRequest(rc.URL("/p"), tc.secret, "evt_a", time.Now(), envelope("evt_a"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != tc.status || string(body) != tc.want {
			t.Errorf("answer: %d %q, want %d %q", resp.StatusCode, body, tc.status, tc.want)
		}
	}
}
