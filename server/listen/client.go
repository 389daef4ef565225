package listen

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/eudr/eudr/server/apierr"
)

// eudrPrefix is where the EUDR API's paths start.
const eudrPrefix = "/api/v1/enterprise/eudr"

// Paths of the calls the command makes, under eudrPrefix.
const (
	certificatePath = "/sandbox/webhook-listener-certificate"
	webhooksPath    = "/webhooks"
)

// client calls the sandbox's API with the command's key.
type client struct {
	base, key, userAgent string
	http                 *http.Client
}

func newClient(o Options) *client {
	return &client{base: o.BaseURL, key: o.APIKey, userAgent: "eudr-webhooks-listen/" + o.Version,
		http: &http.Client{Timeout: 30 * time.Second}}
}

// issuedCertificate is the part of the certificate endpoint's answer the
// receiver uses.
type issuedCertificate struct {
	Certificate string `json:"certificate"`
	PrivateKey  string `json:"privateKey"`
}

// subscription is the answer to POST /webhooks.
type subscription struct {
	WebhookID     string   `json:"webhookId"`
	EventTypes    []string `json:"eventTypes"`
	SigningSecret string   `json:"signingSecret"`
}

// listenerCertificate asks for a listener certificate that names hosts
// besides the loopback ones.
func (c *client) listenerCertificate(ctx context.Context, hosts []string) (*issuedCertificate, error) {
	var out issuedCertificate
	err := c.call(ctx, http.MethodPost, certificatePath, "", map[string]any{"hostnames": hosts}, &out)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusNotFound {
		return nil, fmt.Errorf("%w\n  %s is not a sandbox listener of this version (production has no such route): --url or EUDR_URL names the sandbox, by default %s", err, c.base, DefaultURL)
	}
	return &out, err
}

// subscribe registers target for events, with an Idempotency-Key of its
// own.
func (c *client) subscribe(ctx context.Context, target string, events []string) (*subscription, error) {
	idem := make([]byte, 16)
	if _, err := rand.Read(idem); err != nil {
		return nil, err
	}
	var out subscription
	err := c.call(ctx, http.MethodPost, webhooksPath, "listen-"+hex.EncodeToString(idem),
		map[string]any{"targetUrl": target, "eventTypes": events}, &out)
	var ae *apiError
	if errors.As(err, &ae) && ae.hasDetail(apierr.DetailTargetNotAllowed) {
		return nil, fmt.Errorf("%w\n  the sandbox refuses loopback targets: set webhooks.sandbox_allow_private_targets to true (the default)", err)
	}
	return &out, err
}

// unsubscribe deletes the subscription; one already gone is fine.
func (c *client) unsubscribe(ctx context.Context, id string) error {
	err := c.call(ctx, http.MethodDelete, webhooksPath+"/"+id, "", nil, nil)
	var ae *apiError
	if errors.As(err, &ae) && ae.status == http.StatusNotFound {
		return nil
	}
	return err
}

// call sends one request and decodes a 2xx answer into out; any other
// answer is an *apiError.
func (c *client) call(ctx context.Context, method, path, idemKey string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+eudrPrefix+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", c.key)
	req.Header.Set("User-Agent", c.userAgent)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if idemKey != "" {
		req.Header.Set("Idempotency-Key", idemKey)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w (is the sandbox running at %s? --url or EUDR_URL)", method, path, err, c.base)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode/100 != 2 {
		ae := &apiError{method: method, path: path, status: resp.StatusCode}
		if json.Unmarshal(data, &ae.env) != nil || ae.env.Code == "" {
			ae.env.Message = strings.TrimSpace(string(data))
		}
		return ae
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: the answer is not what was expected: %w", method, path, err)
	}
	return nil
}

// apiError is a non-2xx answer, with its error envelope.
type apiError struct {
	method, path string
	status       int
	env          apierr.Error
}

func (e *apiError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %d", e.method, e.path, e.status)
	if e.env.Code != "" {
		b.WriteString(" " + e.env.Code)
	}
	if e.env.Message != "" {
		b.WriteString(": " + e.env.Message)
	}
	for _, d := range e.env.Details {
		fmt.Fprintf(&b, "\n  %s: %s: %s", d.Field, d.Code, d.Issue)
	}
	return b.String()
}

func (e *apiError) hasDetail(code string) bool {
	for _, d := range e.env.Details {
		if d.Code == code {
			return true
		}
	}
	return false
}
