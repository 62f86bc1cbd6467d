// Command farmshare measures the browser farm's sharing between callers in one run, on local
// pages, with two farms side by side: one with the per-payer and per-client caps in place
// (the defaults: half the pool each), one with the caps at the pool's size (one caller may
// hold every browser, as before the caps):
//
//  1. a paid /v1/extract (the route's handler, with its caller in the context as the server
//     puts it) on an idle farm, p50/p95, calls alternating between the two farms;
//  2. the same call while 15 payers, from one client, hold the farm with pages that never
//     settle (a spinning script, a document that never ends): served or not, and its latency,
//     on each farm.
//
// Usage: go run ./ops/bench/farmshare [-size N] [-calls N]
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
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/caller"
	"github.com/peage/appliance/internal/egress"
)

const attackers = 15

type bench struct {
	name    string
	farm    *browserfarm.Farm
	extract catalog.Handler
}

func main() {
	size := flag.Int("size", 0, "browsers in each pool (0: the default for this machine)")
	calls := flag.Int("calls", 40, "calls per farm for the idle latency")
	flag.Parse()
	ctx := context.Background()

	site := httptest.NewServer(farmtest.Site(&farmtest.Hooks{Waiting: make(chan struct{}, 1)}))
	defer site.Close()
	policy, err := egress.New(egress.Config{Allow: []string{strings.TrimPrefix(site.URL, "http://")}})
	check(err)
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	start := func(name string, tune func(*browserfarm.Config)) *bench {
		cfg := browserfarm.DefaultConfig()
		if *size > 0 {
			cfg.Size = *size
		}
		cfg.RecycleJobs = 0 // recycling would mix launch time into the latency figures
		tune(&cfg)
		farm, err := browserfarm.New(ctx, cfg, policy, log)
		check(err)
		closers = append(closers, farm.Close)
		cat, err := catalog.Default(catalog.DefaultNames())
		check(err)
		check(web.With(farm, policy).Bind(cat))
		for !farm.Idle() {
			time.Sleep(5 * time.Millisecond)
		}
		return &bench{name: name, farm: farm, extract: cat.Entry("extract").Handler}
	}
	capped := start("caps in place", func(*browserfarm.Config) {})
	uncapped := start("caps at pool size", func(c *browserfarm.Config) { c.PayerBrowsers, c.ClientBrowsers = c.Size, c.Size })
	defer closeAll()
	st := capped.farm.Stats()
	fmt.Printf("two farms of %d browsers (%d cores); caps in place: %d per payer, %d per client\n\n",
		st.Size, numCPU(), st.PayerBrowsers, st.ClientBrowsers)

	victim := caller.ID{Client: "198.51.100.9", Payer: "0xvictim"}
	for _, b := range []*bench{capped, uncapped} { // warm every browser's first tab
		for range 2 * st.Size {
			_, err := b.call(ctx, victim, site.URL+"/short", 45*time.Second)
			check(err)
		}
	}

	fmt.Println("1. paid /v1/extract on /article, farm idle before each call, calls alternating")
	fmt.Printf("   %-20s %8s %8s\n", "farm", "p50", "p95")
	lat := map[*bench][]time.Duration{}
	for range *calls {
		for _, b := range []*bench{capped, uncapped} {
			b.waitIdle()
			d, err := b.call(ctx, victim, site.URL+"/article", 45*time.Second)
			check(err)
			lat[b] = append(lat[b], d)
		}
	}
	for _, b := range []*bench{capped, uncapped} {
		fmt.Printf("   %-20s %8v %8v\n", b.name, pct(lat[b], 50), pct(lat[b], 95))
	}
	fmt.Printf("   ratio of p50s, caps in place / at pool size: %.2f\n", float64(pct(lat[capped], 50))/float64(pct(lat[uncapped], 50)))

	fmt.Printf("\n2. the same call while %d payers from one client hold the farm with pages that never settle\n", attackers)
	for _, b := range []*bench{capped, uncapped} {
		actx, cancel := context.WithCancel(ctx)
		refused := make(chan error, attackers)
		for i := range attackers {
			who := caller.ID{Client: "203.0.113.66", Payer: fmt.Sprintf("0xattacker%02d", i)}
			page := []string{"/hang", "/spin"}[i%2]
			go func() {
				_, err := b.call(actx, who, fmt.Sprintf("%s%s?a=%d", site.URL, page, i), 45*time.Second)
				refused <- err
			}()
		}
		for s := b.farm.Stats(); s.JobsRunning+s.QueueDepth+int(s.Rejected) < attackers; s = b.farm.Stats() {
			time.Sleep(10 * time.Millisecond)
		}
		s := b.farm.Stats()
		var served []time.Duration
		var failure error
		for range 5 {
			d, err := b.call(ctx, victim, site.URL+"/article", 10*time.Second)
			if err != nil {
				failure = err
				break
			}
			served = append(served, d)
		}
		fmt.Printf("   %-20s attack: %d running, %d waiting, %d refused\n", b.name, s.JobsRunning, s.QueueDepth, s.Rejected)
		if failure != nil {
			fmt.Printf("   %-20s victim: not served (%v)\n", "", short(failure))
		} else {
			fmt.Printf("   %-20s victim: 5 calls served, p50 %v, max %v (idle p50 %v: %.2fx)\n", "", pct(served, 50), pct(served, 100),
				pct(lat[b], 50), float64(pct(served, 50))/float64(pct(lat[b], 50)))
		}
		cancel()
		b.farm.Close()
	}
}

// call runs the extract handler as the server does for a paid call of who, within d.
func (b *bench) call(ctx context.Context, who caller.ID, url string, d time.Duration) (time.Duration, error) {
	cctx, cancel := context.WithTimeout(caller.With(ctx, who), d)
	defer cancel()
	s := time.Now()
	_, err := b.extract(cctx, &catalog.Request{Args: catalog.Args{"url": url}, ClientIP: who.Client, Payer: who.Payer})
	return time.Since(s), err
}

func (b *bench) waitIdle() {
	for !b.farm.Idle() {
		time.Sleep(5 * time.Millisecond)
	}
}

func short(err error) string {
	if e := farmerr.As(err); e != nil {
		return e.Message
	}
	return err.Error()
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[max(0, min(len(s)-1, i-1))].Round(time.Millisecond)
}

func numCPU() int {
	b, _ := os.ReadFile("/proc/cpuinfo")
	return strings.Count(string(b), "processor\t:")
}

var closers []func()

func closeAll() {
	for _, c := range closers {
		c()
	}
}

func check(err error) {
	if err != nil {
		closeAll()
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}
