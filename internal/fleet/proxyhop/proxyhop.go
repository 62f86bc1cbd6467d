// Package proxyhop is a gateway's proxy port: buyers of a proxy package sold on a box of the
// fleet connect here with their package's key, and their tunnel is carried, as bytes, to that
// box's proxyd through the fleet's WireGuard tunnel. The box's proxyd reads the very CONNECT
// the buyer sent, meters every byte, cuts at the quota and guards egress; the gateway only
// reads the key, to know which box holds the package, and refuses a key no box was sold.
package proxyhop

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"github.com/peage/appliance/internal/connecthead"
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

// KeyHash is how a package key is known to the gateway: its hash, as proxyd keeps it.
func KeyHash(key string) string { return connecthead.KeyHash(key) }

// gateway is how the gateway names itself in its refusals.
var gateway = connecthead.Proxy{Name: "peage-gateway", Realm: "peage"}

// headPool holds the buffers heads are read into; a buffer goes back once the head and what
// followed it are copied behind the PROXY line.
var headPool = sync.Pool{New: func() any { b := make([]byte, connecthead.MaxBytes); return &b }}

// Port serves one listener.
type Port struct {
	cfg       Config
	log       *slog.Logger
	lim       *netlimit.Limiter
	wrongKeys connecthead.WrongKeys
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
	p := &Port{cfg: cfg, log: cfg.Logger.With(obs.KeyComponent, "proxyhop"), lim: netlimit.New(cfg.Limits)}
	p.wrongKeys.Limit = cfg.WrongKeysPerMinute
	return p, nil
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
		addr, slot, ok := gateway.Admit(p.lim, c)
		if !ok {
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
	bp := headPool.Get().(*[]byte)
	h, read, err := connecthead.Read(c, *bp)
	// The box's forwarder reads the buyer's address (a PROXY line), then its proxyd reads the
	// buyer's own head (and what followed it) and answers it.
	toBox := append(tunnel.ProxyLine(c.RemoteAddr(), c.LocalAddr()), read...)
	headPool.Put(bp)
	switch {
	case errors.Is(err, connecthead.ErrTooLarge):
		refuse(c, http.StatusRequestHeaderFieldsTooLarge, "http_request_error", "request head too large")
		return
	case errors.Is(err, connecthead.ErrMalformed):
		refuse(c, http.StatusBadRequest, "http_request_error", "malformed request")
		return
	case err != nil:
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if h.Method != http.MethodConnect {
		refuse(c, http.StatusMethodNotAllowed, "", "This proxy only tunnels with CONNECT.")
		return
	}
	if p.wrongKeys.Throttled(client) {
		refuse(c, http.StatusTooManyRequests, "http_request_denied", "too many wrong keys from this address; wait a minute")
		return
	}
	key, ok := connecthead.Key(h.Auth)
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
		// The gateway has no sweeper: the old windows go as new wrong keys come.
		p.wrongKeys.Sweep()
		p.wrongKeys.Add(client)
		msg := "unknown proxy key"
		if !ok {
			msg = "proxy key missing; use http://buyer:KEY@host:port"
		}
		refuse(c, http.StatusProxyAuthRequired, "http_request_denied", msg)
		return
	case err != nil:
		refuse(c, http.StatusBadGateway, "proxy_internal_error", "the package's box cannot be found right now; retry shortly")
		return
	}
	dctx, cancel := context.WithTimeout(ctx, p.cfg.DialTimeout)
	t, err := p.cfg.Dial(dctx, box)
	cancel()
	release()
	if err != nil {
		p.log.LogAttrs(ctx, slog.LevelWarn, "proxyhop: box unreachable", slog.String(obs.KeyAddr, box.String()), slog.String(obs.KeyErr, err.Error()))
		refuse(c, http.StatusBadGateway, "destination_unavailable", "the package's box does not answer through the fleet's tunnel; nothing was counted")
		return
	}
	if !live.Add(t) {
		_ = c.Close()
		return
	}
	defer live.Remove(t)
	if _, err := t.Write(toBox); err != nil {
		_ = t.Close()
		_ = c.Close()
		return
	}
	tunnel.Join(c, t)
}

// refuse answers a refusal the way proxyd does, and closes c.
func refuse(c net.Conn, status int, errName, msg string) {
	gateway.Refuse(c, connecthead.Refusal{Status: status, ErrName: errName, Msg: msg})
	_ = c.Close()
}
