// Package connecthead reads the head of a CONNECT request (request line and fields, of which
// only Proxy-Authorization is kept), extracts the package key it carries, and writes a proxy's
// refusals. proxyd, which answers the CONNECT, and the fleet gateway's proxy port, which reads
// it to find the box and forwards it as read, share one parser and one refusal, so a buyer
// meets the same rules and the same answers at either.
package connecthead

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/peage/appliance/internal/netlimit"
)

// MaxBytes bounds a CONNECT head (request line and headers); a longer one gets 431.
const MaxBytes = 16 << 10

// Head is what is read of a request head.
type Head struct {
	Method string
	Target string // the request-target: host:port for a CONNECT
	Auth   string // the Proxy-Authorization value, "" when absent
	// Len is the head's length in the bytes Read returns (through the blank line that ends it).
	Len int
}

var (
	// ErrTooLarge is a head that does not end within the buffer.
	ErrTooLarge = errors.New("request head too large")
	// ErrMalformed is a head that is not an HTTP/1 request head.
	ErrMalformed = errors.New("malformed request")
)

// Read reads one request head from c into buf, and returns it parsed together with every byte
// read: the head (read[:h.Len]) and what the client sent after it (a client may start its TLS
// handshake without waiting for the 200). read aliases buf; blank lines before the request
// line are not in it.
func Read(c net.Conn, buf []byte) (h Head, read []byte, err error) {
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
			h, perr := parse(buf[:end])
			h.Len = end
			return h, buf[:n], perr
		}
		if err != nil {
			return Head{}, nil, err
		}
		if n+dropped >= len(buf) {
			return Head{}, nil, ErrTooLarge
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

// parse parses a request line and its header fields; only Proxy-Authorization is kept.
func parse(b []byte) (Head, error) {
	var h Head
	b = bytes.TrimLeft(b, "\r\n")
	line, b, _ := bytes.Cut(b, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	method, rest, ok1 := bytes.Cut(line, []byte{' '})
	target, version, ok2 := bytes.Cut(rest, []byte{' '})
	if !ok1 || !ok2 || len(method) == 0 || len(target) == 0 || !validToken(method) || hasCTL(target) ||
		!(bytes.Equal(version, []byte("HTTP/1.1")) || bytes.Equal(version, []byte("HTTP/1.0"))) {
		return h, ErrMalformed
	}
	h.Method, h.Target = string(method), string(target)
	for len(b) > 0 {
		line, b, _ = bytes.Cut(b, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		// A field name is a token right before the colon: no folded line, no space.
		if !ok || !validToken(name) {
			return h, ErrMalformed
		}
		if h.Auth == "" && bytes.EqualFold(name, []byte("Proxy-Authorization")) {
			h.Auth = string(bytes.TrimSpace(value))
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

// Key extracts the package key from a Basic Proxy-Authorization value: its password (the user
// name is expected to be "buyer" but is not part of the secret).
func Key(auth string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(auth), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", false
	}
	_, pass, ok := strings.Cut(string(raw), ":")
	if !ok || pass == "" {
		return "", false
	}
	return pass, true
}

// KeyHash is how a package key is kept and known: its SHA-256 in hex (the key itself is
// shown once, when sold).
func KeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// Proxy names the proxy that answers: its name in Proxy-Status (RFC 9209) and the realm of its
// Proxy-Authenticate.
type Proxy struct {
	Name, Realm string
}

// Refusal is a CONNECT answered with an error instead of a tunnel.
type Refusal struct {
	Status  int
	ErrName string // the Proxy-Status error (RFC 9209)
	Msg     string
}

// Refuse answers r (with a one-line text body) and ends the connection: the write side is
// closed first and what the client still sends is read for a moment, so the answer is not
// lost to a reset from unread input.
func (p Proxy) Refuse(c net.Conn, r Refusal) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", r.Status, http.StatusText(r.Status))
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	if r.Status == http.StatusMethodNotAllowed {
		b.WriteString("Allow: CONNECT\r\n")
	}
	if r.ErrName != "" {
		fmt.Fprintf(&b, "Proxy-Status: %s; error=%s; details=%q\r\n", p.Name, r.ErrName, r.Msg)
	}
	if r.Status == http.StatusProxyAuthRequired {
		fmt.Fprintf(&b, "Proxy-Authenticate: Basic realm=%q\r\n", p.Realm)
	}
	fmt.Fprintf(&b, "Connection: close\r\nProxy-Connection: close\r\nContent-Length: %d\r\n\r\n%s\n", len(r.Msg)+1, r.Msg)
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

// Admit takes a new connection's place among lim's pending connections (those in their
// CONNECT phase). Refused, c is told why when its client (or network) has too many (written on
// the accept loop: a fresh socket's send buffer takes it at once) and closed.
func (p Proxy) Admit(lim *netlimit.Limiter, c net.Conn) (netip.Addr, *netlimit.Slot, bool) {
	addr := netlimit.Addr(c.RemoteAddr())
	slot, why := lim.Acquire(addr, c)
	if why == netlimit.Admitted {
		return addr, slot, true
	}
	if why == netlimit.TooManyFromClient {
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = c.Write([]byte("HTTP/1.1 429 Too Many Requests\r\nProxy-Status: " + p.Name + "; error=connection_limit_reached; " +
			"details=\"too many connections from this address have not sent a CONNECT yet\"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))
	}
	_ = c.Close()
	return addr, nil, false
}
