package metrics_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/server/metrics"
)

// serve starts a metrics listener on a free loopback port and returns its
// base URL; it is shut down when the test ends.
func serve(t *testing.T, m *metrics.Metrics, pprof bool, log zerolog.Logger) string {
	t.Helper()
	l, err := m.Listen("127.0.0.1:0", pprof, log)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- l.Serve() }()
	t.Cleanup(func() {
		if err := l.Server.Shutdown(context.Background()); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
		if err := <-done; err != nil {
			t.Errorf("Serve after Shutdown: got %v, want nil", err)
		}
	})
	return "http://" + l.Addr()
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

func TestListen(t *testing.T) {
	m := metrics.New(metrics.Options{Version: "test"})

	t.Run("Off", func(t *testing.T) {
		l, err := m.Listen("", true, zerolog.Nop())
		if l != nil || err != nil {
			t.Errorf(`Listen(""): got %v, %v; want no listener and no error`, l, err)
		}
		l.Close() // nil does nothing
	})

	t.Run("Metrics", func(t *testing.T) {
		var log strings.Builder
		base := serve(t, m, false, zerolog.New(&log))
		if !strings.Contains(log.String(), `"message":"metrics listener ready"`) || !strings.Contains(log.String(), base[len("http://"):]) {
			t.Errorf("log: %s, want the ready line with the address", log.String())
		}
		code, body := get(t, base+"/metrics")
		if code != http.StatusOK || !strings.Contains(body, "eudr_build_info{version=\"test\"} 1") {
			t.Errorf("GET /metrics: %d %.300s", code, body)
		}
		for _, path := range []string{"/debug/pprof/", "/", "/metrics/x"} {
			if code, _ := get(t, base+path); code != http.StatusNotFound {
				t.Errorf("GET %s without pprof: %d, want 404", path, code)
			}
		}
		resp, err := http.Post(base+"/metrics", "text/plain", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST /metrics: %d, want 405", resp.StatusCode)
		}
	})

	t.Run("PProf", func(t *testing.T) {
		base := serve(t, m, true, zerolog.Nop())
		for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap?debug=1"} {
			if code, _ := get(t, base+path); code != http.StatusOK {
				t.Errorf("GET %s with pprof: %d, want 200", path, code)
			}
		}
	})

	t.Run("PortTaken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		addr := ln.Addr().String()
		l, err := m.Listen(addr, false, zerolog.Nop())
		if l != nil || err == nil || !strings.Contains(err.Error(), "listen metrics on "+addr) {
			t.Errorf("Listen(%s) while taken: got %v, %v; want an error naming the address", addr, l, err)
		}
	})
}

func TestCheckListen(t *testing.T) {
	api := []string{"127.0.0.1:8080", "127.0.0.1:8081"}
	for addr, ok := range map[string]bool{
		"":                true, // off
		"127.0.0.1:9090":  true,
		":9100":           true,
		"[::1]:9090":      true,
		"127.0.0.1":       false,
		"127.0.0.1:http":  false, // a named port
		"127.0.0.1:65536": false,
		"127.0.0.1:8081":  false, // an API listener's
	} {
		if err := metrics.CheckListen(addr, api...); (err == nil) != ok {
			t.Errorf("CheckListen(%q): got %v, want ok %v", addr, err, ok)
		}
	}
	if err := metrics.CheckListen("127.0.0.1:0", "127.0.0.1:0"); err != nil {
		t.Errorf("port 0 beside an API listener on port 0: %v, want ok (each gets a free port)", err)
	}
}
