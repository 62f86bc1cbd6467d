package proxyd

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/internal/connecthead"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/netlimit"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/proxyd/client"
)

// retention is how long an ended package is remembered after its expiry (the state store's
// default PackageRetention).
const retention = 30 * 24 * time.Hour

// neverPorts are refused whatever the configuration says (SMTP: a home line sending mail is
// how an IP gets blocklisted for every later buyer).
var neverPorts = []int{25}

// Options are the collaborators of a Server.
type Options struct {
	Store  Store          // required
	Egress *egress.Policy // nil: built from Config.AllowEgress and Config.Self
	// Learned is the process's set of learned public addresses, for the policy built when
	// Egress is nil, so the exit check's findings reach the other policies of the process.
	Learned *egress.Learned
	Logger  *slog.Logger
	// Now is the clock (tests move it to expire packages); nil means time.Now.
	Now func() time.Time
}

// Server is proxyd: the CONNECT proxy, its meters and its admin API.
type Server struct {
	cfg    Config
	store  Store
	egress *egress.Policy
	log    *slog.Logger
	now    func() time.Time
	ports  portRule

	mu      sync.RWMutex
	meters  map[string]*meter // by key hash
	flushCh chan *meter
	window  int64  // splice window of every meter; 0 when the copy path is buffered
	copy    string // the copy path in use, and why it was chosen
	copyWhy string
	writeMu sync.Mutex // one meter write at a time, so a key's values land in order

	tunnels atomic.Int64
	pending atomic.Int64 // connections whose CONNECT is not decided yet (head read, checked, name resolved)
	stats   stats

	wrongKeys connecthead.WrongKeys

	// probeKey authenticates the exit check's own trip through the proxy; it is never
	// persisted and its bytes are not metered to anyone.
	probeKey  string
	probeAddr atomic.Pointer[string]

	refreshMu  sync.Mutex
	statusMu   sync.Mutex
	exitCache  *exitStatus
	reachCache *reachStatus

	bg     sync.WaitGroup
	stopBg context.CancelFunc
	closed atomic.Bool // Close has begun: no tunnel may start
}

type stats struct {
	accepted, refusedAuth, refusedPolicy, refusedPort, refusedBusy, refusedEnded, dialFailed atomic.Int64
	bytesUp, bytesDown, bytesKernel                                                          atomic.Int64
}

// Stats are the proxy's counters; the type is proxyd/client's, so the API reads them over the
// admin socket without linking the proxy.
type Stats = client.Stats

// New builds a server and loads every package from the store.
func New(ctx context.Context, cfg Config, opts Options) (*Server, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if opts.Store == nil {
		return nil, errors.New("proxyd: a Store is required")
	}
	s := &Server{
		cfg: cfg, store: opts.Store, egress: opts.Egress, log: opts.Logger, now: opts.Now, ports: newPortRule(cfg),
		meters: map[string]*meter{}, flushCh: make(chan *meter, 4096),
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.wrongKeys.Limit, s.wrongKeys.Now = cfg.AuthFailuresPerMinute, s.now
	s.copy, s.copyWhy = chooseCopyPath(cfg.CopyPath)
	if s.copy == copySplice {
		s.window = cfg.SpliceWindowBytes
	}
	s.log.LogAttrs(ctx, slog.LevelInfo, "proxyd copy path", slog.String(obs.KeyPath, s.copy), slog.String(obs.KeyWhy, s.copyWhy))
	if s.egress == nil {
		p, err := egress.New(egress.Config{Allow: cfg.AllowEgress, Self: cfg.Self, DialTimeout: cfg.DialTimeout, Learned: opts.Learned})
		if err != nil {
			return nil, err
		}
		s.egress = p
	}
	pkgs, err := s.store.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("proxyd: load packages: %w", err)
	}
	for _, p := range pkgs {
		s.meters[p.ID] = s.newMeter(p)
	}
	pk, err := newKey()
	if err != nil {
		return nil, err
	}
	s.probeKey = pk
	bgCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.stopBg = cancel
	s.bg.Add(2)
	go s.flushLoop(bgCtx)
	go s.sweepLoop(bgCtx)
	return s, nil
}

func (s *Server) newMeter(p Package) *meter {
	return newMeter(p, s.cfg.MeterSlackBytes, s.window, func(m *meter) bool {
		select {
		case s.flushCh <- m:
			return true
		default:
			return false
		}
	})
}

// meterList snapshots the live meters, so each can be visited under its own lock only.
func (s *Server) meterList() []*meter {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ms := make([]*meter, 0, len(s.meters))
	for _, m := range s.meters {
		ms = append(ms, m)
	}
	return ms
}

// Close stops the background loops, closes every tunnel and writes every meter. It does not
// close the store (its owner does).
func (s *Server) Close() error {
	s.closed.Store(true)
	ms := s.meterList()
	for _, m := range ms {
		m.mu.Lock()
		for t := range m.tunnels {
			t.shut()
		}
		m.cond.Broadcast()
		m.mu.Unlock()
	}
	s.stopBg()
	s.bg.Wait()
	return s.writeMeters(context.Background(), ms)
}

// flushLoop writes the meters that asked, in batches: every meter that asked while the
// previous write was under way goes in the next one, so the meters of many tunnels cost one
// journal record and one fsync.
func (s *Server) flushLoop(ctx context.Context) {
	defer s.bg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-s.flushCh:
			batch := []*meter{m}
		more:
			for {
				select {
				case m := <-s.flushCh:
					batch = append(batch, m)
				default:
					break more
				}
			}
			s.logWriteErr(ctx, s.writeMeters(ctx, batch))
		}
	}
}

// writeMeters writes the delivered counts of ms that the store does not have yet, in one write.
func (s *Server) writeMeters(ctx context.Context, ms []*meter) error {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	us := make([]Usage, 0, len(ms))
	moved := make([]*meter, 0, len(ms))
	seen := make(map[*meter]bool, len(ms))
	for _, m := range ms {
		if seen[m] {
			continue
		}
		seen[m] = true
		if v, ok := m.pending(); ok {
			us = append(us, Usage{ID: m.id, Used: v})
			moved = append(moved, m)
		}
	}
	if len(us) == 0 {
		return nil
	}
	err := s.store.SetUsed(ctx, us)
	for i, m := range moved {
		m.written(us[i].Used, err)
	}
	if err != nil {
		return fmt.Errorf("proxyd: write %d meters: %w", len(us), err)
	}
	return nil
}

func (s *Server) logWriteErr(ctx context.Context, err error) {
	if err != nil {
		s.log.LogAttrs(ctx, slog.LevelError, "proxyd meter write failed", slog.String(obs.KeyErr, err.Error()))
	}
}

// sweepLoop closes idle tunnels, ends expired packages and writes meters that moved.
func (s *Server) sweepLoop(ctx context.Context) {
	defer s.bg.Done()
	tk := time.NewTicker(s.cfg.SweepInterval)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			s.Sweep(ctx)
		}
	}
}

// Sweep runs one pass of the sweeper (exported for tests and shutdown paths).
func (s *Server) Sweep(ctx context.Context) {
	now := s.now()
	idleBefore := time.Now().Add(-s.cfg.IdleTimeout).UnixNano()
	ms := s.meterList()
	for _, m := range ms {
		m.mu.Lock()
		if !m.expired && !now.Before(m.expires) {
			m.mu.Unlock()
			m.end(false)
			m.mu.Lock()
		}
		for t := range m.tunnels {
			if t.last.Load() < idleBefore {
				t.shut()
			}
		}
		m.cond.Broadcast()
		m.mu.Unlock()
	}
	s.logWriteErr(ctx, s.writeMeters(ctx, ms))
	// Ended packages stay answerable (usage shows "expired") for as long as the state store
	// keeps them, then leave memory too.
	s.mu.Lock()
	for id, m := range s.meters {
		m.mu.Lock()
		gone := len(m.tunnels) == 0 && now.Sub(m.expires) > retention
		m.mu.Unlock()
		if gone {
			delete(s.meters, id)
		}
	}
	s.mu.Unlock()
	s.wrongKeys.Sweep()
}

const onlyConnect = "This proxy only tunnels with CONNECT (HTTP and HTTPS through CONNECT). " +
	"Use it as an HTTPS proxy, e.g. curl --proxy http://buyer:KEY@host:port https://example.com/"

// refusal is a CONNECT answered with an error instead of a tunnel.
type refusal = connecthead.Refusal

// proxy is how this proxy names itself in its refusals.
func (s *Server) proxy() connecthead.Proxy {
	return connecthead.Proxy{Name: "peage", Realm: s.cfg.Realm}
}

// admit decides a CONNECT to hostport with the Proxy-Authorization value auth from client:
// the key's meter (nil for the exit check's own probe), the target host and the checked
// address to dial, or why not.
func (s *Server) admit(ctx context.Context, hostport, auth string, client netip.Prefix) (*meter, string, netip.AddrPort, *refusal) {
	var none netip.AddrPort
	refuse := func(status int, errName, msg string) (*meter, string, netip.AddrPort, *refusal) {
		return nil, "", none, &refusal{Status: status, ErrName: errName, Msg: msg}
	}
	if s.wrongKeys.Throttled(client) {
		s.stats.refusedAuth.Add(1)
		return refuse(http.StatusTooManyRequests, "http_request_denied", "too many wrong keys from this address; wait a minute")
	}
	key, ok := connecthead.Key(auth)
	var m *meter
	probe := ok && subtle.ConstantTimeCompare([]byte(key), []byte(s.probeKey)) == 1
	if ok && !probe {
		s.mu.RLock()
		m = s.meters[connecthead.KeyHash(key)]
		s.mu.RUnlock()
	}
	if !probe && m == nil {
		s.stats.refusedAuth.Add(1)
		s.wrongKeys.Add(client)
		msg := "proxy key missing; use http://buyer:KEY@host:port"
		if ok {
			msg = "unknown proxy key"
		}
		return refuse(http.StatusProxyAuthRequired, "http_request_denied", msg)
	}
	if m != nil {
		if err := m.refusal(s.now()); err != nil {
			// 403, not 407: a 407 makes clients prompt for other credentials, and the key is right.
			s.stats.refusedEnded.Add(1)
			return refuse(http.StatusForbidden, "http_request_denied", err.Error())
		}
	}
	th, tp, err := splitTarget(hostport)
	if err != nil {
		s.stats.refusedPolicy.Add(1)
		return refuse(http.StatusBadRequest, "http_request_error", err.Error())
	}
	if !s.ports.open(th, tp) {
		s.stats.refusedPort.Add(1)
		return refuse(http.StatusForbidden, "destination_ip_prohibited", fmt.Sprintf("port %d is not allowed; allowed: %s", tp, portList(s.cfg.Ports)))
	}
	if s.tunnels.Load() >= int64(s.cfg.MaxTunnels) {
		s.stats.refusedBusy.Add(1)
		return refuse(http.StatusServiceUnavailable, "connection_limit_reached", "the proxy is at its tunnel limit; retry shortly")
	}
	rctx, cancel := context.WithTimeout(ctx, s.cfg.DialTimeout)
	defer cancel()
	addr, err := s.egress.Resolve(rctx, th, tp)
	if err != nil {
		var b *egress.Blocked
		if errors.As(err, &b) {
			s.stats.refusedPolicy.Add(1)
			return refuse(http.StatusForbidden, "destination_ip_prohibited", fmt.Sprintf("target refused: %s is %s", th, b.Reason))
		}
		s.stats.dialFailed.Add(1)
		return refuse(http.StatusBadGateway, "dns_error", fmt.Sprintf("cannot resolve %s", th))
	}
	return m, th, netip.AddrPortFrom(addr, uint16(tp)), nil
}

func portList(ps []int) string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = strconv.Itoa(p)
	}
	return strings.Join(out, ", ")
}

// splitTarget parses a CONNECT authority strictly: host:port, brackets only around IPv6.
func splitTarget(hostport string) (string, int, error) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return "", 0, fmt.Errorf("CONNECT target must be host:port")
	}
	if h == "" || strings.ContainsAny(h, "[]/@ ") {
		return "", 0, fmt.Errorf("malformed CONNECT host")
	}
	if strings.Contains(h, ":") {
		if _, err := netip.ParseAddr(h); err != nil {
			return "", 0, fmt.Errorf("malformed CONNECT host")
		}
	}
	port, err := strconv.Atoi(p)
	if err != nil || port <= 0 || port > 65535 {
		return "", 0, fmt.Errorf("malformed CONNECT port")
	}
	return h, port, nil
}

// serveTunnel dials target and carries the tunnel; early is what the client sent after its
// CONNECT head, passed on first (and metered) once the 200 is out.
func (s *Server) serveTunnel(conn net.Conn, m *meter, host string, target netip.AddrPort, early []byte) {
	defer conn.Close()
	if m == nil {
		// The exit check's own trip: same listener, same dial, unmetered and short-lived.
		m = newMeter(Package{ID: "probe", Bytes: 1 << 62, ExpiresAt: s.now().Add(time.Hour)}, 1<<61, s.window, nil)
		m.durable = 1 << 61
	}
	d := dialer(s.cfg.DialTimeout)
	dctx, cancel := context.WithTimeout(context.Background(), s.cfg.DialTimeout)
	tc, err := d.DialContext(dctx, "tcp", target.String())
	cancel()
	if err != nil {
		s.stats.dialFailed.Add(1)
		s.proxy().Refuse(conn, refusal{Status: http.StatusBadGateway, ErrName: "destination_unavailable", Msg: fmt.Sprintf("cannot connect to %s port %d", host, target.Port())})
		return
	}
	t := &tunnel{m: m, client: conn, target: tc, kernel: &s.stats.bytesKernel}
	t.touch()
	if err := m.addTunnel(t, s.now(), s.cfg.MaxTunnelsPerKey); err != nil {
		_ = tc.Close()
		r := refusal{Status: http.StatusForbidden, ErrName: "http_request_denied", Msg: err.Error()}
		if errors.Is(err, errTooMany) {
			s.stats.refusedBusy.Add(1)
			r.Status, r.ErrName = http.StatusTooManyRequests, "connection_limit_reached"
		} else {
			s.stats.refusedEnded.Add(1)
		}
		s.proxy().Refuse(conn, r)
		return
	}
	defer m.removeTunnel(t)
	if s.closed.Load() {
		// Registered after Close shut the tunnels it found (a CONNECT accepted just before
		// the shutdown): refused, never left running past it.
		_ = tc.Close()
		s.proxy().Refuse(conn, refusal{Status: http.StatusServiceUnavailable, ErrName: "proxy_internal_response", Msg: "the proxy is shutting down"})
		return
	}
	s.tunnels.Add(1)
	defer s.tunnels.Add(-1)
	// Bytes dialled-but-unsent are not metered: the 200 line and the CONNECT head are the
	// proxy's own protocol, not tunnel payload.
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		_ = tc.Close()
		return
	}
	s.stats.accepted.Add(1)
	up, down := t.run(early)
	s.stats.bytesUp.Add(up)
	s.stats.bytesDown.Add(down)
	s.log.LogAttrs(context.Background(), slog.LevelDebug, "proxyd tunnel closed", slog.String(obs.KeyHost, host), slog.Int64(obs.KeyBytesUp, up), slog.Int64(obs.KeyBytesDown, down))
}

// Serve runs the proxy on ln until ctx ends.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.bindProbe(ln)
	// Connections that have not become tunnels yet (slow or idle CONNECT heads) are bounded,
	// in all and per client and network, and must send their head within HeaderTimeout; at
	// the bound in all a newcomer closes the one waiting longest.
	lim := netlimit.New(netlimit.Config{Max: s.cfg.MaxPending, PerClient: s.cfg.MaxPendingPerClient,
		Per56: s.cfg.MaxPendingPer56, Per48: s.cfg.MaxPendingPer48})
	return s.serve(ctx, ln, lim)
}

// bindProbe records where the exit check reaches this proxy.
func (s *Server) bindProbe(ln net.Listener) {
	addr := ln.Addr().String()
	s.probeAddr.Store(&addr)
}

func serveUntil(ctx context.Context, hs *http.Server, ln net.Listener) error {
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		<-errc
		return nil
	}
}

// Stats reports the counters.
func (s *Server) Stats() Stats {
	st := Stats{
		TunnelsOpen: s.tunnels.Load(), TunnelsTotal: s.stats.accepted.Load(),
		RefusedAuth: s.stats.refusedAuth.Load(), RefusedPolicy: s.stats.refusedPolicy.Load(),
		RefusedPort: s.stats.refusedPort.Load(), RefusedBusy: s.stats.refusedBusy.Load(),
		RefusedEnded: s.stats.refusedEnded.Load(), DialFailed: s.stats.dialFailed.Load(),
		BytesUp: s.stats.bytesUp.Load(), BytesDown: s.stats.bytesDown.Load(), BytesKernel: s.stats.bytesKernel.Load(),
		CopyPath: s.copy, CopyPathWhy: s.copyWhy, Procs: runtime.GOMAXPROCS(0),
	}
	now := s.now()
	s.mu.RLock()
	defer s.mu.RUnlock()
	st.Packages = len(s.meters)
	for _, m := range s.meters {
		if m.refusal(now) == nil {
			st.PackagesActive++
		}
	}
	return st
}

// newKey returns a package key: 160 bits from crypto/rand, hex so it sits in a URL's userinfo
// without escaping.
func newKey() (string, error) {
	var b [20]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("proxyd: key: %w", err)
	}
	return "pk" + hex.EncodeToString(b[:]), nil
}

// BytesPerGB is what one sold gigabyte carries: a binary gigabyte (GiB, 1,073,741,824 bytes),
// which is the larger reading of "GB" and so the buyer's.
const BytesPerGB = int64(1) << 30

// Issue creates a package of gb gigabytes (BytesPerGB each) without checking the exit; Sell
// is the checked path. The key is returned once and only its hash is kept.
func (s *Server) Issue(ctx context.Context, gb int) (string, Package, error) {
	if gb <= 0 || gb > 1000 {
		return "", Package{}, &client.Error{Code: client.CodeBadRequest, Message: "gb must be between 1 and 1000"}
	}
	return s.issueBytes(ctx, gb, int64(gb)*BytesPerGB)
}

func (s *Server) issueBytes(ctx context.Context, gb int, bytes int64) (string, Package, error) {
	key, err := newKey()
	if err != nil {
		return "", Package{}, err
	}
	now := s.now().UTC().Truncate(time.Second)
	p := Package{ID: connecthead.KeyHash(key), GB: gb, Bytes: bytes, CreatedAt: now, ExpiresAt: now.AddDate(0, 0, s.cfg.ValidDays)}
	if err := s.store.Create(ctx, p); err != nil {
		return "", Package{}, err
	}
	s.mu.Lock()
	s.meters[p.ID] = s.newMeter(p)
	s.mu.Unlock()
	return key, p, nil
}

// Revoke ends a package and closes its tunnels; unknown keys are not an error (idempotent).
func (s *Server) Revoke(ctx context.Context, key string) error {
	id := connecthead.KeyHash(key)
	s.mu.RLock()
	m := s.meters[id]
	s.mu.RUnlock()
	if m == nil {
		return nil
	}
	if err := s.store.Revoke(ctx, id); err != nil {
		return err
	}
	m.end(true)
	return nil
}

// Usage reports a key's meter.
func (s *Server) Usage(_ context.Context, key string) (*client.Usage, error) {
	s.mu.RLock()
	m := s.meters[connecthead.KeyHash(key)]
	s.mu.RUnlock()
	if m == nil {
		return nil, &client.Error{Code: client.CodeUnknownKey, Message: "no package has this key"}
	}
	used, state, n := m.snapshot(s.now())
	return &client.Usage{
		Bytes: m.quota, Used: used, Remaining: max(m.quota-used, 0),
		CreatedAt: m.created, ExpiresAt: m.expires, State: state, Tunnels: n,
	}, nil
}
