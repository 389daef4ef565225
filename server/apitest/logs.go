package apitest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// Logs collects what a zerolog logger writes as JSON lines
// (zerolog.New(logs)), safe for the logging goroutines and the test's.
type Logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *Logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// Lines is every line written so far, decoded; a line that is not a JSON
// object fails the test.
func (l *Logs) Lines(tb testing.TB) []map[string]any {
	tb.Helper()
	l.mu.Lock()
	data := bytes.Clone(l.buf.Bytes())
	l.mu.Unlock()
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			tb.Fatalf("log line %q: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

// Find returns the lines with message msg whose fields include every
// field of want (compared as JSON decodes them: numbers are float64).
func (l *Logs) Find(tb testing.TB, msg string, want map[string]any) []map[string]any {
	tb.Helper()
	var out []map[string]any
	for _, m := range l.Lines(tb) {
		if m["message"] == msg && hasFields(m, want) {
			out = append(out, m)
		}
	}
	return out
}

// Wait waits until a line with message msg and the fields of want has
// been written, and returns the first. Lines are written a moment after
// what they report is visible to readers (a job's end is logged after its
// transaction commits), so there is no deadline but the test's own.
func (l *Logs) Wait(tb testing.TB, msg string, want map[string]any) map[string]any {
	tb.Helper()
	for {
		if found := l.Find(tb, msg, want); len(found) > 0 {
			return found[0]
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func hasFields(m, want map[string]any) bool {
	for k, v := range want {
		got, err1 := json.Marshal(m[k])
		exp, err2 := json.Marshal(v)
		if _, ok := m[k]; !ok || err1 != nil || err2 != nil || !bytes.Equal(got, exp) {
			return false
		}
	}
	return true
}
