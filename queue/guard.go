package queue

import (
	"crypto/x509"
	"net/http"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// ClientOptions configures the HTTP client deliveries are sent with.
type ClientOptions struct {
	// AllowPrivate lets deliveries reach the addresses netguard.Refused
	// names (the sandbox default; off in production).
	AllowPrivate bool
	// RootCAs verifies receivers' certificates; nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds a whole delivery: connect, TLS, request and answer.
	Timeout time.Duration
}

// deliveryIdleConnsPerHost keeps a connection per worker to a busy
// receiver: net/http's default of 2 would reconnect for every parallel
// delivery.
const deliveryIdleConnsPerHost = 32

// NewClient returns the client for deliveries: netguard's guarded client
// (the address a name resolved to is checked when connecting, no proxy,
// no redirect: a 3xx is the answer, and a failed attempt).
func NewClient(o ClientOptions) *http.Client {
	return netguard.NewClient(netguard.Options{AllowPrivate: o.AllowPrivate, RootCAs: o.RootCAs,
		Timeout: o.Timeout, IdleConnsPerHost: deliveryIdleConnsPerHost})
}
