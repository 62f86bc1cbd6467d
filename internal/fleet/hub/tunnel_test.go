package hub_test

import (
	"context"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/freeport"
)

// TestTunnelPeersFollowEnrolment: enrolment gives each box its own key and tunnel address and
// admits the key on the gateway's device; re-enrolling keeps the address and replaces the key;
// revoking removes it; a restarted hub admits every enrolled box's key again.
func TestTunnelPeersFollowEnrolment(t *testing.T) {
	dir := t.TempDir()
	gk, err := tunnel.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	start := func() (*hub.Hub, *tunnel.Gateway) {
		t.Helper()
		g, err := tunnel.StartGateway(tunnel.GatewayConfig{PrivateKey: gk, Address: hub.TunnelNetwork.Addr().Next()})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		h, err := hub.Start(ctx, hub.Config{StateDir: filepath.Join(dir, "state"), StoreDir: filepath.Join(dir, "store"),
			LeafAddr: freeport.Addr(t), Tunnels: g, TunnelEndpoint: "gateway.example.net:51820"})
		if err != nil {
			t.Fatal(err)
		}
		return h, g
	}
	pub := func(w *fleet.WireGuard) tunnel.Key {
		t.Helper()
		k, err := tunnel.ParseKey(w.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		return k.PublicKey()
	}
	h, g := start()
	a, err := h.Enrol("a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := h.Enrol("b")
	if err != nil {
		t.Fatal(err)
	}
	if a.WireGuard == nil || b.WireGuard == nil || a.WireGuard.Address != "10.199.0.2" || b.WireGuard.Address != "10.199.0.3" ||
		a.WireGuard.GatewayKey != gk.PublicKey().String() || a.WireGuard.Endpoint != "gateway.example.net:51820" || a.WireGuard.KeepaliveSeconds != 25 {
		t.Fatalf("enrolment peers: %+v %+v", a.WireGuard, b.WireGuard)
	}
	if !g.HasPeer(pub(a.WireGuard)) || !g.HasPeer(pub(b.WireGuard)) {
		t.Fatal("an enrolled box's key is not admitted")
	}
	a2, err := h.Enrol("a")
	if err != nil {
		t.Fatal(err)
	}
	if a2.WireGuard.Address != a.WireGuard.Address || g.HasPeer(pub(a.WireGuard)) || !g.HasPeer(pub(a2.WireGuard)) {
		t.Fatalf("re-enrolled a at %s: the old key admitted %v, the new %v", a2.WireGuard.Address, g.HasPeer(pub(a.WireGuard)), g.HasPeer(pub(a2.WireGuard)))
	}
	if err := h.Revoke("b"); err != nil {
		t.Fatal(err)
	}
	if g.HasPeer(pub(b.WireGuard)) {
		t.Fatal("a revoked box's key is still admitted")
	}
	if addr, ok := h.TunnelAddr("a"); !ok || addr != netip.MustParseAddr("10.199.0.2") {
		t.Fatalf("TunnelAddr(a) = %v %v", addr, ok)
	}
	h.Close()
	g.Close()

	h, g = start()
	defer h.Close()
	defer g.Close()
	if !g.HasPeer(pub(a2.WireGuard)) || g.HasPeer(pub(b.WireGuard)) {
		t.Fatal("after a restart the device does not admit exactly the enrolled boxes")
	}
	c, err := h.Enrol("c")
	if err != nil {
		t.Fatal(err)
	}
	if c.WireGuard.Address != "10.199.0.3" {
		t.Fatalf("c got %s; want the address b left", c.WireGuard.Address)
	}
}
