package devca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/eudr/eudr/server/apierr"
)

// MaxHostnames is how many extra hostnames a listener certificate may name.
const MaxHostnames = 20

// DefaultHosts are what every listener certificate names: the machine
// itself, by name and by both loopback addresses.
var DefaultHosts = []string{"localhost", "127.0.0.1", "::1"}

// permittedDomains are the DNS names the CA may vouch for, each with the
// names under it: localhost (RFC 6761), .test (RFC 2606), .local (mDNS,
// RFC 6762), .internal (ICANN's private-use name) and .home.arpa (RFC 8375).
// None is handed out by a public registry.
var permittedDomains = []string{"localhost", "test", "local", "internal", "home.arpa"}

// permittedPrefixes are the addresses the CA may vouch for: loopback and
// the private networks (RFC 1918, IPv6 unique local).
var permittedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("::1/128"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"),
}

// Request is the body of POST /sandbox/webhook-listener-certificate.
type Request struct {
	// Hostnames are names or addresses the certificate names besides
	// DefaultHosts: where the appliance reaches the listener when it is not
	// on the same machine.
	Hostnames []string `json:"hostnames"`
}

// Leaf is an issued listener certificate and its private key, in PEM.
type Leaf struct {
	CertificatePEM []byte
	PrivateKeyPEM  []byte
	Hosts          []string // DNS names, then addresses
	NotBefore      time.Time
	NotAfter       time.Time
}

// Issue makes a new key and a server certificate for it, signed by the CA,
// valid for LeafValidity and naming DefaultHosts and req's hostnames. It
// keeps nothing: the key is the caller's alone. Bad hostnames are one 400
// listing each.
func (ca *CA) Issue(req Request) (*Leaf, error) {
	dns, ips, err := req.hosts()
	if err != nil {
		return nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	now := ca.now().Truncate(time.Second) // what a certificate holds
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "eudr webhooks listener", Organization: []string{"eudr"}},
		NotBefore:    now.Add(-backdate),
		NotAfter:     now.Add(LeafValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     dns,
		IPAddresses:  ips,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, fmt.Errorf("sign listener certificate: %w", err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	hosts := slices.Clone(dns)
	for _, ip := range ips {
		hosts = append(hosts, ip.String())
	}
	return &Leaf{
		CertificatePEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		PrivateKeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
		Hosts:          hosts,
		NotBefore:      tmpl.NotBefore,
		NotAfter:       tmpl.NotAfter,
	}, nil
}

// hosts checks the request's hostnames and returns the certificate's DNS
// names and addresses, DefaultHosts first, each once.
func (req *Request) hosts() (dns []string, ips []net.IP, err error) {
	var probs apierr.Problems
	if len(req.Hostnames) > MaxHostnames {
		probs.Add(apierr.DetailInvalidValue, "hostnames", fmt.Sprintf("at most %d hostnames", MaxHostnames))
		return nil, nil, probs.Err()
	}
	var addrs []netip.Addr
	add := func(h string) string {
		if ip, err := netip.ParseAddr(h); err == nil {
			ip = ip.Unmap()
			if ip.Zone() != "" || !permittedAddr(ip) {
				return "must be a loopback or private address (10/8, 172.16/12, 192.168/16, fc00::/7): the development CA vouches for no other"
			}
			if !slices.Contains(addrs, ip) {
				addrs = append(addrs, ip)
			}
			return ""
		}
		name := strings.ToLower(strings.TrimSuffix(h, "."))
		if !validDNSName(name) {
			return "must be a DNS name (letters, digits and hyphens in dot-separated labels) or an IP address"
		}
		if !permittedName(name) {
			return "must be localhost or a name under .localhost, .test, .local, .internal or .home.arpa: the development CA vouches for no other"
		}
		if !slices.Contains(dns, name) {
			dns = append(dns, name)
		}
		return ""
	}
	for _, h := range DefaultHosts {
		add(h)
	}
	for i, h := range req.Hostnames {
		if issue := add(strings.TrimSpace(h)); issue != "" {
			probs.Add(apierr.DetailInvalidValue, fmt.Sprintf("hostnames[%d]", i), issue)
		}
	}
	if err := probs.Err(); err != nil {
		return nil, nil, err
	}
	for _, ip := range addrs {
		ips = append(ips, net.IP(ip.AsSlice()))
	}
	return dns, ips, nil
}

func permittedAddr(ip netip.Addr) bool {
	return slices.ContainsFunc(permittedPrefixes, func(p netip.Prefix) bool { return p.Contains(ip) })
}

// permittedName reports whether name is one of permittedDomains or under
// one, as a verifier applies the CA's constraint.
func permittedName(name string) bool {
	return slices.ContainsFunc(permittedDomains, func(d string) bool { return name == d || strings.HasSuffix(name, "."+d) })
}

// validDNSName reports whether name (lower case, no trailing dot) is a
// hostname: at most 253 characters of 1-63 character labels of letters,
// digits and inner hyphens. Wildcards are not: a listener has one name.
func validDNSName(name string) bool {
	if name == "" || len(name) > 253 {
		return false
	}
	for _, label := range strings.Split(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
