package netlimit

import (
	"net"
	"net/netip"
	"testing"
)

func TestClientKey(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.ParseIP("81.56.7.8"), Port: 1}, "81.56.7.8/32"},
		{&net.TCPAddr{IP: net.ParseIP("::ffff:81.56.7.8"), Port: 1}, "81.56.7.8/32"},
		{&net.TCPAddr{IP: net.ParseIP("2a01:e0a:12:3450:1:2:3:4"), Port: 1}, "2a01:e0a:12:3450::/64"},
		{&net.TCPAddr{IP: net.ParseIP("2a01:e0a:12:3450:ffff::9"), Port: 1, Zone: "eth0"}, "2a01:e0a:12:3450::/64"},
	} {
		if got := Client(tc.addr); got != netip.MustParsePrefix(tc.want) {
			t.Errorf("Client(%v) = %v, want %s", tc.addr, got, tc.want)
		}
	}
}

func TestLimiter(t *testing.T) {
	a, b := netip.MustParsePrefix("81.56.7.8/32"), netip.MustParsePrefix("2a01:e0a::/64")
	l := New(3, 2)
	for i, step := range []struct {
		k       netip.Prefix
		release bool
		want    Refusal
	}{
		{a, false, Admitted},
		{a, false, Admitted},
		{a, false, TooManyFromClient},
		{b, false, Admitted},
		{b, false, TooManyInAll},
		{a, true, Admitted},
		{b, false, Admitted},
		{a, false, TooManyInAll},
	} {
		if step.release {
			l.Release(step.k)
			continue
		}
		if got := l.Acquire(step.k); got != step.want {
			t.Fatalf("step %d: %v, want %v", i, got, step.want)
		}
	}
	if total, n := l.Counts(b); total != 3 || n != 2 {
		t.Fatalf("counts %d %d", total, n)
	}
}
