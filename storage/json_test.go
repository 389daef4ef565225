package storage_test

import (
	"testing"
	"time"

	"github.com/eudr/eudr/storage"
)

func TestParseTimeBound(t *testing.T) {
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	at := time.Date(2026, 11, 20, 10, 15, 30, 123_000_000, time.UTC)
	for _, tc := range []struct {
		s    string
		end  bool
		want time.Time
	}{
		{"2026-11-20", false, day},
		{"2026-11-20", true, day.Add(24*time.Hour - time.Nanosecond)},
		{"2026-11-20T10:15:30.123Z", false, at},
		// An end written to the millisecond covers that millisecond.
		{"2026-11-20T10:15:30.123Z", true, at.Add(time.Millisecond - time.Nanosecond)},
		{"2026-11-20T10:15:30Z", true, at.Truncate(time.Second).Add(time.Millisecond - time.Nanosecond)},
		// Finer than a millisecond: the instant written.
		{"2026-11-20T10:15:30.123456789Z", true, at.Add(456789)},
		{"2026-11-20T11:15:30.123+01:00", false, at},
	} {
		got, err := storage.ParseTimeBound(tc.s, tc.end)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTimeBound(%q, %v) = %v, %v; want %v", tc.s, tc.end, got, err, tc.want)
		}
	}
	for _, s := range []string{"", "20-11-2026", "2026-11-20T10:15", "2026-13-01", "yesterday"} {
		if _, err := storage.ParseTimeBound(s, false); err == nil {
			t.Errorf("ParseTimeBound(%q) succeeded, want an error", s)
		}
	}
}
