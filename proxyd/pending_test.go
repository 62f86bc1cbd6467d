package proxyd

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func dialFrom(t *testing.T, src, addr string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", src, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestIdleSocketsOfOneClientLockNobodyOut: one client (127.0.0.2) holds its whole allowance
// of idle sockets; its next one is told 429, while a buyer from another address still
// tunnels and the exit check (which travels the proxy from loopback) still passes.
func TestIdleSocketsOfOneClientLockNobodyOut(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	e := saleEnvOpts(t, ts.URL, func(c *Config) {
		c.MaxPending, c.MaxPendingPerClient = 64, 8
		c.ExpectedCountry, c.ExpectedASNs = "FR", []string{"AS3215"}
	}, nil)
	key := e.issue(1 << 20)
	for range 8 {
		dialFrom(t, "127.0.0.2", e.addr)
	}
	for i := 0; i < 500 && e.s.pending.Load() < 8; i++ {
		time.Sleep(2 * time.Millisecond)
	}
	over := dialFrom(t, "127.0.0.2", e.addr)
	_ = over.SetReadDeadline(time.Now().Add(10 * time.Second))
	head, err := readHead(over)
	if err != nil || head[:12] != "HTTP/1.1 429" {
		t.Fatalf("the 9th idle socket of one client: %q %v, want 429", head, err)
	}
	for _, src := range []string{"127.0.0.1", "127.0.0.3"} {
		c := dialFrom(t, src, e.addr)
		code := connectOn(t, c, key, e.src.addr)
		if code != 200 {
			t.Fatalf("buyer from %s while 127.0.0.2 idles: %d", src, code)
		}
	}
	st, err := e.s.Status(context.Background())
	if err != nil || !st.Live {
		t.Fatalf("exit check while 127.0.0.2 idles: %+v %v", st, err)
	}
}

// TestIdleHoldersFromManyAddressesLockNobodyOut (issue 34, item 6): eight addresses, each
// within its own bound, hold every pending slot with sockets that never send a CONNECT head
// (at the defaults 33 addresses held all 1,024); a buyer's CONNECT with its key from another
// address is still tunnelled, and the exit check still passes, the first by closing the
// socket that waited longest. Before, the buyer's connection was dropped.
func TestIdleHoldersFromManyAddressesLockNobodyOut(t *testing.T) {
	ts, _ := echoServer(t, orangeEcho)
	e := saleEnvOpts(t, ts.URL, func(c *Config) {
		c.MaxPending, c.MaxPendingPerClient = 64, 8
		c.ExpectedCountry, c.ExpectedASNs = "FR", []string{"AS3215"}
	}, nil)
	key := e.issue(1 << 20)
	var held []net.Conn
	for i := range 8 {
		for range 8 {
			held = append(held, dialFrom(t, fmt.Sprintf("127.0.0.%d", 10+i), e.addr))
			// One at a time, so the oldest is the first dialled.
			for j := 0; e.s.pending.Load() < int64(len(held)); j++ {
				if j == 5000 {
					t.Fatalf("%d pending, want %d", e.s.pending.Load(), len(held))
				}
				time.Sleep(time.Millisecond)
			}
		}
	}
	for _, src := range []string{"127.0.0.3", "127.0.0.4"} {
		if code := connectOn(t, dialFrom(t, src, e.addr), key, e.src.addr); code != 200 {
			t.Fatalf("buyer from %s while idle sockets hold every pending slot: %d", src, code)
		}
	}
	st, err := e.s.Status(context.Background())
	if err != nil || !st.Live {
		t.Fatalf("exit check while idle sockets hold every pending slot: %+v %v", st, err)
	}
	// The room came from the oldest holder, closed by the proxy (the first buyer's tunnel left
	// the pending slots, so the rest needed no more); the others still wait.
	_ = held[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, err := held[0].Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("the oldest holder: read %d %v, want EOF (closed to make room)", n, err)
	}
	for j := 0; e.s.pending.Load() != 63; j++ {
		if j == 5000 {
			t.Fatalf("%d pending, want the 63 other holders", e.s.pending.Load())
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHeaderTimeoutClosesIdleSockets: a socket that sends no CONNECT head within
// header_timeout is closed and no longer counted.
func TestHeaderTimeoutClosesIdleSockets(t *testing.T) {
	e := newEnv(t, func(c *Config) { c.MaxPendingPerClient, c.HeaderTimeout = 1, 200*time.Millisecond })
	key := e.issue(1 << 20)
	idle := dialFrom(t, "127.0.0.2", e.addr)
	_, _ = io.WriteString(idle, "CONN")
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.ReadAll(idle); err != nil {
		t.Fatalf("the idle socket was not closed by the server: %v", err)
	}
	for i := 0; i < 500 && e.s.pending.Load() > 0; i++ {
		time.Sleep(2 * time.Millisecond)
	}
	if code := connectOn(t, dialFrom(t, "127.0.0.2", e.addr), key, e.src.addr); code != 200 {
		t.Fatalf("the same client after its idle socket was closed: %d", code)
	}
}

// connectOn sends a CONNECT for target with key on c and returns the answer's status.
func connectOn(t *testing.T, c net.Conn, key, target string) int {
	t.Helper()
	auth := base64.StdEncoding.EncodeToString([]byte("buyer:" + key))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic %s\r\n\r\n", target, target, auth)
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	head, err := readHead(c)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(head)), nil)
	if err != nil {
		t.Fatalf("CONNECT %s: %v", target, err)
	}
	return resp.StatusCode
}
