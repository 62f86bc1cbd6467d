// Command relay measures a fleet gateway's overhead on a call: the same route (the French VAT
// number, the French family's real handler) asked of one box's own API server directly, and
// of a gateway's API server that relays it over NATS (an embedded hub, a leaf link over TLS)
// to a box running the same handler. Both servers run the full edge (routing, validation, the
// gate, encoding); the gate lets every call through, so the payment itself is not measured.
// Ratios are against the direct call measured in the same run.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/obs"
)

// passGate runs every call's work without payment: the bench measures the hop, not x402.
type passGate struct{}

func (passGate) Charge(ctx context.Context, _ *paywall.Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	out, err := work(ctx)
	return out, nil, err
}

func main() {
	samples := flag.Int("samples", 2000, "sequential calls measured per server")
	callers := flag.Int("callers", 16, "concurrent callers of the throughput test")
	calls := flag.Int("calls", 4000, "calls of the throughput test per server")
	flag.Parse()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir, err := os.MkdirTemp("", "bench-relay-")
	check(err)
	defer os.RemoveAll(dir)

	direct := serve(ctx, boxCatalog())

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
	gwCat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	check(relay.NewGateway(d, view).Bind(gwCat))
	gateway := serve(ctx, gwCat)
	creds, err := h.Enrol("box-1")
	check(err)
	b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: relay.BoxRoutes(boxCatalog())})
	check(err)
	defer b.Close()
	for !view.Serving(relay.RouteName("fr.tva")) {
		time.Sleep(10 * time.Millisecond)
	}

	url := "/v1/fr/tva?siren=542065479"
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *callers}}
	fmt.Printf("1. one caller, %d calls of %s each\n", *samples, url)
	p50d, p99d := latency(hc, direct+url, *samples)
	p50g, p99g := latency(hc, gateway+url, *samples)
	fmt.Printf("   direct to the box's API:  p50 %v  p99 %v\n", p50d, p99d)
	fmt.Printf("   through the gateway:      p50 %v  p99 %v  (overhead p50 %v, p99 %v; ratio p50 %.2f)\n",
		p50g, p99g, p50g-p50d, p99g-p99d, float64(p50g)/float64(p50d))
	fmt.Printf("2. %d callers, %d calls\n", *callers, *calls)
	rd := throughput(hc, direct+url, *calls, *callers)
	rg := throughput(hc, gateway+url, *calls, *callers)
	fmt.Printf("   direct: %8.0f calls/s\n   gateway: %7.0f calls/s  ratio %.2f\n", rd, rg, rg/rd)
}

func boxCatalog() *catalog.Catalog {
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	specs, err := upstream.Resolve(upstream.Config{})
	check(err)
	french, err := fr.With(fr.Parts{Upstreams: specs})
	check(err)
	check(french.Bind(cat))
	return cat
}

// serve runs the API server over cat on a loopback port and returns its base URL.
func serve(ctx context.Context, cat *catalog.Catalog) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL, cfg.FreePerMinute = ln.Addr().String(), "http://"+ln.Addr().String(), 0
	pay := paywall.DefaultConfig()
	pay.PayTo = "0x000000000000000000000000000000000000dEaD"
	srv := server.New(cfg, cat, server.Options{Gate: passGate{}, Pay: pay})
	go func() { _ = srv.Serve(ctx, ln) }()
	return cfg.BaseURL
}

func get(hc *http.Client, url string) {
	resp, err := hc.Get(url)
	check(err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		check(fmt.Errorf("%s: %s", url, resp.Status))
	}
}

func latency(hc *http.Client, url string, n int) (p50, p99 time.Duration) {
	for range 50 { // warm the connection and the caches
		get(hc, url)
	}
	ds := make([]time.Duration, n)
	for i := range ds {
		start := time.Now()
		get(hc, url)
		ds[i] = time.Since(start)
	}
	slices.Sort(ds)
	return ds[len(ds)/2], ds[len(ds)*99/100]
}

func throughput(hc *http.Client, url string, calls, callers int) float64 {
	var wg sync.WaitGroup
	next := make(chan struct{}, calls)
	for range calls {
		next <- struct{}{}
	}
	close(next)
	start := time.Now()
	for range callers {
		wg.Go(func() {
			for range next {
				get(hc, url)
			}
		})
	}
	wg.Wait()
	return float64(calls) / time.Since(start).Seconds()
}

func check(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench relay:", err)
		os.Exit(1)
	}
}
