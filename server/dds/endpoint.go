package dds

import (
	"net/netip"
	"net/url"
	"slices"

	"github.com/eudr/eudr/queue/netguard"
	"github.com/eudr/eudr/server/apierr"
)

// Where the EU system client may send depends on who set the endpoint
// (docs/dds.md, "Where EU system requests may go"). Every request carries a UsernameToken
// made from the organisation's key, and the answer may end up in a job's
// error, so an endpoint is a target for the token and for requests into
// the appliance's network.
//
//   - The configured endpoints (Endpoints.Production and Acceptance) are
//     the operator's: an http or https URL. Plain http is for the relay of
//     an air-gapped site, on this machine or its network, which the
//     operator answers for.
//   - A URL given with the credentials is whoever holds a write key's:
//     https only, so that the token goes over TLS to a host that proves its
//     name. A stored one that breaks this (set before the rule) fails a
//     submission before anything is sent.
//   - Neither carries a user name or password: it would be sent as Basic
//     authentication beside the token, and shown as effectiveEndpoint.
//   - Every request, whoever set its endpoint, dials through the address
//     guard (euis.NewHTTPClient): loopback, link-local (the cloud metadata
//     services), multicast and unspecified addresses are refused unless
//     AllowPrivate; private networks (RFC 1918) are allowed, as for
//     webhooks. An address literal the guard would refuse is refused when
//     the endpoint is set, a configured one at start with localhost names
//     too (no DNS at start), and for credentials a name that resolves to
//     one as well; the dial-time check is the one that holds.

// Endpoints are the EU system's URLs the operator configured, and whether
// its client may reach a relay on this machine.
type Endpoints struct {
	// Production is the EU system's base URL (or a relay of an air-gapped
	// site); Acceptance its acceptance (training) environment's.
	Production string
	Acceptance string
	// AllowPrivate lets calls reach loopback, link-local, multicast and
	// unspecified addresses.
	AllowPrivate bool
}

// Names credentials may give as their endpoint instead of a URL.
const (
	EndpointProduction = "production"
	EndpointAcceptance = "acceptance"
)

// Issues of a refused endpoint.
const (
	IssueEndpointURL     = `must be "production", "acceptance" or an https URL without user name or password`
	IssueEndpointAddress = "is or resolves to a loopback, link-local, multicast or unspecified address, which the EU system client does not connect to"
)

// URL is the URL credentials' endpoint stands for: "" and "production"
// are Production, "acceptance" Acceptance, anything else the URL itself.
func (e Endpoints) URL(endpoint string) string {
	switch endpoint {
	case "", EndpointProduction:
		return e.Production
	case EndpointAcceptance:
		return e.Acceptance
	}
	return endpoint
}

// isNamedEndpoint reports whether credentials' endpoint names a configured
// URL rather than giving one.
func isNamedEndpoint(e string) bool {
	return e == "" || e == EndpointProduction || e == EndpointAcceptance
}

// Problem says what is wrong with a URL endpoint, or nil: schemes are the
// ones it may use ("https" for one given with credentials, "http" too for
// a configured one), and an address literal the guard refuses is refused
// unless AllowPrivate. Names are not resolved here.
func (e Endpoints) Problem(field, endpoint string, schemes ...string) *apierr.Detail {
	u, err := url.Parse(endpoint)
	if err != nil || !slices.Contains(schemes, u.Scheme) || u.Hostname() == "" || u.User != nil || u.Opaque != "" {
		return &apierr.Detail{Code: apierr.DetailInvalidValue, Field: field, Issue: IssueEndpointURL}
	}
	if ip, err := netip.ParseAddr(u.Hostname()); err == nil && netguard.Refused(ip) && !e.AllowPrivate {
		return &apierr.Detail{Code: apierr.DetailTargetNotAllowed, Field: field, Issue: IssueEndpointAddress}
	}
	return nil
}
