package queue

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/queue/webhooksig"
)

// Error classes of a failed Attempt.
const (
	ErrorClassTimeout          = "timeout"
	ErrorClassConnection       = "connection"
	ErrorClassTLS              = "tls"
	ErrorClassTargetNotAllowed = "target_not_allowed"
	ErrorClassHTTPStatus       = "http_status"
	ErrorClassRedirect         = "redirect"
)

const (
	// responseBodyMax is how much of a receiver's answer an Attempt keeps.
	responseBodyMax = 4 << 10
	// responseDrainMax is how much more of an answer is read (and dropped) so the
	// connection can be reused; a longer answer closes it.
	responseDrainMax = 64 << 10
	// envelopeTimeLayout is RFC 3339 in UTC with milliseconds.
	envelopeTimeLayout = "2006-01-02T15:04:05.000Z07:00"
	webhookUserAgent   = "eudr-webhooks/1"
)

// Send delivers ev to sub once, synchronously and outside the queue (the
// ping), logs the attempt in sub's log and returns it. The envelope has
// attempt 0 and no nextRetry.
func (d *Dispatcher) Send(ctx context.Context, sub *Subscription, ev Event) Attempt {
	a := d.send(ctx, d.policy(sub.Scope).Client, sub, ev, 0, d.now(), nil)
	if err := d.db.Update(func(tx *bolt.Tx) error { return appendAttempt(tx, sub.ID, &a) }); err != nil {
		d.errs.report(d.log, err, "record delivery attempt")
	}
	return a
}

// webhookEnvelope is the body of a delivery (docs/webhooks.md).
type webhookEnvelope struct {
	EventType string          `json:"eventType"`
	EventID   string          `json:"eventId"`
	Timestamp string          `json:"timestamp"`
	Attempt   int             `json:"attempt"`
	NextRetry string          `json:"nextRetry,omitempty"`
	Data      json.RawMessage `json:"data"`
}

func formatEnvelopeTime(t time.Time) string { return t.UTC().Format(envelopeTimeLayout) }

// send makes attempt n of ev to sub, starting at now, and returns it, with
// ErrorClass "" on a 2xx answer.
func (d *Dispatcher) send(ctx context.Context, client *http.Client, sub *Subscription, ev Event, n int, now time.Time, next *time.Time) Attempt {
	a := d.sendOnce(ctx, client, sub, ev, n, now, next)
	a.Error = capError(a.Error)
	return a
}

// sendOnce makes one delivery request and describes how it went.
func (d *Dispatcher) sendOnce(ctx context.Context, client *http.Client, sub *Subscription, ev Event, n int, now time.Time, next *time.Time) Attempt {
	a := Attempt{EventID: ev.ID, EventType: ev.Type, Attempt: n, At: now}
	env := webhookEnvelope{EventType: ev.Type, EventID: ev.ID, Timestamp: formatEnvelopeTime(ev.Timestamp), Attempt: n, Data: ev.Data}
	if next != nil {
		env.NextRetry = formatEnvelopeTime(*next)
	}
	if len(env.Data) == 0 {
		env.Data = json.RawMessage(`{}`)
	}
	body, err := json.Marshal(env)
	if err != nil {
		a.ErrorClass, a.Error = ErrorClassConnection, "encode envelope: "+err.Error()
		return a
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, sub.TargetURL, bytes.NewReader(body))
	if err != nil {
		a.ErrorClass, a.Error = ErrorClassConnection, err.Error()
		return a
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", webhookUserAgent)
	h.Set(webhooksig.HeaderSignature, webhooksig.Sign(sub.Secret, body))
	h.Set(webhooksig.HeaderEventID, ev.ID)
	h.Set(webhooksig.HeaderEventType, ev.Type)
	h.Set(webhooksig.HeaderWebhookID, ev.ID)
	h.Set(webhooksig.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(webhooksig.HeaderWebhookSignature, webhooksig.SignStandard(sub.Secret, ev.ID, now, body))

	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		a.LatencyMs = elapsedMs(start)
		a.ErrorClass, a.Error = classifySendError(err), err.Error()
		return a
	}
	// A read error (the timeout striking mid-answer) leaves what was read:
	// the status has arrived and decides.
	kept, _ := io.ReadAll(io.LimitReader(resp.Body, responseBodyMax))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrainMax))
	resp.Body.Close()
	a.LatencyMs = elapsedMs(start)
	a.Status = resp.StatusCode
	a.ResponseBody = string(kept)
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		a.ErrorClass = ErrorClassRedirect
		a.Error = fmt.Sprintf("HTTP %d: redirect not followed", resp.StatusCode)
		if loc := resp.Header.Get("Location"); loc != "" {
			a.Error += " (to " + loc + ")"
		}
	case resp.StatusCode < 200 || resp.StatusCode >= 300:
		a.ErrorClass = ErrorClassHTTPStatus
		a.Error = fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return a
}

// errorMax bounds an attempt's error text, which the receiver partly
// writes (a Location, a TLS alert) and which is logged and stored.
const errorMax = 512

// capError cuts an attempt's error text to errorMax bytes.
func capError(s string) string {
	if len(s) <= errorMax {
		return s
	}
	return strings.ToValidUTF8(s[:errorMax], "") + "..."
}

func elapsedMs(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }

// classifySendError names the class of a transport error.
func classifySendError(err error) string {
	var ne net.Error
	var certErr *tls.CertificateVerificationError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalid x509.CertificateInvalidError
	var recErr tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.Is(err, netguard.ErrTargetNotAllowed):
		return ErrorClassTargetNotAllowed
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return ErrorClassTimeout
	case errors.As(err, &certErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		errors.As(err, &invalid), errors.As(err, &recErr), errors.As(err, &alert),
		strings.Contains(err.Error(), "tls: "):
		return ErrorClassTLS
	default:
		return ErrorClassConnection
	}
}
