package relay_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/api/routes/fr"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/x402"
)

const tvaPath = "/v1/fr/tva"

// gateway is an embedded hub with its registry and dispatcher, and the API server of a
// gateway in front of it: every relayable entry bound to the fleet, the gate given.
type gateway struct {
	t     *testing.T
	dir   string // the hub's state and JetStream store
	leaf  string // the hub's leaf listener
	opt   apitest.Options
	edits []func(*catalog.Catalog)
	hub   *hub.Hub
	kv    jetstream.KeyValue
	view  *registry.View
	cat   *catalog.Catalog
	api   *apitest.Harness
	gate  *apitest.RecordingGate
	close func()
}

func startGateway(t *testing.T) *gateway {
	t.Helper()
	gate := &apitest.RecordingGate{}
	g := startGatewayWith(t, apitest.Options{Gate: gate})
	g.gate = gate
	return g
}

// startGatewayWith serves the gateway with opt (its gate, its payment settings, its result
// cache), its catalog given edits before the server starts.
func startGatewayWith(t *testing.T, opt apitest.Options, edits ...func(*catalog.Catalog)) *gateway {
	t.Helper()
	g := &gateway{t: t, dir: t.TempDir(), leaf: freeport.Addr(t), opt: opt, edits: edits}
	g.start()
	t.Cleanup(func() { g.close() })
	return g
}

// start runs the hub on the gateway's state, store and leaf address, its registry and
// dispatcher, and a new API server relaying to them.
func (g *gateway) start() {
	t := g.t
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(g.dir, "state"), StoreDir: filepath.Join(g.dir, "store"), LeafAddr: g.leaf})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(context.Background())
	_, kv, view, d := serveRegistry(t, ctx, run, h)
	g.close = func() { d.Close(); stop(); h.Close() }
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := relay.NewGateway(d, view).Bind(cat); err != nil {
		t.Fatal(err)
	}
	for _, edit := range g.edits {
		edit(cat)
	}
	g.hub, g.kv, g.view, g.cat, g.api = h, kv, view, cat, apitest.Start(t, cat, g.opt)
}

// serveRegistry opens the fleet's registry on h's JetStream (a second's TTL), records the
// boxes' announcements in it and watches it until run ends, and dispatches over it: the
// gateway's side of the fleet, as the daemon composes it.
func serveRegistry(t *testing.T, ctx, run context.Context, h *hub.Hub) (jetstream.JetStream, jetstream.KeyValue, *registry.View, *dispatch.Dispatcher) {
	t.Helper()
	js, err := jetstream.New(h.Conn())
	if err != nil {
		t.Fatal(err)
	}
	kv, err := registry.Open(ctx, js, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := registry.Register(run, h.Conn(), kv, obs.Discard()); err != nil {
		t.Fatal(err)
	}
	view, err := registry.Watch(run, kv, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	d, err := dispatch.New(h.Conn(), view, dispatch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return js, kv, view, d
}

// boxCatalog is a single box's catalog with the French family bound, as `appliance api` binds it.
// boxCatalogBinding is boxCatalog with id bound to h and ready in place of its family's
// handler (an entry is bound once).
func boxCatalogBinding(t *testing.T, id string, h catalog.Handler, ready func() error) *catalog.Catalog {
	t.Helper()
	full := boxCatalog(t)
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range full.Entries() {
		handler, r := e.Handler, e.Ready
		if e.ID == id {
			handler, r = h, ready
		}
		if handler == nil {
			continue
		}
		if err := cat.Bind(e.ID, handler, r); err != nil {
			t.Fatal(err)
		}
	}
	return cat
}

func boxCatalog(t *testing.T) *catalog.Catalog {
	t.Helper()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	specs, err := upstream.Resolve(upstream.Config{})
	if err != nil {
		t.Fatal(err)
	}
	french, err := fr.With(fr.Parts{Upstreams: specs})
	if err != nil {
		t.Fatal(err)
	}
	if err := french.Bind(cat); err != nil {
		t.Fatal(err)
	}
	return cat
}

func (g *gateway) startBox(name string, cat *catalog.Catalog) *box.Box {
	g.t.Helper()
	creds, err := g.hub.Enrol(name)
	if err != nil {
		g.t.Fatal(err)
	}
	b, err := box.Start(g.t.Context(), box.Config{Credentials: creds, Routes: relay.BoxRoutes(cat),
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond, Reconnect: 50 * time.Millisecond})
	if err != nil {
		g.t.Fatal(err)
	}
	g.t.Cleanup(b.Close)
	return b
}

// waitServing waits until the gateway's registry has n boxes serving route.
func (g *gateway) waitServing(route string, n int) {
	g.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		count := 0
		for _, r := range g.view.Boxes() {
			if r.Health == fleet.HealthOK && r.Serves(route) {
				count++
			}
		}
		if count == n {
			return
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("%d boxes serve %s, want %d", count, route, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (g *gateway) get(path string, q url.Values) (int, http.Header, []byte) {
	g.t.Helper()
	return g.paidGet(path, q, nil)
}

// paidGet is get with payment (nil: none) in its PAYMENT-SIGNATURE header.
func (g *gateway) paidGet(path string, q url.Values, payment any) (int, http.Header, []byte) {
	g.t.Helper()
	req, err := http.NewRequest(http.MethodGet, g.api.BaseURL+path+"?"+q.Encode(), nil)
	if err != nil {
		g.t.Fatal(err)
	}
	if payment != nil {
		h, err := x402.Encode(payment)
		if err != nil {
			g.t.Fatal(err)
		}
		req.Header.Set(x402.HeaderPaymentSignature, h)
	}
	return send(g.t, g.api, req)
}

// send sends req to the API server and reads its whole answer.
func send(t *testing.T, api *apitest.Harness, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	resp, err := api.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

func TestRelayedCallIsTheBoxAnswerNamingItsBox(t *testing.T) {
	g := startGateway(t)
	for _, name := range []string{"a", "b", "c"} {
		g.startBox(name, boxCatalog(t))
	}
	// A box whose route is not ready (as a web route without its browser) does not announce
	// it, so it never gets its calls.
	unready := boxCatalogBinding(t, "fr.tva", boxCatalog(t).Entry("fr.tva").Handler, func() error { return errors.New("not on this box") })
	if g.startBox("d", unready).Record("ok").Serves(relay.RouteName("fr.tva")) {
		t.Fatal("box d announces a route it cannot serve")
	}
	route := relay.RouteName("fr.tva")
	g.waitServing(route, 3)

	direct := apitest.Start(t, boxCatalog(t), apitest.Options{Gate: &apitest.RecordingGate{}})
	q := url.Values{"siren": {"542065479"}}
	wantStatus, want := direct.Get(t, tvaPath, q)
	if wantStatus != http.StatusOK {
		t.Fatalf("a single box answers %d %s", wantStatus, want)
	}
	served := map[string]int{}
	const calls = 6
	for range calls {
		status, hdr, body := g.get(tvaPath, q)
		if status != http.StatusOK || string(body) != string(want) {
			t.Fatalf("through the gateway: %d %s; a single box answers %s", status, body, want)
		}
		if ct := hdr.Get("Content-Type"); ct != "application/json" {
			t.Errorf("content type %q", ct)
		}
		served[hdr.Get(relay.HeaderBox)]++
	}
	if len(served) != 3 || served["a"] == 0 || served["b"] == 0 || served["c"] == 0 {
		t.Errorf("calls served by %v, want spread over a, b and c (never d)", served)
	}
	if charged, waived := g.gate.Counts(); charged != calls || waived != 0 {
		t.Errorf("charged %d, waived %d; want %d charged", charged, waived, calls)
	}
}

func TestGatewayRefusesBeforeDispatch(t *testing.T) {
	g := startGateway(t)
	held := newHeld()
	cat := boxCatalogBinding(t, "fr.tva", held.handler("a"), nil)
	g.startBox("a", cat)
	g.waitServing(relay.RouteName("fr.tva"), 1)

	status, _, body := g.get(tvaPath, url.Values{"siren": {"123"}})
	if status != http.StatusBadRequest || apitest.At(apitest.Decode(t, body), "error", "param") != "siren" {
		t.Fatalf("a bad SIREN through the gateway: %d %s; want a 400 naming siren", status, body)
	}
	if charged, waived := g.gate.Counts(); charged+waived != 0 {
		t.Errorf("the gate saw the bad call (charged %d, waived %d)", charged, waived)
	}
	select {
	case name := <-held.started:
		t.Fatalf("box %s ran a call the gateway should have refused", name)
	default:
	}
}

func TestNoBoxIsUnavailableAndFree(t *testing.T) {
	g := startGateway(t)
	status, hdr, body := g.get(tvaPath, url.Values{"siren": {"542065479"}})
	if status != http.StatusServiceUnavailable || hdr.Get(relay.HeaderBox) != "" {
		t.Fatalf("no box: %d %s naming box %q; want 503 naming none", status, body, hdr.Get(relay.HeaderBox))
	}
	if charged, waived := g.gate.Counts(); charged+waived != 0 {
		t.Errorf("a route no box serves reached the gate (charged %d, waived %d)", charged, waived)
	}
}

func TestBoxKilledMidCall(t *testing.T) {
	for _, tc := range []struct {
		name   string
		boxes  []string
		status int
	}{
		{"retried on the other box and charged once", []string{"a", "b"}, http.StatusOK},
		{"alone: 502 and nothing charged", []string{"a"}, http.StatusBadGateway},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := startGateway(t)
			held := newHeld()
			boxes := map[string]*box.Box{}
			for _, name := range tc.boxes {
				cat := boxCatalogBinding(t, "fr.tva", held.handler(name), nil)
				boxes[name] = g.startBox(name, cat)
			}
			g.waitServing(relay.RouteName("fr.tva"), len(tc.boxes))
			type result struct {
				status int
				box    string
				body   []byte
			}
			done := make(chan result, 1)
			go func() {
				status, hdr, body := g.get(tvaPath, url.Values{"siren": {"542065479"}})
				done <- result{status, hdr.Get(relay.HeaderBox), body}
			}()
			victim := <-held.started
			for _, name := range tc.boxes {
				if name != victim {
					close(held.gate(name))
				}
			}
			boxes[victim].Server().Shutdown() // the box dies holding the call
			r := <-done
			if r.status != tc.status {
				t.Fatalf("after %s died: %d %s; want %d", victim, r.status, r.body, tc.status)
			}
			charged, waived := g.gate.Counts()
			if tc.status == http.StatusOK {
				if r.box == victim || r.box == "" || charged != 1 || waived != 0 {
					t.Fatalf("answered by %q, charged %d, waived %d; want the survivor's answer charged once", r.box, charged, waived)
				}
				return
			}
			if charged != 0 || waived != 1 {
				t.Fatalf("charged %d, waived %d; want nothing charged", charged, waived)
			}
			if r.box != victim {
				t.Fatalf("the 502 names box %q; want %s, which failed the call", r.box, victim)
			}
		})
	}
}

// held is a route handler that holds each call until its box's gate opens.
type held struct {
	started chan string
	mu      sync.Mutex
	gates   map[string]chan struct{}
}

func newHeld() *held { return &held{started: make(chan string, 8), gates: map[string]chan struct{}{}} }

func (h *held) gate(name string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gates[name] == nil {
		h.gates[name] = make(chan struct{})
	}
	return h.gates[name]
}

func (h *held) handler(name string) catalog.Handler {
	return func(ctx context.Context, req *catalog.Request) (any, error) {
		h.started <- name
		select {
		case <-h.gate(name):
			return map[string]string{"box": name, "siren": req.Args.Str("siren")}, nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
