package client

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"
)

// unixTransport carries the client's HTTP/1.1 requests to the settle daemon's Unix socket. The
// calling goroutine writes each request and reads its answer on a connection of its own, taken
// from a pool of idle ones: net/http's Transport hands every request to two goroutines of its
// connection and back, which cost a paid call's two round trips to the daemon more CPU than
// the daemon's own handling of a voucher (docs/gas.md). As with the Transport, an idle
// connection the daemon closed (it restarted) is found closed before a request is written on
// it, and a request whose answer is lost after it was written is an error, never sent again,
// since the daemon may have acted on it.
type unixTransport struct {
	path string

	mu   sync.Mutex
	idle []*unixConn // most recently used last
}

// maxIdleUnix bounds the idle connections kept: as many as the gate's busiest moments use.
const maxIdleUnix = 64

type unixConn struct {
	nc net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

// longAgo is a deadline already past: setting it ends a blocked read or write at once.
var longAgo = time.Unix(1, 0)

func (t *unixTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	c, err := t.take(ctx)
	if err != nil {
		if req.Body != nil {
			_ = req.Body.Close() // a RoundTripper closes the body, written or not
		}
		return nil, err
	}
	// A call given up (its context ended) unblocks its connection, which is then closed.
	stop := context.AfterFunc(ctx, func() { _ = c.nc.SetDeadline(longAgo) })
	fail := func(err error) (*http.Response, error) {
		stop()
		_ = c.nc.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	err = req.Write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	if err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(c.br, req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &unixBody{rc: resp.Body, t: t, c: c, stop: stop, keep: !resp.Close}
	return resp, nil
}

// take returns an idle connection the daemon has not closed, or dials a new one.
func (t *unixTransport) take(ctx context.Context) (*unixConn, error) {
	for {
		t.mu.Lock()
		n := len(t.idle)
		if n == 0 {
			t.mu.Unlock()
			break
		}
		c := t.idle[n-1]
		t.idle = t.idle[:n-1]
		t.mu.Unlock()
		if c.br.Buffered() == 0 && open(c.nc) {
			return c, nil
		}
		_ = c.nc.Close()
	}
	var d net.Dialer
	nc, err := d.DialContext(ctx, "unix", t.path)
	if err != nil {
		return nil, err
	}
	return &unixConn{nc: nc, br: bufio.NewReaderSize(nc, 8<<10), bw: bufio.NewWriterSize(nc, 8<<10)}, nil
}

// put keeps a connection whose last answer was read whole for the next request.
func (t *unixTransport) put(c *unixConn) {
	t.mu.Lock()
	if len(t.idle) < maxIdleUnix {
		t.idle = append(t.idle, c)
		c = nil
	}
	t.mu.Unlock()
	if c != nil {
		_ = c.nc.Close()
	}
}

// CloseIdleConnections closes the idle connections (http.Client.CloseIdleConnections).
func (t *unixTransport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = nil
	t.mu.Unlock()
	for _, c := range idle {
		_ = c.nc.Close()
	}
}

// open reports whether the daemon's end of an idle connection is still open and has sent
// nothing: a peek that finds no data to read, without waiting.
func open(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var (
		buf  [1]byte
		live bool
	)
	err = rc.Read(func(fd uintptr) bool {
		_, _, e := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		live = errors.Is(e, syscall.EAGAIN)
		return true
	})
	return err == nil && live
}

// unixBody is an answer's body: once it is read whole and closed, its connection goes back to
// the pool.
type unixBody struct {
	rc   io.ReadCloser
	t    *unixTransport
	c    *unixConn
	stop func() bool
	keep bool // the answer let the connection be kept
	done bool
}

func (b *unixBody) Read(p []byte) (int, error) { return b.rc.Read(p) }

func (b *unixBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	err := b.rc.Close() // reads what is left of the body
	if b.stop() && err == nil && b.keep {
		b.t.put(b.c)
	} else {
		_ = b.c.nc.Close()
	}
	return err
}
