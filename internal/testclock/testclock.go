// Package testclock is the settable clock the tests of time-bound state share (inbox expiry,
// delivery rates, a payment's validity window): Now for the code under test, Add for the test.
package testclock

import (
	"sync"
	"time"
)

// Clock reads t until the test moves it.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// At returns a clock standing at t.
func At(t time.Time) *Clock { return &Clock{t: t} }

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}
