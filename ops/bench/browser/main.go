// Command browser benchmarks the browser farm side by side in one run, on local pages:
//
//  1. warm /v1/extract handler latency (farm job + main-content extraction), p50/p95, one
//     call at a time, on a small page and on an article page;
//  2. pages per second at the pool's concurrency, farm vs a baseline that launches a fresh
//     headless Chromium for every page (no pool, same flags, same egress proxy, same
//     extraction), with the ratio;
//  3. resident memory per browser;
//  4. recovery: time from killing one browser (and then all of them) to the pool serving
//     again.
//
// It serves the pages on 127.0.0.1 and lets the farm reach only that address.
// Usage: go run ./ops/bench/browser [-size N] [-pages N] [-latency N] [-latency-only]
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/ops/benchutil"
)

func main() {
	size := flag.Int("size", 0, "browsers in the pool (0: the default for this machine)")
	pages := flag.Int("pages", 40, "pages per throughput run")
	latency := flag.Int("latency", 40, "sequential calls per latency run")
	quiet := flag.Duration("quiet", 0, "override the farm's settle_quiet (0: the default)")
	latencyOnly := flag.Bool("latency-only", false, "run part 1 alone (warm latency), to compare two versions of the farm cheaply")
	flag.Parse()
	check(benchutil.Requires("chromium"))
	ctx := context.Background()

	site := httptest.NewServer(farmtest.Site(&farmtest.Hooks{Waiting: make(chan struct{}, 1)}))
	defer site.Close()
	policy, err := egress.New(egress.Config{Allow: []string{strings.TrimPrefix(site.URL, "http://")}})
	check(err)
	cfg := browserfarm.DefaultConfig()
	if *size > 0 {
		cfg.Size = *size
	}
	if *quiet > 0 {
		cfg.SettleQuiet = *quiet
	}
	cfg.RecycleJobs = 0 // recycling would mix launch time into the latency figures
	cfg.Queue = 4 * *pages
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	t0 := time.Now()
	farm, err := browserfarm.New(ctx, cfg, policy, log)
	check(err)
	closeFarm = farm.Close
	defer farm.Close()
	waitUp(farm, cfg.Size)
	fmt.Printf("farm of %d browsers up in %v (%d cores)\n\n", cfg.Size, time.Since(t0).Round(time.Millisecond), numCPU())

	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(web.With(farm, policy).Bind(cat))
	extract := cat.Entry("extract").Handler
	call := func(path string) error {
		cctx, cancel := context.WithTimeout(ctx, 45*time.Second)
		defer cancel()
		_, err := extract(cctx, &catalog.Request{Args: catalog.Args{"url": site.URL + path}})
		return err
	}
	for range 2 * cfg.Size { // warm every browser's first tab
		check(call("/short"))
	}

	fmt.Println("1. warm /v1/extract latency, one call at a time")
	fmt.Printf("   %-10s %8s %8s %8s\n", "page", "p50", "p95", "max")
	for _, p := range []string{"/short", "/article"} {
		var ds, idle []time.Duration
		for range *latency {
			s := time.Now()
			check(call(p))
			ds = append(ds, time.Since(s))
		}
		for range *latency {
			waitIdle(farm)
			s := time.Now()
			check(call(p))
			idle = append(idle, time.Since(s))
		}
		fmt.Printf("   %-10s %8v %8v %8v   back to back\n", p, pct(ds, 50), pct(ds, 95), pct(ds, 100))
		fmt.Printf("   %-10s %8v %8v %8v   pool idle before each call\n", p, pct(idle, 50), pct(idle, 95), pct(idle, 100))
	}

	fmt.Println("\n   where a warm job's time goes on /short (farm only, pool idle before each call):")
	var nav, wait, ext, total []time.Duration
	for range *latency {
		waitIdle(farm)
		cctx, cancel := context.WithTimeout(ctx, 45*time.Second)
		s := time.Now()
		res, err := farm.Do(cctx, browserfarm.Task{URL: site.URL + "/short"})
		cancel()
		check(err)
		total = append(total, time.Since(s))
		nav, wait, ext = append(nav, res.Timings.Navigate), append(wait, res.Timings.Wait), append(ext, res.Timings.Extract)
	}
	fmt.Printf("   p50: navigate %v, wait (load; no %v quiet DOM: the page runs nothing) %v, read %v, whole job %v\n",
		pct(nav, 50), cfg.SettleQuiet, pct(wait, 50), pct(ext, 50), pct(total, 50))

	if *latencyOnly {
		return
	}

	fmt.Printf("\n2. throughput on /article at concurrency %d (%d pages each)\n", cfg.Size, *pages)
	farmRate := rate(*pages, cfg.Size, func() error { return call("/article") })
	baseRate := rate(max(*pages/4, cfg.Size), cfg.Size, func() error {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		_, err := browserfarm.OneShot(cctx, cfg, policy, browserfarm.Task{URL: site.URL + "/article"})
		return err
	})
	fmt.Printf("   %-34s %8.2f pages/s\n", "farm (pooled, warm tabs)", farmRate)
	fmt.Printf("   %-34s %8.2f pages/s\n", "baseline (new Chromium per page)", baseRate)
	fmt.Printf("   %-34s %8.2fx   (target >= 2x)\n", "ratio farm / baseline", farmRate/baseRate)

	st := farm.Stats()
	fmt.Printf("\n3. memory (PSS): %d MB for %d browsers = %d MB per browser (after the runs)\n",
		st.MemoryMB, st.BrowsersUp, st.MemoryMB/max(1, st.BrowsersUp))

	fmt.Println("\n4. recovery after a kill -9 of the browser process group")
	pids := farm.BrowserPIDs()
	s := time.Now()
	check(syscall.Kill(-pids[0], syscall.SIGKILL))
	untilServed(call)
	served := time.Since(s)
	waitUp(farm, cfg.Size)
	fmt.Printf("   one of %d killed: next call served after %v, pool complete after %v\n",
		cfg.Size, served.Round(time.Millisecond), time.Since(s).Round(time.Millisecond))
	s = time.Now()
	for _, pid := range farm.BrowserPIDs() {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	untilServed(call)
	served = time.Since(s)
	waitUp(farm, cfg.Size)
	fmt.Printf("   all %d killed: first call served after %v, pool complete after %v (target < 2s)\n",
		cfg.Size, served.Round(time.Millisecond), time.Since(s).Round(time.Millisecond))
	fmt.Printf("\nfarm stats: %+v\n", farm.Stats())
}

// untilServed calls until one succeeds: a call that lands on a browser not yet seen dead
// gets 503, and a client retries.
func untilServed(call func(string) error) {
	for tries := 0; call("/short") != nil; tries++ {
		if tries > 100 {
			check(fmt.Errorf("the pool did not recover"))
		}
	}
}

// rate runs n calls with conc workers and returns calls per second; a failed call aborts.
func rate(n, conc int, fn func() error) float64 {
	var next atomic.Int64
	var wg sync.WaitGroup
	var firstErr error
	var mu sync.Mutex
	s := time.Now()
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for next.Add(1) <= int64(n) {
				if err := fn(); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	check(firstErr)
	return float64(n) / time.Since(s).Seconds()
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(time.Millisecond)
}

func waitUp(f *browserfarm.Farm, n int) {
	for f.Stats().BrowsersUp < n {
		time.Sleep(5 * time.Millisecond)
	}
}

// waitIdle waits until every browser has its next tab ready (the pool is quiet).
func waitIdle(f *browserfarm.Farm) {
	for !f.Idle() {
		time.Sleep(5 * time.Millisecond)
	}
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

// closeFarm stops the browsers when the run ends early.
var closeFarm = func() {}

func check(err error) {
	if err != nil {
		closeFarm()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
