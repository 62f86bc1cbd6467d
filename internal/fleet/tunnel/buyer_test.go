package tunnel

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// TestEachBuyerReachesTheProxyFromItsOwnAddress: behind the forwarder, proxyd sees one loopback
// address per buyer (IPv4 address or IPv6 /64) named by the gateway's PROXY line, so its
// per-client limits are per buyer; a connection without the line never reaches it.
func TestEachBuyerReachesTheProxyFromItsOwnAddress(t *testing.T) {
	proxy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	seen := make(chan string, 16)
	go func() {
		for {
			c, err := proxy.Accept()
			if err != nil {
				return
			}
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			seen <- host
			_, _ = io.Copy(io.Discard, c)
			_ = c.Close()
		}
	}()
	tunnelPort, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = Forward(ctx, tunnelPort, proxy.Addr().String(), nil); close(done) }()
	defer func() { cancel(); <-done }()

	gateway := &net.TCPAddr{IP: net.IPv4(198, 51, 100, 1), Port: 3128}
	from := func(line []byte) string {
		t.Helper()
		c, err := net.Dial("tcp", tunnelPort.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write(append(line, "CONNECT example.com:443 HTTP/1.1\r\n\r\n"...)); err != nil {
			t.Fatal(err)
		}
		select {
		case host := <-seen:
			return host
		case <-time.After(10 * time.Second):
			t.Fatal("the forwarder did not reach the proxy within 10 s")
			return ""
		}
	}
	buyer := func(ip string) []byte {
		return ProxyLine(&net.TCPAddr{IP: net.ParseIP(ip), Port: 50000}, gateway)
	}
	v6gateway := &net.TCPAddr{IP: net.ParseIP("2001:db8:ffff::1"), Port: 3128}
	a1, a2, b := from(buyer("192.0.2.7")), from(buyer("192.0.2.7")), from(buyer("192.0.2.8"))
	c1 := from(ProxyLine(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::1"), Port: 1}, v6gateway))
	c2 := from(ProxyLine(&net.TCPAddr{IP: net.ParseIP("2001:db8:1:2::ff"), Port: 2}, v6gateway))
	if a1 != a2 || a1 == b || c1 != c2 || c1 == a1 || c1 == b {
		t.Fatalf("proxy saw %s %s for one buyer, %s for another, %s %s for one IPv6 /64", a1, a2, b, c1, c2)
	}
	for _, h := range []string{a1, b, c1} {
		if ip := net.ParseIP(h); ip == nil || !ip.IsLoopback() || h == "127.0.0.1" {
			t.Fatalf("proxy saw %s: want a loopback address of the buyer's own", h)
		}
	}
	if unknown := from([]byte("PROXY UNKNOWN\r\n")); unknown != "127.0.0.1" {
		t.Fatalf("a buyer of unknown address came from %s, want the forwarder's own", unknown)
	}

	// No PROXY line: closed before the proxy is dialled.
	c, err := net.Dial("tcp", tunnelPort.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "CONNECT example.com:443 HTTP/1.1\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("a connection without a PROXY line: read %d, %v; want it closed", n, err)
	}
	select {
	case h := <-seen:
		t.Fatalf("a connection without a PROXY line reached the proxy from %s", h)
	default:
	}
}
