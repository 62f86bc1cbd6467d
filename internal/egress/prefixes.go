package egress

import (
	"net"
	"net/netip"
)

// InterfacePrefixes is what the policy takes from interface addresses: each address as a
// host prefix and its plausible on-link network (the home LAN, the delegated IPv6 prefix).
// internal/firewall writes the same networks into the kernel's firewall.
func InterfacePrefixes(addrs []net.Addr) []netip.Prefix { return interfacePrefixes(addrs) }
