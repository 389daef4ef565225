package devca_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apierr"
	"github.com/eudr/eudr/server/devca"
)

var testNow = time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)

func clock() time.Time { return testNow }

func mustOpen(t *testing.T, dir string) *devca.CA {
	t.Helper()
	ca, err := devca.Open(dir, clock)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return ca
}

func TestOpen_CreatesOnceAndReloads(t *testing.T) {
	dir := t.TempDir()
	ca := mustOpen(t, dir)
	for _, f := range []string{devca.KeyFile, devca.CertFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if st.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", f, st.Mode().Perm())
		}
	}
	c := ca.Certificate()
	if !c.IsCA || c.Subject.CommonName != devca.Name || !c.NotAfter.Equal(testNow.Add(devca.CAValidity).Truncate(time.Second)) {
		t.Errorf("CA certificate: IsCA %v, CN %q, NotAfter %v", c.IsCA, c.Subject.CommonName, c.NotAfter)
	}
	if _, ok := c.PublicKey.(*ecdsa.PublicKey); !ok || c.PublicKey.(*ecdsa.PublicKey).Curve != elliptic.P256() {
		t.Errorf("CA key: %T, want ECDSA P-256", c.PublicKey)
	}
	again := mustOpen(t, dir)
	if !again.Certificate().Equal(c) || string(again.CertificatePEM()) != string(ca.CertificatePEM()) {
		t.Error("a second Open made a new CA instead of loading the first")
	}
}

// A crash after the key was written and before the certificate leaves the
// key alone; the next Open makes the certificate of that key.
func TestOpen_KeyWithoutCertificate(t *testing.T) {
	dir := t.TempDir()
	first := mustOpen(t, dir)
	if err := os.Remove(filepath.Join(dir, devca.CertFile)); err != nil {
		t.Fatal(err)
	}
	again := mustOpen(t, dir)
	if !again.Certificate().PublicKey.(*ecdsa.PublicKey).Equal(first.Certificate().PublicKey) {
		t.Error("the new certificate is not of the key on disk")
	}
}

func TestOpen_CertificateOfAnotherKey(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	mustOpen(t, dir)
	mustOpen(t, other)
	pemBytes, err := os.ReadFile(filepath.Join(other, devca.CertFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, devca.CertFile), pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = devca.Open(dir, clock)
	if err == nil || !strings.Contains(err.Error(), devca.CertFile) || !strings.Contains(err.Error(), devca.KeyFile) {
		t.Errorf("Open with a foreign certificate: %v, want an error naming both files", err)
	}
}

// verify checks leaf against the CA as a TLS client connecting to host
// would, at the test's time.
func verify(ca *devca.CA, leaf *x509.Certificate, host string) error {
	roots := x509.NewCertPool()
	roots.AddCert(ca.Certificate())
	_, err := leaf.Verify(x509.VerifyOptions{Roots: roots, DNSName: host, CurrentTime: testNow,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
	return err
}

func parseLeaf(t *testing.T, l *devca.Leaf) *x509.Certificate {
	t.Helper()
	pair, err := tls.X509KeyPair(l.CertificatePEM, l.PrivateKeyPEM)
	if err != nil {
		t.Fatalf("the certificate and key do not make a pair: %v", err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

func TestIssue_ListenerCertificate(t *testing.T) {
	ca := mustOpen(t, t.TempDir())
	l, err := ca.Issue(devca.Request{Hostnames: []string{"Receiver.Internal.", "192.168.1.20", "localhost", "::ffff:10.0.0.7"}})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	leaf := parseLeaf(t, l)
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "receiver.internal", "192.168.1.20", "10.0.0.7"} {
		if err := verify(ca, leaf, host); err != nil {
			t.Errorf("verify for %s: %v", host, err)
		}
	}
	if err := verify(ca, leaf, "other.internal"); err == nil {
		t.Error("the certificate verifies for a host it does not name")
	}
	want := []string{"localhost", "receiver.internal", "127.0.0.1", "::1", "192.168.1.20", "10.0.0.7"}
	if !slices.Equal(l.Hosts, want) {
		t.Errorf("Hosts: got %v, want %v (each once, names first)", l.Hosts, want)
	}
	if !l.NotAfter.Equal(testNow.Add(devca.LeafValidity)) || !l.NotBefore.Before(testNow) {
		t.Errorf("validity %v to %v, want from before %v for %v", l.NotBefore, l.NotAfter, testNow, devca.LeafValidity)
	}
	if leaf.IsCA || leaf.SerialNumber.Sign() <= 0 {
		t.Errorf("leaf: IsCA %v, serial %v", leaf.IsCA, leaf.SerialNumber)
	}
	// Two requests, two keys: nothing is reused or kept.
	l2, err := ca.Issue(devca.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if string(l2.PrivateKeyPEM) == string(l.PrivateKeyPEM) || parseLeaf(t, l2).SerialNumber.Cmp(leaf.SerialNumber) == 0 {
		t.Error("a second certificate reuses the first one's key or serial number")
	}
	if !slices.Equal(l2.Hosts, []string{"localhost", "127.0.0.1", "::1"}) {
		t.Errorf("default hosts: %v", l2.Hosts)
	}
}

func TestIssue_RefusesHostnames(t *testing.T) {
	ca := mustOpen(t, t.TempDir())
	_, err := ca.Issue(devca.Request{Hostnames: []string{"ok.test", "bank.example.com", "8.8.8.8", "*.test", "", "fe80::1%eth0", "under_score.local"}})
	var e *apierr.Error
	if !errors.As(err, &e) || e.Status != apierr.StatusBadRequest || e.Code != apierr.CodeValidationFailed {
		t.Fatalf("Issue with bad hostnames: %v, want a 400 VALIDATION_FAILED", err)
	}
	var fields []string
	for _, d := range e.Details {
		if d.Code != apierr.DetailInvalidValue {
			t.Errorf("%s: code %s, want INVALID_VALUE", d.Field, d.Code)
		}
		fields = append(fields, d.Field)
	}
	want := []string{"hostnames[1]", "hostnames[2]", "hostnames[3]", "hostnames[4]", "hostnames[5]", "hostnames[6]"}
	if !slices.Equal(fields, want) {
		t.Errorf("details for %v, want %v", fields, want)
	}

	many := make([]string, devca.MaxHostnames+1)
	for i := range many {
		many[i] = "a.test"
	}
	if _, err := ca.Issue(devca.Request{Hostnames: many}); !errors.As(err, &e) || len(e.Details) != 1 || e.Details[0].Field != "hostnames" {
		t.Errorf("Issue with %d hostnames: %v, want one detail on hostnames", len(many), err)
	}
}

// The CA's name constraints hold even for a certificate its key signs
// outside Issue: verifiers refuse it for a public name or address.
func TestCA_NameConstrained(t *testing.T) {
	dir := t.TempDir()
	ca := mustOpen(t, dir)
	keyPEM, err := os.ReadFile(filepath.Join(dir, devca.KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := pem.Decode(keyPEM)
	caKey, err := x509.ParsePKCS8PrivateKey(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		dns  []string
		ips  []net.IP
		host string
	}{
		{dns: []string{"bank.example.com"}, host: "bank.example.com"},
		{ips: []net.IP{net.ParseIP("8.8.8.8")}, host: "8.8.8.8"},
	} {
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: tc.host},
			NotBefore: testNow.Add(-time.Hour), NotAfter: testNow.Add(time.Hour), DNSNames: tc.dns, IPAddresses: tc.ips,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Certificate(), &leafKey.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		leaf, _ := x509.ParseCertificate(der)
		var ce x509.CertificateInvalidError
		if err := verify(ca, leaf, tc.host); !errors.As(err, &ce) || ce.Reason != x509.CANotAuthorizedForThisName {
			t.Errorf("a certificate for %s signed by the development CA: %v, want CANotAuthorizedForThisName", tc.host, err)
		}
	}
}
