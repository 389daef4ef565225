// Package webhooksig signs and verifies the appliance's webhook deliveries.
// The dispatcher signs with it and receivers verify with it, so both sides
// share one implementation of each scheme.
//
// Every delivery carries two signatures made with the subscription's signing
// secret (the whsec_... string shown at registration and rotation):
//
//   - X-Service-Signature: hex HMAC-SHA256 of the raw request body, keyed by
//     the whole secret string (docs/webhooks.md). It proves who sent the
//     body but not when: a captured request can be replayed.
//   - Standard Webhooks (https://www.standardwebhooks.com): webhook-id (the
//     eventId), webhook-timestamp (Unix seconds) and webhook-signature
//     ("v1,<base64 HMAC-SHA256 of id.timestamp.body>", keyed by the bytes the
//     secret encodes after its whsec_ prefix). The signed timestamp lets a
//     receiver refuse replays outside a tolerance, and the id deduplicates.
//
// A receiver reads the raw body before parsing it and calls Verify (the
// body scheme) or VerifyStandard (replay-protected); both compare in
// constant time. Standard Webhooks libraries in other languages take the
// secret as StandardSecret returns it.
package webhooksig

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Header names of a delivery.
const (
	HeaderSignature        = "X-Service-Signature"
	HeaderEventID          = "X-Service-Event-Id"
	HeaderEventType        = "X-Service-Event-Type"
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"
)

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// DefaultTolerance is how far a webhook-timestamp may be from the
// receiver's clock, as Standard Webhooks and Stripe recommend.
const DefaultTolerance = 5 * time.Minute

var (
	// ErrNoSignature is returned when the signature header is missing.
	ErrNoSignature = errors.New("webhooksig: signature header missing")
	// ErrMismatch is returned when no signature matches the body.
	ErrMismatch = errors.New("webhooksig: signature does not match")
	// ErrTimestamp is returned when webhook-timestamp is missing, malformed
	// or outside the tolerance.
	ErrTimestamp = errors.New("webhooksig: timestamp outside tolerance")
)

// NewSecret returns a new signing secret: whsec_ and 32 random bytes in
// unpadded base64url.
func NewSecret() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return SecretPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// Sign returns the X-Service-Signature of body: hex HMAC-SHA256 keyed by
// the secret string.
func Sign(secret string, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	return hex.EncodeToString(m.Sum(nil))
}

// Verify checks an X-Service-Signature value against the raw body in
// constant time.
func Verify(secret string, body []byte, signature string) error {
	if signature == "" {
		return ErrNoSignature
	}
	got, err := hex.DecodeString(strings.TrimSpace(signature))
	if err != nil {
		return ErrMismatch
	}
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	if !hmac.Equal(got, m.Sum(nil)) {
		return ErrMismatch
	}
	return nil
}

// standardKey is the HMAC key of the Standard Webhooks scheme: the bytes
// the secret encodes after its prefix (base64url or standard base64,
// padded or not), or the secret's own bytes when it encodes none.
func standardKey(secret string) []byte {
	s := strings.TrimPrefix(secret, SecretPrefix)
	for _, enc := range []*base64.Encoding{base64.RawURLEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.StdEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return b
		}
	}
	return []byte(secret)
}

// StandardSecret is the secret in the form Standard Webhooks libraries take:
// whsec_ and the key bytes in standard base64.
func StandardSecret(secret string) string {
	return SecretPrefix + base64.StdEncoding.EncodeToString(standardKey(secret))
}

// SignStandard returns the webhook-signature value for a message.
func SignStandard(secret, msgID string, ts time.Time, body []byte) string {
	return "v1," + base64.StdEncoding.EncodeToString(standardMAC(secret, msgID, ts.Unix(), body))
}

func standardMAC(secret, msgID string, unix int64, body []byte) []byte {
	m := hmac.New(sha256.New, standardKey(secret))
	fmt.Fprintf(m, "%s.%d.", msgID, unix)
	m.Write(body)
	return m.Sum(nil)
}

// VerifyStandard checks the Standard Webhooks headers of a delivery against
// its raw body: the timestamp within tolerance of now, and one of the
// space-separated v1 signatures matching in constant time.
func VerifyStandard(secret string, h http.Header, body []byte, tolerance time.Duration, now time.Time) error {
	sigs := h.Get(HeaderWebhookSignature)
	if sigs == "" {
		return ErrNoSignature
	}
	unix, err := strconv.ParseInt(h.Get(HeaderWebhookTimestamp), 10, 64)
	if err != nil {
		return ErrTimestamp
	}
	if d := now.Sub(time.Unix(unix, 0)); d > tolerance || d < -tolerance {
		return ErrTimestamp
	}
	want := standardMAC(secret, h.Get(HeaderWebhookID), unix, body)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(sig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrMismatch
}
