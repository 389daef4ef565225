package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/queue/webhooksig"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// Webhook detail codes.
const (
	webhookStatusRegistered = "REGISTERED"
	maxTargetURLLen         = 2048
)

type webhookRequest struct {
	TargetURL  string   `json:"targetUrl"`
	EventTypes []string `json:"eventTypes"`
}

type webhookResponse struct {
	WebhookID     string   `json:"webhookId"`
	Status        string   `json:"status"`
	TargetURL     string   `json:"targetUrl"`
	EventTypes    []string `json:"eventTypes"`
	SigningSecret string   `json:"signingSecret"`
	CreatedAt     string   `json:"createdAt"`
}

type secretResponse struct {
	WebhookID     string `json:"webhookId"`
	SigningSecret string `json:"signingSecret"`
}

func toWebhookResponse(s *queue.Subscription, secret string) webhookResponse {
	return webhookResponse{WebhookID: s.ID, Status: webhookStatusRegistered, TargetURL: s.TargetURL,
		EventTypes: s.EventTypes, SigningSecret: secret, CreatedAt: storage.FormatTime(s.CreatedAt)}
}

// redactSecret shows a secret as whsec_**** and its last four characters
// (API.md section 9).
func redactSecret(secret string) string {
	if len(secret) < 4 {
		return webhooksig.SecretPrefix + "****"
	}
	return webhooksig.SecretPrefix + "****" + secret[len(secret)-4:]
}

// validate checks the registration and returns the normalised event types.
func (req *webhookRequest) validate() ([]string, error) {
	var probs apierr.Problems
	switch u, err := url.Parse(req.TargetURL); {
	case req.TargetURL == "":
		probs.Add(apierr.DetailRequired, "targetUrl", "is required")
	case len(req.TargetURL) > maxTargetURLLen:
		probs.Add(apierr.DetailInvalidValue, "targetUrl", fmt.Sprintf("must be at most %d bytes", maxTargetURLLen))
	case !strings.HasPrefix(req.TargetURL, "https://"):
		probs.Add(apierr.DetailInvalidValue, "targetUrl", "must be an https:// URL; plain HTTP is refused")
	case err != nil || u.Host == "" || u.Hostname() == "":
		probs.Add(apierr.DetailInvalidValue, "targetUrl", "must be an absolute https:// URL with a host")
	case u.User != nil:
		probs.Add(apierr.DetailInvalidValue, "targetUrl", "must not carry credentials; deliveries are authenticated by their signature")
	case u.Fragment != "":
		probs.Add(apierr.DetailInvalidValue, "targetUrl", "must not have a #fragment")
	}
	var types []string
	if len(req.EventTypes) == 0 {
		probs.Add(apierr.DetailRequired, "eventTypes", "must list at least one event type")
	}
	for i, et := range req.EventTypes {
		if !event.IsSubscribable(et) {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("eventTypes[%d]", i),
				fmt.Sprintf("unsupported event type %q; one of %s", et, strings.Join(event.Subscribable, ", ")))
			continue
		}
		if !slices.Contains(types, et) {
			types = append(types, et)
		}
	}
	return types, probs.Err()
}

// canonicalTarget is the form in which two target URLs are compared for
// duplicates: scheme and host in lower case, without the default port.
func canonicalTarget(target string) string {
	u, err := url.Parse(target)
	if err != nil {
		return target
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	if u.Port() == "443" {
		u.Host = u.Hostname()
		if strings.Contains(u.Host, ":") {
			u.Host = "[" + u.Host + "]"
		}
	}
	return u.String()
}

func (a *App) handleWebhooksCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req webhookRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	types, err := req.validate()
	if err := mergeProblems(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	if !a.allowPrivateTargets(t.Env) {
		if err := netguard.CheckTarget(r.Context(), req.TargetURL); errors.Is(err, netguard.ErrTargetNotAllowed) {
			writeError(w, r, apierr.Validation(apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: "targetUrl",
				Issue: "the target resolves to a loopback, link-local, multicast or unspecified address, which " + string(t.Env) + " does not deliver to"}))
			return
		}
	}
	secret, err := webhooksig.NewSecret()
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		subs, err := queue.FindSubscriptions(tx.Tx, event.Scope(t))
		if err != nil {
			return reply{}, err
		}
		target := canonicalTarget(req.TargetURL)
		for _, s := range subs {
			if canonicalTarget(s.TargetURL) != target {
				continue
			}
			for _, et := range types {
				if slices.Contains(s.EventTypes, et) {
					return reply{}, apierr.Conflict(apierr.DetailWebhookDuplicate, "eventTypes",
						fmt.Sprintf("webhook %s already delivers %s to this URL", s.ID, et))
				}
			}
		}
		sub := &queue.Subscription{ID: storage.NewID("wh", tx.Now()), Scope: event.Scope(t), TargetURL: req.TargetURL,
			EventTypes: types, Secret: secret, CreatedAt: tx.Now()}
		if err := queue.PutSubscription(tx.Tx, sub); err != nil {
			return reply{}, err
		}
		// A replay answers the secret too (unlike an API key's, which is
		// never stored): the store keeps it anyway, in the clear, to sign
		// deliveries, and a client whose first answer was lost would
		// otherwise hold a subscription whose secret it never saw.
		return reply{status: http.StatusOK, body: toWebhookResponse(sub, secret)}, nil
	})
}

func (a *App) handleWebhooksList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var subs []*queue.Subscription
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		subs, err = queue.FindSubscriptions(tx.Tx, event.Scope(tenantFrom(r.Context())))
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]webhookResponse, 0, len(subs))
	for _, s := range subs {
		out = append(out, toWebhookResponse(s, redactSecret(s.Secret)))
	}
	writePage(w, r, out, page, func(wh webhookResponse) string { return wh.WebhookID })
}

func (a *App) handleWebhooksDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return queue.DeleteSubscription(tx.Tx, event.Scope(tenantFrom(r.Context())), ps.ByName("webhookId"))
	})
	if err != nil {
		writeError(w, r, webhookError(err, ps.ByName("webhookId")))
		return
	}
	writeNoContent(w)
}

// handleWebhooksRotate gives a subscription a new signing secret: later
// deliveries, retries and replays are signed with it.
func (a *App) handleWebhooksRotate(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	secret, err := webhooksig.NewSecret()
	if err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		sub, err := queue.FindSubscription(tx.Tx, event.Scope(tenantFrom(r.Context())), ps.ByName("webhookId"))
		if err != nil {
			return reply{}, webhookError(err, ps.ByName("webhookId"))
		}
		sub.Secret = secret
		if err := queue.PutSubscription(tx.Tx, sub); err != nil {
			return reply{}, err
		}
		// Like the registration, a replay shows the secret of this rotation
		// (the current one unless the subscription was rotated again since).
		return reply{status: http.StatusOK, body: secretResponse{WebhookID: sub.ID, SigningSecret: secret}}, nil
	})
}

// handleWebhooksPing sends a signed webhook.ping with the standard envelope
// to the subscription now and answers {}. The attempt is in the
// subscription's delivery log.
func (a *App) handleWebhooksPing(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	var sub *queue.Subscription
	err := a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		sub, err = queue.FindSubscription(tx.Tx, event.Scope(t), ps.ByName("webhookId"))
		return err
	})
	if err != nil {
		writeError(w, r, webhookError(err, ps.ByName("webhookId")))
		return
	}
	now := a.now().UTC()
	ev := queue.Event{ID: storage.NewID("evt", now), Scope: event.Scope(t), Type: event.WebhookPing, Timestamp: now,
		Data: []byte(`{"webhookId":"` + sub.ID + `"}`)}
	a.dispatcher.Send(r.Context(), sub, ev)
	writeJSON(w, r, http.StatusOK, struct{}{})
}

type attemptResponse struct {
	EventID      string  `json:"eventId"`
	EventType    string  `json:"eventType"`
	Attempt      int     `json:"attempt"`
	Status       int     `json:"status"`
	LatencyMs    float64 `json:"latencyMs"`
	ErrorClass   string  `json:"errorClass"`
	Error        string  `json:"error"`
	ResponseBody string  `json:"responseBody"`
	At           string  `json:"at"`
	NextRetry    *string `json:"nextRetry"`
	DeadLettered bool    `json:"deadLettered"`
}

func (a *App) handleWebhooksDeliveries(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var attempts []queue.Attempt
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		attempts, err = queue.FindAttempts(tx.Tx, event.Scope(tenantFrom(r.Context())), ps.ByName("webhookId"), page.Limit)
		return err
	})
	if err != nil {
		writeError(w, r, webhookError(err, ps.ByName("webhookId")))
		return
	}
	out := make([]attemptResponse, 0, len(attempts))
	for _, at := range attempts {
		out = append(out, attemptResponse{EventID: at.EventID, EventType: at.EventType, Attempt: at.Attempt,
			Status: at.Status, LatencyMs: at.LatencyMs, ErrorClass: at.ErrorClass, Error: at.Error,
			ResponseBody: at.ResponseBody, At: storage.FormatTime(at.At), NextRetry: storage.FormatTimePtr(at.NextRetry),
			DeadLettered: at.DeadLettered})
	}
	writeJSON(w, r, http.StatusOK, out)
}

func webhookError(err error, id string) error {
	if errors.Is(err, queue.ErrNotFound) {
		return apierr.NotFound{Kind: "webhook", ID: id}
	}
	return err
}

// DLQ

type dlqMessage struct {
	EventType  string          `json:"eventType"`
	EventID    string          `json:"eventId"`
	Attempts   int             `json:"attempts"`
	WebhookID  string          `json:"webhookId"`
	TargetURL  string          `json:"targetUrl"`
	LastError  string          `json:"lastError"`
	LastStatus *int            `json:"lastStatus"`
	FailedAt   string          `json:"failedAt"`
	Timestamp  string          `json:"timestamp"`
	Data       json.RawMessage `json:"data"`
}

type dlqListResponse struct {
	RetrievedCount int          `json:"retrievedCount"`
	Messages       []dlqMessage `json:"messages"`
}

type dlqEventIDs struct {
	EventIDs []string `json:"eventIds"`
}

// parseDLQFilter reads eventType, startDate and endDate (RFC 3339, or a
// date: startDate from its first instant, endDate to its last) and limit,
// and for a list (paged) its cursor.
func parseDLQFilter(r *http.Request, paged bool) (queue.DLQFilter, error) {
	q := r.URL.Query()
	f := queue.DLQFilter{EventType: q.Get("eventType")}
	var probs apierr.Problems
	if f.EventType != "" && !event.IsSubscribable(f.EventType) {
		probs.Add(apierr.DetailInvalidValue, "query.eventType", "must be one of "+strings.Join(event.Subscribable, ", "))
	}
	for _, p := range []struct {
		name string
		dst  *time.Time
		end  bool
	}{{"startDate", &f.Start, false}, {"endDate", &f.End, true}} {
		s := q.Get(p.name)
		if s == "" {
			continue
		}
		t, err := parseDate(s, p.end)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, "query."+p.name, "must be an ISO 8601 date (2026-11-20) or date-time (2026-11-20T10:15:30Z)")
			continue
		}
		*p.dst = t
	}
	if !f.Start.IsZero() && !f.End.IsZero() && f.End.Before(f.Start) {
		probs.Add(apierr.DetailInvalidValue, "query.endDate", "must not be before startDate")
	}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxPageLimit {
			probs.Add(apierr.DetailInvalidValue, "query.limit", fmt.Sprintf("must be an integer from 1 to %d", maxPageLimit))
		} else {
			f.Limit = n
		}
	}
	if s := q.Get("cursor"); paged && s != "" {
		c, err := queue.ParseDLQCursor(s)
		if err != nil {
			probs.Add(apierr.DetailInvalidValue, "query.cursor", "must be the X-Next-Cursor of a page of this list")
		} else {
			f.After = &c
		}
	}
	return f, probs.Err()
}

// parseDate reads an RFC 3339 date-time or a date. An end bound covers the
// whole last unit written: the whole day of a date, the whole millisecond of
// a date-time (the resolution times are shown in), so an endDate copied from
// a listing includes that entry.
func parseDate(s string, end bool) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		if end && t.Nanosecond()%int(time.Millisecond) == 0 {
			t = t.Add(time.Millisecond - time.Nanosecond)
		}
		return t, nil
	}
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}, err
	}
	if end {
		t = t.Add(24*time.Hour - time.Nanosecond)
	}
	return t, nil
}

// handleDLQList answers one page of the DLQ. Its cursor is a position in
// the list order (queue.DLQCursor), so the next page starts where this one
// ended, with the same filters (setNextPage keeps the query).
func (a *App) handleDLQList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	f, err := parseDLQFilter(r, true)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if f.Limit == 0 {
		f.Limit = defaultPageLimit
	}
	var dls []queue.DeadLetter
	var more bool
	err = a.db.View(r.Context(), func(tx *storage.Tx) error {
		var err error
		dls, more, err = queue.FindDeadLetterPage(tx.Tx, event.Scope(tenantFrom(r.Context())), f)
		return err
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if more {
		setNextPage(w, r, storage.Page{Limit: f.Limit}, dls[len(dls)-1].Cursor().String())
	}
	out := dlqListResponse{RetrievedCount: len(dls), Messages: make([]dlqMessage, 0, len(dls))}
	for _, d := range dls {
		m := dlqMessage{EventType: d.EventType, EventID: d.EventID, Attempts: d.Attempts, WebhookID: d.SubscriptionID,
			TargetURL: d.TargetURL, LastError: d.LastError, FailedAt: storage.FormatTime(d.FailedAt),
			Timestamp: storage.FormatTime(d.Timestamp), Data: d.Data}
		if len(m.Data) == 0 {
			m.Data = json.RawMessage(`{}`)
		}
		if d.LastStatus != 0 {
			m.LastStatus = &d.LastStatus
		}
		out.Messages = append(out.Messages, m)
	}
	writeJSON(w, r, http.StatusOK, out)
}

// dlqAction runs a replay or acknowledgement in one transaction and answers
// with the count in a header: 404 when it applied to nothing and a single
// event was named.
func (a *App) dlqAction(w http.ResponseWriter, r *http.Request, f queue.DLQFilter, single bool, replay bool) {
	header, status := "X-Acknowledged-Count", http.StatusNoContent
	if replay {
		header, status = "X-Replayed-Count", http.StatusOK
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		var n int
		var err error
		if replay {
			n, err = queue.ReplayDeadLetters(tx.Tx, event.Scope(t), f, tx.Now())
		} else {
			n, err = queue.AckDeadLetters(tx.Tx, event.Scope(t), f)
		}
		if err != nil {
			return reply{}, err
		}
		if n == 0 && single {
			return reply{}, apierr.NotFound{Kind: "dead-lettered event", ID: f.EventIDs[0]}
		}
		return reply{status: status, header: http.Header{header: {strconv.Itoa(n)}}}, nil
	})
}

func (a *App) handleDLQReplay(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.dlqAction(w, r, queue.DLQFilter{EventIDs: []string{ps.ByName("eventId")}}, true, true)
}

// handleDLQReplayBulk replays by the query's filters, or by the body's
// eventIds when given; with neither, everything.
func (a *App) handleDLQReplayBulk(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	f, err := parseDLQFilter(r, false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ids, err := optionalEventIDs(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	f.EventIDs = ids
	a.dlqAction(w, r, f, false, true)
}

func (a *App) handleDLQAck(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.dlqAction(w, r, queue.DLQFilter{EventIDs: []string{ps.ByName("eventId")}}, true, false)
}

func (a *App) handleDLQAckBulk(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req dlqEventIDs
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var probs apierr.Problems
	if len(req.EventIDs) == 0 {
		probs.Add(apierr.DetailRequired, "eventIds", "must list at least one eventId")
	}
	if err := mergeProblems(decoded, probs.Err()); err != nil {
		writeError(w, r, err)
		return
	}
	a.dlqAction(w, r, queue.DLQFilter{EventIDs: req.EventIDs}, false, false)
}

// optionalEventIDs reads {"eventIds": [...]} when a body was sent.
func optionalEventIDs(r *http.Request) ([]string, error) {
	if r.ContentLength == 0 {
		return nil, nil
	}
	var req dlqEventIDs
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		return nil, err
	}
	return req.EventIDs, decoded.Err()
}
