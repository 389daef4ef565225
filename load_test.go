//go:build load

package main_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"
)

// The load run of `make bench`: requests/s and latency of authenticated
// GET /health and GET /suppliers through the built binary, next to a bare
// httprouter handler measured in the same run on the same machine. It
// prints figures and asserts nothing about time (speed is measured, not
// tested); it only fails when requests fail.
//
//	go test -tags load -run '^TestLoad$' -v .
//
// EUDR_LOAD_SECONDS sets the length of each phase (default 5).

// bareServerEnv makes the test binary, started again as a child, serve the
// bare handler instead of running tests: the bare server then runs in its own
// process like eudr does, and competes for the same cores the same way.
const bareServerEnv = "EUDR_LOAD_BARE_SERVER"

func init() {
	if os.Getenv(bareServerEnv) == "1" {
		serveBare()
		os.Exit(0)
	}
}

// bareHealthBody is the size and shape of the appliance's health answer.
const bareHealthBody = `{"status":"ok","environment":"sandbox","version":"bench","uptimeSeconds":1,"store":{"status":"ok","schemaVersion":1,"sizeBytes":65536}}` + "\n"

func serveBare() {
	rt := httprouter.New()
	rt.GET("/api/v1/enterprise/eudr/health", func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, bareHealthBody)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Println(ln.Addr().String())
	http.Serve(ln, rt)
}

// startBare runs the bare server as a child process and returns its base URL.
func startBare(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), bareServerEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make([]byte, 64)
	n, err := out.Read(line)
	if err != nil {
		t.Fatalf("bare server: %v", err)
	}
	return "http://" + strings.TrimSpace(string(line[:n]))
}

func TestLoad(t *testing.T) {
	phase := 5 * time.Second
	if s := os.Getenv("EUDR_LOAD_SECONDS"); s != "" {
		var n int
		fmt.Sscan(s, &n)
		phase = time.Duration(n) * time.Second
	}

	srv := startServer(t, "EUDR_RATE_LIMIT_PER_SECOND=1000000000", "EUDR_RATE_LIMIT_BURST=1000000000")
	key := srv.createKey(t, "sandbox", "read", "write")
	for i := range 100 { // the list phases read 10 (a small importer's page) and 100
		srv.mustDo(t, "POST", srv.SandboxURL+"/api/v1/enterprise/eudr/suppliers", map[string]string{
			"X-API-Key": key, "Idempotency-Key": fmt.Sprintf("load-%d", i),
		}, fmt.Sprintf(`{"erpVendorId":"V%04d","euOperatorUuid":"3f2b8a1e-6c4d-4e5f-9a7b-1c2d3e4f5a6b","name":"Supplier %d","country":"CI"}`, i, i), 200)
	}
	bare := startBare(t)

	targets := []struct {
		name, url, key string
	}{
		{"bare httprouter GET /health", bare + "/api/v1/enterprise/eudr/health", ""},
		{"eudr GET /health", srv.SandboxURL + "/api/v1/enterprise/eudr/health", key},
		{"eudr GET /suppliers?limit=10", srv.SandboxURL + "/api/v1/enterprise/eudr/suppliers?limit=10", key},
		{"eudr GET /suppliers (100)", srv.SandboxURL + "/api/v1/enterprise/eudr/suppliers", key},
	}
	const workers = 32
	const rate = 2000
	var report strings.Builder
	fmt.Fprintf(&report, "\n%-30s %12s %10s %10s %10s %8s\n", "target", "max req/s", "p50", "p99", "max", "errors")
	var bareRPS float64
	for i, tg := range targets {
		closedLoad(tg.url, tg.key, workers, time.Second) // warm up connections, caches and the heap
		rps, errs := closedLoad(tg.url, tg.key, workers, phase)
		lat, errs2 := openLoad(tg.url, tg.key, rate, phase)
		if i == 0 {
			bareRPS = rps
		}
		fmt.Fprintf(&report, "%-30s %12.0f %10s %10s %10s %8d\n", tg.name, rps,
			pct(lat, 50), pct(lat, 99), pct(lat, 100), errs+errs2)
		if i == 1 {
			fmt.Fprintf(&report, "%-30s %11.0f%%\n", "  full chain / bare", 100*rps/bareRPS)
		}
		if errs+errs2 > 0 {
			t.Errorf("%s: %d failed requests", tg.name, errs+errs2)
		}
	}
	fmt.Fprintf(&report, "(max req/s: %d keep-alive workers for %s; latency: open model at %d req/s for %s,\n measured from each request's scheduled start)\n",
		workers, phase, rate, phase)
	t.Log(report.String())
	fmt.Println(report.String())
}

func newLoadClient(workers int) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		MaxIdleConns: workers * 2, MaxIdleConnsPerHost: workers * 2, MaxConnsPerHost: 0,
	}}
}

func get(ctx context.Context, c *http.Client, url, key string) bool {
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	resp, err := c.Do(req)
	if err != nil {
		return ctx.Err() != nil // cut off at the end of the phase: not a failure
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// closedLoad runs workers that each send the next request when the last is
// answered, for d, and returns requests per second and failures.
func closedLoad(url, key string, workers int, d time.Duration) (float64, int) {
	c := newLoadClient(workers)
	defer c.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var ok, failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if get(ctx, c, url, key) {
					ok.Add(1)
				} else if ctx.Err() == nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return float64(ok.Load()) / time.Since(start).Seconds(), int(failed.Load())
}

// openLoad sends rate requests per second for d on a fixed schedule,
// whatever the answers' pace, and returns each request's latency from its
// scheduled start (so a stall is counted for every request it delays).
func openLoad(url, key string, rate int, d time.Duration) ([]time.Duration, int) {
	c := newLoadClient(256)
	defer c.CloseIdleConnections()
	n := int(float64(rate) * d.Seconds())
	interval := time.Second / time.Duration(rate)
	lat := make([]time.Duration, n)
	var failed atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		due := start.Add(time.Duration(i) * interval)
		if w := time.Until(due); w > 0 {
			time.Sleep(w)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !get(context.Background(), c, url, key) {
				failed.Add(1)
			}
			lat[i] = time.Since(due)
		}()
	}
	wg.Wait()
	slices.Sort(lat)
	return lat, int(failed.Load())
}

func pct(sorted []time.Duration, p int) string {
	if len(sorted) == 0 {
		return "-"
	}
	i := (len(sorted) - 1) * p / 100
	return sorted[i].Round(10 * time.Microsecond).String()
}
