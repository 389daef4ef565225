package server

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/webhook"
	"github.com/eudr/eudr/storage"
)

// webhookStatusRegistered is the status of every webhook the API shows.
const webhookStatusRegistered = "REGISTERED"

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

// handleWebhooksCreate registers a webhook (webhook.Register) once its
// target passed the private-target guard, which resolves the target's name
// and so runs before the transaction.
func (a *App) handleWebhooksCreate(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req webhook.Request
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	sub, err := req.Validate()
	if err := apierr.Merge(decoded, err); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	if err := a.webhooks.CheckTarget(r.Context(), t, sub.TargetURL); err != nil {
		writeError(w, r, err)
		return
	}
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		if err := a.webhooks.Register(tx, t, sub); err != nil {
			return reply{}, err
		}
		// A replay answers the secret too (unlike an API key's, which is
		// never stored): the store keeps it anyway, in the clear, to sign
		// deliveries, and a client whose first answer was lost would
		// otherwise hold a subscription whose secret it never saw.
		return reply{status: http.StatusOK, body: toWebhookResponse(sub, sub.Secret)}, nil
	})
}

func (a *App) handleWebhooksList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	page, err := parsePage(r)
	if err != nil {
		writeError(w, r, err)
		return
	}
	subs, err := a.webhooks.List(r.Context(), tenantFrom(r.Context()))
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := make([]webhookResponse, 0, len(subs))
	for _, s := range subs {
		out = append(out, toWebhookResponse(s, webhook.Redact(s.Secret)))
	}
	writePage(w, r, out, page, func(wh webhookResponse) string { return wh.WebhookID })
}

func (a *App) handleWebhooksDelete(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	err := a.db.Update(r.Context(), func(tx *storage.Tx) error {
		return a.webhooks.Delete(tx, tenantFrom(r.Context()), ps.ByName("webhookId"))
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeNoContent(w)
}

// handleWebhooksRotate gives a subscription a new signing secret: later
// deliveries, retries and replays are signed with it.
func (a *App) handleWebhooksRotate(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		sub, err := a.webhooks.Rotate(tx, t, ps.ByName("webhookId"))
		if err != nil {
			return reply{}, err
		}
		// Like the registration, a replay shows the secret of this rotation
		// (the current one unless the subscription was rotated again since).
		return reply{status: http.StatusOK, body: secretResponse{WebhookID: sub.ID, SigningSecret: sub.Secret}}, nil
	})
}

// handleWebhooksPing sends a signed webhook.ping with the standard envelope
// to the subscription now and answers {}. The attempt is in the
// subscription's delivery log.
func (a *App) handleWebhooksPing(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	if _, err := a.webhooks.Ping(r.Context(), tenantFrom(r.Context()), ps.ByName("webhookId")); err != nil {
		writeError(w, r, err)
		return
	}
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
	attempts, err := a.webhooks.Attempts(r.Context(), tenantFrom(r.Context()), ps.ByName("webhookId"), page.Limit)
	if err != nil {
		writeError(w, r, err)
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

// dlqQuery is the DLQ query of r, as written.
func dlqQuery(r *http.Request) webhook.DLQQuery {
	q := r.URL.Query()
	return webhook.DLQQuery{EventType: q.Get("eventType"), StartDate: q.Get("startDate"), EndDate: q.Get("endDate"),
		Limit: q.Get("limit"), Cursor: q.Get("cursor")}
}

// handleDLQList answers one page of the DLQ. Its cursor is a position in
// the list order (queue.DLQCursor), so the next page starts where this one
// ended, with the same filters (setNextPage keeps the query).
func (a *App) handleDLQList(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	f, err := dlqQuery(r).ListFilter()
	if err != nil {
		writeError(w, r, err)
		return
	}
	dls, more, err := a.webhooks.DeadLetters(r.Context(), tenantFrom(r.Context()), f)
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

// replayed answers a replay of n DLQ entries; acknowledged an
// acknowledgement.
func replayed(n int) reply {
	return reply{status: http.StatusOK, header: http.Header{"X-Replayed-Count": {strconv.Itoa(n)}}}
}

func acknowledged(n int) reply {
	return reply{status: http.StatusNoContent, header: http.Header{"X-Acknowledged-Count": {strconv.Itoa(n)}}}
}

func (a *App) handleDLQReplay(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		n, err := a.webhooks.ReplayEvent(tx, t, ps.ByName("eventId"))
		if err != nil {
			return reply{}, err
		}
		return replayed(n), nil
	})
}

// handleDLQReplayBulk replays by the query's filters, or by the body's
// eventIds when given; with neither, everything.
func (a *App) handleDLQReplayBulk(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	f, err := dlqQuery(r).BulkFilter()
	if err != nil {
		writeError(w, r, err)
		return
	}
	if f.EventIDs, err = optionalEventIDs(r); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		n, err := a.webhooks.Replay(tx, t, f)
		if err != nil {
			return reply{}, err
		}
		return replayed(n), nil
	})
}

func (a *App) handleDLQAck(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		n, err := a.webhooks.AcknowledgeEvent(tx, t, ps.ByName("eventId"))
		if err != nil {
			return reply{}, err
		}
		return acknowledged(n), nil
	})
}

func (a *App) handleDLQAckBulk(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req webhook.EventIDsRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if err := apierr.Merge(decoded, req.Validate()); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		n, err := a.webhooks.Acknowledge(tx, t, queue.DLQFilter{EventIDs: req.EventIDs})
		if err != nil {
			return reply{}, err
		}
		return acknowledged(n), nil
	})
}

// optionalEventIDs reads {"eventIds": [...]} when a body was sent.
func optionalEventIDs(r *http.Request) ([]string, error) {
	if r.ContentLength == 0 {
		return nil, nil
	}
	var req webhook.EventIDsRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		return nil, err
	}
	return req.EventIDs, decoded.Err()
}
