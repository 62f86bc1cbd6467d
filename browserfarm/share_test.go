package browserfarm_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/caller"
)

// TestPaidJobsFirstAndFreeJobsWithinTheirShare runs two browsers whose free share is one:
// free jobs never run two at once even with a browser idle, a paid job submitted after
// waiting free jobs starts before them, and free jobs beyond their queue get 429 at once.
func TestPaidJobsFirstAndFreeJobsWithinTheirShare(t *testing.T) {
	small, err := farmtest.StartTuned(2, 4, func(c *browserfarm.Config) { c.FreeShare = 0.5; c.FreeQueue = 2 })
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	held := small.Hooks.Held
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	results := make(chan error, 8)
	submitted := 0
	submit := func(id string, free bool) {
		submitted++
		go func() {
			_, err := small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/held?id=" + id), Free: free})
			if err != nil {
				err = fmt.Errorf("%s: %w", id, err)
			}
			results <- err
		}()
	}
	expect := func(want string) {
		t.Helper()
		select {
		case id := <-held.Arrived():
			if id != want {
				t.Fatalf("%s reached the page first, want %s", id, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s to reach the page: %v", want, ctx.Err())
		}
	}
	// Every poll also checks the share, so a farm that breaks it fails here at once.
	waitFor := func(what string, ok func(browserfarm.Stats) bool) {
		t.Helper()
		for {
			s := small.Farm.Stats()
			if s.FreeRunning > 1 {
				t.Fatalf("%d free jobs running, share is 1", s.FreeRunning)
			}
			if ok(s) {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: stats %+v", what, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	// Both browsers up and waiting, so a free job that may start finds one at once.
	for !small.Farm.Idle() {
		if ctx.Err() != nil {
			t.Fatalf("the farm never became idle: %+v", small.Farm.Stats())
		}
		time.Sleep(10 * time.Millisecond)
	}

	submit("free-1", true)
	expect("free-1")
	// The other browser is idle, but the free share is taken: free-2 waits.
	submit("free-2", true)
	waitFor("free-2 to wait", func(s browserfarm.Stats) bool { return s.FreeQueued == 1 && s.FreeRunning == 1 })
	submit("paid-1", false)
	expect("paid-1")

	// Both browsers busy; free-2 and free-3 fill the free queue, paid-2 comes after them.
	submit("free-3", true)
	waitFor("free-3 to wait", func(s browserfarm.Stats) bool { return s.FreeQueued == 2 })
	_, err = small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/short"), Free: true})
	if e := farmerr.As(err); e == nil || e.Kind != farmerr.Busy || e.RetryAfter < time.Second {
		t.Fatalf("a free job beyond the free queue: %v, want 429 busy with Retry-After", err)
	}
	submit("paid-2", false)
	waitFor("paid-2 to wait", func(s browserfarm.Stats) bool { return s.QueueDepth == 3 })

	held.Release("free-1")
	expect("paid-2") // the browser free-1 left goes to the later paid job
	held.Release("paid-1")
	expect("free-2")
	held.Release("paid-2")
	held.Release("free-2")
	expect("free-3")
	held.Release("free-3")

	for range submitted {
		if err := <-results; err != nil {
			t.Error(err)
		}
	}
	if p := held.Peak("free"); p != 1 {
		t.Errorf("%d free jobs ran at once, share is 1", p)
	}
	waitFor("the free share to be given back", func(s browserfarm.Stats) bool { return s.FreeRunning == 0 && s.FreeQueued == 0 })
	if st := small.Farm.Stats(); st.Rejected != 1 || st.FreeSlots != 1 || st.FreeCap != 2 {
		t.Errorf("stats after the run: %+v", st)
	}
}

// TestStrikesDemoteAStallingCaller: a payer whose pages hold their browser until the job's
// deadline twice is demoted with its client: although one of the two browsers is idle, its
// second job waits while another caller's job, submitted after it, runs at once. Before its
// strikes the same payer holds both browsers.
func TestStrikesDemoteAStallingCaller(t *testing.T) {
	small, err := farmtest.StartTuned(2, 4, func(c *browserfarm.Config) {
		c.JobTimeout = 6 * time.Second // the held pages are released by the test within it, even on a loaded machine
		c.PayerBrowsers, c.ClientBrowsers = 2, 2
	})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	held := small.Hooks.Held
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	staller := caller.With(ctx, caller.ID{Client: "203.0.113.66", Payer: "0xStaller"})
	other := caller.With(ctx, caller.ID{Client: "198.51.100.9", Payer: "0xOther"})
	waitFor := func(what string, ok func(browserfarm.Stats) bool) {
		t.Helper()
		for s := small.Farm.Stats(); !ok(s); s = small.Farm.Stats() {
			if ctx.Err() != nil {
				t.Fatalf("waiting for %s: stats %+v", what, s)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("the farm to be idle", func(browserfarm.Stats) bool { return small.Farm.Idle() })
	expect := func(want string) {
		t.Helper()
		select {
		case id := <-held.Arrived():
			if id != want {
				t.Fatalf("%s reached the page first, want %s", id, want)
			}
		case <-ctx.Done():
			t.Fatalf("waiting for %s to reach the page: %v", want, ctx.Err())
		}
	}
	results := make(chan error, 8)
	submit := func(ctx context.Context, id string) {
		go func() {
			_, err := small.Farm.Do(ctx, browserfarm.Task{URL: small.URL("/held?id=" + id)})
			results <- err
		}()
	}

	// In good standing, the payer holds both browsers.
	submit(staller, "good-1")
	expect("good-1")
	submit(staller, "good-2")
	expect("good-2")
	held.Release("good-1")
	held.Release("good-2")
	for range 2 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
	// Two pages that never end, each held to the job's deadline.
	for i := range 2 {
		_, err := small.Farm.Do(staller, browserfarm.Task{URL: small.URL(fmt.Sprintf("/hang?n=%d", i))})
		if code(err) != farmerr.Timeout {
			t.Fatalf("a page that never ends: %v", err)
		}
	}
	if s := small.Farm.Stats(); s.Strikes != 2 || s.Demoted != 2 {
		t.Fatalf("after two stalls: %d strikes, %d callers demoted; want 2 and 2 (the payer and its client)", s.Strikes, s.Demoted)
	}
	waitFor("the farm to be idle", func(browserfarm.Stats) bool { return small.Farm.Idle() })
	submit(staller, "demoted-1")
	expect("demoted-1")
	submit(staller, "demoted-2")
	waitFor("demoted-2 to wait", func(s browserfarm.Stats) bool { return s.QueueDepth == 1 && s.JobsRunning == 1 })
	submit(other, "other-1")
	expect("other-1")
	held.Release("demoted-1")
	expect("demoted-2")
	held.Release("other-1")
	held.Release("demoted-2")
	for range 3 {
		if err := <-results; err != nil {
			t.Fatal(err)
		}
	}
}
