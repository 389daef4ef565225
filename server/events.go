package server

import (
	"crypto/x509"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/config"
	"github.com/eudr/eudr/server/event"
	"github.com/eudr/eudr/storage"
)

// webhookPolicies builds the delivery policy of each environment from the
// config: retry schedule, and a client with or without the private-target
// guard. Production trusts the system roots plus webhooks.ca_file; the
// sandbox trusts those and devCA too, so that a listener certificate it
// issued (POST /sandbox/webhook-listener-certificate) is accepted there and
// nowhere else.
func webhookPolicies(cfg config.WebhookConfig, devCA *x509.Certificate) (map[storage.Environment]queue.Policy, error) {
	roots, err := x509.SystemCertPool()
	if err != nil || roots == nil {
		roots = x509.NewCertPool()
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("webhooks.ca_file: %w", err)
		}
		if !roots.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("webhooks.ca_file %s: no PEM certificate in it", cfg.CAFile)
		}
	}
	sandboxRoots := roots.Clone()
	sandboxRoots.AddCert(devCA)
	client := func(allowPrivate bool, roots *x509.CertPool) *http.Client {
		return queue.NewClient(queue.ClientOptions{AllowPrivate: allowPrivate, RootCAs: roots, Timeout: cfg.Timeout})
	}
	return map[storage.Environment]queue.Policy{
		storage.Production: {Schedule: cfg.RetrySchedule, Client: client(cfg.AllowPrivateTargets, roots)},
		storage.Sandbox:    {Schedule: cfg.SandboxRetrySchedule, Client: client(cfg.SandboxAllowPrivateTargets, sandboxRoots)},
	}, nil
}

type sandboxEventRequest struct {
	EventType string          `json:"eventType"`
	Data      json.RawMessage `json:"data"`
}

type sandboxEventResponse struct {
	EventID    string `json:"eventId"`
	EventType  string `json:"eventType"`
	Deliveries int    `json:"deliveries"`
}

// handleSandboxEvent publishes a test event through the real pipeline
// (queued, signed, retried, dead-lettered), so an integration can exercise
// its receiver, retries and DLQ handling. Sandbox listener only.
func (a *App) handleSandboxEvent(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	var req sandboxEventRequest
	decoded, err := decodeJSON(r, &req)
	if err != nil {
		writeError(w, r, err)
		return
	}
	var probs apierr.Problems
	switch {
	case req.EventType == "":
		probs.Add(apierr.DetailRequired, "eventType", "is required")
	case !event.IsSubscribable(req.EventType):
		probs.Add(apierr.DetailInvalidValue, "eventType", "must be one of "+strings.Join(event.Subscribable, ", "))
	}
	data := req.Data
	if len(data) == 0 || string(data) == "null" {
		data = json.RawMessage(`{}`)
	} else if data[0] != '{' {
		probs.Add(apierr.DetailInvalidValue, "data", "must be a JSON object")
	}
	if err := apierr.Merge(decoded, probs.Err()); err != nil {
		writeError(w, r, err)
		return
	}
	t := tenantFrom(r.Context())
	a.commit(w, r, func(tx *storage.Tx) (reply, error) {
		ev, n, err := a.events.Publish(tx, t, req.EventType, data)
		if err != nil {
			return reply{}, err
		}
		return reply{status: http.StatusAccepted, body: sandboxEventResponse{EventID: ev.ID, EventType: ev.Type, Deliveries: n}}, nil
	})
}
