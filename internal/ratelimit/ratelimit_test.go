package ratelimit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time            { return c.t }
func (c *clock) add(d time.Duration)       { c.t = c.t.Add(d) }
func newClock() *clock                     { return &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func takes(l *Limiter, client string) bool { ok, _ := l.Take(client); return ok }

func TestBucket(t *testing.T) {
	type step struct {
		advance time.Duration
		client  string
		refund  bool
		ok      bool
		wait    time.Duration // when !ok
	}
	cases := []struct {
		name  string
		cfg   Config
		steps []step
	}{
		{"burst_then_refused_with_wait", Config{PerMinute: 60, Burst: 2, MaxClients: 10}, []step{
			{client: "a", ok: true}, {client: "a", ok: true}, {client: "a", wait: time.Second},
			{advance: 400 * time.Millisecond, client: "a", wait: 600 * time.Millisecond},
			{advance: 600 * time.Millisecond, client: "a", ok: true}, {client: "a", wait: time.Second},
		}},
		{"clients_are_independent", Config{PerMinute: 6, Burst: 1, MaxClients: 10}, []step{
			{client: "a", ok: true}, {client: "a", wait: 10 * time.Second}, {client: "b", ok: true}, {client: "b", wait: 10 * time.Second},
		}},
		{"refill_never_exceeds_burst", Config{PerMinute: 60, Burst: 2, MaxClients: 10}, []step{
			{client: "a", ok: true}, {advance: time.Hour, client: "a", ok: true}, {client: "a", ok: true}, {client: "a", wait: time.Second},
		}},
		{"refund_gives_a_token_back", Config{PerMinute: 1, Burst: 1, MaxClients: 10}, []step{
			{client: "a", ok: true}, {client: "a", refund: true}, {client: "a", ok: true}, {client: "a", wait: time.Minute},
		}},
		{"refund_never_exceeds_burst", Config{PerMinute: 1, Burst: 1, MaxClients: 10}, []step{
			{client: "a", refund: true}, {client: "a", ok: true}, {client: "a", wait: time.Minute},
		}},
		{"off_never_refuses", Config{PerMinute: 0, Burst: 1, MaxClients: 1}, []step{
			{client: "a", ok: true}, {client: "a", ok: true}, {client: "b", ok: true}, {client: "a", ok: true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := newClock()
			l := New(c.cfg, clk.now)
			for i, s := range c.steps {
				clk.add(s.advance)
				if s.refund {
					l.Refund(s.client)
					continue
				}
				ok, wait := l.Take(s.client)
				if ok != s.ok || (!ok && wait != s.wait) {
					t.Fatalf("step %d (%s): ok=%v wait=%v, want ok=%v wait=%v", i, s.client, ok, wait, s.ok, s.wait)
				}
			}
		})
	}
}

// TestBoundedMemory: idle clients are forgotten, and the cap holds under a flood of new ones.
func TestBoundedMemory(t *testing.T) {
	clk := newClock()
	l := New(Config{PerMinute: 60, Burst: 5, MaxClients: 100}, clk.now)
	for i := range 1000 {
		l.Take(fmt.Sprint("flood-", i))
		if n := l.Clients(); n > 100 {
			t.Fatalf("%d clients kept, cap 100", n)
		}
	}
	// A whole refill (5 s) later every bucket is full again, so none is worth keeping.
	clk.add(5 * time.Second)
	l.Take("newcomer")
	if n := l.Clients(); n != 1 {
		t.Errorf("%d clients kept after they went idle, want 1", n)
	}
}

// TestEvictsLeastRecent: at the cap, the client seen longest ago goes, not an active one.
func TestEvictsLeastRecent(t *testing.T) {
	clk := newClock()
	l := New(Config{PerMinute: 1, Burst: 1, MaxClients: 2}, clk.now)
	takes(l, "old")
	takes(l, "active")
	takes(l, "active")
	takes(l, "new") // evicts "old"
	if takes(l, "active") {
		t.Error("the active client's empty bucket was forgotten")
	}
	if !takes(l, "old") {
		t.Error("the least recent client was kept")
	}
}

func TestConcurrentTakesSpendEachTokenOnce(t *testing.T) {
	l := New(Config{PerMinute: 1, Burst: 50, MaxClients: 10}, newClock().now)
	var wg sync.WaitGroup
	var mu sync.Mutex
	granted := 0
	for range 200 {
		wg.Go(func() {
			if takes(l, "a") {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if granted != 50 {
		t.Errorf("%d calls granted, want the burst of 50", granted)
	}
}
