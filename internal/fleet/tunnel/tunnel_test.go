package tunnel

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet/fleettest"
	"github.com/peage/appliance/internal/loopback"
	"github.com/peage/appliance/internal/obs/obstest"
)

var (
	gwAddr  = netip.MustParseAddr("10.199.0.1")
	boxAddr = netip.MustParseAddr("10.199.0.2")
)

func key(t *testing.T) Key {
	t.Helper()
	k, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func startGateway(t *testing.T) (*Gateway, Key) {
	t.Helper()
	k := key(t)
	g, err := StartGateway(GatewayConfig{PrivateKey: k, Address: gwAddr})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Close)
	return g, k
}

func startBox(t *testing.T, g *Gateway, k Key) *Box {
	t.Helper()
	b, err := StartBox(context.Background(), BoxConfig{PrivateKey: k, Address: boxAddr, Gateway: g.PublicKey(),
		GatewayAddress: gwAddr, Endpoint: netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(g.Port())).String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// echoServer is the stand-in for the box's loopback service behind the tunnel: it sends back
// what it reads, then closes its side when the reader half-closes.
func echoServer(t *testing.T) string {
	t.Helper()
	return loopback.ServeT(t, func(c net.Conn) {
		_, _ = io.Copy(c, c)
		_ = c.(*net.TCPConn).CloseWrite()
	})
}

// startEchoBox starts the box of key k behind g, its tunnel port 3128 forwarded to an echo
// server until the test ends.
func startEchoBox(t *testing.T, g *Gateway, k Key) *Box {
	t.Helper()
	b := startBox(t, g, k)
	ln, err := b.Listen(3128)
	if err != nil {
		t.Fatal(err)
	}
	target := echoServer(t)
	go func() { _ = Forward(t.Context(), ln, target, nil) }()
	return b
}

// TestBoxDialsOutAndServesThroughTheTunnel: the box's port exists only in its netstack; the
// gateway reaches it once the box's own handshake told the gateway where it is, and a stream
// crosses byte for byte both ways, half-close included.
func TestBoxDialsOutAndServesThroughTheTunnel(t *testing.T) {
	g, _ := startGateway(t)
	bk := key(t)
	if err := g.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	b := startEchoBox(t, g, bk)
	fleettest.WaitFor(t, "the box's handshake", func() bool { return g.Handshaked(bk.PublicKey()) && b.Handshaked(g.PublicKey()) })

	echoes(t, g, 3<<20)
}

// TestForgedOrRevokedKeyGetsNothingThrough: a peer whose key the gateway was never given, at an
// enrolled box's address, completes no handshake and receives no connection; a revoked box
// loses its tunnel the same way.
func TestForgedOrRevokedKeyGetsNothingThrough(t *testing.T) {
	g, _ := startGateway(t)
	enrolled := key(t)
	if err := g.SetPeer(enrolled.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	forged := startBox(t, g, key(t))
	ln, err := forged.Listen(3128)
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			accepted <- struct{}{}
			_ = c.Close()
		}
	}()
	dctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if c, err := g.Dial(dctx, netip.AddrPortFrom(boxAddr, 3128)); err == nil {
		_ = c.Close()
		t.Fatal("the gateway reached a peer it never enrolled")
	}
	select {
	case <-accepted:
		t.Fatal("the forged peer received a connection")
	default:
	}
	if forged.Handshaked(g.PublicKey()) || g.Handshaked(enrolled.PublicKey()) {
		t.Fatal("a handshake completed with a key the gateway does not hold")
	}
	_ = ln.Close()
	forged.Close()

	// The enrolled box works, then is revoked.
	startEchoBox(t, g, enrolled)
	fleettest.WaitFor(t, "the enrolled box's handshake", func() bool { return g.Handshaked(enrolled.PublicKey()) })
	c, err := g.Dial(t.Context(), netip.AddrPortFrom(boxAddr, 3128))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	if err := g.RemovePeer(enrolled.PublicKey()); err != nil {
		t.Fatal(err)
	}
	dctx2, cancel2 := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel2()
	if c, err := g.Dial(dctx2, netip.AddrPortFrom(boxAddr, 3128)); err == nil {
		_ = c.Close()
		t.Fatal("the gateway still reaches a revoked box")
	}
}

func TestKeysAreWireGuardKeys(t *testing.T) {
	// RFC 7748 section 6.1's Alice: the private key and its public key.
	priv, err := ParseKey("dwdtCnMYpX08FsFyUbJmRd9ML4frwJkqsXf7pR25LCo=")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := priv.PublicKey().String(), "hSDwCYkwp1R0i33ctD73Wg2/Og0mOBr066SpjqqbTmo="; got != want {
		t.Fatalf("public key %s, want %s", got, want)
	}
	k := key(t)
	if k[0]&7 != 0 || k[31]&128 != 0 || k[31]&64 == 0 {
		t.Fatal("a generated key is not clamped")
	}
	if back, err := ParseKey(k.String()); err != nil || back != k {
		t.Fatalf("round trip: %v", err)
	}
}

// TestBoxComesBackAfterTheGatewayRestarts: a restarted gateway (same key and port, the box
// set again as a peer) neither has the session nor knows where the box is; when the box's link
// to the hub comes back, the box handshakes again at once and its port is reachable.
func TestBoxComesBackAfterTheGatewayRestarts(t *testing.T) {
	gk := key(t)
	g1, err := StartGateway(GatewayConfig{PrivateKey: gk, Address: gwAddr})
	if err != nil {
		t.Fatal(err)
	}
	bk := key(t)
	if err := g1.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	b := startEchoBox(t, g1, bk)
	ctx := t.Context()
	var linked atomic.Bool
	linked.Store(true)
	seenDown := make(chan struct{}, 1)
	go b.FollowLink(ctx, func() bool {
		up := linked.Load()
		if !up {
			select {
			case seenDown <- struct{}{}:
			default:
			}
		}
		return up
	}, 20*time.Millisecond)
	fleettest.WaitFor(t, "the first handshake", func() bool { return g1.Handshaked(bk.PublicKey()) })

	port := g1.Port()
	g1.Close()
	linked.Store(false) // the hub went down with the gateway
	<-seenDown
	g2, err := StartGateway(GatewayConfig{PrivateKey: gk, Address: gwAddr, Listen: port})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if err := g2.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	if g2.Handshaked(bk.PublicKey()) {
		t.Fatal("a fresh device reports a handshake")
	}
	linked.Store(true) // the box's leaf link is back
	fleettest.WaitFor(t, "the box's new handshake", func() bool { return g2.Handshaked(bk.PublicKey()) })
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	c, err := g2.Dial(dctx, netip.AddrPortFrom(boxAddr, 3128))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}

// udpRelay stands for the address the gateway is reached at: it carries one client's (the
// box's) datagrams to the gateway's device and the answers back, until closed. Closing it
// is the gateway leaving that address.
type udpRelay struct {
	front, back *net.UDPConn
	datagrams   atomic.Int64 // from the box
}

func startRelay(t *testing.T, listen string, gatewayPort int) *udpRelay {
	t.Helper()
	front, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(listen)))
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.DialUDP("udp", nil, &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: gatewayPort})
	if err != nil {
		t.Fatal(err)
	}
	r := &udpRelay{front: front, back: back}
	var client atomic.Pointer[netip.AddrPort]
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := front.ReadFromUDPAddrPort(buf)
			if err != nil {
				return
			}
			client.Store(&from)
			r.datagrams.Add(1)
			_, _ = back.Write(buf[:n])
		}
	}()
	go func() {
		buf := make([]byte, 65535)
		for {
			n, err := back.Read(buf)
			if err != nil {
				return
			}
			if to := client.Load(); to != nil {
				_, _ = front.WriteToUDPAddrPort(buf[:n], *to)
			}
		}
	}()
	t.Cleanup(r.close)
	return r
}

func (r *udpRelay) close() {
	_ = r.front.Close()
	_ = r.back.Close()
}

func (r *udpRelay) port() int { return r.front.LocalAddr().(*net.UDPAddr).Port }

// movableName is a resolver the test controls: the gateway's name points where it is told,
// or does not resolve.
type movableName struct {
	at      atomic.Pointer[netip.Addr]
	broken  atomic.Bool
	lookups atomic.Int64
}

func (m *movableName) point(a string) {
	addr := netip.MustParseAddr(a)
	m.at.Store(&addr)
}

func (m *movableName) lookup(_ context.Context, host string) ([]netip.Addr, error) {
	m.lookups.Add(1)
	if host != "gateway.fleet.test" || m.broken.Load() {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return []netip.Addr{*m.at.Load()}, nil
}

// startNamedBox starts the box of key k with the gateway's endpoint a name, its tunnel port
// forwarded to an echo server, and follows the name as join does, with a stale handshake of
// 300 ms instead of 135 s.
func startNamedBox(t *testing.T, gw Key, k Key, port int, name *movableName, log *slog.Logger) *Box {
	t.Helper()
	b, err := StartBox(t.Context(), BoxConfig{PrivateKey: k, Address: boxAddr, Gateway: gw, GatewayAddress: gwAddr,
		Endpoint: net.JoinHostPort("gateway.fleet.test", strconv.Itoa(port)), Lookup: name.lookup, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ln, err := b.Listen(3128)
	if err != nil {
		t.Fatal(err)
	}
	target := echoServer(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { _ = Forward(ctx, ln, target, nil); done <- struct{}{} }()
	go func() { b.FollowEndpoint(ctx, 20*time.Millisecond, 300*time.Millisecond); done <- struct{}{} }()
	t.Cleanup(func() { cancel(); <-done; <-done })
	return b
}

// echoes checks that a stream of size bytes crosses the tunnel from g to the box and back, byte
// for byte.
func echoes(t *testing.T, g *Gateway, size int) {
	t.Helper()
	dctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	c, err := g.Dial(dctx, netip.AddrPortFrom(boxAddr, 3128))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(10 * time.Second))
	payload := make([]byte, size)
	_, _ = rand.Read(payload)
	go func() {
		_, _ = c.Write(ProxyLine(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}, &net.TCPAddr{IP: net.IPv4(198, 51, 100, 1), Port: 3128}))
		_, _ = c.Write(payload)
		_ = c.(interface{ CloseWrite() error }).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("echoed %d bytes (%v), want the %d sent, identical", len(got), err, len(payload))
	}
}

// TestBoxFollowsItsGatewayToANewAddress: the gateway is re-created at another address behind
// the same name (its old address gone); the box, whose handshakes find no answer, looks the
// name up again, sets its peer at the new address and its tunnel carries bytes again, without
// a restart.
func TestBoxFollowsItsGatewayToANewAddress(t *testing.T) {
	gk, bk := key(t), key(t)
	g1, err := StartGateway(GatewayConfig{PrivateKey: gk, Address: gwAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer g1.Close()
	if err := g1.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	old := startRelay(t, "127.0.0.1:0", g1.Port())
	var name movableName
	name.point("127.0.0.1")
	b := startNamedBox(t, gk.PublicKey(), bk, old.port(), &name, nil)
	fleettest.WaitFor(t, "the first handshake", func() bool { return g1.Handshaked(bk.PublicKey()) })
	echoes(t, g1, 64<<10)

	// The VM is re-created: same key, another address, the name moved to it.
	g1.Close()
	old.close()
	g2, err := StartGateway(GatewayConfig{PrivateKey: gk, Address: gwAddr})
	if err != nil {
		t.Fatal(err)
	}
	defer g2.Close()
	if err := g2.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	moved := startRelay(t, "127.0.0.2:"+strconv.Itoa(old.port()), g2.Port())
	name.point("127.0.0.2")
	fleettest.WaitFor(t, "the box's handshake at the gateway's new address", func() bool { return g2.Handshaked(bk.PublicKey()) })
	if got := b.Endpoint(); got != netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), uint16(old.port())) || moved.datagrams.Load() == 0 {
		t.Fatalf("the box sends to %s (%d datagrams through the new address)", got, moved.datagrams.Load())
	}
	echoes(t, g2, 64<<10)
}

// TestBoxKeepsItsGatewayWhileTheNameDoesNotResolve: a name that stops resolving leaves the
// tunnel at its last address, still carrying bytes; the box keeps asking, says so once, and
// follows the name when it resolves again (to a new address).
func TestBoxKeepsItsGatewayWhileTheNameDoesNotResolve(t *testing.T) {
	g, gk := startGateway(t)
	bk := key(t)
	if err := g.SetPeer(bk.PublicKey(), boxAddr); err != nil {
		t.Fatal(err)
	}
	old := startRelay(t, "127.0.0.1:0", g.Port())
	var name movableName
	name.point("127.0.0.1")
	var logs obstest.LogSink
	b := startNamedBox(t, gk.PublicKey(), bk, old.port(), &name, slog.New(slog.NewTextHandler(&logs, nil)))
	fleettest.WaitFor(t, "the first handshake", func() bool { return g.Handshaked(bk.PublicKey()) })

	name.broken.Store(true)
	asked := name.lookups.Load()
	fleettest.WaitFor(t, "the box asking for the name again and again", func() bool { return name.lookups.Load() >= asked+10 })
	echoes(t, g, 64<<10)
	if got := b.Endpoint().Addr(); got != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("the box moved to %s while the name did not resolve", got)
	}
	if n := strings.Count(logs.String(), "does not resolve"); n != 1 {
		t.Fatalf("%d log lines about the name, want 1:\n%s", n, logs.String())
	}

	before := g.lastHandshake(bk.PublicKey())
	moved := startRelay(t, "127.0.0.2:"+strconv.Itoa(old.port()), g.Port())
	name.point("127.0.0.2")
	name.broken.Store(false)
	old.close()
	fleettest.WaitFor(t, "the box's handshake through the new address", func() bool {
		return moved.datagrams.Load() > 0 && g.lastHandshake(bk.PublicKey()).After(before)
	})
	if got := b.Endpoint().Addr(); got != netip.MustParseAddr("127.0.0.2") {
		t.Fatalf("the box sends to %s", got)
	}
	echoes(t, g, 64<<10)
	if !strings.Contains(logs.String(), "resolves again") || !strings.Contains(logs.String(), "address changed") {
		t.Fatalf("the box did not say the name came back and moved:\n%s", logs.String())
	}
}
