// Package clientid names the client of a request for per-client allowances and limits (the
// free first call of a day, the free-call rate limit). A client is an IPv4 address, or an
// IPv6 address masked to a prefix, since one subscriber commonly holds a whole /64.
//
// X-Forwarded-For is believed only as far as the appliance's own trusted proxies wrote it:
// it is read from the right, and only when the direct peer is itself a trusted proxy; the
// first hop that is not a trusted proxy is the client. Anything further left was written by
// the client and is ignored, so a client cannot choose its own identity.
package clientid

import (
	"fmt"
	"net/netip"
	"strings"
)

// DefaultIPv6Prefix is the prefix length that identifies an IPv6 client: the usual size of
// one subscriber's assignment.
const DefaultIPv6Prefix = 64

// Resolver turns a peer address and its X-Forwarded-For chain into a client identity.
type Resolver struct {
	trusted    []netip.Prefix
	ipv6Prefix int
}

// New builds a resolver. trusted lists the proxies in front of the appliance as addresses
// or CIDR prefixes; ipv6Prefix (1..128, 0 for the default) is the length an IPv6 client is
// masked to.
func New(trusted []string, ipv6Prefix int) (*Resolver, error) {
	if ipv6Prefix == 0 {
		ipv6Prefix = DefaultIPv6Prefix
	}
	if ipv6Prefix < 1 || ipv6Prefix > 128 {
		return nil, fmt.Errorf("the IPv6 client prefix must be between 1 and 128, not %d", ipv6Prefix)
	}
	pfx, err := ParsePrefixes(trusted)
	if err != nil {
		return nil, err
	}
	return &Resolver{trusted: pfx, ipv6Prefix: ipv6Prefix}, nil
}

// ParsePrefixes reads addresses ("192.0.2.1", "::1") and prefixes ("10.0.0.0/8") as prefixes.
// IPv4-mapped IPv6 forms are read as the IPv4 they stand for.
func ParsePrefixes(list []string) ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(list))
	for _, s := range list {
		s = strings.TrimSpace(s)
		if strings.Contains(s, "/") {
			p, err := netip.ParsePrefix(s)
			if err != nil {
				return nil, fmt.Errorf("%q is not an address or CIDR prefix", s)
			}
			if a := p.Addr(); a.Is4In6() {
				bits := p.Bits() - 96
				if bits < 0 {
					return nil, fmt.Errorf("%q is wider than the IPv4-mapped range", s)
				}
				p = netip.PrefixFrom(a.Unmap(), bits)
			}
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is not an address or CIDR prefix", s)
		}
		a = a.Unmap().WithZone("")
		out = append(out, netip.PrefixFrom(a, a.BitLen()))
	}
	return out, nil
}

// Identify returns the identity of the client behind peer, given the X-Forwarded-For header
// values in the order they came (several headers are one list, RFC 9110 §5.3).
func (r *Resolver) Identify(peer netip.Addr, forwarded []string) string {
	client := peer.Unmap().WithZone("")
	if len(forwarded) > 0 && r.trusts(client) {
		client = r.walk(client, forwarded)
	}
	return r.identity(client)
}

// walk reads the chain from the right, where the nearest trusted proxy wrote, and stops at
// the first hop that is not a trusted proxy. A malformed hop stops it too, at the last
// well-formed hop: a trusted proxy, which is then the most precise identity that cannot be
// forged.
func (r *Resolver) walk(client netip.Addr, forwarded []string) netip.Addr {
	for i := len(forwarded) - 1; i >= 0; i-- {
		hops := strings.Split(forwarded[i], ",")
		for j := len(hops) - 1; j >= 0; j-- {
			hop, ok := parseHop(hops[j])
			if !ok {
				return client
			}
			client = hop
			if !r.trusts(hop) {
				return client
			}
		}
	}
	return client
}

func (r *Resolver) trusts(a netip.Addr) bool {
	for _, p := range r.trusted {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// identity is the IPv4 address, or the IPv6 prefix the address belongs to.
func (r *Resolver) identity(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	}
	return netip.PrefixFrom(a, r.ipv6Prefix).Masked().String()
}

// parseHop reads one X-Forwarded-For entry: an address, optionally with a port
// ("192.0.2.1:4711", "[2001:db8::1]:4711") as some proxies write it.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
