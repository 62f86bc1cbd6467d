package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/egress/egresstest"
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

// TestLearnedSelfIsRefused: an address learned at an exit check is refused by every policy
// sharing the learned set, even where an allow entry names it (hairpin NAT to the box's public
// address lands on the home router); loopback is never learned, so dev's allow entries hold.
func TestLearnedSelfIsRefused(t *testing.T) {
	shared := &Learned{}
	allow := []string{"81.56.7.8:443", "127.0.0.1:8443", "[2a01:e0a:12:3450::10]:443"}
	proxyPol, err := New(Config{Allow: allow, Learned: shared, Interfaces: noIfaces})
	if err != nil {
		t.Fatal(err)
	}
	farmPol, err := New(Config{Allow: allow, Learned: shared, Interfaces: noIfaces})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(Config{Allow: allow, Interfaces: noIfaces})
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"81.56.7.8", "2a01:e0a:12:3450::10"} {
		if _, err := farmPol.Resolve(context.Background(), host, 443); err != nil {
			t.Fatalf("%s refused before it was learned: %v", host, err)
		}
	}
	for _, learn := range []string{"81.56.7.8", "::ffff:81.56.7.8", "2a01:e0a:12:3450::10", "127.0.0.1", "::1", "0.0.0.0"} {
		proxyPol.LearnSelf(netip.MustParseAddr(learn))
	}
	if got := shared.Addrs(); len(got) != 2 {
		t.Fatalf("learned %v, want the two public addresses only", got)
	}
	for _, tc := range []struct {
		pol     *Policy
		host    string
		port    int
		blocked bool
	}{
		{proxyPol, "81.56.7.8", 443, true},
		{farmPol, "81.56.7.8", 443, true},
		{farmPol, "1362626312", 443, true}, // 81.56.7.8 spelled as a number
		{farmPol, "2a01:e0a:12:3450::10", 443, true},
		{farmPol, "127.0.0.1", 8443, false},
		{farmPol, "81.56.7.9", 443, false},
		{other, "81.56.7.8", 443, false}, // a policy with its own set learned nothing
	} {
		_, err := tc.pol.Resolve(context.Background(), tc.host, tc.port)
		if IsBlocked(err) != tc.blocked || (!tc.blocked && err != nil) {
			t.Errorf("%s:%d: %v, want blocked=%v", tc.host, tc.port, err, tc.blocked)
		}
	}
	// A name allowed by an entry but answering the learned address is refused as well.
	named, err := New(Config{Allow: []string{"exit.example:443"}, Learned: shared, Interfaces: noIfaces,
		Resolver: egresstest.Resolver(t, [4]byte{81, 56, 7, 8})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := named.Resolve(context.Background(), "exit.example", 443); !IsBlocked(err) {
		t.Errorf("allowed name resolving to the learned address: %v, want blocked", err)
	}
}

func TestLearnedKeepsTheNewest(t *testing.T) {
	var l Learned
	for i := range MaxLearned + 3 {
		l.Add(netip.AddrFrom4([4]byte{81, 56, 7, byte(i + 1)}))
	}
	got := l.Addrs()
	if len(got) != MaxLearned || l.Contains(netip.MustParseAddr("81.56.7.1")) || !l.Contains(netip.AddrFrom4([4]byte{81, 56, 7, MaxLearned + 3})) {
		t.Fatalf("kept %v", got)
	}
}

// TestInterfacesAreReread: a changed address list (a new delegated prefix, a new lease) is
// picked up once the reading is older than the refresh period, and not before.
func TestInterfacesAreReread(t *testing.T) {
	var mu sync.Mutex
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	lan := "2a01:e0a:12:3450::10"
	reads := 0
	p, err := New(Config{InterfaceRefresh: 30 * time.Second,
		Now: func() time.Time { mu.Lock(); defer mu.Unlock(); return now },
		Interfaces: func() ([]net.Addr, error) {
			mu.Lock()
			defer mu.Unlock()
			reads++
			return []net.Addr{&net.IPNet{IP: net.ParseIP(lan), Mask: net.CIDRMask(64, 128)}}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	set := func(addr string, advance time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		lan, now = addr, now.Add(advance)
	}
	for _, step := range []struct {
		name      string
		addr      string
		advance   time.Duration
		old, new  string
		oldRefuse bool
		newRefuse bool
	}{
		{"first reading", lan, 0, "2a01:e0a:12:3450::99", "2a01:e0a:77:8800::99", true, false},
		{"prefix changed, reading still fresh", "2a01:e0a:77:8800::10", 10 * time.Second, "2a01:e0a:12:3450::99", "2a01:e0a:77:8800::99", true, false},
		{"reading stale: re-read", "2a01:e0a:77:8800::10", 25 * time.Second, "2a01:e0a:12:3450::99", "2a01:e0a:77:8800::99", false, true},
	} {
		set(step.addr, step.advance)
		_, errOld := p.Resolve(context.Background(), step.old, 443)
		_, errNew := p.Resolve(context.Background(), step.new, 443)
		if IsBlocked(errOld) != step.oldRefuse || IsBlocked(errNew) != step.newRefuse {
			t.Errorf("%s: old %s → %v, new %s → %v", step.name, step.old, errOld, step.new, errNew)
		}
	}
	if reads != 2 {
		t.Errorf("%d readings of the interfaces, want 2 (one per refresh period)", reads)
	}
}

// TestInterfaceReadingFailureKeepsTheLast: a failed re-read must not open the LAN.
func TestInterfaceReadingFailureKeepsTheLast(t *testing.T) {
	now := time.Unix(0, 0)
	fail := false
	p, err := New(Config{Now: func() time.Time { return now }, Interfaces: func() ([]net.Addr, error) {
		if fail {
			return nil, errors.New("netlink: busy")
		}
		return []net.Addr{&net.IPNet{IP: net.ParseIP("81.56.7.8").To4(), Mask: net.CIDRMask(32, 32)}}, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range []bool{false, true} {
		fail, now = f, now.Add(time.Hour)
		if _, err := p.Resolve(context.Background(), "81.56.7.8", 443); !IsBlocked(err) {
			t.Errorf("reading %d (fail=%v): %v, want blocked", i, f, err)
		}
	}
}

// TestConcurrentLearnAndCheck is for the race detector: learning and re-reading while
// checking.
func TestConcurrentLearnAndCheck(t *testing.T) {
	var clock atomic.Int64
	p, err := New(Config{InterfaceRefresh: time.Nanosecond, Interfaces: noIfaces,
		Now: func() time.Time { return time.Unix(0, clock.Add(1)) }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				p.LearnSelf(netip.AddrFrom4([4]byte{81, 56, byte(g), byte(i)}))
				_ = p.Check(netip.AddrFrom4([4]byte{81, 57, byte(g), byte(i)}))
			}
		}()
	}
	wg.Wait()
	if n := len(p.learned.Addrs()); n != MaxLearned {
		t.Fatalf("%d learned, want %d", n, MaxLearned)
	}
}

func TestCheckURL(t *testing.T) {
	p, err := New(Config{Allow: []string{"127.0.0.1:8080", "localhost:9000"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		url  string
		want string // "" when accepted before payment
	}{
		{"https://example.com/", ""},
		{"http://127.0.0.1/", "loopback"},
		{"http://2130706433/admin", "loopback"},
		{"http://[::1]:8443/", "loopback"},
		{"http://169.254.169.254/latest/meta-data/", "metadata"},
		{"http://10.1.2.3/", "private"},
		{"http://localhost/", "loopback"},
		{"http://127.0.0.1:8080/page", ""},
		{"http://localhost:9000/", ""},
	} {
		err := p.CheckURL(tc.url)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: refused: %v", tc.url, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: %v, want a refusal naming %q", tc.url, err, tc.want)
		}
	}
}

// TestSpecialPurposeRangesRefused is one address of every range of the IANA special-purpose
// registries that is not globally reachable (and of the reserved IPv6 space outside
// 2000::/3), through Resolve as an address literal and through Check, each with the reason
// the caller is told.
func TestSpecialPurposeRangesRefused(t *testing.T) {
	p, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	p.ifaceAddrs = noIfaces
	for _, tc := range []struct {
		addr, reason string
	}{
		{"192.88.99.1", "6to4 relay anycast"},
		{"192.88.99.255", "6to4 relay anycast"},
		{"::127.0.0.1", "an IPv4-compatible IPv6 address"},
		{"::8.8.8.8", "an IPv4-compatible IPv6 address"},
		{"::ffff:8.8.8.8", "an IPv4-mapped IPv6 address"},
		{"::ffff:0:8.8.8.8", "an IPv4-translated IPv6 address"},
		{"::ffff:0:127.0.0.1", "an IPv4-translated IPv6 address"},
		{"100::1", "discard-only space"},
		{"100::ffff:ffff:ffff:ffff", "discard-only space"},
		{"100:0:0:1::1", "the dummy IPv6 prefix"},
		{"2001:2::1", "benchmarking space"},
		{"2001:2:0:ffff::1", "benchmarking space"},
		{"2001:10::1", "ORCHID identifiers"},
		{"2001:1f:ffff::1", "ORCHID identifiers"},
		{"2001:20::1", "ORCHIDv2 identifiers"},
		{"2001:2f:ffff::1", "ORCHIDv2 identifiers"},
		{"2001:30::1", "DRIP entity tags"},
		{"3fff::1", "documentation space"},
		{"3fff:fff::1", "documentation space"},
		{"5f00::1", "SRv6 segment identifiers"},
		{"200::1", "reserved IPv6 space"},
		{"4000::1", "reserved IPv6 space"},
		{"e000::1", "reserved IPv6 space"},
	} {
		t.Run(tc.addr, func(t *testing.T) {
			_, err := p.Resolve(context.Background(), tc.addr, 443)
			var b *Blocked
			if !errors.As(err, &b) || b.Reason != tc.reason {
				t.Errorf("Resolve(%s) = %v, want refused as %s", tc.addr, err, tc.reason)
			}
			if got := p.Check(netip.MustParseAddr(tc.addr)); got != tc.reason {
				t.Errorf("Check(%s) = %q, want %q", tc.addr, got, tc.reason)
			}
		})
	}
	// The globally reachable neighbours stay reachable: anycast services of the IETF
	// protocol assignments, AS112, and the first global unicast addresses either side.
	for _, addr := range []string{
		"192.88.98.255", "192.88.100.1", "192.31.196.1", "192.175.48.1",
		"2001:1::1", "2001:3::1", "2001:4:112::1", "2001:200::1", "2400:cb00::1", "3ffe::1",
	} {
		if why := p.Check(netip.MustParseAddr(addr)); why != "" {
			t.Errorf("Check(%s) = %q, want reachable", addr, why)
		}
	}
}
