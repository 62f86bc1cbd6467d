package hub_test

import (
	"context"
	"errors"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/freeport"
)

// startTunnelHub starts a hub on dir's state and store with a WireGuard device keyed gk,
// whose boxes are told to reach it at gateway.example.net; the caller closes both.
func startTunnelHub(t *testing.T, dir string, gk tunnel.Key) (*hub.Hub, *tunnel.Gateway) {
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
		g.Close()
		t.Fatal(err)
	}
	return h, g
}

// TestTunnelPeersFollowEnrolment: enrolment gives each box its own key and tunnel address and
// admits the key on the gateway's device; re-enrolling keeps the address and replaces the key;
// revoking removes it; a restarted hub admits every enrolled box's key again.
func TestTunnelPeersFollowEnrolment(t *testing.T) {
	dir := t.TempDir()
	gk, err := tunnel.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	pub := func(w *fleet.WireGuard) tunnel.Key {
		t.Helper()
		k, err := tunnel.ParseKey(w.PrivateKey)
		if err != nil {
			t.Fatal(err)
		}
		return k.PublicKey()
	}
	h, g := startTunnelHub(t, dir, gk)
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

	h, g = startTunnelHub(t, dir, gk)
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

// TestRedeemedTokenGivesATunnelPeer: a box redeeming its token with the WireGuard key it made
// gets its tunnel peer in the answer, without any private key, and its key admitted on the
// gateway's device; the answer asked again is the same peer; another box may not enrol the
// same key; a re-enrolment with a new token and key keeps the address and swaps the key; a
// revocation removes it; Enrol (dev) still hands out a peer with its private key.
func TestRedeemedTokenGivesATunnelPeer(t *testing.T) {
	dir := t.TempDir()
	gk, err := tunnel.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	h, g := startTunnelHub(t, dir, gk)
	defer g.Close()
	defer h.Close()
	wgKey := func() tunnel.Key {
		t.Helper()
		k, err := tunnel.GenerateKey()
		if err != nil {
			t.Fatal(err)
		}
		return k.PublicKey()
	}
	redeem := func(box, nkeyPub string, wgPub tunnel.Key) (string, fleet.Credentials, error) {
		t.Helper()
		tok, _, err := h.NewToken(box, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		creds, err := h.Redeem(tok.Secret, box, nkeyPub, wgPub.String())
		return tok.Secret, creds, err
	}

	_, nkeyA := boxKey(t)
	keyA := wgKey()
	secret, a, err := redeem("a", nkeyA, keyA)
	if err != nil {
		t.Fatal(err)
	}
	want := fleet.WireGuard{Address: "10.199.0.2", GatewayAddress: "10.199.0.1", GatewayKey: gk.PublicKey().String(),
		Endpoint: "gateway.example.net:51820", KeepaliveSeconds: 25}
	if a.WireGuard == nil || *a.WireGuard != want {
		t.Fatalf("the redeemed peer: %+v; want %+v (no private key)", a.WireGuard, want)
	}
	if !g.HasPeer(keyA) {
		t.Fatal("the key the box sent is not admitted")
	}
	again, err := h.Redeem(secret, "a", nkeyA, keyA.String())
	if err != nil || again.WireGuard == nil || *again.WireGuard != want {
		t.Fatalf("asked again: %+v %v", again.WireGuard, err)
	}
	if _, err := h.Redeem(secret, "a", nkeyA, wgKey().String()); !errors.Is(err, hub.ErrTokenRefused) {
		t.Fatalf("asked again with another WireGuard key: %v; want refused", err)
	}

	_, nkeyB := boxKey(t)
	for _, stolen := range []tunnel.Key{keyA, gk.PublicKey()} {
		if _, _, err := redeem("b", nkeyB, stolen); !errors.Is(err, hub.ErrTunnelKeyInUse) {
			t.Fatalf("b enrolling a key in use: %v; want ErrTunnelKeyInUse", err)
		}
	}
	if !g.HasPeer(keyA) {
		t.Fatal("a refused enrolment took a's key off the device")
	}

	_, nkeyA2 := boxKey(t)
	keyA2 := wgKey()
	_, a2, err := redeem("a", nkeyA2, keyA2)
	if err != nil {
		t.Fatal(err)
	}
	if a2.WireGuard == nil || a2.WireGuard.Address != want.Address || g.HasPeer(keyA) || !g.HasPeer(keyA2) {
		t.Fatalf("re-enrolled a at %+v: the old key admitted %v, the new %v", a2.WireGuard, g.HasPeer(keyA), g.HasPeer(keyA2))
	}
	if err := h.Revoke("a"); err != nil {
		t.Fatal(err)
	}
	if g.HasPeer(keyA2) {
		t.Fatal("a revoked box's key is still admitted")
	}

	c, err := h.Enrol("c")
	if err != nil {
		t.Fatal(err)
	}
	if c.WireGuard == nil || c.WireGuard.PrivateKey == "" {
		t.Fatalf("Enrol's peer: %+v; want one with its private key", c.WireGuard)
	}
	k, err := tunnel.ParseKey(c.WireGuard.PrivateKey)
	if err != nil || !g.HasPeer(k.PublicKey()) {
		t.Fatalf("Enrol's key is not admitted: %v", err)
	}
}
