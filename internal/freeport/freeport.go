// Package freeport gives tests a loopback address to hand to a daemon that binds it itself.
//
// A port from 127.0.0.1:0 lies in the kernel's ephemeral range, where any outgoing connection
// or other :0 listener of a parallel test process may take it between the check and the
// daemon's bind. The ports here are drawn below that range (Linux's default starts at 32768),
// so only another caller of this package can collide, and only by chance.
package freeport

import (
	"math/rand/v2"
	"net"
	"strconv"
	"testing"
)

const lo, hi = 20000, 32000

// Addr returns 127.0.0.1:port for a port that was free when checked.
func Addr(t testing.TB) string {
	t.Helper()
	for range 100 {
		addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(lo+rand.IntN(hi-lo)))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatal("freeport: no free port below the ephemeral range after 100 tries")
	return ""
}
