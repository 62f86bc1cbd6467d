// Command fleet benchmarks the fleet's dispatch on real nats-servers on loopback, side by side
// in one run:
//
//  1. calls per second through dispatch with 1, 2 and 4 boxes on a route whose handler answers
//     in 50 ms, each box running -slots calls at once, with the scaling ratio against 1 box;
//  2. the dispatch overhead: one caller, a handler that answers at once, p50/p99 of a call
//     through the hub, the leaf link and the box against calling the same handler directly.
//
// Usage: go run ./ops/bench/fleet [-calls N] [-slots N] [-callers N]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"slices"
	"sync"
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
	for _, n := range []int{1, 2, 4} {
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
