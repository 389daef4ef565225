package netguard

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"time"
)

// Options configure NewClient's client. The zero value is a guarded
// client that trusts the system roots.
type Options struct {
	// AllowPrivate lets requests reach the addresses Refused names: a
	// receiver or relay on the appliance's own machine.
	AllowPrivate bool
	// RootCAs verifies servers' certificates; nil means the system roots.
	RootCAs *x509.CertPool
	// Timeout bounds one request: connect, TLS, request and answer; 30 s
	// when 0.
	Timeout time.Duration
	// IdleConnsPerHost is how many idle connections are kept per host; 2
	// (net/http's default) when 0. A caller sending many requests at once
	// to one host raises it, or each would open its own connection.
	IdleConnsPerHost int
}

// MaxResponseHeaderBytes bounds the headers of an answer, which are read
// into memory whole (net/http's default is 10 MB): a server an API key
// named may send as many as it likes.
const MaxResponseHeaderBytes = 64 << 10

// NewClient returns an HTTP client for requests to URLs that an API key may
// have set. Unless o.AllowPrivate, its dialer refuses the addresses Refused
// names, checked on the address a name resolved to when connecting (an
// error wrapping ErrTargetNotAllowed). It uses no proxy, whatever
// HTTPS_PROXY says: the guard would check the proxy's address instead of
// the target's, and the proxy would connect where the guard cannot see (a
// relay is named as the URL instead). It follows no redirect (a 3xx is the
// answer), speaks TLS 1.2 or later, and bounds the answer's headers
// (MaxResponseHeaderBytes).
func NewClient(o Options) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer(o.AllowPrivate).DialContext,
			TLSClientConfig:        &tls.Config{RootCAs: o.RootCAs, MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:    10 * time.Second,
			ForceAttemptHTTP2:      true, // a custom DialContext turns HTTP/2 off otherwise
			MaxIdleConns:           256,
			MaxIdleConnsPerHost:    o.IdleConnsPerHost,
			IdleConnTimeout:        90 * time.Second,
			ExpectContinueTimeout:  time.Second,
			MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		},
		CheckRedirect: NoRedirects,
	}
}
