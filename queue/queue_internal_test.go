package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func TestNextBackoff(t *testing.T) {
	for _, tc := range []struct{ prev, want time.Duration }{
		{0, minBackoff},
		{minBackoff, 2 * minBackoff},
		{10 * time.Second, 20 * time.Second},
		{20 * time.Second, maxBackoff},
		{maxBackoff, maxBackoff},
	} {
		if got := nextBackoff(tc.prev); got != tc.want {
			t.Errorf("nextBackoff(%v): got %v, want %v", tc.prev, got, tc.want)
		}
	}
}

func TestErrLog_Report(t *testing.T) {
	var buf bytes.Buffer
	l := zerolog.New(&buf)
	var e errLog
	for range 3 {
		e.report(l, errors.New("disk full"), "claim jobs")
	}
	e.last = e.last.Add(-errLogInterval) // the interval passes
	e.report(l, errors.New("disk full"), "claim jobs")
	e.report(l, errors.New("disk full"), "claim jobs")

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var got []int
	for _, line := range lines {
		var rec struct {
			Level      string `json:"level"`
			Error      string `json:"error"`
			Message    string `json:"message"`
			Suppressed int    `json:"suppressed"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if rec.Level != "error" || rec.Error != "disk full" || rec.Message != "claim jobs" {
			t.Errorf("log line: got %+v", rec)
		}
		got = append(got, rec.Suppressed)
	}
	if len(got) != 2 || got[0] != 0 || got[1] != 2 {
		t.Errorf("suppressed counts of the lines logged: got %v, want [0 2] (5 reports, the interval passing after 3)", got)
	}
	if e.suppressed != 1 {
		t.Errorf("suppressed since the last line: got %d, want 1", e.suppressed)
	}
}
