// Package fleettest holds what the fleet's tests share: a box's line to the hub that a test
// cuts and restores, and a wait for what the fleet does in the background.
package fleettest

import (
	"io"
	"net"
	"sync"
	"testing"

	"github.com/peage/appliance/internal/freeport"
)

// Line relays a box's connections to the hub's leaf listener. Cut closes every connection and
// refuses new ones, as a line that went down; Restore brings it back on the same address.
type Line struct {
	t      testing.TB
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
	conns  []net.Conn
}

// NewLine opens a line to target (HOST:PORT); its address is Addr. The test's end cuts it.
func NewLine(t testing.TB, target string) *Line {
	l := &Line{t: t, addr: freeport.Addr(t), target: target}
	l.Restore()
	t.Cleanup(l.Cut)
	return l
}

// Addr is the line's end a box dials.
func (l *Line) Addr() string { return l.addr }

// Restore listens again on the line's address.
func (l *Line) Restore() {
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		l.t.Fatal(err)
	}
	l.mu.Lock()
	l.ln = ln
	l.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", l.target)
			if err != nil {
				in.Close()
				continue
			}
			l.mu.Lock()
			l.conns = append(l.conns, in, out)
			l.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

// Cut closes the listener and every connection.
func (l *Line) Cut() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ln != nil {
		l.ln.Close()
		l.ln = nil
	}
	for _, c := range l.conns {
		c.Close()
	}
	l.conns = nil
}
