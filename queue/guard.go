package queue

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"syscall"
	"time"
)

// ErrTargetNotAllowed is returned (wrapped) when a webhook target resolves
// to an address the guard refuses.
var ErrTargetNotAllowed = errors.New("target address not allowed")

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
	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !o.AllowPrivate {
		dialer.Control = func(network, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			ip, err := netip.ParseAddr(host)
			if err != nil || refusedAddr(ip) {
				return fmt.Errorf("dial %s: %w", address, ErrTargetNotAllowed)
			}
			return nil
		}
	}
	return &http.Client{
		Timeout: o.Timeout,
		Transport: &http.Transport{
			DialContext:           dialer.DialContext,
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
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// refusedAddr is what the guard refuses (API.md section 9): loopback,
// link-local, multicast and unspecified addresses. Private (RFC 1918)
// networks are allowed: that is where an on-premises receiver lives.
func refusedAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified()
}

// CheckTarget resolves the host of target and returns an error wrapping
// ErrTargetNotAllowed when any address it resolves to is refused. A host
// that does not resolve now is not refused: the dial-time check decides
// when a delivery is sent.
func CheckTarget(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if refusedAddr(ip) {
			return fmt.Errorf("%s: %w", host, ErrTargetNotAllowed)
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if refusedAddr(ip) {
			return fmt.Errorf("%s resolves to %s: %w", host, ip, ErrTargetNotAllowed)
		}
	}
	return nil
}
