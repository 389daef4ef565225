// Package netguard keeps the appliance's outgoing HTTP clients away from
// addresses that a URL set through the API must not reach: the machine
// itself (loopback, the unspecified address, 0.0.0.0/8), its link
// (link-local, where the cloud metadata services answer), the metadata
// services elsewhere, and multicast. The webhook dispatcher and the EU
// information system client both send where an API key told them to, so
// both send with NewClient's client.
//
// The check is made when NewClient's client connects, on the address a
// name resolved to, so a name that resolves to 127.0.0.1, or rebinds to it after a check, is
// refused too. CheckTarget does the same check ahead of time, for a clear
// answer when the URL is set. Private (RFC 1918, unique local) networks are
// allowed: that is where an on-premises receiver or an air-gapped site's
// relay lives. NewClient's client uses no proxy (the guard would judge the
// proxy's address, not the target's) and follows no redirect
// (NoRedirects).
//
// It imports nothing of the appliance, so that the packages sending
// requests need not import each other.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// ErrTargetNotAllowed is returned (wrapped) when a target resolves to an
// address the guard refuses.
var ErrTargetNotAllowed = errors.New("target address not allowed")

// metadataAddrs are cloud metadata services outside the link-local range
// (169.254.169.254 is link-local already): AWS's IPv6 address, which is in
// the unique local range the guard otherwise allows, and Alibaba Cloud's,
// which is in the shared address space (100.64.0.0/10) of carrier-grade NAT.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

// Prefixes of IPv6 addresses that carry an IPv4 address the packets end up
// at: the deprecated IPv4-compatible addresses (::/96, RFC 4291), NAT64's
// well-known prefix (64:ff9b::/96, RFC 6052) and 6to4 (2002::/16, RFC
// 3056). Each is judged by the IPv4 address it carries: otherwise
// 64:ff9b::a9fe:a9fe would reach 169.254.169.254 through a NAT64 gateway.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")
	nat64          = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour      = netip.MustParsePrefix("2002::/16")
	thisNetwork    = netip.MustParsePrefix("0.0.0.0/8")
)

// embeddedIPv4 returns the IPv4 address an IPv6 address of one of the
// prefixes above carries.
func embeddedIPv4(ip netip.Addr) (netip.Addr, bool) {
	if !ip.Is6() {
		return netip.Addr{}, false
	}
	b := ip.As16()
	switch {
	case ipv4Compatible.Contains(ip), nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Refused reports whether the guard refuses ip: loopback, link-local,
// multicast, unspecified, "this network" (0.0.0.0/8: 0.0.0.0 reaches the
// machine itself, and no address there is another host's), or a cloud
// metadata address. An IPv4-mapped,
// IPv4-compatible, NAT64 (64:ff9b::/96) or 6to4 IPv6 address is judged as
// the IPv4 address it carries.
func Refused(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if v4, ok := embeddedIPv4(ip); ok {
		return Refused(v4)
	}
	for _, m := range metadataAddrs {
		if ip == m {
			return true
		}
	}
	return ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() ||
		thisNetwork.Contains(ip)
}

// LocalhostName reports whether host is "localhost" or a name under it,
// which RFC 6761 reserves for the loopback addresses: they are refused as
// loopback is, without asking a resolver (which may not know "a.localhost").
func LocalhostName(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	return host == "localhost" || strings.HasSuffix(host, ".localhost")
}

// control is the dialer's check of the address about to be connected to:
// the resolved IP and port, never a name.
func control(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return err
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || Refused(ip) {
		return fmt.Errorf("dial %s: %w", address, ErrTargetNotAllowed)
	}
	return nil
}

// dialer returns the dialer of a guarded client (5 s to connect, 30 s
// keep-alive). Unless allowPrivate, it refuses to connect to an address
// Refused; the error wraps ErrTargetNotAllowed.
func dialer(allowPrivate bool) *net.Dialer {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = control
	}
	return d
}

// NoRedirects is an http.Client CheckRedirect that follows nothing: a 3xx
// is the answer. A redirect would send the request, with whatever
// credentials it carries, to a host the Location names.
func NoRedirects(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// CheckTarget resolves the host of target and returns an error wrapping
// ErrTargetNotAllowed when it is a LocalhostName or any address it resolves
// to is refused. A host
// that does not resolve now is not refused: the dial-time check decides
// when a request is sent.
func CheckTarget(ctx context.Context, target string) error {
	u, err := url.Parse(target)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if LocalhostName(host) {
		return fmt.Errorf("%s: %w", host, ErrTargetNotAllowed)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Refused(ip) {
			return fmt.Errorf("%s: %w", host, ErrTargetNotAllowed)
		}
		return nil
	}
	addrs, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range addrs {
		if Refused(ip) {
			return fmt.Errorf("%s resolves to %s: %w", host, ip, ErrTargetNotAllowed)
		}
	}
	return nil
}
