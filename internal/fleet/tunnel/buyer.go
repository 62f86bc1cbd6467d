package tunnel

import (
	"bufio"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/peage/appliance/internal/netlimit"
)

// The buyer's address crosses the tunnel in a PROXY protocol v1 line (HAProxy's, one text
// line) that the gateway writes before the buyer's bytes. The box's proxyd counts connections
// and wrong keys per client; behind the forwarder every tunnel would come from one loopback
// address and one buyer's limits would be everyone's. So the forwarder dials proxyd from a
// loopback address of its own for each buyer (IPv4 address or IPv6 /64), drawn from 127/8 by a
// hash: proxyd needs no change, and its limits apply per buyer again. Only the gateway can
// reach the tunnel port (WireGuard admits its key alone), so the line is trusted there.

// maxProxyLine is PROXY v1's bound on its line (107 bytes with the CRLF).
const maxProxyLine = 107

// ProxyLine is the PROXY v1 line of a connection from src to dst.
func ProxyLine(src, dst net.Addr) []byte {
	s, d := netlimit.Addr(src), netlimit.Addr(dst)
	sp, dp := port(src), port(dst)
	if !s.IsValid() || !d.IsValid() || s.Is4() != d.Is4() {
		return []byte("PROXY UNKNOWN\r\n")
	}
	family := "TCP4"
	if s.Is6() {
		family = "TCP6"
	}
	return fmt.Appendf(nil, "PROXY %s %s %s %d %d\r\n", family, s, d, sp, dp)
}

func port(a net.Addr) int {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.Port
	}
	return 0
}

// readProxyLine reads the PROXY v1 line at the start of r and returns the buyer's address
// (invalid for PROXY UNKNOWN).
func readProxyLine(r *bufio.Reader) (netip.Addr, error) {
	var line []byte
	for len(line) < maxProxyLine {
		b, err := r.ReadByte()
		if err != nil {
			return netip.Addr{}, err
		}
		line = append(line, b)
		if b == '\n' {
			break
		}
	}
	text, ok := strings.CutSuffix(string(line), "\r\n")
	if !ok || !strings.HasPrefix(text, "PROXY ") {
		return netip.Addr{}, errors.New("tunnel: no PROXY line before the buyer's bytes")
	}
	f := strings.Fields(text)
	if len(f) >= 2 && f[1] == "UNKNOWN" {
		return netip.Addr{}, nil
	}
	if len(f) != 6 || f[1] != "TCP4" && f[1] != "TCP6" {
		return netip.Addr{}, fmt.Errorf("tunnel: malformed PROXY line %q", text)
	}
	a, err := netip.ParseAddr(f[2])
	if err != nil {
		return netip.Addr{}, fmt.Errorf("tunnel: PROXY source %q", f[2])
	}
	return a, nil
}

// loopbackFor is the loopback address the forwarder dials proxyd from for a buyer: one per
// client (IPv4 address, IPv6 /64), never 127.0.0.1 (the box's own), the zero value for an
// unknown buyer.
func loopbackFor(buyer netip.Addr) netip.Addr {
	if !buyer.IsValid() {
		return netip.Addr{}
	}
	h := sha256.Sum256([]byte(netlimit.ClientOf(buyer).String()))
	a := netip.AddrFrom4([4]byte{127, h[0], h[1], h[2]})
	if a == netip.AddrFrom4([4]byte{127, 0, 0, 1}) {
		a = netip.AddrFrom4([4]byte{127, 0, 0, 2})
	}
	return a
}

// bufferedConn is a connection whose first bytes were read into r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes a half-close on to the connection underneath.
func (c bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}
