package euis

import (
	"net/http"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

// HTTPOptions configure the HTTP client of NewHTTPClient. The zero value
// is the production setting.
type HTTPOptions struct {
	// AllowPrivate lets requests reach the addresses netguard.Refused names
	// (loopback, link-local, multicast, unspecified, cloud metadata): a
	// relay on the appliance's own machine. Off, such a request fails
	// before it is sent, with an error wrapping netguard.ErrTargetNotAllowed
	// (permanent: IsTransient is false).
	AllowPrivate bool
	// Timeout bounds one call: connect, TLS, request and answer; 2 minutes
	// when 0.
	Timeout time.Duration
	// Trust is how the certificates of the configured environments' hosts
	// are checked (production's and acceptance's); other hosts, and
	// environments without a CA file or pins, are checked against the
	// system roots.
	Trust []Trust
}

// NewHTTPClient returns the client a SOAPClient should send with:
// netguard's guarded client. The endpoint may have been set by whoever
// holds an API key, and every request carries a UsernameToken made from
// the credentials, so the client checks the address a name resolved to
// when it connects (a name that resolves to 127.0.0.1 is refused too),
// follows no redirect (like every client NewSOAPClient is given), bounds
// the answer's headers, and uses no proxy (HTTPS_PROXY is ignored): the
// proxy would connect where the guard cannot see; a relay is named as the
// endpoint instead. It trusts the system roots, or for a host of o.Trust
// what that Trust says.
func NewHTTPClient(o HTTPOptions) *http.Client {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	hc := netguard.NewClient(netguard.Options{AllowPrivate: o.AllowPrivate, Timeout: o.Timeout})
	hc.Transport = withTrust(hc.Transport.(*http.Transport), o.Trust)
	return hc
}
