package tunnel

import (
	"bytes"
	"context"
	"crypto/rand"
	"io"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/loopback"
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

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within 10 s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
	waitFor(t, "the box's handshake", func() bool { return g.Handshaked(bk.PublicKey()) && b.Handshaked(g.PublicKey()) })

	dctx, dcancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer dcancel()
	c, err := g.Dial(dctx, netip.AddrPortFrom(boxAddr, 3128))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	payload := make([]byte, 3<<20)
	_, _ = rand.Read(payload)
	go func() {
		_, _ = c.Write(ProxyLine(&net.TCPAddr{IP: net.IPv4(192, 0, 2, 7), Port: 40000}, &net.TCPAddr{IP: net.IPv4(198, 51, 100, 1), Port: 3128}))
		_, _ = c.Write(payload)
		_ = c.(interface{ CloseWrite() error }).CloseWrite()
	}()
	got, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, payload) {
		t.Fatalf("echoed %d bytes, want the %d sent, identical", len(got), len(payload))
	}
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
	waitFor(t, "the enrolled box's handshake", func() bool { return g.Handshaked(enrolled.PublicKey()) })
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
	waitFor(t, "the first handshake", func() bool { return g1.Handshaked(bk.PublicKey()) })

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
	waitFor(t, "the box's new handshake", func() bool { return g2.Handshaked(bk.PublicKey()) })
	dctx, dcancel := context.WithTimeout(ctx, 10*time.Second)
	defer dcancel()
	c, err := g2.Dial(dctx, netip.AddrPortFrom(boxAddr, 3128))
	if err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
}
