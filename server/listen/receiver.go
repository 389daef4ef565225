package listen

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/queue/webhooksig"
)

// maxDeliveryBytes bounds a delivery's body: far above any event's.
const maxDeliveryBytes = 32 << 20

// forwardTimeout bounds a forward, so that the delivery is still answered
// within the appliance's 10 seconds.
const forwardTimeout = 8 * time.Second

// forwardedHeaders are the delivery's headers a forward carries: a local
// app verifies the signatures as it would the appliance's.
var forwardedHeaders = []string{"Content-Type", "User-Agent",
	webhooksig.HeaderSignature, webhooksig.HeaderEventID, webhooksig.HeaderEventType,
	webhooksig.HeaderWebhookID, webhooksig.HeaderWebhookTimestamp, webhooksig.HeaderWebhookSignature}

// receiver verifies, prints and forwards deliveries.
type receiver struct {
	secret    string
	forwardTo string
	forward   *http.Client
	json      bool
	now       func() time.Time

	mu             sync.Mutex // one delivery's output at a time
	stdout, stderr io.Writer
}

func newReceiver(o Options, secret string) *receiver {
	return &receiver{secret: secret, forwardTo: o.ForwardTo, json: o.JSON, now: o.Now, stdout: o.Stdout, stderr: o.Stderr,
		forward: &http.Client{Timeout: forwardTimeout, CheckRedirect: netguard.NoRedirects}}
}

// envelope is what the summary shows of a delivery's body.
type envelope struct {
	EventType string `json:"eventType"`
	EventID   string `json:"eventId"`
	Attempt   int    `json:"attempt"`
}

// forwardResult is how the local app answered a forward.
type forwardResult struct {
	URL    string `json:"url"`
	Status int    `json:"status,omitempty"`
	Error  string `json:"error,omitempty"`
}

// deliveryLine is a delivery as --json prints it.
type deliveryLine struct {
	ReceivedAt string          `json:"receivedAt"`
	EventType  string          `json:"eventType"`
	EventID    string          `json:"eventId"`
	Attempt    int             `json:"attempt"`
	Verified   bool            `json:"verified"`
	Forward    *forwardResult  `json:"forward,omitempty"`
	Event      json.RawMessage `json:"event"`
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	at := rc.now()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "deliveries are POSTed", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxDeliveryBytes))
	if err != nil {
		rc.logf("refused a request: its body: %v", err)
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	if reason := rc.verify(r.Header, body, at); reason != "" {
		rc.logf("refused a delivery (event %s, %s) with 401: %s", r.Header.Get(webhooksig.HeaderEventID),
			r.Header.Get(webhooksig.HeaderEventType), reason)
		http.Error(w, "signature verification failed: "+reason, http.StatusUnauthorized)
		return
	}
	var fwd *forwardResult
	if rc.forwardTo != "" {
		fwd = rc.forwardDelivery(r.Context(), r.Header, body)
	}
	rc.print(at, body, fwd)
	w.WriteHeader(http.StatusNoContent)
}

// verify checks both signatures of a delivery and says what is wrong, or
// "" when both hold.
func (rc *receiver) verify(h http.Header, body []byte, now time.Time) string {
	if err := webhooksig.Verify(rc.secret, body, h.Get(webhooksig.HeaderSignature)); err != nil {
		return webhooksig.HeaderSignature + " " + sigProblem(err)
	}
	if err := webhooksig.VerifyStandard(rc.secret, h, body, webhooksig.DefaultTolerance, now); err != nil {
		return webhooksig.HeaderWebhookSignature + " " + sigProblem(err)
	}
	return ""
}

func sigProblem(err error) string {
	switch {
	case errors.Is(err, webhooksig.ErrNoSignature):
		return "is missing"
	case errors.Is(err, webhooksig.ErrTimestamp):
		return "cannot be checked: webhook-timestamp is missing or more than 5 minutes from this machine's clock"
	default:
		return "does not match the body: it was changed on the way, or signed with another secret"
	}
}

// forwardDelivery POSTs a verified delivery to the local app with its
// headers and reports the answer's status.
func (rc *receiver) forwardDelivery(ctx context.Context, h http.Header, body []byte) *forwardResult {
	res := &forwardResult{URL: rc.forwardTo}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rc.forwardTo, bytes.NewReader(body))
	if err != nil {
		res.Error = err.Error()
		return res
	}
	for _, name := range forwardedHeaders {
		if v := h.Values(name); len(v) > 0 {
			req.Header[http.CanonicalHeaderKey(name)] = v
		}
	}
	resp, err := rc.forward.Do(req)
	if err != nil {
		var ue *url.Error // Post "<the URL printed already>": ...
		if errors.As(err, &ue) {
			err = ue.Err
		}
		res.Error = err.Error()
		return res
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	res.Status = resp.StatusCode
	return res
}

// print writes a verified delivery on stdout: one JSON line, or a summary
// line and the body indented.
func (rc *receiver) print(at time.Time, body []byte, fwd *forwardResult) {
	var env envelope
	_ = json.Unmarshal(body, &env) // the appliance signed it: it is an envelope
	var out bytes.Buffer
	if rc.json {
		line := deliveryLine{ReceivedAt: at.UTC().Format(time.RFC3339Nano), EventType: env.EventType, EventID: env.EventID,
			Attempt: env.Attempt, Verified: true, Forward: fwd, Event: json.RawMessage(body)}
		if !json.Valid(body) {
			line.Event, _ = json.Marshal(string(body))
		}
		b, err := json.Marshal(line) // compacts the event onto the line
		if err != nil {
			rc.logf("print a delivery: %v", err)
			return
		}
		out.Write(b)
		out.WriteByte('\n')
	} else {
		fmt.Fprintf(&out, "%s  %s  %s  attempt %d  verified", at.Format("15:04:05"), env.EventType, env.EventID, env.Attempt)
		switch {
		case fwd == nil:
		case fwd.Error != "":
			fmt.Fprintf(&out, "  -> %s failed: %s", fwd.URL, fwd.Error)
		default:
			fmt.Fprintf(&out, "  -> %s %d %s", fwd.URL, fwd.Status, http.StatusText(fwd.Status))
		}
		out.WriteByte('\n')
		if json.Indent(&out, body, "", "  ") != nil {
			out.Write(body)
		}
		out.WriteString("\n\n")
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.stdout.Write(out.Bytes())
}

// logf writes a line on stderr.
func (rc *receiver) logf(format string, args ...any) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	fmt.Fprintf(rc.stderr, format+"\n", args...)
}
