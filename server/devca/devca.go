// Package devca is the sandbox's development certificate authority. Webhook
// targets must be https in the sandbox as in production; so that a
// developer can receive deliveries on their own machine without making a
// certificate, the appliance keeps a CA of its own (an ECDSA P-256 key and
// a self-signed certificate in the data dir, made on first start) and
// issues short-lived listener certificates from it (POST
// /sandbox/webhook-listener-certificate, which `eudr webhooks listen`
// calls). The sandbox's delivery client trusts this CA; production's never
// does.
//
// Any sandbox key may have a certificate issued, so the CA is name
// constrained (RFC 5280 4.2.1.10): it vouches only for loopback and
// private addresses and for names no public registry hands out (localhost,
// .test, .local, .internal, .home.arpa). Whoever holds a sandbox key can
// therefore not have the sandbox trust them as some public host.
package devca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"path/filepath"
	"time"

	"github.com/eudr/eudr/storage"
)

// The CA's files in the data dir.
const (
	CertFile = "sandbox-dev-ca.pem"
	KeyFile  = "sandbox-dev-ca.key"
)

// Name is the CA certificate's common name.
const Name = "eudr sandbox development CA"

// How long certificates are valid for: the CA long enough never to be
// thought of, a listener certificate for a working week or so (a listener
// asks for a fresh one each time it starts).
const (
	CAValidity   = 10 * 365 * 24 * time.Hour
	LeafValidity = 7 * 24 * time.Hour
)

// backdate starts a certificate's validity a little before it is made, for
// a verifier whose clock is a little behind.
const backdate = 5 * time.Minute

// CA is the development CA, loaded.
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	key     *ecdsa.PrivateKey
	now     func() time.Time
}

// Open loads the development CA in dir, making its key and certificate
// first when they are not there (mode 0600, written atomically). now is
// the clock certificates are dated by: it must be the wall clock TLS
// verifiers check them against. A certificate file that does not belong to
// the key file is refused, naming both files.
func Open(dir string, now func() time.Time) (*CA, error) {
	keyPath, certPath := filepath.Join(dir, KeyFile), filepath.Join(dir, CertFile)
	keyPEM, _, err := storage.LoadOrCreateKeyFile(keyPath, newKeyPEM)
	if err != nil {
		return nil, err
	}
	key, err := parseKey(keyPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", keyPath, err)
	}
	// A crash between the two files leaves the key alone: the certificate
	// is made from it on the next start.
	certPEM, _, err := storage.LoadOrCreateKeyFile(certPath, func() ([]byte, error) { return selfSign(key, now()) })
	if err != nil {
		return nil, err
	}
	cert, err := parseCert(certPEM)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", certPath, err)
	}
	if !key.PublicKey.Equal(cert.PublicKey) {
		return nil, fmt.Errorf("%s is not the certificate of the key in %s: remove both files and start again to make a new development CA", certPath, keyPath)
	}
	return &CA{cert: cert, certPEM: certPEM, key: key, now: now}, nil
}

// Certificate is the CA certificate, for a pool of trusted roots.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertificatePEM is the CA certificate in PEM.
func (ca *CA) CertificatePEM() []byte { return ca.certPEM }

func newKeyPEM() ([]byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func parseKey(data []byte) (*ecdsa.PrivateKey, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "PRIVATE KEY" {
		return nil, errors.New("no PEM PRIVATE KEY in it")
	}
	k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		return nil, err
	}
	key, ok := k.(*ecdsa.PrivateKey)
	if !ok {
		return nil, errors.New("not an ECDSA key")
	}
	return key, nil
}

func parseCert(data []byte) (*x509.Certificate, error) {
	b, _ := pem.Decode(data)
	if b == nil || b.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM CERTIFICATE in it")
	}
	return x509.ParseCertificate(b.Bytes)
}

// selfSign makes the CA certificate of key: a CA for server certificates
// only, that signs no intermediate, name constrained to permitted.
func selfSign(key *ecdsa.PrivateKey, now time.Time) ([]byte, error) {
	serial, err := newSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial,
		Subject:                     pkix.Name{CommonName: Name, Organization: []string{"eudr"}},
		NotBefore:                   now.Add(-backdate),
		NotAfter:                    now.Add(CAValidity),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		ExtKeyUsage:                 []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         permittedDomains,
		PermittedIPRanges:           permittedNetworks(),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// newSerial is a random positive 128-bit serial number.
func newSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
}

// permittedNetworks are the address ranges the CA may vouch for, as the
// certificate's constraint.
func permittedNetworks() []*net.IPNet {
	out := make([]*net.IPNet, 0, len(permittedPrefixes))
	for _, p := range permittedPrefixes {
		_, n, _ := net.ParseCIDR(p.String())
		out = append(out, n)
	}
	return out
}
