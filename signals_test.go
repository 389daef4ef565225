package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// logSink is a log sink safe for the watching goroutine and the test.
type logSink struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logSink) lines(t *testing.T) []map[string]any {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []map[string]any
	for _, raw := range strings.Split(strings.TrimSpace(l.b.String()), "\n") {
		var m map[string]any
		if raw != "" {
			if err := json.Unmarshal([]byte(raw), &m); err != nil {
				t.Fatalf("log line %q: %v", raw, err)
			}
			out = append(out, m)
		}
	}
	return out
}

// The first signal starts the drain; a second one during it exits at once
// with 128 + its number.
func TestStopOnSignals(t *testing.T) {
	for _, c := range []struct {
		name          string
		first, second os.Signal
		code          int
	}{
		{"CtrlCTwice", syscall.SIGINT, syscall.SIGINT, 130},
		{"TermThenTerm", syscall.SIGTERM, syscall.SIGTERM, 143},
		{"TermThenCtrlC", syscall.SIGTERM, syscall.SIGINT, 130},
	} {
		t.Run(c.name, func(t *testing.T) {
			var logs logSink
			signals := make(chan os.Signal, 2)
			exited := make(chan int, 1)
			ctx, stop := stopOnSignals(context.Background(), signals, zerolog.New(&logs), 30*time.Second, func(code int) { exited <- code })
			defer stop()

			signals <- c.first
			<-ctx.Done() // the drain begins
			select {
			case code := <-exited:
				t.Fatalf("exited with %d at the first signal", code)
			default:
			}
			signals <- c.second
			if code := <-exited; code != c.code {
				t.Errorf("exit code %d, want %d", code, c.code)
			}
			lines := logs.lines(t)
			if len(lines) != 2 {
				t.Fatalf("got %d log lines, want 2: %v", len(lines), lines)
			}
			if l := lines[0]; l["level"] != "info" || l["signal"] != c.first.String() || l["shutdown_timeout"] != "30s" ||
				!strings.Contains(l["message"].(string), "draining") {
				t.Errorf("first signal's line: %v, want the drain, its signal and shutdown_timeout 30s", l)
			}
			if l := lines[1]; l["level"] != "warn" || l["signal"] != c.second.String() || l["exit_code"] != float64(c.code) ||
				!strings.Contains(l["message"].(string), "stopping at once") {
				t.Errorf("second signal's line: %v, want that it stops at once, with its exit code", l)
			}
		})
	}

	// A clean stop (the drain over before a second signal) exits nothing.
	t.Run("Stopped", func(t *testing.T) {
		signals := make(chan os.Signal, 2)
		exited := make(chan int, 1)
		ctx, stop := stopOnSignals(context.Background(), signals, zerolog.Nop(), time.Second, func(code int) { exited <- code })
		signals <- syscall.SIGTERM
		<-ctx.Done()
		stop()
		signals <- syscall.SIGTERM // nobody watches any more
		select {
		case code := <-exited:
			t.Errorf("exited with %d after stop", code)
		default:
		}
	})
}
