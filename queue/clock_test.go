package queue_test

import (
	"sync"
	"time"
)

// whClock is the settable fake clock of the queue tests (jobs and webhooks).
type whClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *whClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *whClock) Set(t time.Time)     { c.mu.Lock(); c.t = t; c.mu.Unlock() }
func (c *whClock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }
