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

// closer records that the limiter closed a connection to make room.
type closer struct{ closed bool }

func (c *closer) Close() error { c.closed = true; return nil }

func mustAcquire(t *testing.T, l *Limiter, a string) (*Slot, *closer) {
	t.Helper()
	c := &closer{}
	s, r := l.Acquire(netip.MustParseAddr(a), c)
	if r != Admitted {
		t.Fatalf("%s: %v, want admitted", a, r)
	}
	return s, c
}

// TestPrefixBounds: IPv4 counts per address; IPv6 per /64, /56 and /48, each with its bound,
// so one /58 (64 /64s) or one /48 cannot hold more than its network's share.
func TestPrefixBounds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cfg   Config
		held  []string // admitted in turn
		next  string
		want  Refusal
		count string // a prefix and its count after
		n     int
	}{
		{"IPv4 address at its bound", Config{PerClient: 2}, []string{"81.56.7.8", "81.56.7.8"}, "81.56.7.8", TooManyFromClient, "81.56.7.8/32", 2},
		{"IPv4 neighbour", Config{PerClient: 2}, []string{"81.56.7.8", "81.56.7.8"}, "81.56.7.9", Admitted, "81.56.7.9/32", 1},
		{"IPv6 /64 at its bound", Config{PerClient: 2}, []string{"2a01:e0a:1:100::1", "2a01:e0a:1:100::2"}, "2a01:e0a:1:100:ffff::3", TooManyFromClient, "2a01:e0a:1:100::/64", 2},
		{"IPv6 /56 across its /64s", Config{PerClient: 2, Per56: 3}, []string{"2a01:e0a:1:100::1", "2a01:e0a:1:101::1", "2a01:e0a:1:13f::1"}, "2a01:e0a:1:1ff::1", TooManyFromClient, "2a01:e0a:1:100::/56", 3},
		{"IPv6 next /56", Config{PerClient: 2, Per56: 3}, []string{"2a01:e0a:1:100::1", "2a01:e0a:1:101::1", "2a01:e0a:1:13f::1"}, "2a01:e0a:1:200::1", Admitted, "2a01:e0a:1:200::/56", 1},
		{"IPv6 /48 across its /56s", Config{PerClient: 2, Per56: 3, Per48: 4}, []string{"2a01:e0a:1:100::1", "2a01:e0a:1:200::1", "2a01:e0a:1:300::1", "2a01:e0a:1:ff00::1"}, "2a01:e0a:1:4400::1", TooManyFromClient, "2a01:e0a:1::/48", 4},
		{"IPv6 next /48", Config{PerClient: 2, Per56: 3, Per48: 4}, []string{"2a01:e0a:1:100::1", "2a01:e0a:1:200::1", "2a01:e0a:1:300::1", "2a01:e0a:1:ff00::1"}, "2a01:e0a:2::1", Admitted, "2a01:e0a:2::/48", 1},
		{"a /58 as 64 /64s", Config{PerClient: 32, Per56: 40}, func() []string {
			var out []string
			for i := range 40 {
				out = append(out, netip.AddrFrom16([16]byte{0x2a, 0x01, 0x0e, 0x0a, 0, 1, 0x01, byte(i)}).String())
			}
			return out
		}(), "2a01:e0a:1:13f::1", TooManyFromClient, "2a01:e0a:1:100::/56", 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := New(tc.cfg)
			for _, a := range tc.held {
				mustAcquire(t, l, a)
			}
			if _, r := l.Acquire(netip.MustParseAddr(tc.next), &closer{}); r != tc.want {
				t.Fatalf("%s: %v, want %v", tc.next, r, tc.want)
			}
			if got := l.Count(netip.MustParsePrefix(tc.count)); got != tc.n {
				t.Fatalf("%s counts %d, want %d", tc.count, got, tc.n)
			}
		})
	}
}

// TestOldestIdleMakesRoom: at the bound in all, a newcomer closes the connection idle the
// longest (by when it became idle); busy connections are never closed for it, and when all
// are busy the newcomer is refused.
func TestOldestIdleMakesRoom(t *testing.T) {
	l := New(Config{Max: 3})
	a, ca := mustAcquire(t, l, "10.0.0.1")
	b, cb := mustAcquire(t, l, "10.0.0.2")
	_, cc := mustAcquire(t, l, "10.0.0.3")
	// a goes through a request and is idle again: b is now the oldest idle.
	if !a.Busy(false) {
		t.Fatal("a busy")
	}
	a.Idle()
	_, cd := mustAcquire(t, l, "10.0.0.4")
	if !cb.closed || ca.closed || cc.closed || cd.closed {
		t.Fatalf("closed a %v b %v c %v d %v, want b only", ca.closed, cb.closed, cc.closed, cd.closed)
	}
	if b.Busy(true) {
		t.Fatal("a connection closed to make room taken as busy")
	}
	b.Release() // the server's own close afterwards: uncounted once only
	if st := l.Stats(); st.Total != 3 || st.Evicted != 1 {
		t.Fatalf("stats %+v, want 3 counted, 1 evicted", st)
	}
	// Every connection busy: nothing to close, the newcomer is refused.
	l2 := New(Config{Max: 2})
	x, _ := mustAcquire(t, l2, "10.0.0.1")
	y, _ := mustAcquire(t, l2, "10.0.0.2")
	x.Busy(true)
	y.Busy(false)
	if _, r := l2.Acquire(netip.MustParseAddr("10.0.0.3"), &closer{}); r != TooManyInAll {
		t.Fatalf("all busy: %v, want TooManyInAll", r)
	}
	y.Release()
	if _, r := l2.Acquire(netip.MustParseAddr("10.0.0.3"), &closer{}); r != Admitted {
		t.Fatalf("after a release: %v", r)
	}
}

// TestReserveIsForKeys: requests without a key or payment take at most Max-Reserve
// connections; requests with one take the rest.
func TestReserveIsForKeys(t *testing.T) {
	l := New(Config{Max: 4, Reserve: 2})
	var slots []*Slot
	for _, a := range []string{"10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4"} {
		s, _ := mustAcquire(t, l, a)
		slots = append(slots, s)
	}
	if !slots[0].Busy(false) || !slots[1].Busy(false) {
		t.Fatal("unpaid requests under Max-Reserve refused")
	}
	if slots[2].Busy(false) {
		t.Fatal("an unpaid request took from the reserve")
	}
	if !slots[2].Busy(true) || !slots[3].Busy(true) {
		t.Fatal("requests with a key refused the reserve")
	}
	slots[0].Idle()
	if !slots[0].Busy(false) {
		t.Fatal("an unpaid request refused after another ended")
	}
	if st := l.Stats(); st.UnpaidBusy != 2 || st.Total != 4 {
		t.Fatalf("stats %+v", st)
	}
}
