package apitest

import (
	"sync"
	"time"
)

// Clock is a fake clock: its time moves only when Advance or Set moves it.
// It is safe for concurrent use; its zero value is at the zero time.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock is a Clock at start.
func NewClock(start time.Time) *Clock { return &Clock{t: start} }

// Now is the clock's current time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// Set moves the clock to t, forward or back.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}
