package httpc

import (
	"context"
	"errors"
	"sync"
	"time"
)

var errWouldMissDeadline = errors.New("rate limit wait exceeds the deadline")

// bucket is a token bucket: rps tokens per second, at most burst banked.
type bucket struct {
	mu     sync.Mutex
	rps    float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rps float64, burst int) *bucket {
	if rps <= 0 {
		return nil
	}
	if burst < 1 {
		burst = 1
	}
	return &bucket{rps: rps, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// wait takes a token, sleeping until one is due. It refuses at once when the token would
// come after ctx's deadline, so a call never waits only to time out.
func (b *bucket) wait(ctx context.Context) error {
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
		return errWouldMissDeadline
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
