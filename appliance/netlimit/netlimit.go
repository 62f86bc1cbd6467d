// Package netlimit bounds connections, in all and per client, so that sockets from one client
// cannot lock others out. A client is an IPv4 address or an IPv6 /64: a home or a host gets a
// whole /64, so counting single IPv6 addresses would let one client open unbounded sockets.
package netlimit

import (
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Client is the key a connection is counted under.
func Client(addr net.Addr) netip.Prefix {
	var a netip.Addr
	switch v := addr.(type) {
	case *net.TCPAddr:
		a, _ = netip.AddrFromSlice(v.IP)
	default:
		if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
			a = ap.Addr()
		}
	}
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return netip.Prefix{}
	}
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, _ := a.Prefix(bits)
	return p
}

// Limiter counts connections in all and per client. The zero limits mean unbounded. It is
// safe for concurrent use.
type Limiter struct {
	max, perClient int

	mu     sync.Mutex
	total  int
	counts map[netip.Prefix]int
}

// New returns a limiter of max connections in all and perClient per client (0: unbounded).
func New(max, perClient int) *Limiter {
	return &Limiter{max: max, perClient: perClient, counts: map[netip.Prefix]int{}}
}

// Refusal says which bound refused a connection.
type Refusal int

const (
	// Admitted: the connection is counted and must be released.
	Admitted Refusal = iota
	// TooManyInAll: the whole server is at its bound.
	TooManyInAll
	// TooManyFromClient: this client is at its own bound.
	TooManyFromClient
)

// Acquire counts a connection of client k, or says which bound refuses it.
func (l *Limiter) Acquire(k netip.Prefix) Refusal {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.max > 0 && l.total >= l.max {
		return TooManyInAll
	}
	if l.perClient > 0 && l.counts[k] >= l.perClient {
		return TooManyFromClient
	}
	l.total++
	l.counts[k]++
	return Admitted
}

// Release uncounts a connection of client k admitted earlier.
func (l *Limiter) Release(k netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total--
	if n := l.counts[k] - 1; n > 0 {
		l.counts[k] = n
	} else {
		delete(l.counts, k)
	}
}

// Counts reports the connections counted in all and for client k.
func (l *Limiter) Counts(k netip.Prefix) (total, client int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total, l.counts[k]
}

// Listener admits connections through a Limiter; a connection is released when it is closed.
// A refused connection gets Refuse's answer (a short HTTP response) and is closed at once, so
// the client learns why rather than seeing a reset.
type Listener struct {
	net.Listener
	Limiter *Limiter
	// Refuse renders the answer to a refused connection (nil: closed without a word).
	Refuse func(Refusal) []byte
}

// Accept returns the next admitted connection.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		k := Client(c.RemoteAddr())
		if r := l.Limiter.Acquire(k); r != Admitted {
			if l.Refuse != nil {
				// A fresh socket's send buffer is empty: the write does not wait for the peer.
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(l.Refuse(r))
			}
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, release: func() { l.Limiter.Release(k) }}, nil
	}
}

type conn struct {
	net.Conn
	once      sync.Once
	release   func()
	linger    atomic.Bool // LingerUnread was called
	lingering atomic.Bool // Close has started the lingering close
}

// lingerFor and lingerBytes bound what a lingering close waits for and reads.
const (
	lingerFor   = 500 * time.Millisecond
	lingerBytes = 256 << 10
)

// LingerUnread marks the connection as closing with input the server did not read (a request
// head over its limit, a body it refused). The kernel resets a socket closed with unread
// input, and the client then loses the answer written just before; so Close ends the sending
// side first and discards what the client still sends, for a moment and a bounded amount,
// before closing. The connection counts against its client until then.
func (c *conn) LingerUnread() { c.linger.Store(true) }

func (c *conn) Close() error {
	if tc, ok := c.Conn.(*net.TCPConn); ok && c.linger.Load() && c.lingering.CompareAndSwap(false, true) {
		_ = tc.CloseWrite()
		go func() {
			_ = tc.SetReadDeadline(time.Now().Add(lingerFor))
			_, _ = io.Copy(io.Discard, io.LimitReader(tc, lingerBytes))
			_ = tc.Close()
			c.once.Do(c.release)
		}()
		return nil
	}
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
