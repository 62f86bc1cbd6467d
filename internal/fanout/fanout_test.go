package fanout_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fanout"
)

var errNotFound = errors.New("404")

type memCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (c *memCache) Get(k string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[k]
	return v, ok
}

func (c *memCache) Set(k string, v []byte, _ time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[k] = v
}

// TestOutcomes: each way a source ends is reported in the one shape, in the order of the
// calls, and a panicking source is a failed one while the others stand.
func TestOutcomes(t *testing.T) {
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := &fanout.Runner{Now: func() time.Time { return now }, NotFound: func(err error) bool { return errors.Is(err, errNotFound) },
		Describe: func(err error) string { return "described: " + err.Error() }}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var answer string
	cases := []struct {
		call   fanout.Call
		status fanout.Status
		why    string
	}{
		{fanout.Call{Source: "ok", Out: &answer, Run: func(context.Context) error { answer = "yes"; return nil }}, fanout.OK, ""},
		{fanout.Call{Source: "none", Run: func(context.Context) error { return errNotFound }}, fanout.NotFound, ""},
		{fanout.Call{Source: "down", Run: func(context.Context) error { return errors.New("status 500") }}, fanout.Failed, "described: status 500"},
		{fanout.Call{Source: "slow", Run: func(context.Context) error { return context.DeadlineExceeded }}, fanout.Timeout, "described: context deadline exceeded"},
		{fanout.Call{Source: "buggy", Run: func(context.Context) error { panic("a source's bug") }}, fanout.Failed, "internal error"},
	}
	calls := make([]fanout.Call, len(cases))
	for i, c := range cases {
		calls[i] = c.call
	}
	got, errs := r.Run(ctx, calls...)
	for i, c := range cases {
		s := got[i]
		why := ""
		if s.Error != nil {
			why = *s.Error
		}
		if s.Source != c.call.Source || s.Status != c.status || why != c.why || s.FetchedAt != "2026-11-28T12:00:00Z" {
			t.Errorf("%s: %+v (error %q), want %s %q", c.call.Source, s, why, c.status, c.why)
		}
		if (errs[i] == nil) != (c.status == fanout.OK) {
			t.Errorf("%s: err %v", c.call.Source, errs[i])
		}
	}
	var p *fanout.PanicError
	if !errors.As(errs[4], &p) {
		t.Errorf("the panicking source's error is %v, want a PanicError", errs[4])
	}
	if answer != "yes" {
		t.Errorf("the answering source's output is %q", answer)
	}
	if a, f := fanout.AnsweredOf(got), fanout.FailedOf(got); len(a) != 2 || len(f) != 3 {
		t.Errorf("answered %v, failed %d", a, len(f))
	}
}

// TestCache: a kept answer replaces the call, and is reported as cached with when it was
// fetched; a failed call is not kept and feeds nothing.
func TestCache(t *testing.T) {
	cache := &memCache{m: map[string][]byte{}}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	r := &fanout.Runner{Cache: cache, Now: func() time.Time { return now }}
	asked := 0
	var out []int
	call := func(fail bool) fanout.Call {
		return fanout.Call{Source: "s", Key: "k", TTL: time.Hour, Out: &out, Run: func(context.Context) error {
			asked++
			out = []int{1, 2}
			if fail {
				return errors.New("down")
			}
			return nil
		}}
	}
	if got, _ := r.Run(context.Background(), call(true)); got[0].Status != fanout.Failed || out != nil {
		t.Fatalf("failed call: %+v, out %v", got[0], out)
	}
	if got, _ := r.Run(context.Background(), call(false)); got[0].Cached || len(out) != 2 {
		t.Fatalf("first answer: %+v, out %v", got[0], out)
	}
	out, now = nil, now.Add(time.Minute)
	got, _ := r.Run(context.Background(), call(false))
	if !got[0].Cached || got[0].FetchedAt != "2026-11-28T12:00:00Z" || len(out) != 2 || asked != 2 {
		t.Errorf("kept answer: %+v, out %v, asked %d times", got[0], out, asked)
	}
}

// TestMargin: the sources stop the margin before the call's deadline, so the answer can still
// be assembled.
func TestMargin(t *testing.T) {
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(time.Hour))
	defer cancel()
	call, _ := ctx.Deadline()
	var seen time.Time
	errs := (&fanout.Runner{Margin: 10 * time.Minute}).Go(ctx, func(ctx context.Context) error {
		seen, _ = ctx.Deadline()
		return nil
	})
	if errs[0] != nil || !seen.Equal(call.Add(-10*time.Minute)) {
		t.Errorf("sources' deadline %v, want the call's %v less the margin", seen, call)
	}
}
