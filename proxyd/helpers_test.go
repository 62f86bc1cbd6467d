package proxyd

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/internal/egress"
)

// env is one proxyd on loopback with a controllable clock and local targets.
type env struct {
	t     *testing.T
	s     *Server
	addr  string
	store Store
	clock atomic.Int64 // unix nanoseconds
	src   *byteServer
}

func testConfig() Config {
	c := DefaultConfig()
	c.Listen = "127.0.0.1:0"
	c.PublicHost, c.PublicPort = "127.0.0.1", 8118
	c.SweepInterval = time.Hour // tests sweep explicitly
	c.EchoURLs = nil
	c.ExpectedCountry = ""
	c.AuthFailuresPerMinute = 1000
	c.CopyPath = copySplice // each test picks its path: a window above 0 splices, 0 copies through a buffer
	return c
}

func newEnv(t *testing.T, mut func(*Config), opts ...func(*Options)) *env {
	t.Helper()
	e := &env{t: t}
	e.clock.Store(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	e.src = newByteServer(t)
	cfg := testConfig()
	_, p, _ := net.SplitHostPort(e.src.addr)
	port, _ := strconv.Atoi(p)
	cfg.Ports = []int{443, 80, port}
	cfg.AllowEgress = []string{e.src.addr}
	if mut != nil {
		mut(&cfg)
	}
	o := Options{Store: NewMemStore(), Now: func() time.Time { return time.Unix(0, e.clock.Load()) }}
	for _, f := range opts {
		f(&o)
	}
	e.store = o.Store
	s, err := New(context.Background(), cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	e.s = s
	ln, err := Listen(context.Background(), cfg.Listen)
	if err != nil {
		t.Fatal(err)
	}
	e.addr = ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.bindProbe(ln)
	go func() { _ = s.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return e
}

func (e *env) advance(d time.Duration) { e.clock.Add(int64(d)) }

func (e *env) issue(n int64) string {
	e.t.Helper()
	key, _, err := e.s.issueBytes(context.Background(), 1, n)
	if err != nil {
		e.t.Fatal(err)
	}
	return key
}

// connect opens a raw CONNECT to target with key ("" = no header) and returns the status
// code, the headers and, on 200, the tunnel.
func (e *env) connect(key, target string) (int, http.Header, net.Conn) {
	e.t.Helper()
	c, err := net.Dial("tcp", e.addr)
	if err != nil {
		e.t.Fatal(err)
	}
	var auth string
	if key != "" {
		auth = "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("buyer:"+key)) + "\r\n"
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target, auth)
	// Read the head byte by byte so no tunnel byte is swallowed by a buffer.
	head, err := readHead(c)
	if err != nil {
		e.t.Fatalf("CONNECT %s: %v", target, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head)), nil)
	if err != nil {
		e.t.Fatalf("CONNECT %s: %v", target, err)
	}
	if resp.StatusCode != http.StatusOK {
		_ = c.Close()
		return resp.StatusCode, resp.Header, nil
	}
	return resp.StatusCode, resp.Header, c
}

func readHead(c net.Conn) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for !strings.HasSuffix(string(b), "\r\n\r\n") {
		if _, err := c.Read(one); err != nil {
			return string(b), err
		}
		b = append(b, one[0])
		if len(b) > 8192 {
			return "", fmt.Errorf("head too long")
		}
	}
	return string(b), nil
}

// byteServer is a raw TCP target. A client sends one line "down N" (the server then writes N
// bytes and closes) or "echo" (the server reads until the client's FIN, then writes back how
// many bytes it got followed by that many bytes, and closes).
type byteServer struct {
	in       atomic.Int64 // bytes the server read from clients: the upload that really passed
	out      atomic.Int64 // bytes the server handed to its kernel for clients
	addr     string
	ln       net.Listener
	wg       sync.WaitGroup // the accept loop and the connections
	accepted atomic.Int64
	finished atomic.Int64
}

// waitConns waits until at least n connections were accepted and all of them finished.
func (b *byteServer) waitConns(t *testing.T, n int64) {
	t.Helper()
	for i := 0; i < 2000; i++ {
		if a := b.accepted.Load(); a >= n && b.finished.Load() == a {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("target connections: %d accepted, %d finished, want %d done", b.accepted.Load(), b.finished.Load(), n)
}

func newByteServer(t *testing.T) *byteServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	b := &byteServer{addr: ln.Addr().String(), ln: ln}
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b.wg.Add(1)
			b.accepted.Add(1)
			go func() {
				defer b.wg.Done()
				b.in.Add(serveBytes(c, &b.out))
				b.finished.Add(1)
			}()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); b.wg.Wait() })
	return b
}

var zeros = make([]byte, 64<<10)

func serveBytes(c net.Conn, out *atomic.Int64) (in int64) {
	defer c.Close()
	br := bufio.NewReader(c)
	line, err := br.ReadString('\n')
	in = int64(len(line))
	if err != nil {
		return in
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 2 && f[0] == "down":
		n, _ := strconv.ParseInt(f[1], 10, 64)
		for n > 0 {
			k := min(n, int64(len(zeros)))
			w, err := c.Write(zeros[:k])
			out.Add(int64(w))
			if err != nil {
				return in
			}
			n -= k
		}
	case len(f) == 1 && f[0] == "echo":
		got, _ := io.Copy(io.Discard, br)
		in += got
		fmt.Fprintf(c, "%d\n", got)
		for n := got; n > 0; {
			k := min(n, int64(len(zeros)))
			if _, err := c.Write(zeros[:k]); err != nil {
				return in
			}
			n -= k
		}
	case len(f) == 1 && f[0] == "hold":
		n, _ := io.Copy(io.Discard, br)
		in += n
	}
	return in
}

// leakCheck fails the test if goroutines or descriptors opened during it are still there once
// everything was closed (it runs after every later cleanup). It waits for them to wind down,
// bounded; it does not time anything.
func leakCheck(t *testing.T) {
	t.Helper()
	g0, f0 := runtime.NumGoroutine(), openFDs()
	t.Cleanup(func() {
		t.Helper()
		var g, f int
		for i := 0; i < 200; i++ {
			// Splice pipes are pooled by the runtime and closed by finalizers: collect them.
			runtime.GC()
			g, f = runtime.NumGoroutine(), openFDs()
			if g <= g0 && f <= f0 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		t.Errorf("leak: goroutines %d -> %d, fds %d -> %d\n%s", g0, g, f0, f, buf[:n])
	})
}

func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0
	}
	return len(ents)
}

func withResolver(r *net.Resolver, allow ...string) func(*Options) {
	return func(o *Options) {
		p, err := egress.New(egress.Config{Allow: allow, Resolver: r})
		if err != nil {
			panic(err)
		}
		o.Egress = p
	}
}
