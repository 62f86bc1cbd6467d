package relay_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/relay"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/proxyhop"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/freeport"
	"github.com/peage/appliance/internal/loopback"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/proxyd/client"
)

// proxyFleet is a gateway selling proxy packages on its boxes: the hub with its WireGuard
// device, the API server with the proxy routes on the fleet, and the proxy port buyers use.
type proxyFleet struct {
	t    *testing.T
	hub  *hub.Hub
	wg   *tunnel.Gateway
	view *registry.View
	svc  *relay.ProxyService
	// routes are the gateway's proxy routes, whose exit check the test runs once a box is in
	routes *proxyroutes.Routes
	api    *apitest.Harness
	gate   *apitest.RecordingGate
	hop    string // the gateway's proxy port, host:port
}

func startProxyFleet(t *testing.T) *proxyFleet {
	t.Helper()
	gate := &apitest.RecordingGate{}
	f := startProxyFleetWith(t, apitest.Options{Gate: gate})
	f.gate = gate
	return f
}

// startProxyFleetWith serves the gateway with opt (its gate, its payment settings).
func startProxyFleetWith(t *testing.T, opt apitest.Options) *proxyFleet {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	wk, err := tunnel.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	wg, err := tunnel.StartGateway(tunnel.GatewayConfig{PrivateKey: wk, Address: hub.TunnelNetwork.Addr().Next()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(wg.Close)
	h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(dir, "state"), StoreDir: filepath.Join(dir, "store"),
		LeafAddr: freeport.Addr(t), Tunnels: wg, TunnelEndpoint: "127.0.0.1:" + strconv.Itoa(wg.Port())})
	if err != nil {
		t.Fatal(err)
	}
	run, stop := context.WithCancel(context.Background())
	js, _, view, d := serveRegistry(t, ctx, run, h)
	packages, err := registry.OpenPackages(ctx, js)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hopAddr := ln.Addr().(*net.TCPAddr)
	svc := relay.NewProxyService(d, packages, h.TunnelAddr, "127.0.0.1", hopAddr.Port)
	port, err := proxyhop.New(proxyhop.Config{Locate: svc.Locate, Dial: wg.Dial})
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan struct{})
	go func() { _ = port.Serve(run, ln); close(served) }()
	t.Cleanup(func() { stop(); <-served; d.Close(); h.Close() })

	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	routes := proxyroutes.With(svc, nil)
	if err := routes.Rebind(cat); err != nil {
		t.Fatal(err)
	}
	return &proxyFleet{t: t, hub: h, wg: wg, view: view, svc: svc, routes: routes, hop: hopAddr.String(),
		api: apitest.Start(t, cat, opt)}
}

// proxyBox is a box with a real proxyd listening on loopback only, reached by the gateway
// through the WireGuard tunnel the box dials out.
type proxyBox struct {
	name   string
	dir    string
	listen string
	allow  []string
	pub    tunnel.Key
	px     atomic.Pointer[proxyd.Server]
	stopPx func() error
}

// service is the box's proxyd as its routes see it, across a restart of the proxy.
type service struct{ b *proxyBox }

func (s service) Sell(ctx context.Context, gb int) (*client.Sale, error) {
	return s.b.px.Load().Sell(ctx, gb)
}
func (s service) Revoke(ctx context.Context, key string) error { return s.b.px.Load().Revoke(ctx, key) }
func (s service) Usage(ctx context.Context, key string) (*client.Usage, error) {
	return s.b.px.Load().Usage(ctx, key)
}
func (s service) Status(ctx context.Context) (*client.Status, error) {
	return s.b.px.Load().Status(ctx)
}

func (b *proxyBox) startProxy(t *testing.T) {
	t.Helper()
	cfg := proxyd.DefaultConfig()
	cfg.Listen = b.listen
	_, port, _ := net.SplitHostPort(b.listen)
	cfg.PublicPort, _ = strconv.Atoi(port)
	px, stop, err := proxyd.StartDev(context.Background(), cfg, b.dir, b.allow, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.px.Store(px)
	b.stopPx = stop
}

// startBox enrols name, starts its proxyd on loopback, its tunnel (dialling out) and its
// box announcing exit; targets are the loopback servers its proxy may reach.
func (f *proxyFleet) startBox(name string, exit fleet.Exit, targets ...string) *proxyBox {
	t := f.t
	t.Helper()
	creds, err := f.hub.Enrol(name)
	if err != nil {
		t.Fatal(err)
	}
	b := &proxyBox{name: name, dir: t.TempDir(), listen: freeport.Addr(t), allow: targets}
	b.startProxy(t)
	t.Cleanup(func() { _ = b.stopPx() })
	bc, err := tunnel.BoxConfigOf(creds.WireGuard, nil)
	if err != nil {
		t.Fatal(err)
	}
	b.pub = bc.PrivateKey.PublicKey()
	tb, err := tunnel.StartBox(t.Context(), bc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Close)
	ln, err := tb.Listen(fleet.ProxyPort)
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = tunnel.Forward(ctx, ln, b.listen, nil); close(done) }()
	t.Cleanup(func() { stop(); <-done })
	bx, err := box.Start(t.Context(), box.Config{Credentials: creds, Routes: relay.BoxProxyRoutes(service{b}), Exit: exit,
		Heartbeat: 100 * time.Millisecond, ProgressEvery: 100 * time.Millisecond, Reconnect: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bx.Close)
	fleettest.WaitFor(t, "box "+name+" in the registry and its tunnel up", func() bool {
		r, ok := f.view.Box(name)
		return ok && r.Serves(fleet.RouteProxySell) && f.wg.Handshaked(b.pub)
	})
	if err := f.routes.CheckExit(t.Context()); err != nil {
		t.Fatalf("the gateway's exit check through %s: %v", name, err)
	}
	return b
}

// buy sells a package through the gateway's API; status and the decoded sale.
func (f *proxyFleet) buy(q url.Values) (int, proxyroutes.Sale, []byte) {
	status, sale, body, _ := f.buyHeader(q)
	return status, sale, body
}

func (f *proxyFleet) buyHeader(q url.Values) (int, proxyroutes.Sale, []byte, http.Header) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.api.BaseURL+"/v1/proxy/1gb?"+q.Encode(), nil)
	if err != nil {
		f.t.Fatal(err)
	}
	status, header, body := send(f.t, f.api, req)
	var s proxyroutes.Sale
	if status == http.StatusOK {
		if err := json.Unmarshal(body, &s); err != nil {
			f.t.Fatal(err)
		}
	}
	return status, s, body, header
}

// echoTarget is the site a buyer tunnels to: it sends back every byte it reads.
func echoTarget(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	var read atomic.Int64
	addr := loopback.ServeT(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 32<<10)
		for {
			n, err := c.Read(buf)
			read.Add(int64(n))
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				_ = c.(*net.TCPConn).CloseWrite()
				return
			}
		}
	})
	return addr, &read
}

// connect opens a tunnel to target through proxyAddr with key; the status of the answer, and
// the connection when it is 200.
func connect(t *testing.T, proxyAddr, key, target string) (int, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", proxyAddr)
	if err != nil {
		t.Fatal(err)
	}
	auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", target, target, auth)
	// A deadline so that a tunnel that never answers fails the test instead of hanging it.
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		_ = c.Close()
		t.Fatalf("CONNECT through %s: %v", proxyAddr, err)
	}
	_ = c.SetReadDeadline(time.Time{})
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return resp.StatusCode, nil
	}
	if br.Buffered() > 0 {
		t.Fatal("bytes after the 200 before any was sent")
	}
	return resp.StatusCode, c
}

// exchange sends n random bytes and reads what comes back until the far end closes.
func exchange(t *testing.T, c net.Conn, n int) (sent, got []byte) {
	t.Helper()
	sent = make([]byte, n)
	_, _ = rand.Read(sent)
	_ = c.SetDeadline(time.Now().Add(time.Minute)) // a stuck tunnel fails, never hangs
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = c.Write(sent)
		_ = c.(*net.TCPConn).CloseWrite()
	}()
	got, _ = io.ReadAll(c)
	wg.Wait()
	_ = c.Close()
	return sent, got
}

// TestProxyPackageSoldOnABoxWithoutInboundPort: a package sold through the gateway's API on a
// box whose proxyd listens on loopback only; the buyer's tunnel goes to the gateway's proxy
// port and through the WireGuard tunnel the box dialled out, is metered byte for byte by the
// box's proxyd, and is cut at the exact byte of its quota; the meter survives the box's proxy
// restarting. Unknown keys stop at the gateway; a revoked box is out of the tunnel.
func TestProxyPackageSoldOnABoxWithoutInboundPort(t *testing.T) {
	f := startProxyFleet(t)
	target, read := echoTarget(t)
	b := f.startBox("home-1", fleet.Exit{Country: "FR"}, target)

	status, sale, body, hdr := f.buyHeader(url.Values{"country": {"fr"}})
	if status != http.StatusOK || hdr.Get(relay.HeaderBox) != "home-1" || hdr.Get("Content-Type") != "application/json" {
		t.Fatalf("sale through the gateway: %d %v %s; want the package naming home-1", status, hdr, body)
	}
	if !strings.HasSuffix(sale.Proxy, "@"+f.hop) || sale.Exit.Country != "FR" {
		t.Fatalf("sold %s exiting in %s; want the gateway's proxy port %s and an exit in FR", sale.Proxy, sale.Exit.Country, f.hop)
	}
	if charged, _ := f.gate.Counts(); charged != 1 {
		t.Fatalf("charged %d sales, want 1", charged)
	}
	if boxName, err := f.svcBox(sale.Key); err != nil || boxName != "home-1" {
		t.Fatalf("the package is recorded on %q (%v), want home-1", boxName, err)
	}

	// Byte for byte: what passed both ways is what the box's meter shows.
	code, c := connect(t, f.hop, sale.Key, target)
	if code != http.StatusOK {
		t.Fatalf("CONNECT through the gateway: %d", code)
	}
	sent, got := exchange(t, c, 1<<20+13)
	if !bytes.Equal(sent, got) {
		t.Fatalf("echoed %d bytes of %d, or altered", len(got), len(sent))
	}
	var u *client.Usage
	fleettest.WaitFor(t, "the box's meter settles", func() bool {
		var err error
		u, err = f.svc.Usage(t.Context(), sale.Key)
		return err == nil && u.Tunnels == 0
	})
	if want := int64(2 * len(sent)); u.Used != want || read.Load() != int64(len(sent)) {
		t.Fatalf("the box metered %d bytes, the target read %d; want %d both ways", u.Used, read.Load(), want)
	}
	free, _, usageBody := f.usage(sale.Key)
	if free != http.StatusOK || !strings.Contains(string(usageBody), `"used":`+strconv.FormatInt(u.Used, 10)) {
		t.Fatalf("/free/proxy/usage through the gateway: %d %s", free, usageBody)
	}

	// The quota: the box's proxy restarts with the meter 300 KiB short of the package's end
	// (as if that much more had passed), and the next tunnel is cut at its exact byte.
	const left = 300 << 10
	if err := b.stopPx(); err != nil {
		t.Fatal(err)
	}
	st, err := proxyd.OpenStateStore(b.dir, obs.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetUsed(t.Context(), []proxyd.Usage{{ID: proxyhop.KeyHash(sale.Key), Used: sale.Bytes - left}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	b.startProxy(t)
	code, c = connect(t, f.hop, sale.Key, target)
	if code != http.StatusOK {
		t.Fatalf("CONNECT before the quota: %d", code)
	}
	_, got = exchange(t, c, 1<<20)
	u, err = f.svc.Usage(t.Context(), sale.Key)
	if err != nil {
		t.Fatal(err)
	}
	if u.Used != sale.Bytes || u.Remaining != 0 || u.State != "exhausted" || int64(len(got)) >= left {
		t.Fatalf("after the quota: used %d of %d (%s), %d bytes came back; want cut at the exact byte", u.Used, sale.Bytes, u.State, len(got))
	}
	if code, _ := connect(t, f.hop, sale.Key, target); code != http.StatusForbidden {
		t.Fatalf("CONNECT after the quota: %d, want the box's 403", code)
	}

	// A key no box sold stops at the gateway.
	if code, _ := connect(t, f.hop, "pk"+strings.Repeat("0", 40), target); code != http.StatusProxyAuthRequired {
		t.Fatalf("unknown key: %d, want 407", code)
	}
	// Revoking the box removes its WireGuard peer with its nkey: nothing reaches it any more.
	status, sale2, body := f.buy(nil)
	if status != http.StatusOK {
		t.Fatalf("second sale: %d %s", status, body)
	}
	if err := f.hub.Revoke("home-1"); err != nil {
		t.Fatal(err)
	}
	if f.wg.Handshaked(b.pub) {
		t.Fatal("the revoked box is still a peer of the gateway's WireGuard device")
	}
	if code, _ := connect(t, f.hop, sale2.Key, target); code != http.StatusBadGateway {
		t.Fatalf("CONNECT to a revoked box: %d, want 502", code)
	}
}

// TestProxySaleIsPlacedByCountry: the sale goes to a box exiting where the buyer asked, never
// to one elsewhere; where no box exits, 503 and nothing is charged or sold.
func TestProxySaleIsPlacedByCountry(t *testing.T) {
	f := startProxyFleet(t)
	fr := f.startBox("fr-1", fleet.Exit{Country: "FR"})
	de := f.startBox("de-1", fleet.Exit{Country: "DE"})
	for range 4 {
		status, sale, body := f.buy(url.Values{"country": {"FR"}})
		if status != http.StatusOK {
			t.Fatalf("sale in FR: %d %s", status, body)
		}
		if boxName, err := f.svcBox(sale.Key); err != nil || boxName != "fr-1" {
			t.Fatalf("a package asked in FR was sold on %q (%v)", boxName, err)
		}
	}
	if n := de.px.Load().Stats().Packages; n != 0 {
		t.Fatalf("the box exiting in DE sold %d packages asked in FR", n)
	}
	if n := fr.px.Load().Stats().Packages; n != 4 {
		t.Fatalf("the box exiting in FR holds %d packages, want 4", n)
	}
	status, _, body := f.buy(url.Values{"country": {"IT"}})
	if status != http.StatusServiceUnavailable || !strings.Contains(string(body), "IT") {
		t.Fatalf("no box in IT: %d %s; want 503 naming IT", status, body)
	}
	if charged, waived := f.gate.Counts(); charged != 4 || waived != 1 {
		t.Fatalf("charged %d, waived %d; want the 4 sales charged and the refused one not", charged, waived)
	}
	status, _, body = f.buy(url.Values{"country": {"F1"}})
	if status != http.StatusBadRequest || apitest.At(apitest.Decode(t, body), "error", "param") != "country" {
		t.Fatalf("a malformed country: %d %s; want a 400 naming it", status, body)
	}
}

func (f *proxyFleet) svcBox(key string) (string, error) {
	ap, err := f.svc.Locate(f.t.Context(), proxyhop.KeyHash(key))
	if err != nil {
		return "", err
	}
	for _, name := range f.hub.Enrolled() {
		if a, ok := f.hub.TunnelAddr(name); ok && netip.AddrPortFrom(a, fleet.ProxyPort) == ap {
			return name, nil
		}
	}
	return "", fmt.Errorf("no box at %s", ap)
}

func (f *proxyFleet) usage(key string) (int, http.Header, []byte) {
	f.t.Helper()
	req, err := http.NewRequest(http.MethodGet, f.api.BaseURL+"/free/proxy/usage", nil)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set(proxyroutes.KeyHeader, key)
	return send(f.t, f.api, req)
}
