package proxyd

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/egress"
)

// hostAddr is a non-loopback address of this machine that a test can listen on: it stands
// for the exit's public address (hairpin NAT lands on the box itself). The test is skipped on
// a machine with loopback only.
func hostAddr(t *testing.T) (netip.Addr, net.Listener) {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Skip(err)
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok {
			continue
		}
		ip, ok := netip.AddrFromSlice(n.IP)
		if !ok {
			continue
		}
		ip = ip.Unmap()
		if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsMulticast() {
			continue
		}
		ln, err := net.Listen("tcp", netip.AddrPortFrom(ip, 0).String())
		if err == nil {
			return ip, ln
		}
	}
	t.Skip("no non-loopback address to stand for the exit's public address")
	return netip.Addr{}, nil
}

// TestTunnelToTheExitsOwnAddressRefused: once an exit check has seen the exit's public
// address, a tunnel to it is refused (403) even though an allow entry names it, and the
// canary listening there is never reached; the address is learned by every policy sharing
// proxyd's learned set.
func TestTunnelToTheExitsOwnAddressRefused(t *testing.T) {
	self, canaryLn := hostAddr(t)
	var hits atomic.Int64
	go func() {
		for {
			c, err := canaryLn.Accept()
			if err != nil {
				return
			}
			hits.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = canaryLn.Close() })
	canary := canaryLn.Addr().String()
	_, cp, _ := net.SplitHostPort(canary)
	canaryPort, _ := strconv.Atoi(cp)

	ts, _ := echoServer(t, fmt.Sprintf(`{"ip":%q,"country":"FR","org":"AS3215 Orange S.A."}`, self))
	shared := new(egress.Learned)
	e := saleEnvOpts(t, ts.URL, func(c *Config) {
		c.Ports = append(c.Ports, canaryPort)
		c.AllowEgress = append(c.AllowEgress, canary)
	}, func(o *Options) { o.Learned = shared })
	key := e.issue(1 << 20)

	// Before any exit check the allow entry lets the tunnel through: the canary can be hit,
	// so a zero below means something.
	code, _, conn := e.connect(key, canary)
	if code != 200 {
		t.Fatalf("before the exit check: %d", code)
	}
	_, _ = conn.Read(make([]byte, 1))
	_ = conn.Close()
	before := waitHits(&hits, 1)

	if _, err := e.s.Status(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{canary, net.JoinHostPort(self.String(), "443")} {
		code, hdr, conn := e.connect(key, target)
		if conn != nil {
			_ = conn.Close()
		}
		if code != 403 {
			t.Errorf("CONNECT %s after the exit check: %d %s, want 403", target, code, hdr.Get("Proxy-Status"))
		}
	}
	if got := hits.Load(); got != before {
		t.Fatalf("the canary at the exit's own address was reached %d times after the check", got-before)
	}
	if !shared.Contains(self) {
		t.Fatalf("the shared learned set misses %s: %v", self, shared.Addrs())
	}
}

func saleEnvOpts(t *testing.T, echoURL string, mut func(*Config), opt func(*Options)) *env {
	host := strings.TrimPrefix(echoURL, "http://")
	_, p, _ := net.SplitHostPort(host)
	port, _ := strconv.Atoi(p)
	var opts []func(*Options)
	if opt != nil {
		opts = append(opts, opt)
	}
	return newEnv(t, func(c *Config) {
		c.Ports = append(c.Ports, port)
		c.AllowEgress = append(c.AllowEgress, host)
		c.EchoURLs = []string{echoURL + "/json"}
		if mut != nil {
			mut(c)
		}
	}, opts...)
}

// waitHits waits for the canary's accept loop to count at least n connections.
func waitHits(hits *atomic.Int64, n int64) int64 {
	for i := 0; i < 1000 && hits.Load() < n; i++ {
		time.Sleep(2 * time.Millisecond)
	}
	return hits.Load()
}
