package tunnel

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/peage/appliance/internal/fleet"
)

// Interface is the name of the fleet's WireGuard interface on an image with kernel WireGuard.
const Interface = "peage-fleet"

// Networkd is the systemd-networkd configuration of a box's end of the tunnel, for an image
// whose kernel has WireGuard: the interface (.netdev, naming the private key's file, which
// networkd reads as root so the key never sits in a world-readable unit) and its address and
// route to the gateway (.network). Where no kernel WireGuard exists, `appliance join` runs the
// same peer in user space instead (StartBox), and these files are not used.
type Networkd struct {
	NetDev  string // /etc/systemd/network/90-peage-fleet.netdev
	Network string // /etc/systemd/network/90-peage-fleet.network
	// Key is the private key file's content (mode 0640, group systemd-network).
	Key string
}

// RenderNetworkd writes the box's enrolment as networkd files; keyFile is where Key goes.
func RenderNetworkd(box string, w *fleet.WireGuard, keyFile string) (Networkd, error) {
	cfg, err := BoxConfigOf(w, nil)
	if err != nil {
		return Networkd{}, err
	}
	if err := checkEndpoint(w.Endpoint); err != nil {
		return Networkd{}, err
	}
	keepalive := w.KeepaliveSeconds
	if keepalive <= 0 {
		keepalive = Keepalive
	}
	host := func(a netip.Addr) string { return netip.PrefixFrom(a, a.BitLen()).String() }
	var nd strings.Builder
	fmt.Fprintf(&nd, "# péage fleet: box %s's tunnel to its gateway, from its enrolment (appliance join).\n", box)
	fmt.Fprintf(&nd, "# The box dials out; nothing listens for the gateway on this line.\n")
	fmt.Fprintf(&nd, "[NetDev]\nName=%s\nKind=wireguard\nDescription=péage fleet tunnel\n\n", Interface)
	fmt.Fprintf(&nd, "[WireGuard]\nPrivateKeyFile=%s\n\n", keyFile)
	fmt.Fprintf(&nd, "[WireGuardPeer]\nPublicKey=%s\nEndpoint=%s\nAllowedIPs=%s\nPersistentKeepalive=%d\n",
		cfg.Gateway, w.Endpoint, host(cfg.GatewayAddress), keepalive)
	var nw strings.Builder
	fmt.Fprintf(&nw, "# péage fleet: box %s's tunnel address; its proxy listens on %s.\n",
		box, netip.AddrPortFrom(cfg.Address, fleet.ProxyPort))
	fmt.Fprintf(&nw, "[Match]\nName=%s\n\n[Network]\nAddress=%s\n\n[Route]\nDestination=%s\n",
		Interface, host(cfg.Address), host(cfg.GatewayAddress))
	return Networkd{NetDev: nd.String(), Network: nw.String(), Key: cfg.PrivateKey.String() + "\n"}, nil
}

// checkEndpoint checks that an endpoint is host:port (networkd resolves a name itself).
func checkEndpoint(hostport string) error {
	i := strings.LastIndex(hostport, ":")
	if i <= 0 || i == len(hostport)-1 {
		return fmt.Errorf("tunnel: endpoint %q is not host:port", hostport)
	}
	return nil
}
