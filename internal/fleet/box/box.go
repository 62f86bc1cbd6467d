// Package box runs a box's end of a fleet: an embedded nats-server that is a leaf node of the
// hub, dialling out with the box's credentials over TLS (the box listens on no port), and the
// box's routes served on it as a nats.go micro service. A heartbeat tells the hub's registry
// what the box serves, where it exits and how loaded it is.
package box

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/obs"
)

// Handler answers one call of a route with the route's bytes. ctx ends at the caller's
// deadline or when the box closes.
type Handler func(ctx context.Context, request []byte) ([]byte, error)

// Config of a box.
type Config struct {
	Credentials fleet.Credentials
	Routes      map[string]Handler
	// Withheld are routes the box could serve but does not, said in its record (an exit that
	// does not fit them).
	Withheld []string
	Exit     fleet.Exit
	// Slots is how many calls run at once; more wait for a slot (default 8).
	Slots int
	// Heartbeat is how often the box announces itself (default 1 s); the registry's TTL
	// must be a few of these.
	Heartbeat time.Duration
	// ProgressEvery is how often a held call signs of life (default 1 s).
	ProgressEvery time.Duration
	// ChunkSize bounds one reply message (default fleet.ChunkSize).
	ChunkSize int
	// Reconnect is how long the leaf waits between dials to the hub (default 1 s).
	Reconnect time.Duration
	Logger    *slog.Logger
	// OnCA keeps a CA bundle the hub hands the box during a CA rotation (the credentials
	// file); the box trusts the bundle only once OnCA returned without error.
	OnCA func(bundlePEM []byte) error
}

// Box is a running box.
type Box struct {
	cfg    Config
	log    *slog.Logger
	srv    *server.Server
	conn   *nats.Conn
	svc    micro.Service
	slots  chan struct{}
	load   atomic.Int64
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	closed sync.Once

	lastAck atomic.Int64 // unix nanoseconds of the registry's last acknowledgement; 0: none yet

	roots  atomic.Pointer[x509.CertPool] // the fleet CAs the leaf link verifies the hub with
	caMu   sync.Mutex
	caPins []string
}

// Start runs the box. It does not wait for the hub: a box started while its line is down
// joins when the link comes up, and Connected says whether it is.
func Start(ctx context.Context, cfg Config) (*Box, error) {
	if err := cfg.Credentials.Validate(); err != nil {
		return nil, err
	}
	if len(cfg.Routes) == 0 {
		return nil, errors.New("fleet box: no route to serve")
	}
	for route := range cfg.Routes {
		if err := fleet.ValidName(route); err != nil {
			return nil, fmt.Errorf("fleet box: route %w", err)
		}
	}
	if cfg.Slots <= 0 {
		cfg.Slots = 8
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.ProgressEvery <= 0 {
		cfg.ProgressEvery = time.Second
	}
	if cfg.ChunkSize <= 0 {
		cfg.ChunkSize = fleet.ChunkSize
	}
	if cfg.Reconnect <= 0 {
		cfg.Reconnect = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = obs.Discard()
	}
	hubURL, err := url.Parse(cfg.Credentials.LeafURL)
	if err != nil {
		return nil, fmt.Errorf("fleet box: leaf URL: %w", err)
	}
	cas, err := fleet.CABundle([]byte(cfg.Credentials.CAPEM))
	if err != nil {
		return nil, fmt.Errorf("fleet box: credentials: %w", err)
	}
	b := &Box{cfg: cfg, slots: make(chan struct{}, cfg.Slots), log: cfg.Logger.With(obs.KeyComponent, "fleet-box", obs.KeyBox, cfg.Credentials.Box)}
	b.trust(cas)
	opts := &server.Options{
		ServerName: "peage-box-" + cfg.Credentials.Box,
		DontListen: true, // no client port: the box is reached only through its own leaf link
		NoSigs:     true,
		NoLog:      true,
		LeafNode: server.LeafNodeOpts{
			ReconnectInterval: cfg.Reconnect,
			Remotes: []*server.RemoteLeafOpts{{
				URLs: []*url.URL{hubURL},
				Nkey: cfg.Credentials.Seed,
				TLS:  true,
				TLSConfig: &tls.Config{
					ServerName: hubURL.Hostname(),
					MinVersion: tls.VersionTLS13,
					// The standard verification is replaced, not skipped: verifyHub does it
					// against the fleet CAs trusted now, which a CA rotation replaces while
					// nats-server keeps this config.
					InsecureSkipVerify: true,
					VerifyConnection:   b.verifyHub(hubURL.Hostname()),
				},
				TLSTimeout: 5,
				// Only the address of the credentials: a hub advertises its other URLs,
				// which may be unreachable from the box's line or not meant for it.
				IgnoreDiscoveredServers: true,
			}},
		},
	}
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("fleet box: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(10 * time.Second) {
		srv.Shutdown()
		return nil, errors.New("fleet box: nats-server not ready")
	}
	conn, err := nats.Connect("", nats.InProcessServer(srv), nats.Name("peage-box-"+cfg.Credentials.Box))
	if err != nil {
		srv.Shutdown()
		return nil, fmt.Errorf("fleet box: %w", err)
	}
	b.srv, b.conn = srv, conn
	b.ctx, b.cancel = context.WithCancel(context.WithoutCancel(ctx))
	if err := b.serve(); err != nil {
		b.Close()
		return nil, err
	}
	if _, err := conn.Subscribe(fleet.CASubject(b.Name()), b.takeCA); err != nil {
		b.Close()
		return nil, fmt.Errorf("fleet box: %w", err)
	}
	if _, err := conn.Subscribe(fleet.HeartbeatAckSubject(b.Name()), func(*nats.Msg) { b.lastAck.Store(time.Now().UnixNano()) }); err != nil {
		b.Close()
		return nil, fmt.Errorf("fleet box: %w", err)
	}
	b.wg.Add(1)
	go b.heartbeats()
	return b, nil
}

// Name is the box's name.
func (b *Box) Name() string { return b.cfg.Credentials.Box }

// Connected reports whether the leaf link to the hub is up.
func (b *Box) Connected() bool { return b.srv.NumLeafNodes() > 0 }

// LastAck is when the gateway's registry last acknowledged a heartbeat of the box (zero:
// never since the box started).
func (b *Box) LastAck() time.Time {
	if ns := b.lastAck.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// AckStale is how many heartbeat intervals may pass without an acknowledgement before Link
// reports the gateway does not hear the box: a few lost to a busy hub, not a TTL's worth.
const AckStale = 5

// Link is nil while the leaf link is up and the gateway's registry acknowledged a heartbeat
// within AckStale intervals; otherwise it says which is missing. A link can stay up for a
// while to a hub that no longer answers (a half-open TCP connection), which the
// acknowledgements tell.
func (b *Box) Link() error {
	if !b.Connected() {
		return fmt.Errorf("no link to the gateway's hub at %s", b.cfg.Credentials.LeafURL)
	}
	last := b.LastAck()
	if last.IsZero() {
		return errors.New("linked, no heartbeat acknowledged by the gateway yet")
	}
	if age := time.Since(last); age > AckStale*b.cfg.Heartbeat {
		return fmt.Errorf("linked, no heartbeat acknowledged by the gateway for %s", age.Round(time.Second))
	}
	return nil
}

// Server is the box's embedded nats-server.
func (b *Box) Server() *server.Server { return b.srv }

// Calls counts the calls of route the box has received, on its own subject and the route's
// queue: its micro service's per-endpoint statistics, which $SRV.STATS serves too.
func (b *Box) Calls(route string) int {
	n := 0
	for _, e := range b.svc.Stats().Endpoints {
		if e.Name == route || e.Name == route+"-any" {
			n += e.NumRequests
		}
	}
	return n
}

// Close tells the registry the box is leaving, then stops serving and shuts the server down.
func (b *Box) Close() {
	b.closed.Do(func() {
		if b.Connected() {
			b.announce(fleet.HealthLeaving)
			_ = b.conn.Flush()
		}
		if b.svc != nil {
			_ = b.svc.Stop()
		}
		b.cancel()
		b.wg.Wait()
		b.conn.Close()
		b.srv.Shutdown()
		b.srv.WaitForShutdown()
	})
}

// serve registers each route twice on the micro service: on the box's own subject, where the
// gateway sends the calls it picked this box for, and on the route's queue subject, where
// NATS balances the calls any box of the route may take.
func (b *Box) serve() error {
	svc, err := micro.AddService(b.conn, micro.Config{
		Name:     fleet.ServiceName,
		Version:  "0.1.0",
		Metadata: map[string]string{"box": b.Name()},
	})
	if err != nil {
		return fmt.Errorf("fleet box: service: %w", err)
	}
	b.svc = svc
	for route, handler := range b.cfg.Routes {
		h := micro.HandlerFunc(func(req micro.Request) { b.accept(route, handler, req) })
		if err := svc.AddEndpoint(route, h, micro.WithEndpointSubject(fleet.BoxSubject(b.Name(), route))); err != nil {
			return fmt.Errorf("fleet box: endpoint %s: %w", route, err)
		}
		if err := svc.AddEndpoint(route+"-any", h, micro.WithEndpointSubject(fleet.RouteSubject(route)),
			micro.WithEndpointQueueGroup(fleet.RouteQueue(route))); err != nil {
			return fmt.Errorf("fleet box: endpoint %s: %w", route, err)
		}
	}
	return nil
}

// accept hands the call to its own goroutine: micro runs an endpoint's handler serially.
func (b *Box) accept(route string, handler Handler, req micro.Request) {
	b.load.Add(1)
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer b.load.Add(-1)
		b.run(route, handler, req)
	}()
}

func (b *Box) run(route string, handler Handler, req micro.Request) {
	ctx := b.ctx
	if ms, err := strconv.ParseInt(req.Headers().Get(fleet.HeaderDeadline), 10, 64); err == nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.UnixMilli(ms))
		defer cancel()
	}
	reply := req.Reply()
	done := make(chan struct{})
	defer close(done)
	go b.progress(reply, done)

	start := time.Now()
	select {
	case b.slots <- struct{}{}:
	case <-ctx.Done():
		// The caller has gone; it counts the call as failed.
		b.log.Info("call", obs.KeyRoute, route, obs.KeyStatus, "abandoned", obs.KeyDuration, time.Since(start).Milliseconds())
		return
	}
	answer, err := handler(ctx, req.Data())
	<-b.slots
	if err != nil {
		b.log.Warn("call", obs.KeyRoute, route, obs.KeyStatus, fleet.StatusError, obs.KeyDuration, time.Since(start).Milliseconds(), obs.KeyErr, err)
		msg := b.message(reply, fleet.StatusError, nil)
		msg.Header.Set(fleet.HeaderError, err.Error())
		_ = b.conn.PublishMsg(msg)
		return
	}
	status := fleet.StatusOK
	if !b.answer(reply, answer) {
		status = fleet.StatusError
	}
	b.log.Info("call", obs.KeyRoute, route, obs.KeyStatus, status, obs.KeyBytes, len(answer), obs.KeyDuration, time.Since(start).Milliseconds())
}

// answer sends the bytes in one message, or in chunks when they exceed ChunkSize: the chunks
// follow the first message on the same reply subject, in order (NATS keeps one publisher's
// order to one subscriber). It reports whether every part left.
func (b *Box) answer(reply string, data []byte) bool {
	chunks := max(1, (len(data)+b.cfg.ChunkSize-1)/b.cfg.ChunkSize)
	first := b.message(reply, fleet.StatusOK, data[:min(len(data), b.cfg.ChunkSize)])
	first.Header.Set(fleet.HeaderChunks, strconv.Itoa(chunks))
	first.Header.Set(fleet.HeaderLength, strconv.Itoa(len(data)))
	if err := b.conn.PublishMsg(first); err != nil {
		// Say so rather than leave the caller to wait for the silence.
		b.log.Warn("reply failed", obs.KeyErr, err)
		msg := b.message(reply, fleet.StatusError, nil)
		msg.Header.Set(fleet.HeaderError, "reply refused: "+err.Error())
		_ = b.conn.PublishMsg(msg)
		return false
	}
	for i := 1; i < chunks; i++ {
		part := data[i*b.cfg.ChunkSize : min(len(data), (i+1)*b.cfg.ChunkSize)]
		msg := b.message(reply, fleet.StatusChunk, part)
		msg.Header.Set(fleet.HeaderChunk, strconv.Itoa(i))
		if err := b.conn.PublishMsg(msg); err != nil {
			b.log.Warn("reply failed", obs.KeyErr, err)
			return false
		}
	}
	return true
}

func (b *Box) message(reply, status string, data []byte) *nats.Msg {
	msg := nats.NewMsg(reply)
	msg.Data = data
	msg.Header.Set(fleet.HeaderStatus, status)
	return msg
}

// progress signs of life on a held call until it is answered, so that the dispatcher tells a
// slow call from a box that has gone.
func (b *Box) progress(reply string, done <-chan struct{}) {
	tick := time.NewTicker(b.cfg.ProgressEvery)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return
		case <-b.ctx.Done():
			return
		case <-tick.C:
			_ = b.conn.PublishMsg(b.message(reply, fleet.StatusProgress, nil))
		}
	}
}

func (b *Box) heartbeats() {
	defer b.wg.Done()
	tick := time.NewTicker(b.cfg.Heartbeat)
	defer tick.Stop()
	for {
		b.announce(fleet.HealthOK)
		select {
		case <-b.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// Record is what the box announces now.
func (b *Box) Record(health string) fleet.Record {
	routes := make([]string, 0, len(b.cfg.Routes))
	for r := range b.cfg.Routes {
		routes = append(routes, r)
	}
	slices.Sort(routes)
	return fleet.Record{
		Box: b.Name(), Routes: routes, Withheld: b.cfg.Withheld, Exit: b.cfg.Exit, Health: health,
		Load: int(b.load.Load()), Slots: b.cfg.Slots, ProgressEveryMS: b.cfg.ProgressEvery.Milliseconds(),
		CAPins: b.trusted(),
	}
}

func (b *Box) trust(cas []*x509.Certificate) {
	pool := x509.NewCertPool()
	for _, c := range cas {
		pool.AddCert(c)
	}
	b.caMu.Lock()
	b.caPins = fleet.CAPins(cas)
	b.caMu.Unlock()
	b.roots.Store(pool)
}

func (b *Box) trusted() []string {
	b.caMu.Lock()
	defer b.caMu.Unlock()
	return b.caPins
}

func (b *Box) verifyHub(host string) func(tls.ConnectionState) error {
	return func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return errors.New("fleet box: the hub sent no certificate")
		}
		inter := x509.NewCertPool()
		for _, c := range cs.PeerCertificates[1:] {
			inter.AddCert(c)
		}
		_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: b.roots.Load(), Intermediates: inter,
			DNSName: host, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
		return err
	}
}

// takeCA answers the hub's CA bundle: kept (OnCA), then trusted from the next handshake.
func (b *Box) takeCA(m *nats.Msg) {
	cas, err := fleet.CABundle(m.Data)
	if err == nil && b.cfg.OnCA != nil {
		err = b.cfg.OnCA(m.Data)
	}
	if err != nil {
		b.log.Error("fleet CA bundle refused", slog.String(obs.KeyErr, err.Error()))
		_ = m.Respond([]byte("error: " + err.Error()))
		return
	}
	b.trust(cas)
	b.log.Info("fleet CA bundle trusted", slog.Int(obs.KeyCount, len(cas)))
	_ = m.Respond([]byte("ok"))
	b.announce(fleet.HealthOK)
}

func (b *Box) announce(health string) {
	data, err := json.Marshal(b.Record(health))
	if err != nil {
		return
	}
	// A heartbeat sent while the link is down is lost, which is what a heartbeat is for. The
	// registry acknowledges it on the reply subject once written (LastAck).
	_ = b.conn.PublishRequest(fleet.HeartbeatSubject(b.Name()), fleet.HeartbeatAckSubject(b.Name()), data)
}
