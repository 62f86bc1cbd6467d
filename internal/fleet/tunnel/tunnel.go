// Package tunnel carries a fleet's byte streams (proxy tunnels) over WireGuard, run in user
// space: wireguard-go's device on a userspace TCP/IP stack (gVisor's netstack), so neither the
// gateway nor a box needs a kernel module, a TUN device or root. The only socket on the host is
// the device's UDP socket; the tunnel's TCP ports exist inside the netstack alone, so a box
// serves its proxy on its tunnel address without any port open on its line.
//
// The box dials out: it knows the gateway's endpoint and sends a keepalive every 25 s, which
// opens and keeps the mapping of a carrier-grade NAT; the gateway knows only each box's public
// key and tunnel address, and learns where the box is from its authenticated handshakes.
package tunnel

import (
	"bufio"
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.zx2c4.com/wireguard/conn"
	"golang.zx2c4.com/wireguard/device"
	"golang.zx2c4.com/wireguard/tun/netstack"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/obs"
)

// MTU of the tunnel: WireGuard's usual 1420 leaves room for its 60-byte IPv4 overhead (80 on
// IPv6) within a 1500-byte line.
const MTU = 1420

// Keepalive is the box's persistent keepalive in seconds: short enough for the UDP mappings of
// carrier-grade NATs, which commonly expire after 30 s of silence.
const Keepalive = 25

// Key is a Curve25519 key, written in base64 as wg(8) and systemd-networkd write it.
type Key [32]byte

// GenerateKey makes a private key, clamped as wg genkey does.
func GenerateKey() (Key, error) {
	var k Key
	if _, err := rand.Read(k[:]); err != nil {
		return Key{}, fmt.Errorf("tunnel: key: %w", err)
	}
	k[0] &= 248
	k[31] = k[31]&127 | 64
	return k, nil
}

// ParseKey reads a base64 key.
func ParseKey(s string) (Key, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != 32 {
		return Key{}, errors.New("tunnel: a WireGuard key is 32 bytes in base64")
	}
	return Key(b), nil
}

// PublicKey is the public key of a private key.
func (k Key) PublicKey() Key {
	priv, err := ecdh.X25519().NewPrivateKey(k[:])
	if err != nil { // unreachable: any 32 bytes are an X25519 private key
		panic(err)
	}
	return Key(priv.PublicKey().Bytes())
}

func (k Key) String() string { return base64.StdEncoding.EncodeToString(k[:]) }

// IsZero reports an unset key.
func (k Key) IsZero() bool { return k == Key{} }

func (k Key) hex() string { return hex.EncodeToString(k[:]) }

// endpoint is one WireGuard device on its netstack.
type endpoint struct {
	dev  *device.Device
	net  *netstack.Net
	addr netip.Addr
	once sync.Once
}

func start(addr netip.Addr, uapi string, log *slog.Logger) (*endpoint, error) {
	tdev, tnet, err := netstack.CreateNetTUN([]netip.Addr{addr}, nil, MTU)
	if err != nil {
		return nil, fmt.Errorf("tunnel: netstack: %w", err)
	}
	l := log.With(obs.KeyComponent, "wireguard")
	dev := device.NewDevice(tdev, conn.NewDefaultBind(), &device.Logger{
		Verbosef: func(string, ...any) {},
		Errorf: func(format string, args ...any) {
			l.LogAttrs(context.Background(), slog.LevelDebug, "wireguard", slog.String(obs.KeyErr, fmt.Sprintf(format, args...)))
		},
	})
	if err := dev.IpcSet(uapi); err != nil {
		dev.Close()
		return nil, fmt.Errorf("tunnel: configure: %w", err)
	}
	if err := dev.Up(); err != nil {
		dev.Close()
		return nil, fmt.Errorf("tunnel: up: %w", err)
	}
	return &endpoint{dev: dev, net: tnet, addr: addr}, nil
}

func (e *endpoint) close() { e.once.Do(e.dev.Close) }

// get reads one key of the device's configuration (the first occurrence after a peer's
// public_key line when peer is set).
func (e *endpoint) get(peer *Key, key string) string {
	conf, err := e.dev.IpcGet()
	if err != nil {
		return ""
	}
	in := peer == nil
	for _, line := range strings.Split(conf, "\n") {
		k, v, _ := strings.Cut(line, "=")
		switch {
		case k == "public_key":
			in = peer != nil && v == peer.hex()
		case in && k == key:
			return v
		}
	}
	return ""
}

// lastHandshake is when the peer of pub last completed a handshake (zero: never).
func (e *endpoint) lastHandshake(pub Key) time.Time {
	sec, _ := strconv.ParseInt(e.get(&pub, "last_handshake_time_sec"), 10, 64)
	if sec == 0 {
		return time.Time{}
	}
	nsec, _ := strconv.ParseInt(e.get(&pub, "last_handshake_time_nsec"), 10, 64)
	return time.Unix(sec, nsec)
}

// GatewayConfig is the gateway's end.
type GatewayConfig struct {
	PrivateKey Key
	// Listen is the UDP port boxes send to (0: any free port, for tests).
	Listen int
	// Address is the gateway's own address inside the tunnel network.
	Address netip.Addr
	Logger  *slog.Logger
}

// Gateway is the gateway's WireGuard device: one peer per enrolled box.
type Gateway struct {
	*endpoint
	pub  Key
	port int
}

// StartGateway brings the gateway's device up with no peer yet.
func StartGateway(cfg GatewayConfig) (*Gateway, error) {
	if cfg.PrivateKey.IsZero() || !cfg.Address.IsValid() {
		return nil, errors.New("tunnel: the gateway needs a private key and a tunnel address")
	}
	if cfg.Logger == nil {
		cfg.Logger = obs.Discard()
	}
	e, err := start(cfg.Address, fmt.Sprintf("private_key=%s\nlisten_port=%d\n", cfg.PrivateKey.hex(), cfg.Listen), cfg.Logger)
	if err != nil {
		return nil, err
	}
	port, err := strconv.Atoi(e.get(nil, "listen_port"))
	if err != nil {
		e.close()
		return nil, fmt.Errorf("tunnel: listen port: %w", err)
	}
	return &Gateway{endpoint: e, pub: cfg.PrivateKey.PublicKey(), port: port}, nil
}

// PublicKey is what boxes are given at enrolment.
func (g *Gateway) PublicKey() Key { return g.pub }

// Port is the UDP port the device listens on.
func (g *Gateway) Port() int { return g.port }

// Address is the gateway's tunnel address.
func (g *Gateway) Address() netip.Addr { return g.addr }

// SetPeer admits a box: its key, and the one address its packets may carry and the gateway's
// packets to it go to. A packet from any other key is dropped by WireGuard before decryption
// succeeds, and one from this key with another source address is dropped by its allowed IPs.
func (g *Gateway) SetPeer(pub Key, addr netip.Addr) error {
	return g.dev.IpcSet(fmt.Sprintf("public_key=%s\nreplace_allowed_ips=true\nallowed_ip=%s\n",
		pub.hex(), netip.PrefixFrom(addr, addr.BitLen())))
}

// RemovePeer forgets a box: its sessions end and its handshakes are refused from now on.
func (g *Gateway) RemovePeer(pub Key) error {
	return g.dev.IpcSet(fmt.Sprintf("public_key=%s\nremove=true\n", pub.hex()))
}

// Handshaked reports whether the box of pub has completed a handshake (it dialled out and is
// reachable through the tunnel).
func (g *Gateway) Handshaked(pub Key) bool {
	v := g.get(&pub, "last_handshake_time_sec")
	return v != "" && v != "0"
}

// Dial opens a TCP connection to addr inside the tunnel network.
func (g *Gateway) Dial(ctx context.Context, addr netip.AddrPort) (net.Conn, error) {
	return g.net.DialContextTCPAddrPort(ctx, addr)
}

// Close brings the device down.
func (g *Gateway) Close() { g.close() }

// BoxConfig is a box's end: what enrolment handed it.
type BoxConfig struct {
	PrivateKey Key
	Address    netip.Addr // the box's tunnel address
	Gateway    Key        // the gateway's public key
	// GatewayAddress is the gateway's tunnel address, the only source the box accepts.
	GatewayAddress netip.Addr
	// Endpoint is the gateway's UDP host:port. A name is resolved at start, and again by
	// FollowEndpoint while the gateway does not answer.
	Endpoint string
	// Lookup resolves the endpoint's name (default: the system resolver).
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	Logger *slog.Logger
}

// Box is a box's WireGuard device: one peer, the gateway, dialled out to.
type Box struct {
	*endpoint
	gw     Key
	gwAddr netip.Addr
	host   string // the endpoint's name; "" when it is an address
	port   uint16
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
	log    *slog.Logger

	mu      sync.Mutex
	at      netip.AddrPort // the gateway's address the peer is set to
	failing bool           // the name did not resolve at the last attempt (logged once)
}

// StaleHandshake is how old the last handshake may grow before the box looks its gateway's
// name up again: wireguard-tools' reresolve-dns.sh rule. A live session is renewed every two
// minutes (its keepalives are traffic), so an older one means the gateway no longer answers
// where the box sends.
const StaleHandshake = 135 * time.Second

// ReresolveEvery is how often FollowEndpoint checks, as reresolve-dns.sh's timer runs.
const ReresolveEvery = 30 * time.Second

// StartBox brings the box's device up; it sends its first handshake at once and a keepalive
// every Keepalive seconds from then on.
func StartBox(ctx context.Context, cfg BoxConfig) (*Box, error) {
	if cfg.PrivateKey.IsZero() || cfg.Gateway.IsZero() || !cfg.Address.IsValid() || !cfg.GatewayAddress.IsValid() {
		return nil, errors.New("tunnel: the box needs its key, its address, the gateway's key and address")
	}
	if cfg.Logger == nil {
		cfg.Logger = obs.Discard()
	}
	if cfg.Lookup == nil {
		cfg.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	b := &Box{gw: cfg.Gateway, gwAddr: cfg.GatewayAddress, lookup: cfg.Lookup,
		log: cfg.Logger.With(obs.KeyComponent, "fleet-tunnel")}
	if ap, err := netip.ParseAddrPort(cfg.Endpoint); err == nil {
		b.at = ap
	} else {
		host, port, err := net.SplitHostPort(cfg.Endpoint)
		if err != nil {
			return nil, fmt.Errorf("tunnel: endpoint %q: %w", cfg.Endpoint, err)
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, fmt.Errorf("tunnel: endpoint port %q", port)
		}
		b.host, b.port = host, uint16(p)
		addrs, err := b.resolve(ctx)
		if err != nil {
			return nil, err
		}
		b.at = netip.AddrPortFrom(addrs[0], b.port)
	}
	e, err := start(cfg.Address, fmt.Sprintf("private_key=%s\nlisten_port=0\n", cfg.PrivateKey.hex())+b.peerConfig(b.at), cfg.Logger)
	if err != nil {
		return nil, err
	}
	b.endpoint = e
	return b, nil
}

// peerConfig is the gateway peer's configuration with its endpoint at.
func (b *Box) peerConfig(at netip.AddrPort) string {
	return fmt.Sprintf("public_key=%s\nendpoint=%s\nallowed_ip=%s\npersistent_keepalive_interval=%d\n",
		b.gw.hex(), at, netip.PrefixFrom(b.gwAddr, b.gwAddr.BitLen()), Keepalive)
}

// Rehandshake drops the session with the gateway and starts a new handshake at once. A
// gateway that restarted has lost the session and does not know where the box is: it drops
// the box's keepalives, and without this the box would handshake again only when its session
// ages out (two minutes or more), its tunnel port unreachable meanwhile.
func (b *Box) Rehandshake() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.setPeer(b.at)
}

// setPeer sets the gateway peer again, at: removed first, so that the keepalive the new
// peer sends at once is a handshake initiation. Called with mu held.
func (b *Box) setPeer(at netip.AddrPort) error {
	if err := b.dev.IpcSet(fmt.Sprintf("public_key=%s\nremove=true\n", b.gw.hex())); err != nil {
		return err
	}
	return b.dev.IpcSet(b.peerConfig(at))
}

// FollowLink calls Rehandshake each time connected turns true after being false (the box's
// NATS link to the hub came back: the gateway may have restarted), checking every interval
// until ctx ends.
func (b *Box) FollowLink(ctx context.Context, connected func() bool, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	was := connected()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := connected()
		if now && !was {
			_ = b.Rehandshake()
		}
		was = now
	}
}

// FollowEndpoint looks the gateway's name up again every interval while the last handshake
// is older than stale (StaleHandshake in production), and sets the peer again, with a new
// handshake, when the name points elsewhere: a gateway re-created at another address, or
// behind a dynamic DNS name, would otherwise leave the tunnel dead until the box restarts.
// A name that does not resolve leaves the last address in place and is logged once until it
// resolves again. Nothing to follow when the endpoint is an address.
func (b *Box) FollowEndpoint(ctx context.Context, interval, stale time.Duration) {
	if b.host == "" {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if time.Since(b.lastHandshake(b.gw)) > stale {
			b.reresolve(ctx)
		}
	}
}

func (b *Box) reresolve(ctx context.Context) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	addrs, err := b.resolve(lctx)
	cancel()
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil {
		if !b.failing && ctx.Err() == nil {
			b.log.LogAttrs(ctx, slog.LevelWarn, "fleet tunnel: the gateway's name does not resolve; keeping its last address",
				slog.String(obs.KeyHost, b.host), slog.String(obs.KeyAddr, b.at.String()), slog.String(obs.KeyErr, err.Error()))
		}
		b.failing = true
		return
	}
	if b.failing {
		b.log.LogAttrs(ctx, slog.LevelInfo, "fleet tunnel: the gateway's name resolves again", slog.String(obs.KeyHost, b.host))
		b.failing = false
	}
	// An answer that still holds the address in use keeps it (a name with several addresses
	// in rotation must not move a tunnel that works).
	for _, a := range addrs {
		if a == b.at.Addr() {
			return
		}
	}
	at := netip.AddrPortFrom(addrs[0], b.port)
	if err := b.setPeer(at); err != nil {
		b.log.LogAttrs(ctx, slog.LevelError, "fleet tunnel: setting the gateway's new address", slog.String(obs.KeyAddr, at.String()), slog.String(obs.KeyErr, err.Error()))
		return
	}
	b.log.LogAttrs(ctx, slog.LevelInfo, "fleet tunnel: the gateway's address changed", slog.String(obs.KeyHost, b.host),
		slog.String(obs.KeyAddr, at.String()), slog.String(obs.KeyDetail, "was "+b.at.String()))
	b.at = at
}

// resolve looks the endpoint's name up: its addresses, unmapped, at least one.
func (b *Box) resolve(ctx context.Context) ([]netip.Addr, error) {
	addrs, err := b.lookup(ctx, b.host)
	if err == nil && len(addrs) == 0 {
		err = errors.New("no address")
	}
	if err != nil {
		return nil, fmt.Errorf("tunnel: endpoint %q: cannot resolve: %w", b.host, err)
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
	}
	return addrs, nil
}

// Endpoint is the gateway's address the tunnel sends to now.
func (b *Box) Endpoint() netip.AddrPort {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at
}

// LastHandshake is when the box last completed a handshake with the gateway (zero: never).
func (b *Box) LastHandshake() time.Time { return b.lastHandshake(b.gw) }

// Handshaked reports whether the box has completed a handshake with the gateway.
func (b *Box) Handshaked(gateway Key) bool {
	v := b.get(&gateway, "last_handshake_time_sec")
	return v != "" && v != "0"
}

// Listen opens a TCP port on the box's tunnel address, inside the netstack: nothing listens on
// the host.
func (b *Box) Listen(port int) (net.Listener, error) {
	return b.net.ListenTCPAddrPort(netip.AddrPortFrom(b.addr, uint16(port)))
}

// Address is the box's tunnel address.
func (b *Box) Address() netip.Addr { return b.addr }

// Close brings the device down.
func (b *Box) Close() { b.close() }

// Forward carries every connection accepted on ln (the box's tunnel port) to target, the box's
// proxyd on loopback, until ctx ends: proxyd stays the one that reads the CONNECT, meters,
// cuts at the quota and guards egress; this only moves bytes, half-closes included.
func Forward(ctx context.Context, ln net.Listener, target string, log *slog.Logger) error {
	if log == nil {
		log = obs.Discard()
	}
	var live Conns
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
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !live.Add(c) {
				return
			}
			defer live.Remove(c)
			// The gateway's PROXY line names the buyer; proxyd sees each buyer come from a
			// loopback address of its own.
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			br := bufio.NewReaderSize(c, 4096)
			buyer, err := readProxyLine(br)
			_ = c.SetReadDeadline(time.Time{})
			if err != nil {
				log.LogAttrs(ctx, slog.LevelWarn, "fleet tunnel: refused", slog.String(obs.KeyErr, err.Error()))
				_ = c.Close()
				return
			}
			var d net.Dialer
			if src := loopbackFor(buyer); src.IsValid() && loopbackTarget(target) {
				d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
			}
			t, err := d.DialContext(ctx, "tcp", target)
			if err != nil {
				log.LogAttrs(ctx, slog.LevelWarn, "fleet tunnel: the proxy does not answer", slog.String(obs.KeyAddr, target), slog.String(obs.KeyErr, err.Error()))
				_ = c.Close()
				return
			}
			if !live.Add(t) {
				_ = c.Close()
				return
			}
			defer live.Remove(t)
			Join(bufferedConn{Conn: c, r: br}, t)
		}()
	}
}

// loopbackTarget reports whether target is an IPv4 loopback address, which the forwarder can
// reach from any 127/8 source.
func loopbackTarget(target string) bool {
	host, _, err := net.SplitHostPort(target)
	if err != nil {
		return false
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().Is4() && a.IsLoopback()
}

// Conns are the connections a server carries, so that its shutdown closes them (a tunnel
// whose ends stay open would otherwise hold the shutdown for ever).
type Conns struct {
	mu     sync.Mutex
	m      map[net.Conn]struct{}
	closed bool
}

// Add counts c in; after CloseAll it closes c and reports false.
func (cs *Conns) Add(c net.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.closed {
		_ = c.Close()
		return false
	}
	if cs.m == nil {
		cs.m = map[net.Conn]struct{}{}
	}
	cs.m[c] = struct{}{}
	return true
}

// Remove counts c out.
func (cs *Conns) Remove(c net.Conn) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.m, c)
}

// CloseAll closes every connection counted in, and every one added later.
func (cs *Conns) CloseAll() {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	cs.closed = true
	for c := range cs.m {
		_ = c.Close()
	}
}

// Join copies a and b into each other until both directions ended, passing each half-close
// on, then closes both.
func Join(a, b net.Conn) {
	done := make(chan struct{})
	go func() {
		pipe(b, a)
		close(done)
	}()
	pipe(a, b)
	<-done
	_ = a.Close()
	_ = b.Close()
}

// pipe copies src to dst and passes src's end on as a half-close of dst; an error closes both,
// which ends the other direction too.
func pipe(dst, src net.Conn) {
	if _, err := io.Copy(dst, src); err != nil {
		_ = dst.Close()
		_ = src.Close()
		return
	}
	if cw, ok := dst.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
		return
	}
	_ = dst.Close()
}

// BoxConfigOf reads the peer enrolment handed a box.
func BoxConfigOf(w *fleet.WireGuard, log *slog.Logger) (BoxConfig, error) {
	if w == nil {
		return BoxConfig{}, errors.New("tunnel: the box's credentials carry no WireGuard peer (enrolled by a gateway without proxy tunnels)")
	}
	priv, err := ParseKey(w.PrivateKey)
	if err != nil {
		return BoxConfig{}, err
	}
	gw, err := ParseKey(w.GatewayKey)
	if err != nil {
		return BoxConfig{}, err
	}
	addr, err := netip.ParseAddr(w.Address)
	if err != nil {
		return BoxConfig{}, fmt.Errorf("tunnel: address: %w", err)
	}
	gwAddr, err := netip.ParseAddr(w.GatewayAddress)
	if err != nil {
		return BoxConfig{}, fmt.Errorf("tunnel: gateway address: %w", err)
	}
	return BoxConfig{PrivateKey: priv, Address: addr, Gateway: gw, GatewayAddress: gwAddr, Endpoint: w.Endpoint, Logger: log}, nil
}

// HasPeer reports whether the device admits pub (an enrolled, not revoked, box's key).
func (g *Gateway) HasPeer(pub Key) bool { return g.get(&pub, "allowed_ip") != "" }
