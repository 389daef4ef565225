package euis

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// Trust is how the certificate of one EU system environment's host is
// checked, when the system roots will not do (the acceptance environment's
// chain, a relay's own CA). There is no setting that skips the check: a
// certificate is accepted when it chains to Roots, or when it is one that
// Pins names.
type Trust struct {
	// Endpoint is the environment's base URL; its host and port name the
	// server this trust applies to, whichever credentials send there.
	Endpoint string
	// Roots are the CAs the server's chain must lead to, instead of the
	// system roots (nil: the system roots).
	Roots *x509.CertPool
	// Pins are SHA-256 digests of the certificate the server must present
	// (of its subject public key info, or of the whole certificate). When
	// set, the server's certificate must match one of them, and then its
	// chain is not checked (the pin is the trust); its host name and
	// validity period still are.
	Pins [][sha256.Size]byte
}

// configured reports whether t changes anything from the system roots.
func (t Trust) configured() bool { return t.Roots != nil || len(t.Pins) > 0 }

// LoadTrust reads a PEM bundle of CA certificates (caFile, "" for none)
// and parses pins (64 hex digits each, colons allowed, as openssl prints
// them) into the Trust of endpoint. Setting both is an error: a pinned
// certificate is trusted whatever its chain, so roots beside it would
// only suggest a check that is not made.
func LoadTrust(endpoint, caFile string, pins []string) (Trust, error) {
	t := Trust{Endpoint: endpoint}
	if caFile != "" && len(pins) > 0 {
		return t, errors.New("a CA file and pinned certificates are alternatives: set one")
	}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return t, err
		}
		t.Roots = x509.NewCertPool()
		if !t.Roots.AppendCertsFromPEM(pem) {
			return t, fmt.Errorf("%s: no PEM certificate in it", caFile)
		}
	}
	for _, p := range pins {
		b, err := hex.DecodeString(strings.ReplaceAll(strings.TrimSpace(p), ":", ""))
		if err != nil || len(b) != sha256.Size {
			return t, fmt.Errorf("pin %q is not a SHA-256 digest (64 hex digits, colons allowed)", p)
		}
		t.Pins = append(t.Pins, [sha256.Size]byte(b))
	}
	return t, nil
}

// hostKey is the host and port a URL connects to, lower-cased, with the
// scheme's default port written out: the key that matches a request to a
// Trust's endpoint.
// SameHost reports whether two endpoint URLs reach the same host and
// port, as the client's certificate checks tell hosts apart (letter case,
// a trailing dot and the scheme's default port aside).
func SameHost(a, b string) bool {
	ua, aerr := url.Parse(a)
	ub, berr := url.Parse(b)
	return aerr == nil && berr == nil && ua.Hostname() != "" && hostKey(ua) == hostKey(ub)
}

func hostKey(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "443"
		if u.Scheme == "http" {
			port = "80"
		}
	}
	return net.JoinHostPort(strings.ToLower(strings.TrimSuffix(u.Hostname(), ".")), port)
}

// tlsConfig is base changed to check certificates as t says; host is the
// name (or address) dialled, which t's endpoint names.
func (t Trust) tlsConfig(base *tls.Config, host string) *tls.Config {
	c := base.Clone()
	if len(t.Pins) == 0 {
		c.RootCAs = t.Roots
		return c
	}
	// Chain verification against roots is replaced, not dropped:
	// VerifyConnection runs on every handshake (resumed ones too) and
	// refuses any certificate that no pin names.
	c.InsecureSkipVerify = true
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if err := t.verifyPinned(cs.PeerCertificates, host, time.Now()); err != nil {
			// The type crypto/tls gives its own verification errors, so
			// that callers see a certificate refusal (not worth a retry).
			return &tls.CertificateVerificationError{UnverifiedCertificates: cs.PeerCertificates, Err: err}
		}
		return nil
	}
	return c
}

// verifyPinned accepts the server's certificates when the first (the
// server's own) matches a pin, carries host's name and is valid at now.
// host comes from t's endpoint: the connection state has no server name
// when an address was dialled.
func (t Trust) verifyPinned(certs []*x509.Certificate, host string, now time.Time) error {
	if len(certs) == 0 {
		return errors.New("the server presented no certificate")
	}
	leaf := certs[0]
	spki, whole := sha256.Sum256(leaf.RawSubjectPublicKeyInfo), sha256.Sum256(leaf.Raw)
	pinned := false
	for _, p := range t.Pins {
		if bytes.Equal(p[:], spki[:]) || bytes.Equal(p[:], whole[:]) {
			pinned = true
			break
		}
	}
	if !pinned {
		return fmt.Errorf("the certificate of %s (SHA-256 %x, of its key %x) matches no pinned certificate", host, whole, spki)
	}
	if err := leaf.VerifyHostname(host); err != nil {
		return err
	}
	if now.Before(leaf.NotBefore) || now.After(leaf.NotAfter) {
		return x509.CertificateInvalidError{Cert: leaf, Reason: x509.Expired,
			Detail: fmt.Sprintf("the pinned certificate of %s is valid from %s to %s", host,
				leaf.NotBefore.UTC().Format(time.RFC3339), leaf.NotAfter.UTC().Format(time.RFC3339))}
	}
	return nil
}

// trustRouter sends each request through the transport of its host: the
// one made for a Trust's endpoint, or the default one.
type trustRouter struct {
	byHost map[string]*http.Transport
	other  *http.Transport
}

func (r *trustRouter) RoundTrip(req *http.Request) (*http.Response, error) {
	if t, ok := r.byHost[hostKey(req.URL)]; ok {
		return t.RoundTrip(req)
	}
	return r.other.RoundTrip(req)
}

// CloseIdleConnections lets http.Client.CloseIdleConnections reach every
// transport.
func (r *trustRouter) CloseIdleConnections() {
	for _, t := range r.byHost {
		t.CloseIdleConnections()
	}
	r.other.CloseIdleConnections()
}

// withTrust returns base, or a router that sends requests to each
// configured Trust's host through a copy of base checking certificates as
// that Trust says. A host named twice takes the first Trust.
func withTrust(base *http.Transport, trusts []Trust) http.RoundTripper {
	r := &trustRouter{byHost: map[string]*http.Transport{}, other: base}
	for _, t := range trusts {
		u, err := url.Parse(t.Endpoint)
		if !t.configured() || err != nil || u.Hostname() == "" {
			continue
		}
		key := hostKey(u)
		if _, dup := r.byHost[key]; dup {
			continue
		}
		tr := base.Clone()
		tr.TLSClientConfig = t.tlsConfig(base.TLSClientConfig, u.Hostname())
		r.byHost[key] = tr
	}
	if len(r.byHost) == 0 {
		return base
	}
	return r
}
