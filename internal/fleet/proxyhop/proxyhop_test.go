package proxyhop

import (
	"bufio"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"

	"github.com/peage/appliance/internal/loopback"
)

// box is the stand-in for a box's proxyd behind the tunnel: it records the bytes it receives
// and answers a 200, then echoes.
func box(t *testing.T) (netip.AddrPort, chan string) {
	t.Helper()
	heads := make(chan string, 8)
	addr := loopback.ServeT(t, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, 64<<10)
		n, _ := c.Read(buf)
		heads <- string(buf[:n])
		_, _ = io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		_, _ = io.Copy(c, c)
	})
	return netip.MustParseAddrPort(addr), heads
}

const goodKey = "pk0123456789"

func start(t *testing.T, boxAddr netip.AddrPort) string {
	t.Helper()
	p, err := New(Config{
		Locate: func(_ context.Context, h string) (netip.AddrPort, error) {
			if h == KeyHash(goodKey) {
				return boxAddr, nil
			}
			return netip.AddrPort{}, ErrUnknownKey
		},
		Dial: func(ctx context.Context, a netip.AddrPort) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", a.String())
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return ln.Addr().String()
}

func ask(t *testing.T, addr, head string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp, c, br
}

func connectHead(key string) string {
	h := "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n"
	if key != "" {
		h += "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("buyer:"+key)) + "\r\n"
	}
	return h + "\r\n"
}

func TestRefusalsAtTheGateway(t *testing.T) {
	boxAddr, heads := box(t)
	addr := start(t, boxAddr)
	for _, tc := range []struct {
		name, head string
		status     int
		header     string
	}{
		{"not a CONNECT", "GET http://example.com/ HTTP/1.1\r\nHost: example.com\r\n\r\n", http.StatusMethodNotAllowed, "Allow"},
		{"no key", connectHead(""), http.StatusProxyAuthRequired, "Proxy-Authenticate"},
		{"a key no box sold", connectHead("pkforged"), http.StatusProxyAuthRequired, "Proxy-Status"},
		{"a head over 16 KiB", "CONNECT example.com:443 HTTP/1.1\r\nX-Pad: " + strings.Repeat("a", 17<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge, "Proxy-Status"},
		{"a malformed head (proxyd's parser)", "CONNECT example.com:443 HTTP/2.0\r\n\r\n", http.StatusBadRequest, "Proxy-Status"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, _, _ := ask(t, addr, tc.head)
			if resp.StatusCode != tc.status || resp.Header.Get(tc.header) == "" {
				t.Fatalf("%d %v; want %d with %s", resp.StatusCode, resp.Header, tc.status, tc.header)
			}
		})
	}
	select {
	case h := <-heads:
		t.Fatalf("a refused request reached the box: %q", h)
	default:
	}
}

func TestWrongKeysAreThrottled(t *testing.T) {
	boxAddr, _ := box(t)
	addr := start(t, boxAddr)
	for range 10 {
		if resp, _, _ := ask(t, addr, connectHead("pkforged")); resp.StatusCode != http.StatusProxyAuthRequired {
			t.Fatalf("wrong key: %d", resp.StatusCode)
		}
	}
	if resp, _, _ := ask(t, addr, connectHead(goodKey)); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("after 10 wrong keys in a minute: %d, want 429", resp.StatusCode)
	}
}

// TestTheBuyersHeadReachesTheBox: the box's proxy reads the buyer's own head, and bytes sent
// with it (before the 200) follow it; then the tunnel carries both ways.
func TestTheBuyersHeadReachesTheBox(t *testing.T) {
	boxAddr, heads := box(t)
	addr := start(t, boxAddr)
	head := connectHead(goodKey)
	resp, c, br := ask(t, addr, head+"early")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%d", resp.StatusCode)
	}
	_, port, _ := net.SplitHostPort(addr)
	want := "PROXY TCP4 127.0.0.1 127.0.0.1 " + strings.Split(c.LocalAddr().String(), ":")[1] + " " + port + "\r\n" + head + "early"
	if got := <-heads; got != want {
		t.Fatalf("the box read %q, want %q: the buyer's address, head and early bytes", got, want)
	}
	if _, err := io.WriteString(c, "ping"); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4)
	if _, err := io.ReadFull(br, buf); err != nil || string(buf) != "ping" {
		t.Fatalf("echo %q %v", buf, err)
	}
}

func TestUnreachableBoxIs502(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := netip.MustParseAddrPort(ln.Addr().String())
	_ = ln.Close()
	addr := start(t, dead)
	resp, _, _ := ask(t, addr, connectHead(goodKey))
	if resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("%d, want 502", resp.StatusCode)
	}
}
