package httpc

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/peage/appliance/api/upstream"
)

// ErrWouldMissDeadline: the next token would come after the call's deadline, so the call is
// refused at once rather than left to wait only to time out.
var ErrWouldMissDeadline = errors.New("rate limit wait exceeds the deadline")

// ErrFreeShare: a call served free would get its token of the free calls' share only after
// its deadline.
var ErrFreeShare = errors.New("the free calls' share of the rate limit is used")

// Bucket is a token bucket: rps tokens per second, at most burst banked. A call served free
// (upstream.IsFree) also takes a token of the free share, a second bucket of half the rate
// and half the burst (at least 1): free calls from any number of clients take at most half
// of what the upstream may be asked, so paid calls keep at least the other half and wait at
// most the free share's burst behind them. A free call that needs several requests (a
// composite trial) still gets them, at the free share's pace.
type Bucket struct {
	mu     sync.Mutex
	rps    float64
	burst  float64
	tokens float64
	free   float64 // the free share's tokens
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
	b := &Bucket{rps: rps, burst: float64(burst), tokens: float64(burst), last: time.Now()}
	b.free = b.freeBurst()
	return b
}

func (b *Bucket) freeBurst() float64 { return max(1, float64(int(b.burst)/2)) }

// refill banks what the time since the last call brought; b.mu is held.
func (b *Bucket) refill(now time.Time) {
	dt := now.Sub(b.last).Seconds()
	b.tokens = min(b.burst, b.tokens+dt*b.rps)
	b.free = min(b.freeBurst(), b.free+dt*b.rps/2)
	b.last = now
}

// Wait takes a token, sleeping until one is due. It refuses at once when the token would
// come after ctx's deadline, so a call never waits only to time out.
func (b *Bucket) Wait(ctx context.Context) error {
	if b == nil {
		return nil
	}
	free := upstream.IsFree(ctx)
	b.mu.Lock()
	now := time.Now()
	b.refill(now)
	b.tokens--
	var d time.Duration
	if b.tokens < 0 {
		d = time.Duration(-b.tokens / b.rps * float64(time.Second))
	}
	var df time.Duration // until the free share's token
	if free {
		b.free--
		if b.free < 0 {
			df = time.Duration(-b.free / (b.rps / 2) * float64(time.Second))
		}
	}
	if dl, ok := ctx.Deadline(); ok && max(d, df) > 0 && now.Add(max(d, df)).After(dl) {
		b.tokens++ // give back the reservations we cannot use
		err := ErrWouldMissDeadline
		if free {
			b.free++
			if now.Add(df).After(dl) {
				err = ErrFreeShare
			}
		}
		b.mu.Unlock()
		return err
	}
	d = max(d, df)
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
