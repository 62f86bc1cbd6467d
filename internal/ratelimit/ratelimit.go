// Package ratelimit keeps one token bucket per client, in bounded memory: a bucket left alone
// long enough to refill is forgotten (a fresh one is the same), and beyond a cap the least
// recently seen client is forgotten first.
package ratelimit

import (
	"container/list"
	"sync"
	"time"
)

// Config of a Limiter.
type Config struct {
	// PerMinute is how many tokens a bucket gains per minute; 0 turns the limiter off.
	PerMinute int
	// Burst is the bucket's size: the calls a rested client may make at once (at least 1).
	Burst int
	// MaxClients caps the buckets kept (at least 1).
	MaxClients int
}

// Limiter is a set of per-client token buckets. Its methods are safe for concurrent use.
type Limiter struct {
	cfg    Config
	perSec float64
	refill time.Duration // an empty bucket is full again after this long
	now    func() time.Time

	mu      sync.Mutex
	buckets map[string]*list.Element // of *bucket
	recent  *list.List               // most recently seen at the front
}

type bucket struct {
	client string
	tokens float64
	at     time.Time // when tokens was computed
}

// New makes a limiter; now is the clock (nil for time.Now).
func New(cfg Config, now func() time.Time) *Limiter {
	if now == nil {
		now = time.Now
	}
	cfg.Burst = max(cfg.Burst, 1)
	cfg.MaxClients = max(cfg.MaxClients, 1)
	l := &Limiter{cfg: cfg, now: now, buckets: map[string]*list.Element{}, recent: list.New()}
	if cfg.PerMinute > 0 {
		l.perSec = float64(cfg.PerMinute) / 60
		l.refill = time.Duration(float64(cfg.Burst) / l.perSec * float64(time.Second))
	}
	return l
}

// Take spends one of client's tokens. When none is left it spends nothing and says how long
// until one is back.
func (l *Limiter) Take(client string) (ok bool, wait time.Duration) {
	if l.perSec == 0 {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.forgetIdle(now)
	b := l.touch(client, now)
	if b.tokens >= 1 {
		b.tokens--
		return true, 0
	}
	return false, time.Duration((1 - b.tokens) / l.perSec * float64(time.Second))
}

// Refund gives back a token taken for a call that was not served after all.
func (l *Limiter) Refund(client string) {
	if l.perSec == 0 {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.buckets[client]; ok {
		b := el.Value.(*bucket)
		b.tokens = min(b.tokens+1, float64(l.cfg.Burst))
	}
}

// Clients is how many buckets are kept now.
func (l *Limiter) Clients() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// touch returns client's bucket refilled up to now, moved to the front of the recent list.
func (l *Limiter) touch(client string, now time.Time) *bucket {
	if el, ok := l.buckets[client]; ok {
		b := el.Value.(*bucket)
		if d := now.Sub(b.at); d > 0 {
			b.tokens = min(b.tokens+d.Seconds()*l.perSec, float64(l.cfg.Burst))
			b.at = now
		}
		l.recent.MoveToFront(el)
		return b
	}
	if len(l.buckets) >= l.cfg.MaxClients {
		l.drop(l.recent.Back())
	}
	b := &bucket{client: client, tokens: float64(l.cfg.Burst), at: now}
	l.buckets[client] = l.recent.PushFront(b)
	return b
}

// forgetIdle drops the buckets untouched for a whole refill: they are full, as a new one would
// be. The recent list is ordered by last touch, so they are all at its back.
func (l *Limiter) forgetIdle(now time.Time) {
	for el := l.recent.Back(); el != nil; el = l.recent.Back() {
		if now.Sub(el.Value.(*bucket).at) < l.refill {
			return
		}
		l.drop(el)
	}
}

func (l *Limiter) drop(el *list.Element) {
	delete(l.buckets, el.Value.(*bucket).client)
	l.recent.Remove(el)
}
