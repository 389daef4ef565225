package queue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// ErrTargetNotAllowed is returned (wrapped) when a webhook target resolves
// to an address the guard refuses. It is netguard's, which the EU system
// client shares.
var ErrTargetNotAllowed = netguard.ErrTargetNotAllowed

// ClientOptions configures the HTTP client deliveries are sent with.
type ClientOptions struct {
	// AllowPrivate lets deliveries reach loopback, link-local, multicast and
	// unspecified addresses (the sandbox default; off in production).
	AllowPrivate bool
	// RootCAs verifies receivers' certificates; nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds a whole delivery: connect, TLS, request and answer.
	Timeout time.Duration
}

// NewClient returns the client for deliveries. Its dialer checks the
// address a name resolved to at the moment of connecting (so a name that
// resolves to 127.0.0.1, or rebinds to it later, is caught too), and it
// never follows redirects: a 3xx is the answer, and a failed attempt.
func NewClient(o ClientOptions) *http.Client {
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			DialContext:           netguard.Dialer(o.AllowPrivate).DialContext,
			TLSClientConfig:       &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:   5 * time.Second,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   32, // the default 2 would reconnect for every parallel delivery
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
			// A receiver's answer headers are read into memory: bound them
			// (the transport's default is 10 MB).
			MaxResponseHeaderBytes: 64 << 10,
		},
		CheckRedirect: netguard.NoRedirects,
	}
}

// CheckTarget resolves the host of target and returns an error wrapping
// ErrTargetNotAllowed when any address it resolves to is refused
// (netguard.Refused: loopback, link-local, multicast, unspecified). A host
// that does not resolve now is not refused: the dial-time check decides
// when a delivery is sent.
func CheckTarget(ctx context.Context, target string) error {
	return netguard.CheckTarget(ctx, target)
}
