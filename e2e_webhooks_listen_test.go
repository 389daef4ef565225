package main_test

// End-to-end test of `eudr webhooks listen`: the built binary, run against
// a real sandbox, receives a real delivery with no certificate of the
// test's making, verifies it, prints it and forwards it, and deletes its
// subscription on SIGINT.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apitest"
)

// listenWait bounds each wait on the listener: it only ends a test that
// would otherwise hang.
const listenWait = 60 * time.Second

// lineReader collects a pipe's lines as they come, for tests to wait on.
type lineReader struct {
	mu    sync.Mutex
	lines []string
	added chan struct{} // closed and replaced at every line
	done  chan struct{} // closed at EOF
}

func readLines(r io.Reader) *lineReader {
	lr := &lineReader{added: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(lr.done)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 8<<20)
		for sc.Scan() {
			lr.mu.Lock()
			lr.lines = append(lr.lines, sc.Text())
			close(lr.added)
			lr.added = make(chan struct{})
			lr.mu.Unlock()
		}
	}()
	return lr
}

// waitFor returns the first line from index from on that match accepts,
// and its index; it fails t at EOF or after listenWait.
func (lr *lineReader) waitFor(t *testing.T, what string, from int, match func(string) bool) (string, int) {
	t.Helper()
	bound := time.After(listenWait)
	for i := from; ; {
		lr.mu.Lock()
		lines, added := lr.lines, lr.added
		lr.mu.Unlock()
		for ; i < len(lines); i++ {
			if match(lines[i]) {
				return lines[i], i
			}
		}
		select {
		case <-added:
		case <-lr.done:
			lr.mu.Lock()
			n := len(lr.lines)
			lr.mu.Unlock()
			if n == len(lines) {
				t.Fatalf("%s: the output ended first:\n%s", what, strings.Join(lines, "\n"))
			}
		case <-bound:
			t.Fatalf("%s: not within %s:\n%s", what, listenWait, strings.Join(lines, "\n"))
		}
	}
}

func (lr *lineReader) text() string {
	lr.mu.Lock()
	defer lr.mu.Unlock()
	return strings.Join(lr.lines, "\n")
}

var listenReady = regexp.MustCompile(`^Ready: listening on (https://127\.0\.0\.1:\d+), subscription (wh_[0-9A-Z]{26}), events (\S+)$`)

func TestWebhooksListen(t *testing.T) {
	t.Parallel()
	p := startServer(t)
	key := p.createKey(t, sandbox)

	// The local app deliveries are forwarded to.
	type request struct {
		header http.Header
		body   []byte
	}
	forwards := make(chan request, 16)
	app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		forwards <- request{r.Header.Clone(), body}
		w.WriteHeader(http.StatusOK)
	}))
	defer app.Close()

	cmd := exec.Command(eudrBin, "webhooks", "listen", "--json", "--forward-to", app.URL+"/eudr-hooks", "--url", p.SandboxURL)
	cmd.Env = append(baseEnv(), "EUDR_API_KEY="+key)
	stdoutPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderrPipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := readLines(stdoutPipe), readLines(stderrPipe)
	exited := make(chan error, 1)
	go func() {
		<-stdout.done
		<-stderr.done
		exited <- cmd.Wait()
	}()
	stopped := false // the test saw it exit
	t.Cleanup(func() {
		if !stopped {
			cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("eudr webhooks listen stderr:\n%s\nstdout:\n%s", stderr.text(), stdout.text())
		}
	})

	ready, _ := stderr.waitFor(t, "the Ready line", 0, listenReady.MatchString)
	m := listenReady.FindStringSubmatch(ready)
	target, subID := m[1], m[2]
	secretLine, _ := stderr.waitFor(t, "the signing secret", 0, func(l string) bool { return strings.HasPrefix(l, "Signing secret: ") })
	secret := strings.Fields(secretLine)[2]
	if !whSecretPattern.MatchString(secret) {
		t.Fatalf("signing secret %q", secret)
	}
	var subs []webhookReg
	apitest.Do(t, "GET", webhooksURL(p.SandboxURL), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &subs)
	if len(subs) != 1 || subs[0].WebhookID != subID || subs[0].TargetURL != target || len(subs[0].EventTypes) != 10 {
		t.Fatalf("subscriptions %+v; want %s to %s for all ten event types", subs, subID, target)
	}

	// A screening job in the sandbox: its polygon.verified arrives,
	// verified, on stdout, and at the app.
	jobID := polMustPost(t, p.SandboxURL, key, polCollection(polFeature(polSquare(-1.5, 6.5, 0.001),
		map[string]any{"commodity": "cocoa", "producerCountry": "GH"})), 1)
	line, _ := stdout.waitFor(t, "the polygon.verified delivery", 0, func(l string) bool { return strings.Contains(l, `"polygon.verified"`) })
	var printed struct {
		EventType string `json:"eventType"`
		EventID   string `json:"eventId"`
		Verified  bool   `json:"verified"`
		Forward   struct {
			URL    string `json:"url"`
			Status int    `json:"status"`
		} `json:"forward"`
		Event json.RawMessage `json:"event"`
	}
	if err := json.Unmarshal([]byte(line), &printed); err != nil {
		t.Fatalf("stdout line %q: %v", line, err)
	}
	var env apitest.Envelope
	if err := json.Unmarshal(printed.Event, &env); err != nil {
		t.Fatalf("printed event %s: %v", printed.Event, err)
	}
	var data struct {
		JobID      string   `json:"jobId"`
		PolygonIDs []string `json:"polygonIds"`
	}
	json.Unmarshal(env.Data, &data)
	if !printed.Verified || printed.EventType != "polygon.verified" || env.EventID != printed.EventID || data.JobID != jobID ||
		len(data.PolygonIDs) != 1 || printed.Forward.URL != app.URL+"/eudr-hooks" || printed.Forward.Status != http.StatusOK {
		t.Errorf("printed %s; want the verified polygon.verified of job %s, forwarded with status 200", line, jobID)
	}
	select {
	case fw := <-forwards:
		if !bytes.Equal(fw.body, printed.Event) {
			t.Errorf("forwarded body %s, want the delivery's %s", fw.body, printed.Event)
		}
		if err := webhooksig.Verify(secret, fw.body, fw.header.Get(webhooksig.HeaderSignature)); err != nil {
			t.Errorf("forwarded X-Service-Signature: %v", err)
		}
		if err := webhooksig.VerifyStandard(secret, fw.header, fw.body, webhooksig.DefaultTolerance, time.Now()); err != nil {
			t.Errorf("forwarded Standard Webhooks headers: %v", err)
		}
		if fw.header.Get(webhooksig.HeaderEventID) != printed.EventID || fw.header.Get(webhooksig.HeaderEventType) != "polygon.verified" {
			t.Errorf("forwarded event headers %v", fw.header)
		}
	case <-time.After(listenWait):
		t.Fatal("the app got no forward")
	}

	// The listener's certificate is the sandbox's business only: the
	// production listener has no such route, and a live key is refused.
	certURL := eudrAPI + "/sandbox/webhook-listener-certificate"
	live := p.createKey(t, production)
	apitest.Do(t, "POST", p.ProductionURL+certURL, apitest.WithKey(live), map[string]any{}).WantStatus(t, http.StatusNotFound)
	apitest.Do(t, "POST", p.SandboxURL+certURL, apitest.WithKey(live), map[string]any{}).WantStatus(t, http.StatusForbidden)

	// Ctrl-C: the subscription is deleted and the command exits 0.
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Fatalf("after SIGINT: %v, want exit 0", err)
		}
	case <-time.After(listenWait):
		t.Fatal("no exit after SIGINT")
	}
	if !strings.Contains(stderr.text(), "Deleted subscription "+subID) {
		t.Errorf("stderr does not say the subscription was deleted")
	}
	subs = nil
	apitest.Do(t, "GET", webhooksURL(p.SandboxURL), apitest.WithKey(key), nil).WantStatus(t, http.StatusOK).Decode(t, &subs)
	if len(subs) != 0 {
		t.Errorf("subscriptions after SIGINT: %+v, want none", subs)
	}
	for _, l := range strings.Split(stdout.text(), "\n") {
		if l != "" && !json.Valid([]byte(l)) {
			t.Errorf("stdout line %q is not JSON: stdout must carry deliveries only", l)
		}
	}
}
