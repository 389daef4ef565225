package webhook

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/eudr/eudr/queue"
	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/event"
)

// MaxTargetURLLen is the longest target URL a webhook may have (the
// OpenAPI document states it too).
const MaxTargetURLLen = 2048

// Request is the body of POST /webhooks.
type Request struct {
	TargetURL  string   `json:"targetUrl"`
	EventTypes []string `json:"eventTypes"`
}

// Validate checks the registration and returns the subscription it asks
// for, with its event types normalised (each once, in the order first
// given); Register gives it the rest. It returns every problem found as
// one apierr 400.
func (req *Request) Validate() (*queue.Subscription, error) {
	var probs apierr.Problems
	switch u, err := url.Parse(req.TargetURL); {
	case req.TargetURL == "":
		probs.Add(apierr.DetailRequired, "targetUrl", "is required")
	case len(req.TargetURL) > MaxTargetURLLen:
		probs.Add(apierr.DetailInvalidValue, "targetUrl", fmt.Sprintf("must be at most %d bytes", MaxTargetURLLen))
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
	return &queue.Subscription{TargetURL: req.TargetURL, EventTypes: types}, probs.Err()
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

// EventIDsRequest is the body of the bulk DLQ actions: the events whose
// entries to replay or acknowledge.
type EventIDsRequest struct {
	EventIDs []string `json:"eventIds"`
}

// Validate checks a request that must name events (the bulk
// acknowledgement, which never applies to the whole DLQ); it returns an
// apierr 400 when it names none.
func (req *EventIDsRequest) Validate() error {
	var probs apierr.Problems
	if len(req.EventIDs) == 0 {
		probs.Add(apierr.DetailRequired, "eventIds", "must list at least one eventId")
	}
	return probs.Err()
}
