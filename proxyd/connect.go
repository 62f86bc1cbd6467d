package proxyd

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/peage/appliance/internal/connecthead"
	"github.com/peage/appliance/internal/netlimit"
)

// The CONNECT phase is read and answered here, on the connection's own goroutine, which then
// dials and carries the tunnel's downstream copy: one goroutine from accept to the 200 and
// two for the tunnel's life. A general HTTP server (net/http, and goproxy on it) costs a
// tunnel set-up much more for nothing this proxy uses: a connection and a request object, a
// header map, 4 KiB read and write buffers, a context, a background read goroutine that
// hijacking must stop, and a second goroutine handing the hijacked socket over.

// headPool holds the buffers heads are read into; a buffer goes back before the tunnel runs.
var headPool = sync.Pool{New: func() any { b := make([]byte, connecthead.MaxBytes); return &b }}

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
	h, read, err := connecthead.Read(c, *bp)
	var early []byte
	if rest := read[h.Len:]; len(rest) > 0 {
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
	case errors.Is(err, connecthead.ErrTooLarge):
		ref = &refusal{Status: http.StatusRequestHeaderFieldsTooLarge, ErrName: "http_request_error", Msg: "request head too large"}
	case errors.Is(err, connecthead.ErrMalformed):
		ref = &refusal{Status: http.StatusBadRequest, ErrName: "http_request_error", Msg: "malformed request"}
	case err != nil:
		return // the header timeout, or the client left
	case h.Method != http.MethodConnect:
		ref = &refusal{Status: http.StatusMethodNotAllowed, Msg: onlyConnect}
	case h.Auth != "" && !slot.Busy(true):
		return // closed meanwhile to make room for a newer connection
	default:
		_ = c.SetReadDeadline(timeZero)
		m, th, target, ref = s.admit(ctx, h.Target, h.Auth, client)
	}
	// Decided (the target's name resolved too): no longer a pending connection.
	done()
	if ref != nil {
		s.proxy().Refuse(c, *ref)
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
		addr, slot, ok := s.proxy().Admit(lim, tc)
		if !ok {
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
