package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/eudr/eudr/queue"
)

// lockedBuffer is a log sink safe for the runner's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// line returns the decoded line with message msg, or nil.
func (l *lockedBuffer) line(tb testing.TB, msg string) map[string]any {
	tb.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, raw := range bytes.Split(l.b.Bytes(), []byte("\n")) {
		var m map[string]any
		if len(raw) > 0 && json.Unmarshal(raw, &m) == nil && m["message"] == msg {
			return m
		}
	}
	return nil
}

// The runner logs the durations of its settings with their units ("1m0s"),
// not as bare numbers a reader has to guess the unit of.
func TestRunner_LogsDurationsWithUnits(t *testing.T) {
	db, _ := newJobDB(t)
	mustEnqueue(t, db, queue.Job{ID: "job_slow", Kind: "slow"})
	var logs lockedBuffer
	r := queue.NewRunner(queue.RunnerOptions{DB: db, Now: newJobClock().Now, Workers: 1, Lease: time.Minute,
		DrainTimeout: 90 * time.Second, PollInterval: time.Hour, Logger: zerolog.New(&logs)})
	started, release := make(chan struct{}), make(chan struct{})
	r.Handle("slow", func(context.Context, queue.Job) error {
		close(started)
		<-release
		return nil
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	recvJob(t, started, "the handler")
	cancel() // with the job in flight: the runner drains
	for logs.line(t, "job runner draining") == nil {
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := recvJob(t, done, "Run's return"); err != nil {
		t.Fatal(err)
	}
	for msg, want := range map[string]map[string]string{
		"job runner started":  {"lease": "1m0s"},
		"job runner draining": {"drain_timeout": "1m30s"},
	} {
		l := logs.line(t, msg)
		for k, v := range want {
			if l[k] != v {
				t.Errorf("%q line: %s is %v (%T), want %q", msg, k, l[k], l[k], v)
			}
		}
	}
}
