// Package loopback serves the stand-ins of tests and benches (a tunnel's target, an echo
// server, a box's proxy) on a loopback port: one accept loop, each connection handled on its
// own goroutine.
package loopback

import (
	"net"
	"testing"
)

// Serve listens on a loopback port and runs handle for each connection accepted, on its own
// goroutine, until ln is closed; handle closes its connection.
func Serve(handle func(net.Conn)) (ln net.Listener, err error) {
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go handle(c)
		}
	}()
	return ln, nil
}

// ServeT is Serve for a test: a port that cannot be had fails it, and its end closes the
// listener. It returns the listener's address.
func ServeT(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	ln, err := Serve(handle)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ln.Close() })
	return ln.Addr().String()
}
