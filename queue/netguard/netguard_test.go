package netguard_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/eudr/eudr/queue/netguard"
)

func TestRefused(t *testing.T) {
	for _, tc := range []struct {
		addr    string
		refused bool
	}{
		{"127.0.0.1", true},
		{"127.8.9.10", true},
		{"::1", true},
		{"::ffff:127.0.0.1", true},
		{"0.0.0.0", true},
		{"::", true},
		{"169.254.169.254", true}, // the cloud metadata service
		{"169.254.1.2", true},
		{"fe80::1", true},
		{"fe80::1%eth0", true},
		{"fd00:ec2::254", true}, // AWS's metadata service over IPv6
		{"224.0.0.1", true},
		{"239.255.255.250", true},
		{"ff02::1", true},
		{"0.1.2.3", true}, // 0.0.0.0/8, "this network"
		{"0.255.255.255", true},
		{"::ffff:0.0.0.1", true},
		{"::127.0.0.1", true},         // IPv4-compatible (::/96)
		{"::169.254.169.254", true},   // IPv4-compatible
		{"64:ff9b::a9fe:a9fe", true},  // NAT64 of 169.254.169.254
		{"64:ff9b::7f00:1", true},     // NAT64 of 127.0.0.1
		{"2002:7f00:0001::1", true},   // 6to4 of 127.0.0.1
		{"2002:a9fe:a9fe:1::1", true}, // 6to4 of 169.254.169.254
		{"2002:e000:0001::1", true},   // 6to4 of 224.0.0.1
		{"100.100.100.200", true},     // Alibaba Cloud's metadata service
		{"::ffff:100.100.100.200", true},
		{"64:ff9b::6464:64c8", true}, // NAT64 of Alibaba's metadata service
		{"10.1.2.3", false},
		{"172.16.0.9", false},
		{"192.168.1.10", false},
		{"fd12:3456::1", false},
		{"203.0.113.7", false},
		{"1.2.3.4", false},
		{"100.100.100.201", false},
		{"2001:db8::7", false},
		{"2a00:1450:4001:80b::200e", false},
		{"2002:cb00:7107::1", false},  // 6to4 of 203.0.113.7
		{"2002:c0a8:10a::1", false},   // 6to4 of 192.168.1.10: private is allowed
		{"64:ff9b::cb00:7107", false}, // NAT64 of 203.0.113.7
		{"::10.1.2.3", false},         // IPv4-compatible RFC 1918
	} {
		if got := netguard.Refused(netip.MustParseAddr(tc.addr)); got != tc.refused {
			t.Errorf("Refused(%s) = %v, want %v", tc.addr, got, tc.refused)
		}
	}
}

func TestNoRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/elsewhere" {
			elsewhere.Add(1)
		}
		http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := &http.Client{Timeout: 5 * time.Second, CheckRedirect: netguard.NoRedirects}
	resp, err := c.Post(srv.URL+"/start", "text/plain", strings.NewReader("token"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/elsewhere" || elsewhere.Load() != 0 {
		t.Errorf("got %d to %q, %d requests at the Location; want the 307 itself and none", resp.StatusCode, resp.Header.Get("Location"), elsewhere.Load())
	}
}

func TestCheckTarget(t *testing.T) {
	for _, tc := range []struct {
		url     string
		refused bool
	}{
		{"https://127.0.0.1/x", true},
		{"https://localhost:8443/x", true},
		{"https://[::1]/x", true},
		{"http://169.254.169.254/latest/meta-data/", true},
		{"https://[fd00:ec2::254]/", true},
		{"https://0.0.0.0/", true},
		{"https://[::]:1/", true},
		{"https://224.0.0.1/", true},
		{"https://[::ffff:127.0.0.1]/", true},
		{"https://user:pw@127.0.0.1:1/", true},
		{"https://0.1.2.3/", true},
		{"https://[64:ff9b::a9fe:a9fe]/latest/meta-data/", true},
		{"http://100.100.100.200/latest/meta-data/", true},
		// RFC 6761 names, refused without asking a resolver.
		{"https://LocalHost.:8443/x", true},
		{"https://relay.localhost/x", true},
		{"https://localhost.example/hook", false},
		{"https://10.1.2.3/hook", false},
		{"https://192.168.1.10/hook", false},
		{"https://203.0.113.7/hook", false},
		{"https://no-such-host.invalid/hook", false},
		{"https://[2002:cb00:7107::1]/hook", false},
	} {
		err := netguard.CheckTarget(context.Background(), tc.url)
		if got := errors.Is(err, netguard.ErrTargetNotAllowed); got != tc.refused {
			t.Errorf("CheckTarget(%s): got %v, want refused=%v", tc.url, err, tc.refused)
		}
	}
}
