package clientid

import (
	"net/netip"
	"testing"
)

func TestIdentify(t *testing.T) {
	r, err := New([]string{"10.0.0.1", "10.1.0.0/16", "2001:db8:ffff::/48", "::ffff:192.0.2.200"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		peer string
		xff  []string
		want string
	}{
		{"ipv4_peer_without_header", "198.51.100.7", nil, "198.51.100.7"},
		{"spoofed_header_from_untrusted_peer_is_ignored", "198.51.100.7", []string{"203.0.113.9"}, "198.51.100.7"},
		{"spoofed_chain_from_untrusted_peer_is_ignored", "198.51.100.7", []string{"203.0.113.9, 10.0.0.1"}, "198.51.100.7"},
		{"one_trusted_proxy", "10.0.0.1", []string{"198.51.100.7"}, "198.51.100.7"},
		{"one_trusted_proxy_client_prefix_spoofed", "10.0.0.1", []string{"203.0.113.9, 198.51.100.7"}, "198.51.100.7"},
		{"two_trusted_proxies", "10.0.0.1", []string{"198.51.100.7, 10.1.2.3"}, "198.51.100.7"},
		{"two_trusted_proxies_client_prefix_spoofed", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7, 10.1.2.3"}, "198.51.100.7"},
		{"two_headers_are_one_list", "10.0.0.1", []string{"1.2.3.4, 198.51.100.7", "10.1.2.3"}, "198.51.100.7"},
		{"hop_with_port", "10.0.0.1", []string{"198.51.100.7:4711"}, "198.51.100.7"},
		{"ipv6_hop_with_port", "10.0.0.1", []string{"[2001:db8:1:2::5]:4711"}, "2001:db8:1:2::/64"},
		{"malformed_hop_stops_at_last_trusted", "10.0.0.1", []string{"198.51.100.7, garbage, 10.1.2.3"}, "10.1.2.3"},
		{"malformed_only_hop_keeps_peer", "10.0.0.1", []string{"unknown"}, "10.0.0.1"},
		{"empty_hop_is_malformed", "10.0.0.1", []string{"198.51.100.7, "}, "10.0.0.1"},
		{"every_hop_trusted_takes_leftmost", "10.0.0.1", []string{"10.1.0.9, 10.1.2.3"}, "10.1.0.9"},
		{"ipv6_addresses_of_one_64_share_an_identity_a", "2001:db8:1:2::1", nil, "2001:db8:1:2::/64"},
		{"ipv6_addresses_of_one_64_share_an_identity_b", "2001:db8:1:2:aaaa:bbbb:cccc:dddd", nil, "2001:db8:1:2::/64"},
		{"ipv6_next_64_is_another_client", "2001:db8:1:3::1", nil, "2001:db8:1:3::/64"},
		{"ipv4_mapped_peer_is_ipv4", "::ffff:198.51.100.7", nil, "198.51.100.7"},
		{"ipv4_mapped_trusted_peer", "::ffff:10.0.0.1", []string{"::ffff:198.51.100.7"}, "198.51.100.7"},
		{"trusted_given_in_mapped_form", "192.0.2.200", []string{"198.51.100.7"}, "198.51.100.7"},
		{"ipv6_trusted_proxy", "2001:db8:ffff:1::1", []string{"2001:db8:1:2::99"}, "2001:db8:1:2::/64"},
		{"zone_is_dropped", "fe80::1%eth0", nil, "fe80::/64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := r.Identify(netip.MustParseAddr(c.peer), c.xff); got != c.want {
				t.Errorf("Identify(%s, %q) = %q, want %q", c.peer, c.xff, got, c.want)
			}
		})
	}
}

func TestIPv6Prefix(t *testing.T) {
	cases := []struct {
		bits int
		peer string
		want string
	}{
		{48, "2001:db8:1:2::1", "2001:db8:1::/48"},
		{56, "2001:db8:1:2ff::1", "2001:db8:1:200::/56"},
		{128, "2001:db8::1", "2001:db8::1/128"},
		{48, "198.51.100.7", "198.51.100.7"},
	}
	for _, c := range cases {
		r, err := New(nil, c.bits)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Identify(netip.MustParseAddr(c.peer), nil); got != c.want {
			t.Errorf("/%d: Identify(%s) = %q, want %q", c.bits, c.peer, got, c.want)
		}
	}
}

func TestNewRefuses(t *testing.T) {
	cases := []struct {
		name    string
		trusted []string
		bits    int
	}{
		{"hostname", []string{"proxy.example"}, 64},
		{"bad_cidr", []string{"10.0.0.0/33"}, 64},
		{"prefix_too_long", nil, 129},
		{"prefix_negative", nil, -1},
		{"mapped_prefix_wider_than_ipv4", []string{"::ffff:0:0/90"}, 64},
	}
	for _, c := range cases {
		if _, err := New(c.trusted, c.bits); err == nil {
			t.Errorf("%s: accepted", c.name)
		}
	}
}
