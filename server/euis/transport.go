package euis

import (
	"crypto/tls"
	"net/http"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// HTTPOptions configure the HTTP client of NewHTTPClient. The zero value
// is the production setting.
type HTTPOptions struct {
	// AllowPrivate lets requests reach loopback, link-local, multicast and
	// unspecified addresses (netguard.Refused): a relay on the appliance's
	// own machine. Off, such a request fails before it is sent, with an
	// error wrapping netguard.ErrTargetNotAllowed (permanent: IsTransient
	// is false).
	AllowPrivate bool
	// Timeout bounds one call: connect, TLS, request and answer; 2 minutes
	// when 0.
	Timeout time.Duration
}

// NewHTTPClient returns the client a SOAPClient should send with. The
// endpoint may have been set by whoever holds an API key, and every request
// carries a UsernameToken made from the credentials, so the client checks
// the address a name resolved to when it connects (a name that resolves to
// 127.0.0.1 is refused too) and, like every client NewSOAPClient is given,
// follows no redirect. It uses no proxy (HTTPS_PROXY is ignored): the
// proxy would connect where the guard cannot see; a relay is named as the
// endpoint instead.
func NewHTTPClient(o HTTPOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			DialContext:           netguard.Dialer(o.AllowPrivate).DialContext,
			TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
			TLSHandshakeTimeout:   10 * time.Second,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
			ExpectContinueTimeout: time.Second,
		},
		CheckRedirect: netguard.NoRedirects,
	}
}
