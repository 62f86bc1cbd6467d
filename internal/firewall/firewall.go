// Package firewall keeps the box's nftables sets of home-LAN networks in step with its
// interfaces. The ruleset (ops/nftables/peage.nft) refuses every fixed private range to the
// confined users; a home LAN's global IPv6 prefix (and, rarely, a public IPv4 LAN) is not a
// fixed range: it comes from the ISP by prefix delegation and changes. Sync reads the on-link
// networks and writes them into the sets lan6 and lan4 in one nft transaction.
package firewall

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"os/exec"
	"slices"
	"strings"

	"github.com/peage/appliance/internal/egress"
)

// Table is the ruleset's table; the sets lan4 and lan6 are in it.
const Table = "inet peage"

// fixed are the ranges the ruleset refuses already (private4 and private6 of peage.nft):
// a network inside one of them needs no entry.
var fixed = func() []netip.Prefix {
	var out []netip.Prefix
	for _, s := range []string{
		"0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
		"192.0.0.0/24", "192.88.99.0/24", "192.168.0.0/16", "198.18.0.0/15", "224.0.0.0/4", "240.0.0.0/4",
		"::/3", "::/96", "::ffff:0:0/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "100::/64",
		"100:0:0:1::/64", "4000::/2", "5f00::/16", "8000::/1", "fc00::/7", "fe80::/10", "ff00::/8",
		"2001::/32", "2001:2::/48", "2001:10::/28", "2001:20::/28", "2001:30::/28", "2002::/16", "3fff::/20",
	} {
		out = append(out, netip.MustParsePrefix(s))
	}
	return out
}()

// LANNetworks are the on-link networks of addrs (an interface's addresses with their masks),
// as the egress guard takes them, that the fixed ranges do not cover, IPv4 and IPv6 apart,
// without duplicates or networks nested in another. The box's own addresses are refused by
// the ruleset already (fib daddr type local).
func LANNetworks(addrs []net.Addr) (v4, v6 []netip.Prefix) {
	for _, pf := range egress.InterfacePrefixes(addrs) {
		if pf.Bits() == pf.Addr().BitLen() || coveredBy(pf, fixed) {
			continue // a host address, or inside a fixed range
		}
		if pf.Addr().Is4() {
			v4 = append(v4, pf)
		} else {
			v6 = append(v6, pf)
		}
	}
	return outermost(v4), outermost(v6)
}

func coveredBy(p netip.Prefix, set []netip.Prefix) bool {
	for _, q := range set {
		if q.Bits() <= p.Bits() && q.Contains(p.Addr()) {
			return true
		}
	}
	return false
}

// outermost drops duplicates and networks inside another (nft refuses overlapping intervals).
func outermost(ps []netip.Prefix) []netip.Prefix {
	slices.SortFunc(ps, func(a, b netip.Prefix) int {
		if a.Bits() != b.Bits() {
			return a.Bits() - b.Bits()
		}
		return a.Addr().Compare(b.Addr())
	})
	var out []netip.Prefix
	for _, p := range ps {
		if !coveredBy(p, out) {
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
	return out
}

// Script is the nft transaction that replaces the sets' contents.
func Script(v4, v6 []netip.Prefix) string {
	var b strings.Builder
	for _, set := range []struct {
		name string
		nets []netip.Prefix
	}{{"lan4", v4}, {"lan6", v6}} {
		fmt.Fprintf(&b, "flush set %s %s\n", Table, set.name)
		if len(set.nets) == 0 {
			continue
		}
		elems := make([]string, len(set.nets))
		for i, p := range set.nets {
			elems[i] = p.String()
		}
		fmt.Fprintf(&b, "add element %s %s { %s }\n", Table, set.name, strings.Join(elems, ", "))
	}
	return b.String()
}

// Sync writes the box's LAN networks into the sets, in one transaction (nft -f applies a file
// atomically), and returns them.
func Sync(ctx context.Context, nft string) (v4, v6 []netip.Prefix, err error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, nil, err
	}
	v4, v6 = LANNetworks(addrs)
	if nft == "" {
		nft = "nft"
	}
	var stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, nft, "-f", "-")
	cmd.Stdin = strings.NewReader(Script(v4, v6))
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return nil, nil, fmt.Errorf("nft: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return v4, v6, nil
}
