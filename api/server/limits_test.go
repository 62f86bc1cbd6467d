package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
)

// startServer serves the default catalog with cfg adjusted by mut, until the test ends.
func startServer(t *testing.T, mut func(*server.Config)) string {
	t.Helper()
	cat, _ := catalog.Default(catalog.DefaultNames())
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), "http://"+ln.Addr().String()
	if mut != nil {
		mut(&cfg)
	}
	pay := paywall.DefaultConfig()
	pay.PayTo = "0x000000000000000000000000000000000000dEaD"
	srv := server.New(cfg, cat, server.Options{Pay: pay})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("server: %v", err)
		}
	})
	return ln.Addr().String()
}

// dialFrom opens a connection from a loopback source address (127.0.0.x stands for distinct
// clients; Linux routes all of 127/8 to lo).
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

func readResp(t *testing.T, c net.Conn) (int, errBody) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	var eb errBody
	_ = json.Unmarshal(body, &eb)
	return resp.StatusCode, eb
}

func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestAnnouncedBodiesAreNotPreallocated: 300 connections each announce a 512 KB body (the
// limit) and send none of it. The server must not hold a buffer of the announced size for
// each: the heap in use grows by far less than 300 × 512 KB (150 MiB).
func TestAnnouncedBodiesAreNotPreallocated(t *testing.T) {
	const conns, bound = 300, 64 << 20
	addr := startServer(t, func(c *server.Config) { c.MaxConnsPerClient = 0 })
	before := heapInUse()
	var cs []net.Conn
	t.Cleanup(func() {
		for _, c := range cs {
			_ = c.Close()
		}
	})
	for range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
		fmt.Fprintf(c, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", 512<<10)
	}
	// The server takes the headers in on its own schedule: sample the heap a while and keep
	// the largest growth (a preallocation shows up as soon as a header is parsed).
	var peak uint64
	for range 20 {
		if h := heapInUse(); h > before && h-before > peak {
			peak = h - before
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Logf("heap in use grew by %.1f MiB with %d connections announcing 512 KB each", float64(peak)/(1<<20), conns)
	if peak > bound {
		t.Fatalf("heap in use grew by %d MiB, bound %d MiB", peak>>20, bound>>20)
	}
	// The server is still serving.
	c := dialFrom(t, "127.0.0.1", addr)
	fmt.Fprintf(c, "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n")
	if st, _ := readResp(t, c); st != 404 {
		t.Fatalf("a plain request during the flood: %d", st)
	}
}

// TestConnectionBounds: a client at its connection bound gets 429 busy on the next one while
// another client is served; at the bound in all, a newcomer closes the connection idle the
// longest (TestIdleHoldersFromManyAddressesLockNobodyOut; the 503 when every connection is
// in a request is TestUnpaidRequestsLeaveTheReserve's and netlimit's).
func TestConnectionBounds(t *testing.T) {
	for _, tc := range []struct {
		name         string
		max, per     int
		holdA        int
		fromA, fromB int // status of one more connection from A, from B
		codeA        string
	}{
		{"per client", 100, 3, 3, 429, 404, "busy"},
		{"under the bounds", 100, 3, 2, 404, 404, "not_found"},
		{"in all, idle ones make room", 3, 0, 3, 404, 404, "not_found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := startServer(t, func(c *server.Config) { c.MaxConns, c.MaxConnsPerClient = tc.max, tc.per })
			for range tc.holdA {
				c := dialFrom(t, "127.0.0.2", addr)
				// Make sure the server has taken the connection in (and counted it).
				fmt.Fprintf(c, "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n")
				if st, _ := readResp(t, c); st != 404 {
					t.Fatalf("held connection: %d", st)
				}
			}
			for _, p := range []struct {
				src  string
				want int
				code string
			}{{"127.0.0.2", tc.fromA, tc.codeA}, {"127.0.0.3", tc.fromB, ""}} {
				c := dialFrom(t, p.src, addr)
				fmt.Fprintf(c, "GET /v1/nope HTTP/1.1\r\nHost: x\r\n\r\n")
				st, eb := readResp(t, c)
				if st != p.want || (p.code != "" && eb.Error.Code != p.code) {
					t.Errorf("from %s: %d %q, want %d %q", p.src, st, eb.Error.Code, p.want, p.code)
				}
			}
		})
	}
}

// TestBodyBounds: bodies are read as they arrive, bounded in size and time.
func TestBodyBounds(t *testing.T) {
	// Only the slow-body case runs against a short body_read_timeout: the others must not
	// depend on how fast a loaded machine moves 512 KB.
	addr := startServer(t, func(c *server.Config) { c.BodyReadTimeout = time.Minute })
	quick := startServer(t, func(c *server.Config) { c.BodyReadTimeout = 300 * time.Millisecond })
	for _, tc := range []struct {
		name, head, body string
		status           int
		code             string
		quick            bool
	}{
		// One chunk of exactly the limit plus one byte, without the last chunk: the server reads
		// all of it before refusing, so its close is not a reset that could eat the answer.
		{"chunked over the limit", "Transfer-Encoding: chunked\r\n",
			fmt.Sprintf("%x\r\n%s\r\n", 512<<10+1, strings.Repeat("a", 512<<10+1)), 413, "too_large", false},
		{"body slower than body_read_timeout", "Content-Length: 100\r\n", `{"url":`, 400, "bad_request", true},
		{"whole body in time", "Content-Length: 1\r\n", "{", 400, "bad_request", false},
		{"announced over the limit", fmt.Sprintf("Content-Length: %d\r\n", 600<<10), "", 413, "too_large", false},
		{"announced over the limit, expecting 100-continue", fmt.Sprintf("Content-Length: %d\r\nExpect: 100-continue\r\n", 600<<10), "", 413, "too_large", false},
		{"a client's own refusal marker is ignored", "Content-Length: 1\r\nX-Peage-Body-Refused: 1\r\n", "{", 400, "bad_request", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			to := addr
			if tc.quick {
				to = quick
			}
			c := dialFrom(t, "127.0.0.1", to)
			fmt.Fprintf(c, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n%s\r\n%s", tc.head, tc.body)
			st, eb := readResp(t, c)
			if st != tc.status || eb.Error.Code != tc.code {
				t.Fatalf("%d %+v, want %d %s", st, eb, tc.status, tc.code)
			}
		})
	}
	// A body that arrives whole is the request's parameters, as before.
	c := dialFrom(t, "127.0.0.1", addr)
	body := `{"url":"not a url"}`
	fmt.Fprintf(c, "POST /v1/extract HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	if st, eb := readResp(t, c); st != 400 || eb.Error.Param != "url" {
		t.Fatalf("a whole body: %d %+v, want 400 naming url", st, eb)
	}
}
