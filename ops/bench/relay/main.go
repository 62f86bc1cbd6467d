// Command relay measures a fleet gateway's overhead on a call: the same route (the French VAT
// number, the French family's real handler) asked of one box's own API server directly, and
// of a gateway's API server that relays it over NATS (an embedded hub, a leaf link over TLS)
// to a box running the same handler. Both servers run the full edge (routing, validation, the
// gate, encoding); the gate lets every call through, so the payment itself is not measured.
// Ratios are against the direct call measured in the same run.
//
// Then the scaling: calls/s through the gateway with 1, 2 and 4 boxes on a route whose
// upstream answers in 50 ms (the French geocoder, its recorded answer served by a local
// server after 50 ms), against 1 box.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
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
	calls := flag.Int("calls", 4000, "calls of the throughput test per server (an eighth of them in the scaling test)")
	scaleCallers := flag.Int("scale-callers", 64, "concurrent callers of the scaling test")
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
	tva := relay.RouteName("fr.tva") // only: the scaling test's boxes serve the geocoder
	b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: map[string]box.Handler{tva: relay.BoxRoutes(boxCatalog())[tva]}})
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
	fmt.Printf("   through the gateway:      p50 %v  p99 %v  (overhead p50 %v, p99 %v; ratio p50 %.2f, p99 %.2f)\n",
		p50g, p99g, p50g-p50d, p99g-p99d, float64(p50g)/float64(p50d), float64(p99g)/float64(p99d))
	fmt.Printf("2. %d callers, %d calls\n", *callers, *calls)
	rd := throughput(hc, direct+url, *calls, *callers)
	rg := throughput(hc, gateway+url, *calls, *callers)
	fmt.Printf("   direct: %8.0f calls/s\n   gateway: %7.0f calls/s  ratio %.2f\n", rd, rg, rg/rd)

	slowCalls := *calls / 8
	fmt.Printf("3. %d callers, %d calls of /v1/fr/geocode through the gateway, its upstream answering in 50 ms, 8 slots per box\n", *scaleCallers, slowCalls)
	upstreamURL := slowUpstream(ctx)
	geocode := gateway + "/v1/fr/geocode?q=" + neturl.QueryEscape("21 rue des ardennes, Paris")
	var base float64
	for n := 1; n <= 4; n *= 2 {
		for have := countServing(view, "fr_geocode"); have < n; have++ {
			creds, err := h.Enrol(fmt.Sprintf("geo-%d", have+1))
			check(err)
			b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: geocodeRoutes(upstreamURL)})
			check(err)
			defer b.Close()
		}
		for countServing(view, "fr_geocode") < n {
			time.Sleep(10 * time.Millisecond)
		}
		rate := throughput(hc, geocode, slowCalls, *scaleCallers)
		if n == 1 {
			base = rate
		}
		fmt.Printf("   %d box(es): %7.1f calls/s  ratio %.2f (ideal %d)\n", n, rate, rate/base, n)
	}
}

// slowUpstream serves the geocoder's recorded answer (api/upstream/ban/testdata, see its
// PROVENANCE) after 50 ms, and returns its base URL.
func slowUpstream(ctx context.Context) string {
	answer, err := os.ReadFile("api/upstream/ban/testdata/search_paris_ardennes.json")
	check(err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	check(err)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(50 * time.Millisecond):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	})}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + ln.Addr().String()
}

// geocodeRoutes are a box's relayable routes with the French family reaching the geocoder
// at base, without the public service's rate limit (the bench measures the fleet).
func geocodeRoutes(base string) map[string]box.Handler {
	cat, err := catalog.Default(catalog.DefaultNames())
	check(err)
	specs, err := upstream.Resolve(upstream.Config{Override: map[string]upstream.Override{"ban": {BaseURL: base, RPS: 1e6}}})
	check(err)
	french, err := fr.With(fr.Parts{Upstreams: specs})
	check(err)
	check(french.Bind(cat))
	return relay.BoxRoutes(cat)
}

func countServing(view *registry.View, route string) int {
	n := 0
	for _, r := range view.Boxes() {
		if r.Serves(route) {
			n++
		}
	}
	return n
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
