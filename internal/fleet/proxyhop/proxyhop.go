// Package proxyhop is a gateway's proxy port: buyers of a proxy package sold on a box of the
// fleet connect here with their package's key, and their tunnel is carried, as bytes, to that
// box's proxyd through the fleet's WireGuard tunnel. The box's proxyd reads the very CONNECT
// the buyer sent, meters every byte, cuts at the quota and guards egress; the gateway only
// reads the key, to know which box holds the package, and refuses a key no box was sold.
package proxyhop

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/netlimit"
	"github.com/peage/appliance/internal/obs"
)

// ErrUnknownKey is what Locate answers for a key no box was sold.
var ErrUnknownKey = errors.New("no package has this key")

// Config of a proxy port.
type Config struct {
	// Locate finds the tunnel address and port of the box's proxy that holds the package whose
	// key hashes (KeyHash) to keyHash; ErrUnknownKey when none does.
	Locate func(ctx context.Context, keyHash string) (netip.AddrPort, error)
	// Dial opens a connection through the tunnel.
	Dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
	// HeaderTimeout bounds the wait for a CONNECT head (default 10 s), DialTimeout the dial
	// to the box (default 10 s).
	HeaderTimeout, DialTimeout time.Duration
	// Limits bound the connections that have not sent their head, in all and per client, as
	// proxyd does on a single box (its limits see the gateway as one client).
	Limits netlimit.Config
	// WrongKeysPerMinute throttles one client's wrong keys (default 10).
	WrongKeysPerMinute int
	Logger             *slog.Logger
}

// KeyHash is how a package key is known to the gateway: its SHA-256 in hex, as proxyd keeps it.
func KeyHash(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

// maxHead bounds a CONNECT head, as proxyd does.
const maxHead = 16 << 10

// Port serves one listener.
type Port struct {
	cfg  Config
	log  *slog.Logger
	lim  *netlimit.Limiter
	mu   sync.Mutex
	fail map[netip.Prefix]*window
}

type window struct {
	start time.Time
	n     int
}

// New checks cfg and fills its defaults.
func New(cfg Config) (*Port, error) {
	if cfg.Locate == nil || cfg.Dial == nil {
		return nil, errors.New("proxyhop: Locate and Dial are required")
	}
	if cfg.HeaderTimeout <= 0 {
		cfg.HeaderTimeout = 10 * time.Second
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = 10 * time.Second
	}
	if cfg.Limits.Max <= 0 {
		cfg.Limits = netlimit.Config{Max: 1024, PerClient: 32, Per56: 64, Per48: 128}
	}
	if cfg.WrongKeysPerMinute <= 0 {
		cfg.WrongKeysPerMinute = 10
	}
	if cfg.Logger == nil {
		cfg.Logger = obs.Discard()
	}
	return &Port{cfg: cfg, log: cfg.Logger.With(obs.KeyComponent, "proxyhop"), lim: netlimit.New(cfg.Limits), fail: map[netip.Prefix]*window{}}, nil
}

// Serve accepts buyers on ln until ctx ends.
func (p *Port) Serve(ctx context.Context, ln net.Listener) error {
	var live tunnel.Conns
	stop := context.AfterFunc(ctx, func() {
		_ = ln.Close()
		live.CloseAll()
	})
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		addr := netlimit.Addr(c.RemoteAddr())
		slot, why := p.lim.Acquire(addr, c)
		if why != netlimit.Admitted {
			if why == netlimit.TooManyFromClient {
				// Written on the accept loop: a fresh socket's send buffer takes it at once,
				// and nothing is lingered over.
				_ = c.SetWriteDeadline(time.Now().Add(time.Second))
				_, _ = c.Write(tooManyPending)
			}
			_ = c.Close()
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !live.Add(c) {
				slot.Release()
				return
			}
			defer live.Remove(c)
			p.serveConn(ctx, c, netlimit.ClientOf(addr), slot, &live)
		}()
	}
}

func (p *Port) serveConn(ctx context.Context, c net.Conn, client netip.Prefix, slot *netlimit.Slot, live *tunnel.Conns) {
	released := false
	release := func() {
		if !released {
			released = true
			slot.Release()
		}
	}
	defer release()
	_ = c.SetReadDeadline(time.Now().Add(p.cfg.HeaderTimeout))
	head, err := readHead(c)
	if err != nil {
		if errors.Is(err, errTooLarge) {
			refuse(c, http.StatusRequestHeaderFieldsTooLarge, "http_request_error", "request head too large")
		}
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	method, auth := parseHead(head)
	if method != http.MethodConnect {
		refuse(c, http.StatusMethodNotAllowed, "", "This proxy only tunnels with CONNECT.")
		_ = c.Close()
		return
	}
	if p.throttled(client) {
		refuse(c, http.StatusTooManyRequests, "http_request_denied", "too many wrong keys from this address; wait a minute")
		_ = c.Close()
		return
	}
	key, ok := keyOf(auth)
	if ok && !slot.Busy(true) {
		_ = c.Close() // closed meanwhile to make room for a newer connection
		return
	}
	var box netip.AddrPort
	if ok {
		box, err = p.cfg.Locate(ctx, KeyHash(key))
	}
	switch {
	case !ok || errors.Is(err, ErrUnknownKey):
		p.failed(client)
		msg := "unknown proxy key"
		if !ok {
			msg = "proxy key missing; use http://buyer:KEY@host:port"
		}
		refuse(c, http.StatusProxyAuthRequired, "http_request_denied", msg)
		_ = c.Close()
		return
	case err != nil:
		refuse(c, http.StatusBadGateway, "proxy_internal_error", "the package's box cannot be found right now; retry shortly")
		_ = c.Close()
		return
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	t, err := p.cfg.Dial(dctx, box)
	cancel()
	release()
	if err != nil {
		p.log.LogAttrs(ctx, slog.LevelWarn, "proxyhop: box unreachable", slog.String(obs.KeyAddr, box.String()), slog.String(obs.KeyErr, err.Error()))
		refuse(c, http.StatusBadGateway, "destination_unavailable", "the package's box does not answer through the fleet's tunnel; nothing was counted")
		_ = c.Close()
		return
	}
	if !live.Add(t) {
		_ = c.Close()
		return
	}
	defer live.Remove(t)
	// The box's forwarder reads the buyer's address (a PROXY line), then its proxyd reads the
	// buyer's own head (and what followed it) and answers it.
	if _, err := t.Write(append(tunnel.ProxyLine(c.RemoteAddr(), c.LocalAddr()), head...)); err != nil {
		_ = t.Close()
		_ = c.Close()
		return
	}
	tunnel.Join(c, t)
}

func (p *Port) throttled(client netip.Prefix) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	w := p.fail[client]
	return w != nil && w.n >= p.cfg.WrongKeysPerMinute && time.Since(w.start) <= time.Minute
}

func (p *Port) failed(client netip.Prefix) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for k, w := range p.fail {
		if time.Since(w.start) > time.Minute {
			delete(p.fail, k)
		}
	}
	w := p.fail[client]
	if w == nil {
		w = &window{start: time.Now()}
		p.fail[client] = w
	}
	w.n++
}

var errTooLarge = errors.New("head too large")

var tooManyPending = []byte("HTTP/1.1 429 Too Many Requests\r\nProxy-Status: peage-gateway; error=connection_limit_reached; " +
	"details=\"too many connections from this address have not sent a CONNECT yet\"\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")

// readHead reads up to the end of the request head, and returns every byte read (the head and
// what the buyer sent after it without waiting for the 200).
func readHead(c net.Conn) ([]byte, error) {
	buf := make([]byte, 0, 1024)
	for {
		if len(buf) == cap(buf) {
			if cap(buf) >= maxHead {
				return nil, errTooLarge
			}
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if i := bytes.Index(buf, []byte("\r\n\r\n")); i >= 0 {
			if i > maxHead {
				return nil, errTooLarge
			}
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// parseHead returns the request's method and its Proxy-Authorization value.
func parseHead(head []byte) (method, auth string) {
	end := bytes.Index(head, []byte("\r\n\r\n"))
	lines := strings.Split(string(head[:end]), "\r\n")
	method, _, _ = strings.Cut(strings.TrimLeft(lines[0], "\r\n"), " ")
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if ok && strings.EqualFold(strings.TrimSpace(name), "Proxy-Authorization") {
			auth = strings.TrimSpace(value)
		}
	}
	return method, auth
}

// keyOf extracts the password of a Basic Proxy-Authorization value, as proxyd does.
func keyOf(h string) (string, bool) {
	scheme, cred, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "basic") {
		return "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(cred))
	if err != nil {
		return "", false
	}
	_, pass, ok := strings.Cut(string(raw), ":")
	return pass, ok && pass != ""
}

// refuse answers a refusal the way proxyd does (Proxy-Status, and Proxy-Authenticate on 407).
func refuse(c net.Conn, status int, errName, msg string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\n", status, http.StatusText(status))
	if status == http.StatusMethodNotAllowed {
		b.WriteString("Allow: CONNECT\r\n")
	}
	if errName != "" {
		fmt.Fprintf(&b, "Proxy-Status: peage-gateway; error=%s; details=%q\r\n", errName, msg)
	}
	if status == http.StatusProxyAuthRequired {
		b.WriteString("Proxy-Authenticate: Basic realm=\"peage\"\r\n")
	}
	fmt.Fprintf(&b, "Connection: close\r\nContent-Length: %d\r\n\r\n%s\n", len(msg)+1, msg)
	_ = c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(b.Bytes()); err != nil {
		return
	}
	// As proxyd does: what the buyer still sends is read a moment, so that closing with
	// unread input does not reset the connection before the answer is read.
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
		_ = c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		_, _ = io.Copy(io.Discard, io.LimitReader(c, 256<<10))
	}
}
