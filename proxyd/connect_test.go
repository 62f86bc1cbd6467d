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

func TestParseHead(t *testing.T) {
	for _, tc := range []struct {
		name, head     string
		method, target string
		auth           string
		malformed      bool
	}{
		{name: "connect", head: "CONNECT a.example:443 HTTP/1.1\r\nHost: a.example:443\r\nProxy-Authorization: Basic eDp5\r\n\r\n",
			method: "CONNECT", target: "a.example:443", auth: "Basic eDp5"},
		{name: "field name in any case, value trimmed", head: "CONNECT a:443 HTTP/1.0\r\nproxy-authorization:   Basic eDp5  \r\n\r\n",
			method: "CONNECT", target: "a:443", auth: "Basic eDp5"},
		{name: "first of two", head: "CONNECT a:443 HTTP/1.1\r\nProxy-Authorization: Basic A\r\nProxy-Authorization: Basic B\r\n\r\n",
			method: "CONNECT", target: "a:443", auth: "Basic A"},
		{name: "bare LF lines", head: "CONNECT a:443 HTTP/1.1\nHost: a\n\n", method: "CONNECT", target: "a:443"},
		{name: "blank lines before the request line", head: "\r\n\r\nCONNECT a:443 HTTP/1.1\r\n\r\n", method: "CONNECT", target: "a:443"},
		{name: "other method", head: "GET http://a/ HTTP/1.1\r\nHost: a\r\n\r\n", method: "GET", target: "http://a/"},
		{name: "HTTP/2 version", head: "CONNECT a:443 HTTP/2.0\r\n\r\n", malformed: true},
		{name: "no version", head: "CONNECT a:443\r\n\r\n", malformed: true},
		{name: "empty target", head: "CONNECT  HTTP/1.1\r\n\r\n", malformed: true},
		{name: "control character in the target", head: "CONNECT a\x01b:443 HTTP/1.1\r\n\r\n", malformed: true},
		{name: "tab in the target", head: "CONNECT a:443\tb HTTP/1.1\r\n\r\n", malformed: true},
		{name: "method not a token", head: "CON(NECT a:443 HTTP/1.1\r\n\r\n", malformed: true},
		{name: "folded field line", head: "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n continued\r\n\r\n", malformed: true},
		{name: "space before the colon", head: "CONNECT a:443 HTTP/1.1\r\nProxy-Authorization : Basic x\r\n\r\n", malformed: true},
		{name: "field without colon", head: "CONNECT a:443 HTTP/1.1\r\nHost\r\n\r\n", malformed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := []byte(tc.head + "tail")
			end := headEnd(b, 0)
			if end != len(tc.head) {
				t.Fatalf("headEnd %d, want %d", end, len(tc.head))
			}
			h, err := parseHead(b[:end])
			if tc.malformed {
				if err == nil {
					t.Fatalf("parsed %+v, want malformed", h)
				}
				return
			}
			if err != nil || h.method != tc.method || h.target != tc.target || h.auth != tc.auth {
				t.Fatalf("got %+v %v, want %s %s auth %q", h, err, tc.method, tc.target, tc.auth)
			}
		})
	}
	for _, partial := range []string{"", "CONNECT a:443 HTTP/1.1\r\n", "CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r", "\r\n\r\n"} {
		if end := headEnd([]byte(partial), 0); end != -1 {
			t.Errorf("headEnd(%q) = %d, want -1 (incomplete)", partial, end)
		}
	}
}

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

// TestReadConnectHeadByteByByte: a head that arrives a byte at a time, after blank lines, is
// read whole with the bytes behind it; blank lines alone still count against the head's size.
func TestReadConnectHeadByteByByte(t *testing.T) {
	send := func(s string) net.Conn {
		c, p := net.Pipe()
		go func() {
			defer p.Close()
			for i := 0; i < len(s); i++ {
				if _, err := p.Write([]byte{s[i]}); err != nil {
					return
				}
			}
		}()
		t.Cleanup(func() { c.Close() })
		return c
	}
	head := "\r\n\nCONNECT a:443 HTTP/1.1\r\nHost: a\r\nProxy-Authorization: Basic eDp5\r\n\r\n"
	h, rest, err := readConnectHead(send(head+"early"), make([]byte, maxHeadBytes))
	if err != nil || h.method != "CONNECT" || h.target != "a:443" || h.auth != "Basic eDp5" {
		t.Fatalf("got %+v %v", h, err)
	}
	if len(rest) > len("early") || !strings.HasPrefix("early", string(rest)) {
		t.Fatalf("bytes behind the head %q, want a prefix of %q", rest, "early")
	}
	if _, _, err := readConnectHead(send(strings.Repeat("\r\n", maxHeadBytes)), make([]byte, maxHeadBytes)); err != errHeadTooLarge {
		t.Fatalf("16 KiB of blank lines: %v, want %v", err, errHeadTooLarge)
	}
}
