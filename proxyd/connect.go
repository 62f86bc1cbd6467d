package proxyd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/peage/appliance/internal/netlimit"
)

// The CONNECT phase is read and answered here, on the connection's own goroutine, which then
// dials and carries the tunnel's downstream copy: one goroutine from accept to the 200 and
// two for the tunnel's life. A general HTTP server (net/http, and goproxy on it) costs a
// tunnel set-up much more for nothing this proxy uses: a connection and a request object, a
// header map, 4 KiB read and write buffers, a context, a background read goroutine that
// hijacking must stop, and a second goroutine handing the hijacked socket over.

// maxHeadBytes bounds a CONNECT head (request line and headers); a longer one gets 431.
const maxHeadBytes = 16 << 10

// headPool holds the buffers heads are read into; a buffer goes back before the tunnel runs.
var headPool = sync.Pool{New: func() any { b := make([]byte, maxHeadBytes); return &b }}

// connectHead is what proxyd reads of a request head.
type connectHead struct {
	method string
	target string // the request-target: host:port for a CONNECT
	auth   string // the Proxy-Authorization value, "" when absent
}

var errHeadTooLarge = errors.New("request head too large")

// readConnectHead reads one request head from c into buf, and returns it parsed together with
// the bytes the client sent after it (a client may start its TLS handshake without waiting
// for the 200); rest aliases buf.
func readConnectHead(c net.Conn, buf []byte) (connectHead, []byte, error) {
	// Each search resumes where the last one stopped, and blank lines before the request line
	// are dropped as they come, so a head sent a byte at a time costs linear time, not
	// quadratic; dropped bytes still count against the buffer's size.
	n, from, dropped := 0, 0, 0
	for {
		k, err := c.Read(buf[n:])
		if n == 0 {
			skip := 0
			for skip < k && (buf[skip] == '\r' || buf[skip] == '\n') {
				skip++
			}
			copy(buf, buf[skip:k])
			k -= skip
			dropped += skip
		}
		n += k
		if end := headEnd(buf[:n], from); end >= 0 {
			h, perr := parseHead(buf[:end])
			return h, buf[end:n], perr
		}
		if err != nil {
			return connectHead{}, nil, err
		}
		if n+dropped >= len(buf) {
			return connectHead{}, nil, errHeadTooLarge
		}
		from = max(0, n-2)
	}
}

// headEnd returns the length of the head in b (through the blank line that ends it), or -1;
// from says that b[:from] was searched before (its end cannot lie wholly in it).
// Lines may end in CRLF or a bare LF, as net/http accepts; blank lines before the request
// line are skipped (RFC 9112 §2.2).
func headEnd(b []byte, from int) int {
	start := 0
	for start < len(b) && (b[start] == '\r' || b[start] == '\n') {
		start++
	}
	for i := max(start, from); i < len(b); i++ {
		if b[i] != '\n' {
			continue
		}
		switch {
		case i+1 < len(b) && b[i+1] == '\n':
			return i + 2
		case i+2 < len(b) && b[i+1] == '\r' && b[i+2] == '\n':
			return i + 3
		}
	}
	return -1
}

var errMalformed = errors.New("malformed request")

// parseHead parses a request line and its header fields; only Proxy-Authorization is kept.
func parseHead(b []byte) (connectHead, error) {
	var h connectHead
	b = bytes.TrimLeft(b, "\r\n")
	line, b, _ := bytes.Cut(b, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	method, rest, ok1 := bytes.Cut(line, []byte{' '})
	target, version, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 || !validToken(method) || hasCTL(target) ||
		!(bytes.Equal(version, []byte("HTTP/1.1")) || bytes.Equal(version, []byte("HTTP/1.0"))) {
		return h, errMalformed
	}
	h.method, h.target = string(method), string(target)
	for len(b) > 0 {
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		// A field name is a token right before the colon: no folded line, no space.
		if !ok || !validToken(name) {
			return h, errMalformed
		}
		if h.auth == "" && bytes.EqualFold(name, []byte("Proxy-Authorization")) {
			h.auth = string(bytes.TrimSpace(value))
		}
	}
	return h, nil
}

// hasCTL says whether b holds a control character (a request-target never does: net/http,
// which read the heads before, refused one with 400 too).
func hasCTL(b []byte) bool {
	for _, c := range b {
		if c < ' ' || c == 0x7f {
			return true
		}
	}
	return false
}

// validToken says whether b is an RFC 9110 token (method and field-name syntax).
func validToken(b []byte) bool {
	for _, c := range b {
		if c <= ' ' || c >= 0x7f || bytes.IndexByte([]byte(`"(),/:;<=>?@[\]{}`), c) >= 0 {
			return false
		}
	}
	return len(b) > 0
}

// refusal is a CONNECT answered with an error instead of a tunnel.
type refusal struct {
	status  int
	errName string // the Proxy-Status error (RFC 9209)
	msg     string
}

// writeRefusal answers r (with a one-line text body) and ends the connection: the write side
// is closed first and what the client still sends is read for a moment, so the answer is not
// lost to a reset from unread input.
func (s *Server) writeRefusal(c net.Conn, r refusal) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", r.status, http.StatusText(r.status))
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	if r.status == http.StatusMethodNotAllowed {
		b.WriteString("Allow: CONNECT\r\n")
	}
	if r.errName != "" {
		fmt.Fprintf(&b, "Proxy-Status: peage; error=%s; details=%q\r\n", r.errName, r.msg)
	}
	if r.status == http.StatusProxyAuthRequired {
		fmt.Fprintf(&b, "Proxy-Authenticate: Basic realm=%q\r\n", s.cfg.Realm)
	}
	fmt.Fprintf(&b, "Connection: close\r\nProxy-Connection: close\r\nContent-Length: %d\r\n\r\n%s\n", len(r.msg)+1, r.msg)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(b.Bytes()); err != nil {
		return
	}
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 256<<10))
	}
}

// serveConn carries one accepted connection: its CONNECT head, then the tunnel. release ends
// the connection's pending state: counted until its head is read and decided, the target's
// name resolved included. slot is its place among the pending connections: one whose head
// carries a key is not closed to make room while it is decided.
func (s *Server) serveConn(ctx context.Context, c *net.TCPConn, client netip.Prefix, slot *netlimit.Slot, release func()) {
	released := false
	done := func() {
		if !released {
			released = true
			release()
		}
	}
	defer done()
	defer func() {
		if c != nil {
			_ = c.Close()
		}
	}()
	_ = c.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	bp := headPool.Get().(*[]byte)
	h, rest, err := readConnectHead(c, *bp)
	var early []byte
	if len(rest) > 0 {
		early = bytes.Clone(rest)
	}
	headPool.Put(bp)
	var (
		m      *meter
		th     string
		target netip.AddrPort
		ref    *refusal
	)
	switch {
	case errors.Is(err, errHeadTooLarge):
		ref = &refusal{status: http.StatusRequestHeaderFieldsTooLarge, errName: "http_request_error", msg: "request head too large"}
	case errors.Is(err, errMalformed):
		ref = &refusal{status: http.StatusBadRequest, errName: "http_request_error", msg: "malformed request"}
	case err != nil:
		return // the header timeout, or the client left
	case h.method != http.MethodConnect:
		ref = &refusal{status: http.StatusMethodNotAllowed, msg: onlyConnect}
	case h.auth != "" && !slot.Busy(true):
		return // closed meanwhile to make room for a newer connection
	default:
		_ = c.SetReadDeadline(timeZero)
		m, th, target, ref = s.admit(ctx, h.target, h.auth, client.String())
	}
	// Decided (the target's name resolved too): no longer a pending connection.
	done()
	if ref != nil {
		s.writeRefusal(c, *ref)
		return
	}
	conn := c
	c = nil // serveTunnel closes it
	s.serveTunnel(conn, m, th, target, early)
}

// serve accepts connections on ln until ctx ends; each runs serveConn on its own goroutine.
func (s *Server) serve(ctx context.Context, ln net.Listener, lim *netlimit.Limiter) error {
	var (
		mu    sync.Mutex
		heads = map[net.Conn]struct{}{}
		wg    sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		// Connections still sending their head are closed; tunnels are Close's.
		mu.Lock()
		for c := range heads {
			_ = c.Close()
		}
		mu.Unlock()
	})
	defer stop()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				wg.Wait()
				if ctx.Err() != nil {
					return nil
				}
				return err
			}
			// Out of descriptors or a connection reset before accept: wait and go on, as
			// net/http does.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		tc, ok := c.(*net.TCPConn)
		if !ok {
			_ = c.Close()
			continue
		}
		addr := netlimit.Addr(tc.RemoteAddr())
		slot, why := lim.Acquire(addr, tc)
		if why != netlimit.Admitted {
			if why == netlimit.TooManyFromClient {
				// A fresh socket's send buffer is empty: the write does not wait for the peer.
				_ = tc.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = tc.Write(tooManyPending)
			}
			_ = tc.Close()
			continue
		}
		client := netlimit.ClientOf(addr)
		s.pending.Add(1)
		mu.Lock()
		heads[c] = struct{}{}
		if ctx.Err() != nil {
			_ = c.Close() // accepted as the shutdown closed the others
		}
		mu.Unlock()
		wg.Add(1)
		go s.serveConn(ctx, tc, client, slot, func() {
			mu.Lock()
			delete(heads, c)
			mu.Unlock()
			s.pending.Add(-1)
			slot.Release()
			wg.Done()
		})
	}
}
