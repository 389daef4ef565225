package euis_test

import (
	"context"
	"crypto/sha256"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/eudr/eudr/server/euis"
)

// newUntrustedFakeEU is a fake EU system whose certificate no system root
// vouches for (httptest's own CA), quiet about refused handshakes.
func newUntrustedFakeEU(t *testing.T) *httptest.Server {
	clk := newClock(t0)
	f := &fakeEU{t: t, now: clk.Now, nonces: map[string]bool{}}
	srv := httptest.NewUnstartedServer(f)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// echoWith sends testEcho to endpoint with the production HTTP client
// configured with trusts.
func echoWith(endpoint string, trusts ...euis.Trust) error {
	hc := euis.NewHTTPClient(euis.HTTPOptions{AllowPrivate: true, Trust: trusts})
	c := euis.NewSOAPClient(hc, euis.SOAPOptions{Now: newClock(t0).Now, CallsPerSecond: -1})
	cr := euis.Credentials{Username: testUser, AuthKey: testAuthKey, ClientID: testClientID, Endpoint: endpoint}
	_, err := c.Echo(context.Background(), cr, "ping")
	return err
}

func mustTrust(t *testing.T, endpoint, caFile string, pins ...string) euis.Trust {
	t.Helper()
	tr, err := euis.LoadTrust(endpoint, caFile, pins)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestNewHTTPClient_Trust: a server whose certificate chains to no system
// root is reached only through its environment's trust setting: a CA file
// with its certificate, or a pin of its certificate or of its key; it is
// refused without one, with a wrong pin, with a pinned certificate that
// does not carry the host's name, and when the setting is another host's.
func TestNewHTTPClient_Trust(t *testing.T) {
	srv := newUntrustedFakeEU(t)
	endpoint := srv.URL + "/tracesnt"
	cert := srv.Certificate()
	caFile := filepath.Join(t.TempDir(), "eu-ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	spkiPin := fmt.Sprintf("%x", sha256.Sum256(cert.RawSubjectPublicKeyInfo))
	certSum := sha256.Sum256(cert.Raw)
	var colons []string // as `openssl x509 -fingerprint -sha256` prints it
	for _, b := range certSum {
		colons = append(colons, fmt.Sprintf("%02X", b))
	}
	certPin := strings.Join(colons, ":")
	wrongPin := strings.Repeat("ab", sha256.Size)
	other := "https://acceptance.example/tracesnt"
	byName := strings.Replace(endpoint, "127.0.0.1", "localhost", 1) // not a name the certificate carries

	for _, tc := range []struct {
		name     string
		endpoint string
		trusts   []euis.Trust
		ok       bool
	}{
		{"system roots", endpoint, nil, false},
		{"CA file", endpoint, []euis.Trust{mustTrust(t, endpoint, caFile)}, true},
		{"CA file, endpoint without path", endpoint, []euis.Trust{mustTrust(t, srv.URL, caFile)}, true},
		{"CA file of another host", endpoint, []euis.Trust{mustTrust(t, other, caFile)}, false},
		{"second environment's CA file", endpoint, []euis.Trust{mustTrust(t, other, caFile), mustTrust(t, endpoint, caFile)}, true},
		{"pinned key", endpoint, []euis.Trust{mustTrust(t, endpoint, "", spkiPin)}, true},
		{"pinned certificate", endpoint, []euis.Trust{mustTrust(t, endpoint, "", wrongPin, certPin)}, true},
		{"wrong pin", endpoint, []euis.Trust{mustTrust(t, endpoint, "", wrongPin)}, false},
		{"pinned, wrong name", byName, []euis.Trust{mustTrust(t, byName, "", spkiPin)}, false},
		{"CA file, wrong name", byName, []euis.Trust{mustTrust(t, byName, caFile)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := echoWith(tc.endpoint, tc.trusts...)
			if tc.ok && err != nil {
				t.Fatalf("Echo: %v", err)
			}
			if !tc.ok && (err == nil || euis.IsTransient(err)) {
				t.Fatalf("Echo: %v, want a permanent refusal of the certificate", err)
			}
		})
	}
}

// TestLoadTrust_Refused: settings that would not check what they seem to
// are refused when loaded.
func TestLoadTrust_Refused(t *testing.T) {
	dir := t.TempDir()
	notPEM := filepath.Join(dir, "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	pin := strings.Repeat("0", 64)
	for name, tc := range map[string]struct {
		caFile string
		pins   []string
	}{
		"missing file":    {filepath.Join(dir, "absent.pem"), nil},
		"no PEM":          {notPEM, nil},
		"short pin":       {"", []string{"abcd"}},
		"not hex":         {"", []string{strings.Repeat("zz", 32)}},
		"SHA-1 length":    {"", []string{strings.Repeat("ab", 20)}},
		"CA file and pin": {notPEM, []string{pin}},
	} {
		if _, err := euis.LoadTrust("https://eu.example/tracesnt", tc.caFile, tc.pins); err == nil {
			t.Errorf("%s: LoadTrust accepted %q %q", name, tc.caFile, tc.pins)
		}
	}
	if _, err := euis.LoadTrust("https://eu.example/tracesnt", "", []string{" " + pin + " "}); err != nil {
		t.Errorf("a pin with spaces around: %v", err)
	}
}
