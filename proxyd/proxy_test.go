package proxyd

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/internal/connecthead"
	"github.com/peage/appliance/internal/egress/egresstest"
)

// down asks the byte server for n bytes through an open tunnel and returns how many arrived.
func down(t *testing.T, c net.Conn, n int64) (sent, got int64) {
	t.Helper()
	req := fmt.Sprintf("down %d\n", n)
	if _, err := io.WriteString(c, req); err != nil {
		t.Fatal(err)
	}
	got, _ = io.Copy(io.Discard, c)
	_ = c.Close()
	return int64(len(req)), got
}

func TestQuotaCutExact(t *testing.T) {
	for _, tc := range []struct {
		name   string
		quota  int64
		window int64
	}{
		{"1MiB splice", 1 << 20, 256 << 10},
		{"5MiB splice", 5 << 20, 256 << 10},
		{"5MiB user-space only", 5 << 20, 0},
		{"odd quota", 3<<20 + 7, 128 << 10},
		// The cut falls inside a burst, read through the 128 KiB buffer.
		{"odd quota user-space only", 3<<20 + 7, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			leakCheck(t)
			e := newEnv(t, func(c *Config) { c.SpliceWindowBytes = tc.window })
			key := e.issue(tc.quota)
			code, _, c := e.connect(key, e.src.addr)
			if code != 200 {
				t.Fatalf("CONNECT: %d", code)
			}
			sent, got := down(t, c, 3*tc.quota)
			if sent+got != tc.quota {
				t.Fatalf("passed %d+%d = %d bytes, quota %d", sent, got, sent+got, tc.quota)
			}
			u, err := e.s.Usage(context.Background(), key)
			if err != nil {
				t.Fatal(err)
			}
			if u.Used != tc.quota || u.Remaining != 0 || u.State != "exhausted" {
				t.Fatalf("usage %+v", u)
			}
			if code, _, _ := e.connect(key, e.src.addr); code != http.StatusForbidden {
				t.Fatalf("CONNECT after the quota: %d, want 403", code)
			}
			// The kernel path carried the bulk when windows are on, and nothing when off.
			st := e.s.Stats()
			if k := st.BytesKernel; (tc.window > 0) != (k > tc.quota/2) {
				t.Fatalf("kernel-copied %d of %d bytes with window %d", k, tc.quota, tc.window)
			}
		})
	}
}

func TestQuotaUnderQuotaCountsEverything(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(100 << 20)
	var want int64
	for i := 0; i < 3; i++ {
		_, _, c := e.connect(key, e.src.addr)
		sent, got := down(t, c, 3<<20+int64(i))
		if got != 3<<20+int64(i) {
			t.Fatalf("got %d bytes", got)
		}
		want += sent + got
	}
	// The tunnel's close and the meter's settle race the client's read of EOF only by the
	// copy's return; removing the tunnel happens after settle, so wait for that.
	waitTunnels(t, e, key, 0)
	u, _ := e.s.Usage(context.Background(), key)
	if u.Used != want {
		t.Fatalf("used %d, want %d", u.Used, want)
	}
}

func waitTunnels(t *testing.T, e *env, key string, n int) {
	t.Helper()
	for i := 0; i < 500; i++ {
		if u, _ := e.s.Usage(context.Background(), key); u.Tunnels == n {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("tunnels never reached %d", n)
}

func TestQuotaManyConcurrentTunnels(t *testing.T) {
	leakCheck(t)
	const quota = 5 << 20
	e := newEnv(t, func(c *Config) { c.MaxTunnelsPerKey = 40 })
	key := e.issue(quota)
	var mu sync.Mutex
	var total int64 // downloaded by the clients
	var wg sync.WaitGroup
	var conns []net.Conn
	for i := 0; i < 32; i++ {
		code, _, c := e.connect(key, e.src.addr)
		if code != 200 {
			t.Fatalf("CONNECT %d: %d", i, code)
		}
		conns = append(conns, c)
	}
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := fmt.Sprintf("down %d\n", 1<<20)
			_, _ = io.WriteString(c, req)
			got, _ := io.Copy(io.Discard, c)
			_ = c.Close()
			mu.Lock()
			total += got
			mu.Unlock()
		}()
	}
	wg.Wait()
	waitTunnels(t, e, key, 0)
	e.src.waitConns(t, 32)
	u, _ := e.s.Usage(context.Background(), key)
	// A request cut by the quota never reached the server: the upload that counts is what the
	// server read, and with the download it makes the quota exactly.
	total += e.src.in.Load()
	if total != quota || u.Used != quota {
		t.Fatalf("clients saw %d bytes, meter %d, quota %d", total, u.Used, quota)
	}
}

func TestPerKeyTunnelCap(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxTunnelsPerKey = 2 })
	key := e.issue(1 << 20)
	var open []net.Conn
	for i := 0; i < 2; i++ {
		code, _, c := e.connect(key, e.src.addr)
		if code != 200 {
			t.Fatalf("tunnel %d: %d", i, code)
		}
		_, _ = io.WriteString(c, "hold\n")
		open = append(open, c)
	}
	waitTunnels(t, e, key, 2)
	if code, _, _ := e.connect(key, e.src.addr); code != http.StatusTooManyRequests {
		t.Fatalf("third tunnel: %d, want 429", code)
	}
	for _, c := range open {
		_ = c.Close()
	}
}

func TestAuth(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	for _, tc := range []struct {
		name string
		key  string
		want int
	}{
		{"missing", "", http.StatusProxyAuthRequired},
		{"wrong", "pk" + strings.Repeat("0", 40), http.StatusProxyAuthRequired},
		{"prefix of the right key", key[:len(key)-1], http.StatusProxyAuthRequired},
		{"right", key, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, c := e.connect(tc.key, e.src.addr)
			if code != tc.want {
				t.Fatalf("status %d, want %d", code, tc.want)
			}
			if code == http.StatusProxyAuthRequired && !strings.HasPrefix(h.Get("Proxy-Authenticate"), "Basic realm=") {
				t.Fatalf("407 without a Basic challenge: %v", h)
			}
			if c != nil {
				_ = c.Close()
			}
		})
	}
}

func TestAuthThrottle(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.AuthFailuresPerMinute = 3 })
	for i := 0; i < 3; i++ {
		if code, _, _ := e.connect("wrong", e.src.addr); code != http.StatusProxyAuthRequired {
			t.Fatalf("attempt %d: %d", i, code)
		}
	}
	if code, _, _ := e.connect("wrong", e.src.addr); code != http.StatusTooManyRequests {
		t.Fatalf("fourth wrong key: %d, want 429", code)
	}
	e.advance(2 * time.Minute)
	if code, _, _ := e.connect("wrong", e.src.addr); code != http.StatusProxyAuthRequired {
		t.Fatalf("after a minute: %d, want 407", code)
	}
}

func TestExpiry(t *testing.T) {
	leakCheck(t)
	e := newEnv(t, nil)
	key := e.issue(1 << 30)
	code, _, c := e.connect(key, e.src.addr)
	if code != 200 {
		t.Fatal(code)
	}
	_, _ = io.WriteString(c, "hold\n")
	e.advance(30*24*time.Hour + time.Second)
	e.s.Sweep(context.Background())
	// The open tunnel was closed by the sweep: the read ends.
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
		t.Fatalf("read after expiry: %v", err)
	}
	_ = c.Close()
	if code, _, _ := e.connect(key, e.src.addr); code != http.StatusForbidden {
		t.Fatalf("CONNECT after expiry: %d, want 403", code)
	}
	u, _ := e.s.Usage(context.Background(), key)
	if u.State != "expired" {
		t.Fatalf("state %q", u.State)
	}
	// A month after its expiry the package is forgotten (once its last tunnel is gone).
	waitTunnels(t, e, key, 0)
	e.advance(31 * 24 * time.Hour)
	e.s.Sweep(context.Background())
	if _, err := e.s.Usage(context.Background(), key); err == nil {
		t.Fatal("an ended package is still remembered after its retention")
	}
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset") || strings.Contains(err.Error(), "closed"))
}

func TestIdleTimeout(t *testing.T) {
	leakCheck(t)
	e := newEnv(t, func(c *Config) { c.IdleTimeout = time.Millisecond })
	key := e.issue(1 << 20)
	_, _, c := e.connect(key, e.src.addr)
	_, _ = io.WriteString(c, "hold\n")
	time.Sleep(5 * time.Millisecond)
	e.s.Sweep(context.Background())
	if _, err := io.Copy(io.Discard, c); err != nil && !isReset(err) {
		t.Fatal(err)
	}
	_ = c.Close()
	waitTunnels(t, e, key, 0)
}

func TestRevokeClosesTunnels(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	_, _, c := e.connect(key, e.src.addr)
	_, _ = io.WriteString(c, "hold\n")
	waitTunnels(t, e, key, 1)
	if err := e.s.Revoke(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, c)
	_ = c.Close()
	if code, _, _ := e.connect(key, e.src.addr); code != http.StatusForbidden {
		t.Fatalf("after revoke: %d", code)
	}
}

func TestHalfClose(t *testing.T) {
	for _, window := range []int64{256 << 10, 0} {
		t.Run(strconv.FormatInt(window, 10), func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.SpliceWindowBytes = window })
			key := e.issue(100 << 20)
			_, _, c := e.connect(key, e.src.addr)
			const n = 1 << 20
			if _, err := io.WriteString(c, "echo\n"); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Write(make([]byte, n)); err != nil {
				t.Fatal(err)
			}
			if err := c.(*net.TCPConn).CloseWrite(); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			line, err := br.ReadString('\n')
			if err != nil || strings.TrimSpace(line) != strconv.Itoa(n) {
				t.Fatalf("answer head %q, %v", line, err)
			}
			got, err := io.Copy(io.Discard, br)
			if err != nil || got != n {
				t.Fatalf("answer body %d bytes, %v; want %d", got, err, n)
			}
			_ = c.Close()
		})
	}
}

func TestPlainHTTPRefused(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	pu, _ := url.Parse("http://buyer:" + key + "@" + e.addr)
	hc := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(pu)}}
	defer hc.CloseIdleConnections()
	for _, target := range []string{"http://" + e.src.addr + "/", "http://example.com/"} {
		resp, err := hc.Get(target)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(string(b), "CONNECT") {
			t.Fatalf("%s: %d %q", target, resp.StatusCode, b)
		}
	}
	// An origin-form request (someone browsing to the proxy port) is refused the same way.
	resp, err := http.Get("http://" + e.addr + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("origin-form: %d", resp.StatusCode)
	}
	if u, _ := e.s.Usage(context.Background(), key); u.Used != 0 {
		t.Fatalf("refused requests were metered: %d", u.Used)
	}
}

func TestRefusedTargets(t *testing.T) {
	r := egresstest.Resolver(t, [4]byte{10, 1, 2, 3})
	e := newEnv(t, nil, withResolver(r))
	key := e.issue(1 << 20)
	for _, target := range []string{
		"127.0.0.1:443", "localhost:443", "foo.localhost:443", "127.1:443", "2130706433:443",
		"0x7f000001:443", "0177.0.0.1:443", "0.0.0.0:443", "[::1]:443", "[::]:443",
		"[::ffff:127.0.0.1]:443", "[::ffff:7f00:1]:443", "10.0.0.1:443", "172.16.5.4:443",
		"192.168.1.1:443", "192.168.1.1:80", "100.64.0.1:443", "169.254.169.254:80",
		"[fe80::1]:443", "[fc00::1]:443", "[fd00:ec2::254]:80", "[64:ff9b::7f00:1]:443",
		"private.example:443", // resolves to 10.1.2.3
	} {
		t.Run(target, func(t *testing.T) {
			code, h, c := e.connect(key, target)
			if c != nil {
				_ = c.Close()
			}
			if code != http.StatusForbidden || !strings.Contains(h.Get("Proxy-Status"), "destination_ip_prohibited") {
				t.Fatalf("status %d (%s), want 403 destination_ip_prohibited", code, h.Get("Proxy-Status"))
			}
		})
	}
	for _, target := range []string{"example.com:25", "example.com:22", "[::1:443", "a@b:443"} {
		t.Run(target, func(t *testing.T) {
			code, _, c := e.connect(key, target)
			if c != nil {
				_ = c.Close()
			}
			if code != http.StatusForbidden && code != http.StatusBadRequest {
				t.Fatalf("status %d, want 403 or 400", code)
			}
		})
	}
}

func TestPort25NeverEvenIfConfigured(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.Ports = append(c.Ports, 25) })
	key := e.issue(1 << 20)
	if code, _, _ := e.connect(key, "93.184.215.14:25"); code != http.StatusForbidden {
		t.Fatalf("port 25: %d", code)
	}
}

// TestGoClientTLS runs real HTTPS requests through the proxy with net/http.
func TestGoClientTLS(t *testing.T) {
	leakCheck(t)
	body := strings.Repeat("x", 200<<10)
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, body) }))
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "https://")
	_, p, _ := net.SplitHostPort(host)
	port, _ := strconv.Atoi(p)
	e := newEnv(t, func(c *Config) { c.Ports = append(c.Ports, port); c.AllowEgress = append(c.AllowEgress, host) })
	key := e.issue(10 << 20)
	pu, _ := url.Parse("http://buyer:" + key + "@" + e.addr)
	tr := &http.Transport{Proxy: http.ProxyURL(pu), TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	hc := &http.Client{Transport: tr}
	for i := 0; i < 3; i++ {
		resp, err := hc.Get(ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != body {
			t.Fatalf("body %d bytes", len(b))
		}
	}
	tr.CloseIdleConnections()
	waitTunnels(t, e, key, 0)
	u, _ := e.s.Usage(context.Background(), key)
	// TLS handshake and records are payload too: more than the bodies, far less than the quota.
	if u.Used <= int64(3*len(body)) || u.Used > 2<<20 {
		t.Fatalf("used %d for 3 bodies of %d", u.Used, len(body))
	}
}

func TestCurl(t *testing.T) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Fatalf("curl is required (ops/setup.d/proxy.sh installs it): %v", err)
	}
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello through the proxy") }))
	defer ts.Close()
	host := strings.TrimPrefix(ts.URL, "https://")
	_, p, _ := net.SplitHostPort(host)
	port, _ := strconv.Atoi(p)
	e := newEnv(t, func(c *Config) { c.Ports = append(c.Ports, port); c.AllowEgress = append(c.AllowEgress, host) })
	key := e.issue(1 << 20)
	run := func(proxyURL, target string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, curl, "-sS", "-k", "--noproxy", "", "-x", proxyURL, target)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := run("http://buyer:"+key+"@"+e.addr, ts.URL)
	if err != nil || out != "hello through the proxy" {
		t.Fatalf("curl: %v %q", err, out)
	}
	if out, err := run("http://buyer:wrong@"+e.addr, ts.URL); err == nil || !strings.Contains(out, "407") {
		t.Fatalf("curl with a wrong key: %v %q", err, out)
	}
	if out, err := run("http://buyer:"+key+"@"+e.addr, "http://"+host+"/"); err != nil || !strings.Contains(out, "CONNECT") {
		t.Fatalf("curl plain http: %v %q", err, out)
	}
}

func TestEnvProxyIgnored(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	code, _, c := e.connect(key, e.src.addr)
	if code != 200 {
		t.Fatalf("CONNECT with proxy variables set: %d", code)
	}
	if _, got := down(t, c, 1000); got != 1000 {
		t.Fatalf("got %d", got)
	}
}

// TestPendingConnectionsCapped: at max_pending_connections a new connection closes the one
// that has waited longest without a head and is served; the newer one still waits.
func TestPendingConnectionsCapped(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxPending = 2 })
	key := e.issue(1 << 20)
	var idle []net.Conn
	defer func() {
		for _, c := range idle {
			_ = c.Close()
		}
	}()
	for i := 0; i < 2; i++ {
		c, err := net.Dial("tcp", e.addr)
		if err != nil {
			t.Fatal(err)
		}
		idle = append(idle, c)
		// A byte makes the server take the connection in (StateNew) without finishing a head.
		if _, err := io.WriteString(c, "C"); err != nil {
			t.Fatal(err)
		}
		for j := 0; j < 500 && e.s.pending.Load() < int64(i+1); j++ {
			time.Sleep(2 * time.Millisecond)
		}
	}
	// A third connection is served, and the first is closed to make room for it.
	code, _, conn := e.connect(key, e.src.addr)
	if code != 200 {
		t.Fatalf("a third connection at the cap: %d", code)
	}
	_ = conn.Close()
	_ = idle[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := idle[0].Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the oldest pending connection: %d %v, want EOF", n, err)
	}
	// The newer one still waits (counted), and still gets its answer.
	for j := 0; e.s.pending.Load() != 1; j++ {
		if j == 5000 {
			t.Fatalf("%d pending, want the newer one", e.s.pending.Load())
		}
		time.Sleep(time.Millisecond)
	}
	if _, err := io.WriteString(idle[1], "ONNECT x:443 HTTP/1.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = idle[1].SetReadDeadline(time.Now().Add(10 * time.Second))
	if head, err := readHead(idle[1]); err != nil || !strings.HasPrefix(head, "HTTP/1.1 407") {
		t.Fatalf("the newer pending connection: %q %v, want 407", head, err)
	}
}

// TestQuotaCutUpload: the upload direction is cut at the exact byte too.
func TestQuotaCutUpload(t *testing.T) {
	for _, window := range []int64{256 << 10, 0} {
		t.Run(strconv.FormatInt(window, 10), func(t *testing.T) {
			const quota = 2<<20 + 5
			e := newEnv(t, func(c *Config) { c.SpliceWindowBytes = window })
			key := e.issue(quota)
			_, _, c := e.connect(key, e.src.addr)
			if _, err := io.WriteString(c, "hold\n"); err != nil {
				t.Fatal(err)
			}
			chunk := make([]byte, 64<<10)
			for i := 0; i < 200; i++ { // up to 12.5 MiB; the proxy closes long before
				if _, err := c.Write(chunk); err != nil {
					break
				}
			}
			_ = c.Close()
			waitTunnels(t, e, key, 0)
			e.src.waitConns(t, 1)
			if in := e.src.in.Load(); in != quota {
				t.Fatalf("the target read %d bytes, quota %d", in, quota)
			}
		})
	}
}

func FuzzSplitTarget(f *testing.F) {
	for _, s := range []string{"example.com:443", "[::1]:443", "[::1:443", "a@b:443", "x:0", "x:65536", "[example.com]:443", "1.2.3.4:80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, p, err := splitTarget(s)
		if err != nil {
			return
		}
		if h == "" || p <= 0 || p > 65535 || strings.ContainsAny(h, "[]@/ ") {
			t.Fatalf("%q accepted as %q %d", s, h, p)
		}
	})
}

// TestAllowedTargetOpensItsPortOnly: an allowed HOST:PORT (`appliance dev --allow-egress`)
// passes the port rule for that host only; the same port elsewhere, or another local port,
// stays refused.
func TestAllowedTargetOpensItsPortOnly(t *testing.T) {
	listen := func() (net.Listener, string) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				_, _ = io.WriteString(c, "hello from "+ln.Addr().String())
				_ = c.Close()
			}
		}()
		t.Cleanup(func() { _ = ln.Close() })
		_, p, _ := net.SplitHostPort(ln.Addr().String())
		return ln, p
	}
	allowedLn, allowed := listen()
	_, other := listen()
	e := newEnv(t, func(c *Config) {
		c.Ports = []int{443, 80}
		c.AllowEgress = []string{allowedLn.Addr().String()}
	})
	key := e.issue(1 << 20)
	cases := []struct {
		target string
		code   int
		status string // the refusal's text
	}{
		{"127.0.0.1:" + allowed, http.StatusOK, ""},
		{"2130706433:" + allowed, http.StatusOK, ""}, // the same address spelt in decimal, as the egress policy reads it
		{"127.0.0.1:" + other, http.StatusForbidden, "port " + other + " is not allowed"},
		{"localhost:" + allowed, http.StatusForbidden, "port " + allowed + " is not allowed"},
		{"127.0.0.2:" + allowed, http.StatusForbidden, "port " + allowed + " is not allowed"},
		{"93.184.215.14:" + allowed, http.StatusForbidden, "port " + allowed + " is not allowed"},
		{"127.0.0.1:443", http.StatusForbidden, "loopback"},
	}
	for _, c := range cases {
		t.Run(c.target, func(t *testing.T) {
			code, h, conn := e.connect(key, c.target)
			if code != c.code {
				t.Fatalf("status %d (%s), want %d", code, h.Get("Proxy-Status"), c.code)
			}
			if c.code != http.StatusOK {
				if !strings.Contains(h.Get("Proxy-Status"), c.status) {
					t.Fatalf("refusal %q does not say %q", h.Get("Proxy-Status"), c.status)
				}
				return
			}
			defer conn.Close()
			b, err := io.ReadAll(conn)
			if err != nil || string(b) != "hello from 127.0.0.1:"+allowed {
				t.Fatalf("through the tunnel: %q %v", b, err)
			}
		})
	}
}

// TestDialFailureAnswered: a target that refuses the connection gets 502 with its Proxy-Status
// and a line naming the target, costs nothing, and counts as a failed dial.
func TestDialFailureAnswered(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	_, p, _ := net.SplitHostPort(closed)
	port, _ := strconv.Atoi(p)
	e := newEnv(t, func(c *Config) {
		c.Ports = append(c.Ports, port)
		c.AllowEgress = append(c.AllowEgress, closed)
	})
	key := e.issue(1 << 20)
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\n", closed, auth)
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || !resp.Close ||
		!strings.Contains(resp.Header.Get("Proxy-Status"), "error=destination_unavailable") || !strings.Contains(string(body), "127.0.0.1 port "+p) {
		t.Fatalf("%d %v %q, want 502 destination_unavailable naming %s", resp.StatusCode, resp.Header, body, closed)
	}
	if u, _ := e.s.Usage(context.Background(), key); u.Used != 0 || e.s.Stats().DialFailed != 1 {
		t.Fatalf("used %d, dial failures %d; want 0 and 1", u.Used, e.s.Stats().DialFailed)
	}
}

// TestTunnelAfterCloseIsRefused: a CONNECT decided just before Close but registered after it
// shut the tunnels is answered 503, not left running past the shutdown.
func TestTunnelAfterCloseIsRefused(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	e.s.mu.RLock()
	m := e.s.meters[connecthead.KeyHash(key)]
	e.s.mu.RUnlock()
	if m == nil {
		t.Fatal("no meter for the issued key")
	}
	if err := e.s.Close(); err != nil {
		t.Fatal(err)
	}
	client, server := net.Pipe()
	defer client.Close()
	done := make(chan struct{})
	go func() {
		e.s.serveTunnel(server, m, "127.0.0.1", netip.MustParseAddrPort(e.src.addr), nil)
		close(done)
	}()
	_ = client.SetReadDeadline(time.Now().Add(10 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(resp.Header.Get("Proxy-Status"), "error=proxy_internal_response") {
		t.Fatalf("%d %v, want 503 proxy_internal_response", resp.StatusCode, resp.Header)
	}
	_ = client.Close()
	<-done
	m.mu.Lock()
	n := len(m.tunnels)
	m.mu.Unlock()
	if n != 0 || e.s.tunnels.Load() != 0 {
		t.Fatalf("%d tunnels on the meter, %d in all after the refusal; want none", n, e.s.tunnels.Load())
	}
}
