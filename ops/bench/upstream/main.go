// Command upstream benchmarks the upstream path of a paid route, side by side in one run:
// /v1/fr/geocode through the real fasthttp server with the appliance's ristretto cache, the
// real route handler and httpc connector, against a local fixture BAN that answers the
// recorded wire format after a simulated network delay.
//
//  1. uncached calls: each call asks a new address, so each one reaches the upstream;
//  2. cache hits: one address asked again and again, served from the cache;
//  3. the connector alone (httpc + decoding, no server), for reference.
//
// Each line gives p50, p99 and calls per second (one client, sequential); the ratio line
// compares the medians. The upstream call counter proves the hits never reached the upstream.
// Usage: go run ./ops/bench/upstream [-n 500] [-delays 0s,20ms]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/ban"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/internal/cache"
)

func main() {
	n := flag.Int("n", 500, "calls per measurement")
	delays := flag.String("delays", "0s,20ms", "simulated upstream latencies, comma-separated (the real BAN answers in tens of ms)")
	fixture := flag.String("fixture", "api/upstream/ban/testdata/search_mazeres.json", "BAN answer served by the fixture upstream")
	flag.Parse()
	body, err := os.ReadFile(*fixture)
	check(err)

	var upstreamCalls, delayNS atomic.Int64
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		upstreamCalls.Add(1)
		time.Sleep(time.Duration(delayNS.Load()))
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer fake.Close()

	specs, err := upstream.Resolve(upstream.Config{Override: map[string]upstream.Override{
		ban.Name: {BaseURL: fake.URL + "/geocodage", RPS: 1e6},
	}})
	check(err)
	quiet := slog.New(slog.DiscardHandler)
	routes, err := fr.With(fr.Parts{Upstreams: specs, HTTP: httpc.Options{Contact: "bench@example.org", Logger: quiet}})
	check(err)
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(routes.Bind(cat))
	c, err := cache.New(cache.Options{})
	check(err)
	defer c.Close()

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
	srv := server.New(cfg, cat, server.Options{Gate: &apitest.RecordingGate{}, Cache: c, Logger: quiet})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = srv.Serve(ctx, ln) }()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	call := func(q string) {
		resp, err := client.Get(cfg.BaseURL + "/v1/fr/geocode?q=" + url.QueryEscape(q))
		check(err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			check(fmt.Errorf("status %d", resp.StatusCode))
		}
	}

	h, err := httpc.New(specs[ban.Name], httpc.Options{Logger: quiet})
	check(err)
	conn := ban.New(h)
	fmt.Printf("upstream bench: /v1/fr/geocode through the server with the ristretto cache, fixture BAN, %d calls each, %s\n", *n, time.Now().UTC().Format(time.RFC3339))
	for run, d := range strings.Split(*delays, ",") {
		delay, err := time.ParseDuration(strings.TrimSpace(d))
		check(err)
		delayNS.Store(int64(delay))
		fmt.Printf("\nupstream delay %s\n   %-34s %10s %10s %10s %10s\n", delay, "path", "p50", "p99", "calls/s", "upstream")
		tag := strconv.Itoa(run)
		before := upstreamCalls.Load()
		missP50 := measure("1. uncached (new address each call)", *n, func(i int) { call("8 bd du port amiens " + tag + " " + strconv.Itoa(i)) }, &upstreamCalls, before)
		same := "12 rue de la paix paris " + tag
		call(same) // warm the entry; ristretto admits asynchronously
		time.Sleep(50 * time.Millisecond)
		before = upstreamCalls.Load()
		hitP50 := measure("2. cache hit (same address)", *n, func(int) { call(same) }, &upstreamCalls, before)
		before = upstreamCalls.Load()
		connP50 := measure("3. connector alone (no server)", *n, func(i int) {
			_, err := conn.Search(context.Background(), "8 bd du port "+tag+" "+strconv.Itoa(i), 5)
			check(err)
		}, &upstreamCalls, before)
		fmt.Printf("   cache hit vs uncached (p50): %.1fx faster (%s vs %s)\n", float64(missP50)/float64(hitP50), hitP50.Round(time.Microsecond), missP50.Round(time.Microsecond))
		fmt.Printf("   server + handler cost of a miss over the connector alone (p50): %s\n", (missP50 - connP50).Round(time.Microsecond))
	}
	st := c.Stats()
	fmt.Printf("\nristretto: hits %d, misses %d, sets rejected %d\n", st.Hits, st.Misses, st.SetsRejected)
}

// measure runs f n times and prints p50, p99, the rate and how many upstream calls it made.
func measure(name string, n int, f func(i int), calls *atomic.Int64, before int64) time.Duration {
	lat := make([]time.Duration, n)
	start := time.Now()
	for i := range n {
		t := time.Now()
		f(i)
		lat[i] = time.Since(t)
	}
	total := time.Since(start)
	slices.Sort(lat)
	p50, p99 := lat[n/2], lat[n*99/100]
	fmt.Printf("   %-34s %10s %10s %10.0f %10d\n", name, p50.Round(time.Microsecond), p99.Round(time.Microsecond), float64(n)/total.Seconds(), calls.Load()-before)
	return p50
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "upstream bench:", err)
		os.Exit(1)
	}
}
