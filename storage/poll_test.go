package storage

import (
	"testing"
	"time"
)

// CountPoll walks the schedule one call at a time, its last delay
// repeating, and makes the state of a record that had none.
func TestCountPoll(t *testing.T) {
	schedule := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second}
	now := time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)
	var p *DDSPollState
	var got []time.Duration
	for range 5 {
		got = append(got, CountPoll(&p, schedule, now))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 5 * time.Second, 5 * time.Second, 5 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("delays %v, want %v", got, want)
		}
	}
	if p == nil || p.Polls != 5 || !p.LastPoll.Equal(now) {
		t.Errorf("state %+v, want 5 polls, the last at %v", p, now)
	}
}
