package egress

import (
	"context"
	"net"
	"net/netip"
	"testing"

	"github.com/peage/appliance/appliance/egress/egresstest"
)

func TestParseIPLoose(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want string
		ok   bool
	}{
		{"127.0.0.1", "127.0.0.1", true},
		{"127.1", "127.0.0.1", true},
		{"2130706433", "127.0.0.1", true},
		{"0x7f000001", "127.0.0.1", true},
		{"0177.0.0.1", "127.0.0.1", true},
		{"10.1", "10.0.0.1", true},
		{"::ffff:127.0.0.1", "127.0.0.1", true},
		{"example.com", "", false},
		{"1.2.3.4.5", "", false},
		{"256.1.1.1", "", false},
		{"0x", "0.0.0.0", true},
	} {
		a, ok := ParseIPLoose(tc.in)
		if ok != tc.ok || (ok && a.String() != tc.want) {
			t.Errorf("ParseIPLoose(%q) = %v %v, want %s %v", tc.in, a, ok, tc.want, tc.ok)
		}
	}
}

func noIfaces() ([]net.Addr, error) { return nil, nil }

func TestResolveRefusesLocalTargets(t *testing.T) {
	p, err := New(Config{Self: []string{"203.0.113.77", "2a01:cb00:1:2::/64"}})
	if err != nil {
		t.Fatal(err)
	}
	p.ifaceAddrs = noIfaces
	for _, host := range []string{
		"127.0.0.1", "localhost", "a.localhost", "127.1", "2130706433", "0x7f000001", "0177.0.0.1",
		"0.0.0.0", "0.1.2.3", "10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.0.1",
		"100.64.0.1", "100.127.255.254", "169.254.169.254", "169.254.1.1", "224.0.0.1", "255.255.255.255",
		"::1", "[::1]", "::", "::ffff:127.0.0.1", "::ffff:10.0.0.1", "64:ff9b::a00:1", "2002:7f00:1::1",
		"fe80::1", "fc00::1", "fd12:3456::1", "fd00:ec2::254", "ff02::1", "2001:db8::1",
		"198.51.100.7", "203.0.113.77", "2a01:cb00:1:2::99",
	} {
		if _, err := p.Resolve(context.Background(), host, 443); !IsBlocked(err) {
			t.Errorf("%s: %v, want blocked", host, err)
		}
	}
	for _, host := range []string{"93.184.215.14", "2a00:1450:4007:80c::200e", "8.8.8.8"} {
		if a, err := p.Resolve(context.Background(), host, 443); err != nil || !a.IsValid() {
			t.Errorf("%s refused: %v", host, err)
		}
	}
	if _, err := p.Resolve(context.Background(), "93.184.215.14", 0); !IsBlocked(err) {
		t.Error("port 0 accepted")
	}
}

func TestResolveAllowList(t *testing.T) {
	p, err := New(Config{Allow: []string{"127.0.0.1:8443", "localhost:9000"}})
	if err != nil {
		t.Fatal(err)
	}
	p.ifaceAddrs = noIfaces
	for _, tc := range []struct {
		host string
		port int
		ok   bool
	}{
		{"127.0.0.1", 8443, true},
		{"127.0.0.1", 8444, false},
		{"localhost", 9000, true},
		{"localhost", 8443, false},
		{"127.1", 8443, true}, // an allowed address is allowed whatever its spelling
		{"10.0.0.1", 8443, false},
	} {
		_, err := p.Resolve(context.Background(), tc.host, tc.port)
		if (err == nil) != tc.ok {
			t.Errorf("%s:%d: %v, want ok=%v", tc.host, tc.port, err, tc.ok)
		}
	}
	if _, err := New(Config{Allow: []string{"nohostport"}}); err == nil {
		t.Error("a malformed allow entry was accepted")
	}
}

// TestResolveHomeLAN: the on-link networks of the box are refused, not only its addresses,
// so a home's IPv6 devices (global addresses) stay out of reach.
func TestResolveHomeLAN(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.ifaceAddrs = func() ([]net.Addr, error) {
		return []net.Addr{
			&net.IPNet{IP: net.ParseIP("2a01:e0a:12:3450::10"), Mask: net.CIDRMask(64, 128)},
			&net.IPNet{IP: net.ParseIP("81.56.7.8").To4(), Mask: net.CIDRMask(32, 32)},
			&net.IPNet{IP: net.ParseIP("127.0.0.1").To4(), Mask: net.CIDRMask(8, 32)},
		}, nil
	}
	for _, host := range []string{"2a01:e0a:12:3450::10", "2a01:e0a:12:3450:abcd::1", "81.56.7.8"} {
		if _, err := p.Resolve(context.Background(), host, 443); !IsBlocked(err) {
			t.Errorf("%s: %v, want blocked", host, err)
		}
	}
	for _, host := range []string{"2a01:e0a:12:3451::1", "81.56.7.9"} {
		if _, err := p.Resolve(context.Background(), host, 443); err != nil {
			t.Errorf("%s refused: %v", host, err)
		}
	}
}

// TestResolveNameToPrivate: a public-looking name whose answer is private is refused, and a
// name with one bad answer among good ones is refused too.
func TestResolveNameToPrivate(t *testing.T) {
	for _, tc := range []struct {
		answers [][4]byte
		blocked bool
	}{
		{[][4]byte{{10, 1, 2, 3}}, true},
		{[][4]byte{{93, 184, 215, 14}, {192, 168, 1, 1}}, true},
		{[][4]byte{{93, 184, 215, 14}}, false},
	} {
		p, err := New(Config{Resolver: egresstest.Resolver(t, tc.answers...)})
		if err != nil {
			t.Fatal(err)
		}
		p.ifaceAddrs = noIfaces
		a, err := p.Resolve(context.Background(), "rebind.example", 443)
		if IsBlocked(err) != tc.blocked {
			t.Errorf("%v: %v %v, want blocked=%v", tc.answers, a, err, tc.blocked)
		}
		if !tc.blocked && a != netip.AddrFrom4(tc.answers[0]) {
			t.Errorf("resolved to %v", a)
		}
	}
}
