// Command market benchmarks /v1/crypto/market, snapshot hit against miss, side by side in one
// run: the real fasthttp server and handler, the real httpc connectors, against local fixture
// upstreams that answer CoinGecko's recorded /global and /coins/markets after a simulated
// network delay (DefiLlama, which has no recording, answers 503 and is declared missing).
//
//  1. misses: the overview's maximum age is 1 ns, so every call refreshes from the upstreams;
//  2. hits: the production maximum age (5 minutes), so every call after the first is served
//     from the shared snapshot.
//
// Each line gives p50, p99 and calls per second (one client, sequential), and how many
// requests reached the upstreams; the ratio line compares the medians. No result cache runs,
// so the figure is the snapshot's alone.
// Usage: go run ./ops/bench/market [-n 300] [-delay 20ms]
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
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/crypto"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/coingecko"
	"github.com/peage/appliance/api/upstream/defillama"
	"github.com/peage/appliance/api/upstream/httpc"
)

func main() {
	n := flag.Int("n", 300, "calls per measurement")
	delay := flag.Duration("delay", 20*time.Millisecond, "simulated upstream latency (CoinGecko answers in tens of ms)")
	flag.Parse()
	global, err := os.ReadFile("api/upstream/coingecko/testdata/global.json")
	check(err)
	markets, err := os.ReadFile("api/upstream/coingecko/testdata/coins_markets.json")
	check(err)

	var calls atomic.Int64
	gecko := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(*delay)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/v3/global":
			_, _ = w.Write(global)
		case "/api/v3/coins/markets":
			_, _ = w.Write(markets)
		default:
			http.NotFound(w, r)
		}
	}))
	defer gecko.Close()
	llama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		time.Sleep(*delay)
		http.Error(w, "unavailable", http.StatusServiceUnavailable)
	}))
	defer llama.Close()

	specs, err := upstream.Resolve(upstream.Config{Override: map[string]upstream.Override{
		coingecko.Name: {BaseURL: gecko.URL + "/api/v3", RPS: 1e6},
		defillama.Name: {BaseURL: llama.URL, RPS: 1e6, Retries: new(int)},
	}})
	check(err)
	quiet := slog.New(slog.DiscardHandler)

	run := func(label string, maxAge time.Duration) time.Duration {
		pool := httpc.NewPool(specs, httpc.Options{Contact: "bench@example.org", Logger: quiet, BreakerThreshold: 1 << 30})
		routes, err := crypto.With(crypto.Parts{Pool: pool, MarketMaxAge: maxAge})
		check(err)
		cat, err := catalog.Default(catalog.DefaultNames())
		check(err)
		check(routes.Bind(cat))
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		check(err)
		cfg := server.DefaultConfig()
		cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
		srv := server.New(cfg, cat, server.Options{Gate: &apitest.RecordingGate{}, Logger: quiet})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() { _ = srv.Serve(ctx, ln) }()
		url := cfg.BaseURL + "/v1/crypto/market"
		get(url) // warm the connection (and, for hits, the snapshot)
		before := calls.Load()
		lat := make([]time.Duration, *n)
		start := time.Now()
		for i := range lat {
			t0 := time.Now()
			get(url)
			lat[i] = time.Since(t0)
		}
		wall := time.Since(start)
		slices.Sort(lat)
		p50, p99 := lat[len(lat)/2], lat[len(lat)*99/100]
		fmt.Printf("%-8s p50 %-10v p99 %-10v %8.0f calls/s  upstream requests %d\n", label, p50, p99,
			float64(*n)/wall.Seconds(), calls.Load()-before)
		return p50
	}
	fmt.Printf("market overview, %d sequential calls, upstream delay %v\n", *n, *delay)
	miss := run("miss", time.Nanosecond)
	hit := run("hit", 5*time.Minute)
	fmt.Printf("ratio    snapshot hit p50 is %.1f× faster than a refresh\n", float64(miss)/float64(hit))
}

func get(url string) {
	resp, err := http.Get(url)
	check(err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "total_market_cap_usd") {
		check(fmt.Errorf("status %d: %s", resp.StatusCode, b))
	}
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench market:", err)
		os.Exit(1)
	}
}
