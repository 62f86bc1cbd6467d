// Command fleet benchmarks the fleet's dispatch on real nats-servers on loopback, side by side
// in one run:
//
//  1. calls per second through dispatch with 1, 2 and 4 boxes on a route whose handler answers
//     in 50 ms, each box running -slots calls at once, with the scaling ratio against 1 box;
//  2. the dispatch overhead: one caller, a handler that answers at once, p50/p99 of a call
//     through the hub, the leaf link and the box against calling the same handler directly;
//  3. a simulated fleet of -fleet boxes (100 by default; 0 skips it), each an embedded leaf
//     server, on a light route: the registry (the time until all are in it, against the time
//     one box took in test 1), the routing (calls/s and how many boxes served, against the
//     same calls over the 4 boxes of test 1), the failover (a tenth of them killed while
//     calls without side effects run: failed calls, which the retry should absorb, the time
//     until the dead have left the rotation, and calls/s meanwhile against before).
//
// Every figure is printed beside a baseline measured in the same run. The whole run takes
// about 40 s on a quiet 2-core machine.
//
// Usage: go run ./ops/bench/fleet [-calls N] [-slots N] [-callers N] [-samples N] [-fleet N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/obs"
)

func main() {
	calls := flag.Int("calls", 800, "calls per configuration in test 1")
	slots := flag.Int("slots", 4, "calls a box runs at once")
	callers := flag.Int("callers", 32, "concurrent callers in test 1")
	samples := flag.Int("samples", 2000, "calls measured in test 2")
	fleetSize := flag.Int("fleet", 100, "boxes of the simulated fleet in test 3 (0: skip)")
	flag.Parse()

	dir, err := os.MkdirTemp("", "bench-fleet-")
	check(err)
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: dir + "/state", StoreDir: dir + "/store", LeafAddr: "127.0.0.1:0"})
	check(err)
	defer h.Close()
	js, err := jetstream.New(h.Conn())
	check(err)
	kv, err := registry.Open(ctx, js, 3*time.Second)
	check(err)
	check(registry.Register(ctx, h.Conn(), kv, obs.Discard()))
	view, err := registry.Watch(ctx, kv, 3*time.Second)
	check(err)
	d, err := dispatch.New(h.Conn(), view, dispatch.Config{})
	check(err)
	defer d.Close()

	slow := func(ctx context.Context, req []byte) ([]byte, error) {
		select {
		case <-time.After(50 * time.Millisecond):
			return req, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	instant := func(_ context.Context, req []byte) ([]byte, error) { return req, nil }

	fmt.Printf("1. calls/s through dispatch, handler 50 ms, %d slots per box, %d callers, %d calls\n", *slots, *callers, *calls)
	var boxes []*box.Box
	var base float64
	var oneJoin time.Duration // the first box's start until it is in the registry
	for _, n := range []int{1, 2, 4} {
		start := time.Now()
		for len(boxes) < n {
			name := fmt.Sprintf("box-%d", len(boxes)+1)
			creds, err := h.Enrol(name)
			check(err)
			b, err := box.Start(ctx, box.Config{Credentials: creds, Slots: *slots,
				Routes: map[string]box.Handler{"slow": slow, "instant": instant}})
			check(err)
			defer b.Close()
			boxes = append(boxes, b)
		}
		waitLive(view, n)
		if n == 1 {
			oneJoin = time.Since(start)
		}
		rate := throughput(ctx, d, *calls, *callers)
		if n == 1 {
			base = rate
		}
		fmt.Printf("   %d box(es): %7.1f calls/s  ratio %.2f (ideal %d)\n", n, rate, rate/base, n)
	}

	fmt.Printf("2. overhead, one caller, handler answers at once, %d calls\n", *samples)
	direct := make([]time.Duration, *samples)
	for i := range direct {
		start := time.Now()
		_, _ = instant(ctx, []byte("q"))
		direct[i] = time.Since(start)
	}
	through := make([]time.Duration, *samples)
	for i := range through {
		start := time.Now()
		_, _, err := d.Do(ctx, "instant", registry.Constraints{}, dispatch.Request{Body: []byte("q")})
		check(err)
		through[i] = time.Since(start)
	}
	p50d, p99d := percentiles(direct)
	p50, p99 := percentiles(through)
	fmt.Printf("   direct:   p50 %v  p99 %v\n", p50d, p99d)
	fmt.Printf("   dispatch: p50 %v  p99 %v  (overhead p50 %v, p99 %v)\n", p50, p99, p50-p50d, p99-p99d)

	if *fleetSize > 0 {
		simulated(ctx, h, view, d, *fleetSize, *callers, oneJoin)
	}
}

// simulated runs test 3 on boxes of their own route, "light", besides the boxes of tests 1-2.
func simulated(ctx context.Context, h *hub.Hub, view *registry.View, d *dispatch.Dispatcher, n, callers int, oneJoin time.Duration) {
	handler := func(_ context.Context, req []byte) ([]byte, error) { return req, nil }
	fmt.Printf("3. simulated fleet of %d boxes, light route, %d callers\n", n, callers)
	calls := 20 * n
	// The baseline: the same calls on the instant route of the 4 boxes of test 1.
	baseRate := run(calls, callers, func() error {
		_, _, err := d.Do(ctx, "instant", registry.Constraints{}, dispatch.Request{Body: []byte("q"), NoSideEffects: true})
		return err
	})
	light := func() int {
		count := 0
		for _, r := range view.Boxes() {
			if r.Serves("light") {
				count++
			}
		}
		return count
	}
	start := time.Now()
	boxes := make([]*box.Box, n)
	for i := range boxes {
		creds, err := h.Enrol(fmt.Sprintf("sim-%03d", i))
		check(err)
		boxes[i], err = box.Start(ctx, box.Config{Credentials: creds, Heartbeat: time.Second,
			Routes: map[string]box.Handler{"light": handler}})
		check(err)
		defer boxes[i].Close()
	}
	waitFor(func() bool { return light() == n })
	joined := time.Since(start)
	fmt.Printf("   registry: all %d in it %v after the first start (one box: %v, ratio %.1f)\n", n, joined.Round(time.Millisecond),
		oneJoin.Round(time.Millisecond), float64(joined)/float64(oneJoin))

	served := map[string]int{}
	var mu sync.Mutex
	rate := run(calls, callers, func() error {
		_, name, err := d.Do(ctx, "light", registry.Constraints{}, dispatch.Request{Body: []byte("q"), NoSideEffects: true})
		mu.Lock()
		served[name]++
		mu.Unlock()
		return err
	})
	fmt.Printf("   routing: %d calls at %.1f calls/s, served by %d boxes (4 boxes: %.1f calls/s, ratio %.2f)\n",
		calls, rate, len(served), baseRate, rate/baseRate)

	dead := boxes[:n/10]
	var failed, answered atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, _, err := d.Do(cctx, "light", registry.Constraints{}, dispatch.Request{Body: []byte("q"), NoSideEffects: true})
				cancel()
				if err != nil {
					failed.Add(1)
				} else {
					answered.Add(1)
				}
			}
		})
	}
	killed := time.Now()
	for _, b := range dead {
		b.Server().Shutdown()
	}
	waitFor(func() bool { return light() == n-len(dead) })
	left := time.Since(killed)
	close(done)
	wg.Wait()
	during := float64(answered.Load()) / time.Since(killed).Seconds()
	fmt.Printf("   failover: %d boxes killed under load, out of the rotation after %v, %d calls failed of %d; %.1f calls/s meanwhile (ratio %.2f to before)\n",
		len(dead), left.Round(time.Millisecond), failed.Load(), failed.Load()+answered.Load(), during, during/rate)
}

func run(calls, callers int, call func() error) float64 {
	work := make(chan struct{}, calls)
	for range calls {
		work <- struct{}{}
	}
	close(work)
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for range work {
				check(call())
			}
		})
	}
	wg.Wait()
	return float64(calls) / time.Since(start).Seconds()
}

func waitFor(cond func() bool) {
	deadline := time.Now().Add(5 * time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			check(fmt.Errorf("bench fleet: condition not met in 5 minutes"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func throughput(ctx context.Context, d *dispatch.Dispatcher, calls, callers int) float64 {
	work := make(chan struct{}, calls)
	for range calls {
		work <- struct{}{}
	}
	close(work)
	var wg sync.WaitGroup
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for range work {
				cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				_, _, err := d.Do(cctx, "slow", registry.Constraints{}, dispatch.Request{Body: []byte("q")})
				cancel()
				check(err)
			}
		})
	}
	wg.Wait()
	return float64(calls) / time.Since(start).Seconds()
}

func waitLive(view *registry.View, n int) {
	deadline := time.Now().Add(30 * time.Second)
	for len(view.Boxes()) < n {
		if time.Now().After(deadline) {
			check(fmt.Errorf("%d boxes live of %d", len(view.Boxes()), n))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2], s[len(s)*99/100]
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench fleet:", err)
		os.Exit(1)
	}
}
