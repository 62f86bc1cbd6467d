package proxyd

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestEarlyBytesReachTheTarget: bytes a client sends right behind its CONNECT head, without
// waiting for the 200 (as a client starting TLS early does), reach the target, are metered,
// and the tunnel goes on as usual.
func TestEarlyBytesReachTheTarget(t *testing.T) {
	for _, window := range []int64{256 << 10, 0} {
		t.Run(strconv.FormatInt(window, 10), func(t *testing.T) {
			e := newEnv(t, func(c *Config) { c.SpliceWindowBytes = window })
			key := e.issue(100 << 20)
			c, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			const n = 100 << 10
			auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
			// Head and request line in one write, so they arrive in one segment.
			if _, err := fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nProxy-Authorization: Basic %s\r\n\r\ndown %d\n", e.src.addr, auth, n); err != nil {
				t.Fatal(err)
			}
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			head, err := readHead(c)
			if err != nil || !strings.HasPrefix(head, "HTTP/1.1 200") {
				t.Fatalf("answer %q %v", head, err)
			}
			got, err := io.Copy(io.Discard, c)
			if err != nil || got != n {
				t.Fatalf("tunnel carried %d bytes (%v), want %d", got, err, n)
			}
			_ = c.Close()
			waitTunnels(t, e, key, 0)
			u, _ := e.s.Usage(context.Background(), key)
			if want := int64(n + len(fmt.Sprintf("down %d\n", n))); u.Used != want {
				t.Fatalf("metered %d, want %d (the early request line and the answer)", u.Used, want)
			}
		})
	}
}

// TestMalformedHeads: what is not a CONNECT head proxyd can read is answered, not tunnelled,
// and costs nothing.
func TestMalformedHeads(t *testing.T) {
	e := newEnv(t, nil)
	key := e.issue(1 << 20)
	auth := "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte("buyer:"+key)) + "\r\n"
	for _, tc := range []struct {
		name, head string
		want       int
	}{
		{"garbage", "hello\r\n\r\n", http.StatusBadRequest},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", http.StatusBadRequest},
		{"head over 16 KiB", "CONNECT " + e.src.addr + " HTTP/1.1\r\n" + auth + "X-Pad: " + strings.Repeat("a", 17<<10) + "\r\n\r\n", http.StatusRequestHeaderFieldsTooLarge},
		{"origin-form GET", "GET / HTTP/1.1\r\nHost: x\r\n\r\n", http.StatusMethodNotAllowed},
		{"CONNECT to a path", "CONNECT /x HTTP/1.1\r\n" + auth + "\r\n", http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", e.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			go func() { _, _ = io.WriteString(c, tc.head) }()
			_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || !resp.Close {
				t.Fatalf("%d %v %q, want %d and Connection: close", resp.StatusCode, resp.Header, body, tc.want)
			}
			if tc.want == http.StatusMethodNotAllowed && (resp.Header.Get("Allow") != "CONNECT" || !strings.Contains(string(body), "CONNECT")) {
				t.Fatalf("405 without Allow: CONNECT and the explanation: %v %q", resp.Header, body)
			}
		})
	}
	if u, _ := e.s.Usage(context.Background(), key); u.Used != 0 || e.src.accepted.Load() != 0 {
		t.Fatalf("refused heads reached the target (%d) or were metered (%d)", e.src.accepted.Load(), u.Used)
	}
}

// TestShutdownClosesPendingHeads: Serve returns when its context ends although a client is
// still (slowly) sending its head; that connection is closed and no longer counted.
func TestShutdownClosesPendingHeads(t *testing.T) {
	cfg := testConfig()
	cfg.HeaderTimeout = time.Hour
	s, err := New(context.Background(), cfg, Options{Store: NewMemStore()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, _ = io.WriteString(c, "CONN")
	for i := 0; i < 1000 && s.pending.Load() < 1; i++ {
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Serve: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return while a head was pending")
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Closed with its head unread, the socket may end with a reset rather than a FIN.
	if _, err := io.ReadAll(c); err != nil && !isReset(err) {
		t.Fatalf("the pending connection was not closed: %v", err)
	}
	if n := s.pending.Load(); n != 0 {
		t.Fatalf("pending %d after shutdown", n)
	}
}
