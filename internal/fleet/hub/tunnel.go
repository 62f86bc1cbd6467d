package hub

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/tunnel"
)

// Tunnels is the gateway's WireGuard device, when the fleet carries proxy tunnels: enrolment
// gives each box a key and an address in the device's network, and the device admits exactly
// the enrolled boxes' keys (a revoked or replaced key is removed with the box's nkey).
type Tunnels interface {
	PublicKey() tunnel.Key
	Address() netip.Addr
	SetPeer(pub tunnel.Key, addr netip.Addr) error
	RemovePeer(pub tunnel.Key) error
}

// TunnelNetwork is the fleet's tunnel network: the gateway takes its first address, boxes the
// following ones (65,533 boxes).
var TunnelNetwork = netip.MustParsePrefix("10.199.0.0/16")

// wgPeer is what the hub keeps of a box's tunnel: the public key beside its nkey, and its
// address.
type wgPeer struct {
	Key  string `json:"key"`
	Addr string `json:"addr"`
}

// ErrTunnelKeyInUse refuses a WireGuard key that already names the gateway's device or another
// box's peer: the device tells peers apart by their key alone.
var ErrTunnelKeyInUse = errors.New("fleet hub: that WireGuard key is already enrolled")

// peerLocked is box's tunnel peer for its public key pub, at the address the box had (kept
// across re-enrolments, so the gateway's packages on it keep reaching it), else the lowest
// free one; nil without a device. Called with h.mu held.
func (h *Hub) peerLocked(box string, pub tunnel.Key) (*wgPeer, error) {
	t := h.cfg.Tunnels
	if t == nil {
		return nil, nil
	}
	if pub == t.PublicKey() {
		return nil, ErrTunnelKeyInUse
	}
	for name, e := range h.boxes {
		if name != box && e.WireGuard != nil && e.WireGuard.Key == pub.String() {
			return nil, ErrTunnelKeyInUse
		}
	}
	addr, err := h.tunnelAddrLocked(box, t.Address())
	if err != nil {
		return nil, err
	}
	return &wgPeer{Key: pub.String(), Addr: addr.String()}, nil
}

// wireGuardOf is p as enrolment hands it to its box, without a private key: the box holds its
// own (Enrol, which makes the key, adds it).
func (h *Hub) wireGuardOf(p *wgPeer) *fleet.WireGuard {
	t := h.cfg.Tunnels
	if p == nil || t == nil {
		return nil
	}
	return &fleet.WireGuard{Address: p.Addr, GatewayAddress: t.Address().String(),
		GatewayKey: t.PublicKey().String(), Endpoint: h.cfg.TunnelEndpoint, KeepaliveSeconds: tunnel.Keepalive}
}

// peerKey is the public key of a box's peer, "" for none.
func peerKey(p *wgPeer) string {
	if p == nil {
		return ""
	}
	return p.Key
}

func (h *Hub) tunnelAddrLocked(box string, gateway netip.Addr) (netip.Addr, error) {
	if e, ok := h.boxes[box]; ok && e.WireGuard != nil {
		if a, err := netip.ParseAddr(e.WireGuard.Addr); err == nil {
			return a, nil
		}
	}
	used := map[netip.Addr]bool{gateway: true}
	for _, e := range h.boxes {
		if e.WireGuard != nil {
			if a, err := netip.ParseAddr(e.WireGuard.Addr); err == nil {
				used[a] = true
			}
		}
	}
	for a := gateway.Next(); TunnelNetwork.Contains(a); a = a.Next() {
		if !used[a] && a != TunnelNetwork.Masked().Addr() {
			return a, nil
		}
	}
	return netip.Addr{}, errors.New("fleet hub: the tunnel network is full")
}

// syncPeer tells the device that prev (if any) is gone and next (if any) is admitted.
func (h *Hub) syncPeer(prev, next *wgPeer) error {
	t := h.cfg.Tunnels
	if t == nil {
		return nil
	}
	if prev != nil && (next == nil || prev.Key != next.Key) {
		if k, err := tunnel.ParseKey(prev.Key); err == nil {
			if err := t.RemovePeer(k); err != nil {
				return fmt.Errorf("fleet hub: remove the tunnel peer: %w", err)
			}
		}
	}
	if next == nil {
		return nil
	}
	k, err := tunnel.ParseKey(next.Key)
	if err != nil {
		return err
	}
	a, err := netip.ParseAddr(next.Addr)
	if err != nil {
		return err
	}
	return t.SetPeer(k, a)
}

// TunnelAddr is box's address in the tunnel network, where the gateway reaches its proxy.
func (h *Hub) TunnelAddr(box string) (netip.Addr, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e, ok := h.boxes[box]
	if !ok || e.WireGuard == nil {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(e.WireGuard.Addr)
	return a, err == nil
}
