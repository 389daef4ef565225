package apitest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/eudr/eudr/server/apitest"
)

func TestClock_AdvanceAndSet(t *testing.T) {
	start := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	c := apitest.NewClock(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %s, want the start %s", got, start)
	}
	if got := c.Now(); !got.Equal(start) {
		t.Errorf("Now() moved by itself to %s", got)
	}
	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance(90s): Now() = %s, want %s", got, want)
	}
	back := start.Add(-time.Hour)
	c.Set(back)
	if got := c.Now(); !got.Equal(back) {
		t.Errorf("after Set(%s): Now() = %s", back, got)
	}
	var zero apitest.Clock
	if got := zero.Now(); !got.IsZero() {
		t.Errorf("zero Clock: Now() = %s, want the zero time", got)
	}
}

// Run with -race: Advance and Now from many goroutines at once.
func TestClock_ConcurrentAdvance(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := apitest.NewClock(start)
	const goroutines, steps = 8, 100
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range steps {
				c.Advance(time.Millisecond)
				if c.Now().Before(start) {
					t.Errorf("Now() went back before the start")
				}
			}
		})
	}
	wg.Wait()
	if got, want := c.Now(), start.Add(goroutines*steps*time.Millisecond); !got.Equal(want) {
		t.Errorf("after %d concurrent Advance(1ms): Now() = %s, want %s", goroutines*steps, got, want)
	}
}
