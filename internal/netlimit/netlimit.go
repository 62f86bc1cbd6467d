// Package netlimit bounds connections, in all and per client, so that sockets from one client
// cannot lock others out. A client is an IPv4 address or an IPv6 /64: a home or a host gets a
// whole /64, so counting single IPv6 addresses would let one client open unbounded sockets.
// IPv6 connections count against their /56 and /48 as well, since a home is usually delegated
// a /56 and a site a /48: a /58 holds 64 /64s, which per /64 bounds alone would let it hold
// 64 times a client's share.
//
// At the bound in all, a new connection is admitted by closing the connection idle the
// longest (never sent a request, or waiting between requests): idle holders from many
// addresses cannot lock a buyer out, they only keep their sockets until newer ones need the
// room. A connection in a request is busy and never closed for another; a busy connection
// whose request carries no key or payment holds at most Max-Reserve, so the rest of the
// bound is kept for requests that do.
package netlimit

import (
	"io"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Client is the key a connection is counted under first (an IPv4 address, an IPv6 /64).
func Client(addr net.Addr) netip.Prefix { return ClientOf(Addr(addr)) }

// ClientOf is Client of an address (Addr's answer).
func ClientOf(a netip.Addr) netip.Prefix {
	p, _ := a.Prefix(clientBits(a))
	return p
}

// Addr is the peer address of addr, unmapped and without zone (invalid when it has none).
func Addr(addr net.Addr) netip.Addr {
	var a netip.Addr
	switch v := addr.(type) {
	case *net.TCPAddr:
		a, _ = netip.AddrFromSlice(v.IP)
	default:
		if ap, err := netip.ParseAddrPort(addr.String()); err == nil {
			a = ap.Addr()
		}
	}
	return a.Unmap().WithZone("")
}

func clientBits(a netip.Addr) int {
	if a.Is6() {
		return 64
	}
	return 32
}

// prefixes are the networks a connection from a counts against, narrowest first: an IPv4
// address; an IPv6 /64, /56 and /48.
func prefixes(a netip.Addr) (ps [3]netip.Prefix, n int) {
	if !a.IsValid() {
		return ps, 1 // the invalid prefix: one key for every address-less peer
	}
	if a.Is4() {
		ps[0], _ = a.Prefix(32)
		return ps, 1
	}
	ps[0], _ = a.Prefix(64)
	ps[1], _ = a.Prefix(56)
	ps[2], _ = a.Prefix(48)
	return ps, 3
}

// Config bounds connections; a zero field is unbounded.
type Config struct {
	Max int // connections in all
	// PerClient bounds each IPv4 address and each IPv6 /64; Per56 and Per48 each IPv6 /56 and
	// /48.
	PerClient, Per56, Per48 int
	// Reserve is the part of Max that busy connections without a key or payment may not take
	// (Slot.Busy(false) is refused past Max-Reserve); at most Max/2.
	Reserve int
}

// Limiter counts connections. It is safe for concurrent use.
type Limiter struct {
	cfg Config

	mu         sync.Mutex
	total      int
	unpaidBusy int
	idle       int // in the idle list
	counts     map[netip.Prefix]int
	oldest     *Slot // the idle list, by when each became idle; oldest first
	newest     *Slot

	evicted atomic.Int64
}

// New returns a limiter of cfg's bounds.
// A reserve of half of Max or more is taken as half: requests without a key keep at least as
// much as those with one.
func New(cfg Config) *Limiter {
	if cfg.Max > 0 && cfg.Reserve > cfg.Max/2 {
		cfg.Reserve = cfg.Max / 2
	}
	return &Limiter{cfg: cfg, counts: map[netip.Prefix]int{}}
}

// Refusal says which bound refused a connection.
type Refusal int

const (
	// Admitted: the connection is counted and must be released.
	Admitted Refusal = iota
	// TooManyInAll: the whole server is at its bound and no connection is idle.
	TooManyInAll
	// TooManyFromClient: this client (its address or one of its networks) is at its bound.
	TooManyFromClient
)

type slotState uint8

const (
	idle slotState = iota
	busy           // in a request without a key or payment
	paid           // in a request with one
	gone           // released or evicted
)

// Slot is one admitted connection.
type Slot struct {
	l          *Limiter
	addr       netip.Addr
	closer     io.Closer
	state      slotState
	prev, next *Slot // in the idle list
}

func (l *Limiter) capOf(i int) int {
	return [3]int{l.cfg.PerClient, l.cfg.Per56, l.cfg.Per48}[i]
}

// Acquire counts a connection from a, whose socket closer closes, or says which bound refuses
// it. At the bound in all it closes the connection idle the longest to make room.
func (l *Limiter) Acquire(a netip.Addr, closer io.Closer) (*Slot, Refusal) {
	ps, n := prefixes(a)
	l.mu.Lock()
	for i := range n {
		if c := l.capOf(i); c > 0 && l.counts[ps[i]] >= c {
			l.mu.Unlock()
			return nil, TooManyFromClient
		}
	}
	var victim *Slot
	if l.cfg.Max > 0 && l.total >= l.cfg.Max {
		if victim = l.oldest; victim == nil {
			l.mu.Unlock()
			return nil, TooManyInAll
		}
		l.drop(victim)
	}
	s := &Slot{l: l, addr: a, closer: closer}
	l.total++
	for i := range n {
		l.counts[ps[i]]++
	}
	l.link(s)
	l.mu.Unlock()
	if victim != nil {
		l.evicted.Add(1)
		_ = victim.closer.Close()
	}
	return s, Admitted
}

// drop uncounts s; l.mu is held.
func (l *Limiter) drop(s *Slot) {
	switch s.state {
	case gone:
		return
	case idle:
		l.unlink(s)
	case busy:
		l.unpaidBusy--
	}
	s.state = gone
	l.total--
	ps, n := prefixes(s.addr)
	for i := range n {
		if c := l.counts[ps[i]] - 1; c > 0 {
			l.counts[ps[i]] = c
		} else {
			delete(l.counts, ps[i])
		}
	}
}

func (l *Limiter) link(s *Slot) {
	s.state, s.prev, s.next = idle, l.newest, nil
	l.idle++
	if l.newest != nil {
		l.newest.next = s
	} else {
		l.oldest = s
	}
	l.newest = s
}

func (l *Limiter) unlink(s *Slot) {
	if s.prev != nil {
		s.prev.next = s.next
	} else {
		l.oldest = s.next
	}
	if s.next != nil {
		s.next.prev = s.prev
	} else {
		l.newest = s.prev
	}
	s.prev, s.next = nil, nil
	l.idle--
}

// Busy marks the connection as in a request, which no newcomer closes; withKey says the
// request carries a key or a payment. It reports false, leaving the connection idle, when the
// connection was closed to make room, or when a request without a key would take from the
// reserve.
func (s *Slot) Busy(withKey bool) bool {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s.state {
	case gone:
		return false
	case busy, paid:
		return true
	}
	if !withKey && l.cfg.Reserve > 0 && l.cfg.Max > 0 && l.unpaidBusy >= l.cfg.Max-l.cfg.Reserve {
		return false
	}
	l.unlink(s)
	if withKey {
		s.state = paid
	} else {
		s.state = busy
		l.unpaidBusy++
	}
	return true
}

// Idle marks the connection as waiting for its next request: it is the newest idle one.
func (s *Slot) Idle() {
	l := s.l
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s.state {
	case busy:
		l.unpaidBusy--
	case idle, gone:
		return
	}
	l.link(s)
}

// Release uncounts the connection (once; a connection closed to make room is uncounted
// already).
func (s *Slot) Release() {
	s.l.mu.Lock()
	s.l.drop(s)
	s.l.mu.Unlock()
}

// Stats are the limiter's counts.
type Stats struct {
	Total, Idle, UnpaidBusy int
	// Evicted counts idle connections closed to make room.
	Evicted int64
}

// Stats reports the counts.
func (l *Limiter) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Stats{Total: l.total, Idle: l.idle, UnpaidBusy: l.unpaidBusy, Evicted: l.evicted.Load()}
}

// Count reports the connections counted against p (a client's address or network).
func (l *Limiter) Count(p netip.Prefix) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[p]
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
		slot, r := l.Limiter.Acquire(Addr(c.RemoteAddr()), c)
		if r != Admitted {
			if l.Refuse != nil {
				// A fresh socket's send buffer is empty: the write does not wait for the peer.
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(l.Refuse(r))
			}
			_ = c.Close()
			continue
		}
		return &conn{Conn: c, slot: slot}, nil
	}
}

type conn struct {
	net.Conn
	slot      *Slot
	inRequest atomic.Bool // Busy succeeded: in a request until its answer is written
	answered  atomic.Bool // written to since Busy: the next read waits for another request
	linger    atomic.Bool // LingerUnread was called
	lingering atomic.Bool // Close has started the lingering close
}

// Busy marks the connection as in a request (Slot.Busy) until its answer is written and the
// server reads again, for the next request: from then on it is idle. A server calls it once
// a request's head is read.
func (c *conn) Busy(withKey bool) bool {
	if !c.slot.Busy(withKey) {
		return false
	}
	c.answered.Store(false)
	c.inRequest.Store(true)
	return true
}

func (c *conn) Write(b []byte) (int, error) {
	if c.inRequest.Load() {
		c.answered.Store(true)
	}
	return c.Conn.Write(b)
}

func (c *conn) Read(b []byte) (int, error) {
	if c.answered.Load() {
		c.answered.Store(false)
		c.inRequest.Store(false)
		c.slot.Idle()
	}
	return c.Conn.Read(b)
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
			c.slot.Release()
		}()
		return nil
	}
	err := c.Conn.Close()
	c.slot.Release()
	return err
}
