package firewall

import (
	"net"
	"net/netip"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func ipnet(cidr string) *net.IPNet {
	ip, n, err := net.ParseCIDR(cidr)
	if err != nil {
		panic(err)
	}
	n.IP = ip // an interface address keeps its host part
	return n
}

func TestLANNetworks(t *testing.T) {
	cases := []struct {
		name   string
		addrs  []string
		v4, v6 []string
	}{
		{"a French home line: private IPv4, global and link-local IPv6",
			[]string{"127.0.0.1/8", "::1/128", "192.168.1.50/24", "2a01:e0a:1f2:3450::50/64", "fe80::1:2/64"},
			nil, []string{"2a01:e0a:1f2:3450::/64"}},
		{"two addresses in one prefix give one network",
			[]string{"2a01:cb00:7a0:1200::10/64", "2a01:cb00:7a0:1200:aaaa::1/64"},
			nil, []string{"2a01:cb00:7a0:1200::/64"}},
		{"a network nested in a wider one is dropped",
			[]string{"2a01:cb00:7a0:1200::10/64", "2a01:cb00:7a0:1200::20/56"},
			nil, []string{"2a01:cb00:7a0:1200::/56"}},
		{"ULA and CGNAT are fixed ranges already",
			[]string{"fd12:3456::50/64", "100.64.3.4/10"}, nil, nil},
		{"a public IPv4 LAN",
			[]string{"198.51.100.34/29"}, []string{"198.51.100.32/29"}, nil},
		{"host routes and implausibly short prefixes name no LAN",
			[]string{"203.0.113.7/32", "2a01:e0a::1/128", "2a01:e0a::1/32", "11.0.0.1/7"}, nil, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var addrs []net.Addr
			for _, a := range tc.addrs {
				addrs = append(addrs, ipnet(a))
			}
			v4, v6 := LANNetworks(addrs)
			if got := strs(v4); !slices.Equal(got, tc.v4) {
				t.Errorf("v4 %v, want %v", got, tc.v4)
			}
			if got := strs(v6); !slices.Equal(got, tc.v6) {
				t.Errorf("v6 %v, want %v", got, tc.v6)
			}
		})
	}
}

func strs(ps []netip.Prefix) []string {
	var out []string
	for _, p := range ps {
		out = append(out, p.String())
	}
	return out
}

func TestScript(t *testing.T) {
	got := Script(nil, []netip.Prefix{netip.MustParsePrefix("2a01:e0a:1f2:3450::/64"), netip.MustParsePrefix("2a01:e0a:1f2:3451::/64")})
	want := "flush set inet peage lan4\n" +
		"flush set inet peage lan6\n" +
		"add element inet peage lan6 { 2a01:e0a:1f2:3450::/64, 2a01:e0a:1f2:3451::/64 }\n"
	if got != want {
		t.Fatalf("script:\n%s\nwant:\n%s", got, want)
	}
}

// TestFixedRangesMatchTheRuleset: the ranges this package skips are exactly the ruleset's
// private4 and private6 sets, so a network is never left out of both.
func TestFixedRangesMatchTheRuleset(t *testing.T) {
	src, err := os.ReadFile("../../ops/nftables/peage.nft")
	if err != nil {
		t.Fatal(err)
	}
	var inRuleset []string
	for _, set := range []string{"private4", "private6"} {
		m := regexp.MustCompile(`(?s)set ` + set + ` \{.*?elements = \{(.*?)\n\t\t\}`).FindSubmatch(src)
		if m == nil {
			t.Fatalf("set %s not found in peage.nft", set)
		}
		for _, line := range strings.Split(string(m[1]), "\n") {
			line, _, _ = strings.Cut(line, "#")
			if e := strings.TrimSuffix(strings.TrimSpace(line), ","); e != "" {
				inRuleset = append(inRuleset, netip.MustParsePrefix(e).String())
			}
		}
	}
	if got := strs(fixed); !slices.Equal(got, inRuleset) {
		t.Fatalf("firewall.fixed %v\nruleset      %v", got, inRuleset)
	}
}
