package httpc

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrWouldMissDeadline: the next token would come after the call's deadline, so the call is
// refused at once rather than left to wait only to time out.
var ErrWouldMissDeadline = errors.New("rate limit wait exceeds the deadline")

// Bucket is a token bucket: rps tokens per second, at most burst banked.
type Bucket struct {
	mu     sync.Mutex
	rps    float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewBucket makes a bucket of rps tokens per second, at most burst banked; nil (no limit) when
// rps is not positive.
func NewBucket(rps float64, burst int) *Bucket {
	if rps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &Bucket{rps: rps, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// Wait takes a token, sleeping until one is due. It refuses at once when the token would
// come after ctx's deadline, so a call never waits only to time out.
func (b *Bucket) Wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	now := time.Now()
	b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rps)
	b.last = now
	b.tokens--
	var d time.Duration
	if b.tokens < 0 {
		d = time.Duration(-b.tokens / b.rps * float64(time.Second))
	}
	if dl, ok := ctx.Deadline(); ok && d > 0 && now.Add(d).After(dl) {
		b.tokens++ // give back the reservation we cannot use
		b.mu.Unlock()
		return ErrWouldMissDeadline
	}
	b.mu.Unlock()
	if d == 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
