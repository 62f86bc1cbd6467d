package settle_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
)

// serveSocket serves h with settle.Serve on a Unix socket of its own; stop shuts it down and
// returns Serve's answer.
func serveSocket(t *testing.T, h http.Handler) (sock string, stop func() error) {
	t.Helper()
	sock = filepath.Join(t.TempDir(), "s.sock")
	l, err := settle.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- settle.Serve(ctx, h, obs.Discard(), l) }()
	stopped := false
	var serr error
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			serr = <-done
		}
		return serr
	}
	t.Cleanup(func() { _ = stop() })
	return sock, stop
}

func dialSocket(t *testing.T, sock string) (net.Conn, *bufio.Reader) {
	t.Helper()
	nc, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = nc.Close() })
	return nc, bufio.NewReader(nc)
}

// exchange writes a raw request and reads its answer (status and body).
func exchange(t *testing.T, nc net.Conn, br *bufio.Reader, raw string) (*http.Response, string) {
	t.Helper()
	if _, err := io.WriteString(nc, raw); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("answer to %q: %v", strings.SplitN(raw, "\r\n", 2)[0], err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

// The daemon's socket answers a connection's requests in turn on it, with their status, headers
// and length, whatever the handler read of a request's body, and closes it when asked to.
func TestSocketServerAnswersOnOneConnection(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte("got " + string(b)))
	})
	mux.HandleFunc("POST /ignore", func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("ok")) })
	sock, _ := serveSocket(t, mux)
	nc, br := dialSocket(t, sock)
	cases := []struct {
		raw    string
		status int
		body   string
	}{
		{"POST /echo HTTP/1.1\r\nHost: settle\r\nContent-Length: 5\r\n\r\nhello", 201, "got hello"},
		// The handler reads none of this body: the next request must still be read in place.
		{"POST /ignore HTTP/1.1\r\nHost: settle\r\nContent-Length: 7\r\n\r\nunread!", 200, "ok"},
		{"POST /echo HTTP/1.1\r\nHost: settle\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", 201, "got abc"},
		{"GET /missing HTTP/1.1\r\nHost: settle\r\n\r\n", 404, "404 page not found\n"},
	}
	for _, c := range cases {
		resp, body := exchange(t, nc, br, c.raw)
		if resp.StatusCode != c.status || body != c.body || resp.ContentLength != int64(len(c.body)) {
			t.Errorf("%q answered %d %q (length %d), want %d %q", strings.SplitN(c.raw, "\r\n", 2)[0], resp.StatusCode, body, resp.ContentLength, c.status, c.body)
		}
	}
	resp, _ := exchange(t, nc, br, "POST /echo HTTP/1.1\r\nHost: settle\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx")
	if resp.StatusCode != 201 {
		t.Fatalf("closing request answered %d", resp.StatusCode)
	}
	_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after a request asking to close, the connection read %v, want EOF", err)
	}
}

// A handler that aborts its answer (http.ErrAbortHandler, as net/http's servers honour it) or
// panics closes the connection without an answer; the server goes on.
func TestSocketServerAbortedAnswer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/abort", func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	mux.HandleFunc("/panic", func(http.ResponseWriter, *http.Request) { panic("a bug") })
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	sock, _ := serveSocket(t, mux)
	for _, path := range []string{"/abort", "/panic"} {
		nc, br := dialSocket(t, sock)
		if _, err := io.WriteString(nc, "GET "+path+" HTTP/1.1\r\nHost: settle\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := br.ReadByte(); !errors.Is(err, io.EOF) {
			t.Errorf("%s: read %v, want the connection closed without an answer", path, err)
		}
	}
	nc, br := dialSocket(t, sock)
	if resp, body := exchange(t, nc, br, "GET /ok HTTP/1.1\r\nHost: settle\r\n\r\n"); resp.StatusCode != 200 || body != "ok" {
		t.Errorf("after the aborts: %d %q", resp.StatusCode, body)
	}
}

// Shutting down closes the idle connections at once and answers the request under way before
// closing its connection, as net/http's Shutdown does.
func TestSocketServerShutdown(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, _ *http.Request) {
		close(entered)
		<-release
		_, _ = w.Write([]byte("done"))
	})
	mux.HandleFunc("/ok", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	sock, stop := serveSocket(t, mux)
	idle, idleR := dialSocket(t, sock)
	if resp, _ := exchange(t, idle, idleR, "GET /ok HTTP/1.1\r\nHost: settle\r\n\r\n"); resp.StatusCode != 200 {
		t.Fatal(resp.Status)
	}
	busy, busyR := dialSocket(t, sock)
	if _, err := io.WriteString(busy, "GET /slow HTTP/1.1\r\nHost: settle\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	<-entered
	stopped := make(chan error, 1)
	go func() { stopped <- stop() }()
	_ = idle.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := idleR.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("idle connection at shutdown read %v, want EOF", err)
	}
	select {
	case err := <-stopped:
		t.Fatalf("Serve returned (%v) while a request was under way", err)
	default:
	}
	close(release)
	resp, err := http.ReadResponse(busyR, nil)
	if err != nil {
		t.Fatalf("the request under way at shutdown got no answer: %v", err)
	}
	if b, _ := io.ReadAll(resp.Body); string(b) != "done" {
		t.Errorf("answer %q", b)
	}
	if _, err := busyR.ReadByte(); !errors.Is(err, io.EOF) {
		t.Errorf("after its answer at shutdown the connection read %v, want EOF", err)
	}
	if err := <-stopped; err != nil {
		t.Errorf("Serve at shutdown: %v", err)
	}
}

// BenchmarkSocketServer compares, in one run, a round trip of the gate's client to a Unix
// socket (a POST with a JSON body, answered in JSON, as /batch/complete) served by net/http's
// server, as the daemon's socket was, and by settle.Serve: ns/op is a round trip at one caller.
func BenchmarkSocketServer(b *testing.B) {
	h := http.NewServeMux()
	h.HandleFunc("POST /batch/release", func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, "{}\n")
	})
	servers := []struct {
		name  string
		serve func(ctx context.Context, l net.Listener) error
	}{
		{"net-http", func(ctx context.Context, l net.Listener) error {
			srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
			go func() { <-ctx.Done(); _ = srv.Close() }()
			return srv.Serve(l)
		}},
		{"settle-serve", func(ctx context.Context, l net.Listener) error { return settle.Serve(ctx, h, obs.Discard(), l) }},
	}
	for _, s := range servers {
		b.Run(s.name, func(b *testing.B) {
			sock := filepath.Join(b.TempDir(), "s.sock")
			l, err := settle.ListenUnix(sock)
			if err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- s.serve(ctx, l) }()
			defer func() { cancel(); <-done }()
			c, err := client.New("unix:" + sock)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				if err := c.BatchRelease(context.Background(), "0x01"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
