package chainrpc

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"
)

var errThrottled = errors.New("local rate limit for the chain endpoint reached")

// limited spends a token of the bucket per HTTP request, before sending it. A JSON-RPC batch is
// one request, which is what public endpoints count.
type limited struct {
	next http.RoundTripper
	b    *bucket
}

func (l *limited) RoundTrip(r *http.Request) (*http.Response, error) {
	if err := l.b.wait(r.Context()); err != nil {
		return nil, err
	}
	return l.next.RoundTrip(r)
}

// bucket is a token bucket: rps tokens per second, at most burst banked.
type bucket struct {
	mu     sync.Mutex
	rps    float64
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rps float64, burst int) *bucket {
	return &bucket{rps: rps, burst: float64(burst), tokens: float64(burst), last: time.Now()}
}

// wait takes a token, sleeping until one is due. It refuses at once when the token would come
// after ctx's deadline, so a call never waits only to time out.
func (b *bucket) wait(ctx context.Context) error {
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
		return errThrottled
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
