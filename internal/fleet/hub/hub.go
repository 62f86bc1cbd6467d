// Package hub runs the gateway's end of a fleet: an embedded nats-server with JetStream and a
// TLS leaf-node listener that boxes dial out to, and the enrolment that gives each box its own
// nkey user, allowed only its own subjects and the service subjects. A gateway may instead join
// an existing NATS deployment by URL; enrolment is then that deployment's business.
package hub

import (
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nkeys"

	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/obs"
)

// ErrExternal is returned by enrolment on a hub that joined an existing NATS deployment.
var ErrExternal = errors.New("fleet hub: enrolment is done by the external NATS deployment's operator")

// ErrNotEnrolled is returned when revoking a box the hub does not know.
var ErrNotEnrolled = errors.New("fleet hub: no such box enrolled")

const (
	boxesFile   = "fleet-boxes.json"
	gatewayFile = "fleet-gateway.nk"
)

// Config of an embedded hub.
type Config struct {
	// StateDir keeps the CA, the hub's certificate, the gateway's nkey and the enrolled boxes.
	StateDir string
	// StoreDir is JetStream's storage (the registry bucket lives there).
	StoreDir string
	// LeafAddr is host:port of the leaf listener boxes dial (port 0: any free port).
	LeafAddr string
	// LeafHosts are the names boxes use to reach LeafAddr, written into the certificate and
	// the leaf URL of enrolment (the first one); default the host of LeafAddr.
	LeafHosts []string
	Logger    *slog.Logger
	// CertValidity is the life of the hub's certificate (default 90 days); it is renewed from
	// the same CA once less than RenewBefore is left (default a third of it), checked every
	// RenewCheck (default an hour) and at start.
	CertValidity, RenewBefore, RenewCheck time.Duration
	// Now is the hub's clock for enrolment tokens (default time.Now).
	Now func() time.Time
	// Tunnels, when set, is the gateway's WireGuard device: each enrolled box is also given a
	// tunnel peer, to reach it at TunnelEndpoint (the device's public UDP host:port).
	Tunnels        Tunnels
	TunnelEndpoint string
}

// Hub is the gateway's NATS: embedded, or an external deployment it joined.
type Hub struct {
	srv  *server.Server // nil when joined to an external deployment
	conn *nats.Conn
	cfg  Config
	log  *slog.Logger

	enrolMu    sync.Mutex // one enrolment at a time: two must not take one tunnel address
	mu         sync.Mutex
	boxes      map[string]enrolled
	links      map[string]map[uint64]time.Time // box -> its leaf links' connection ids, when authenticated
	gateway    nkeys.KeyPair
	gatewayPub string
	certs      *certs
	leafTLS    *tls.Config // kept for reloads
	caPEM      []byte
	leafURL    string
	tokens     map[string]pendingToken // by the hash of their secret
	caPins     map[string][]string     // box -> the CAs its last heartbeat said it trusts
	pushed     map[string]time.Time    // when each box was last handed the CA bundle
	stopRenew  context.CancelFunc
	renewing   sync.WaitGroup

	leafHost string
	leafPort int
}

type enrolled struct {
	Nkey      string    `json:"nkey"`
	Enrolled  time.Time `json:"enrolled"`
	WireGuard *wgPeer   `json:"wireguard,omitempty"`
}

// Start runs the embedded hub and connects the gateway to it in-process: the hub has no client
// port at all, only the leaf listener.
func Start(ctx context.Context, cfg Config) (*Hub, error) {
	if cfg.StateDir == "" || cfg.StoreDir == "" {
		return nil, errors.New("fleet hub: state and store dirs are required")
	}
	if cfg.Tunnels != nil && cfg.TunnelEndpoint == "" {
		return nil, errors.New("fleet hub: a tunnel device needs the endpoint boxes reach it at")
	}
	if cfg.Logger == nil {
		cfg.Logger = obs.Discard()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.CertValidity <= 0 {
		cfg.CertValidity = 90 * 24 * time.Hour
	}
	if cfg.RenewBefore <= 0 || cfg.RenewBefore >= cfg.CertValidity {
		cfg.RenewBefore = cfg.CertValidity / 3
	}
	if cfg.RenewCheck <= 0 {
		cfg.RenewCheck = time.Hour
	}
	host, portText, err := net.SplitHostPort(cfg.LeafAddr)
	if err != nil {
		return nil, fmt.Errorf("fleet hub: leaf address %q: %w", cfg.LeafAddr, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return nil, fmt.Errorf("fleet hub: leaf port %q: %w", portText, err)
	}
	if port == 0 {
		// The port is fixed here rather than left to the server, so that reloads and the
		// leaf URL handed to boxes name the one it binds.
		if port, err = freePort(host); err != nil {
			return nil, fmt.Errorf("fleet hub: %w", err)
		}
	}
	if len(cfg.LeafHosts) == 0 {
		cfg.LeafHosts = []string{host}
	}
	for _, name := range cfg.LeafHosts {
		if ip := net.ParseIP(name); name == "" || ip != nil && ip.IsUnspecified() {
			return nil, fmt.Errorf("fleet hub: leaf host %q is no name a box can dial: set fleet.leaf_hosts to the gateway's public names", name)
		}
	}
	for _, dir := range []string{cfg.StateDir, cfg.StoreDir} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("fleet hub: %w", err)
		}
	}
	h := &Hub{cfg: cfg, leafHost: host, leafPort: port, log: cfg.Logger.With(obs.KeyComponent, "fleet-hub")}
	if err := h.loadBoxes(); err != nil {
		return nil, err
	}
	if err := h.loadTokens(); err != nil {
		return nil, err
	}
	for _, e := range h.boxes {
		if err := h.syncPeer(nil, e.WireGuard); err != nil {
			return nil, err
		}
	}
	if h.gateway, err = loadOrMakeSeed(filepath.Join(cfg.StateDir, gatewayFile)); err != nil {
		return nil, err
	}
	h.gatewayPub, _ = h.gateway.PublicKey()
	var caPEM []byte
	h.certs, caPEM, err = leafTLS(cfg.StateDir, cfg.LeafHosts, cfg.CertValidity, cfg.RenewBefore, cfg.Now())
	if err != nil {
		return nil, fmt.Errorf("fleet hub: %w", err)
	}
	if err := h.loadTrust(caPEM); err != nil {
		return nil, err
	}
	h.leafTLS = h.certs.serverConfig()

	opts := h.options()
	srv, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("fleet hub: %w", err)
	}
	srv.Start()
	if !srv.ReadyForConnections(readyWithin(ctx)) {
		srv.Shutdown()
		return nil, errors.New("fleet hub: nats-server not ready")
	}
	h.srv = srv
	h.leafURL = (&url.URL{Scheme: "tls", Host: net.JoinHostPort(cfg.LeafHosts[0], strconv.Itoa(port))}).String()

	pub, _ := h.gateway.PublicKey()
	h.conn, err = nats.Connect("", nats.InProcessServer(srv), nats.Name("peage-gateway"),
		nats.Nkey(pub, h.gateway.Sign), nats.MaxReconnects(-1))
	if err != nil {
		srv.Shutdown()
		return nil, fmt.Errorf("fleet hub: gateway connection: %w", err)
	}
	if err := h.watchHeartbeats(); err != nil {
		h.conn.Close()
		srv.Shutdown()
		return nil, fmt.Errorf("fleet hub: %w", err)
	}
	renewCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	h.stopRenew = stop
	h.renewing.Add(1)
	go h.renewLoop(renewCtx)
	h.log.Info("fleet hub up", obs.KeyAddr, net.JoinHostPort(host, strconv.Itoa(port)), obs.KeyDir, cfg.StoreDir)
	return h, nil
}

// Join connects the gateway to an existing NATS deployment (which must run JetStream) instead
// of embedding one; opts carry its credentials and TLS.
func Join(ctx context.Context, natsURL string, opts ...nats.Option) (*Hub, error) {
	opts = append([]nats.Option{nats.Name("peage-gateway"), nats.MaxReconnects(-1),
		nats.Timeout(readyWithin(ctx))}, opts...)
	conn, err := nats.Connect(natsURL, opts...)
	if err != nil {
		return nil, fmt.Errorf("fleet hub: join %s: %w", natsURL, err)
	}
	return &Hub{conn: conn, log: obs.Discard()}, nil
}

func readyWithin(ctx context.Context) time.Duration {
	if deadline, ok := ctx.Deadline(); ok {
		return time.Until(deadline)
	}
	return 10 * time.Second
}

// Conn is the gateway's own connection (every subject allowed).
func (h *Hub) Conn() *nats.Conn { return h.conn }

// Server is the embedded nats-server (nil when joined to an external deployment), for the
// operator's view: leaf connections, JetStream state.
func (h *Hub) Server() *server.Server { return h.srv }

// LeafURL is the URL boxes dial.
func (h *Hub) LeafURL() string { return h.leafURL }

// Close drains the gateway connection and stops the embedded server.
func (h *Hub) Close() {
	if h.stopRenew != nil {
		h.stopRenew()
		h.renewing.Wait()
	}
	if h.conn != nil {
		h.conn.Close()
	}
	if h.srv != nil {
		h.srv.Shutdown()
		h.srv.WaitForShutdown()
	}
}

// Enrol makes (or replaces) box's nkey user and returns its credentials; a previous key of the
// same box is refused from now on and its link closed. Only the public key is kept.
func (h *Hub) Enrol(box string) (fleet.Credentials, error) {
	if h.srv == nil {
		return fleet.Credentials{}, ErrExternal
	}
	if err := fleet.ValidName(box); err != nil {
		return fleet.Credentials{}, fmt.Errorf("fleet hub: box %w", err)
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return fleet.Credentials{}, err
	}
	seed, _ := kp.Seed()
	pub, _ := kp.PublicKey()
	// With a tunnel device the box is given a WireGuard key too, made here as its seed is
	// (Redeem's boxes make both themselves).
	var wgKey, wgPub tunnel.Key
	if h.cfg.Tunnels != nil {
		if wgKey, err = tunnel.GenerateKey(); err != nil {
			return fleet.Credentials{}, err
		}
		wgPub = wgKey.PublicKey()
	}
	h.enrolMu.Lock()
	defer h.enrolMu.Unlock()
	h.mu.Lock()
	peer, err := h.peerLocked(box, wgPub)
	h.mu.Unlock()
	if err != nil {
		return fleet.Credentials{}, err
	}
	if err := h.replace(box, &enrolled{Nkey: pub, Enrolled: h.now().UTC(), WireGuard: peer}); err != nil {
		return fleet.Credentials{}, err
	}
	wg := h.wireGuardOf(peer)
	if wg != nil {
		wg.PrivateKey = wgKey.String()
	}
	return fleet.Credentials{Box: box, Seed: string(seed), LeafURL: h.leafURL, CAPEM: string(h.trustPEM()), WireGuard: wg}, nil
}

// Revoke removes box's user: its leaf links are closed and its key refused from now on.
func (h *Hub) Revoke(box string) error {
	if h.srv == nil {
		return ErrExternal
	}
	return h.replace(box, nil)
}

// replace sets (or, with nil, removes) box's key, saves the enrolment and closes the links the
// old key opened. nats-server does not recheck leaf links on a reload of its users, which is
// why the hub authenticates them itself (Check) and remembers which link is whose.
func (h *Hub) replace(box string, e *enrolled) error {
	h.mu.Lock()
	prev, had := h.boxes[box]
	if e == nil && !had {
		h.mu.Unlock()
		return ErrNotEnrolled
	}
	if e == nil {
		delete(h.boxes, box)
	} else {
		h.boxes[box] = *e
	}
	if err := h.saveLocked(); err != nil {
		if had {
			h.boxes[box] = prev
		} else {
			delete(h.boxes, box)
		}
		h.mu.Unlock()
		return err
	}
	links := h.links[box]
	delete(h.links, box)
	var next *wgPeer
	if e != nil {
		next = e.WireGuard
	}
	var prevPeer *wgPeer
	if had {
		prevPeer = prev.WireGuard
	}
	// The tunnel peer goes with the nkey, under the lock, so an enrolment and a revocation of
	// one box cannot cross on the device.
	peerErr := h.syncPeer(prevPeer, next)
	h.mu.Unlock()
	for cid, at := range links {
		if h.srv.DisconnectClientByID(cid) != nil && time.Since(at) < handshakeWithin {
			// Not listed: gone, or authenticated and still in its handshake, when it would
			// come up after the revocation. Keep trying until a handshake would be over.
			go h.cutWhenListed(cid, at.Add(handshakeWithin))
		}
	}
	return peerErr // the links are cut whatever the device said
}

// Enrolled lists the enrolled boxes.
func (h *Hub) Enrolled() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Sorted(maps.Keys(h.boxes))
}

// Check authenticates every connection to the embedded server: the gateway's own key on an
// in-process client connection, an enrolled box's key on a leaf link only, each proven by its
// signature of the server's nonce.
func (h *Hub) Check(c server.ClientAuthentication) bool {
	opts := c.GetOpts()
	if opts == nil || opts.Nkey == "" || !verified(opts.Nkey, opts.Sig, c.GetNonce()) {
		return false
	}
	if opts.Nkey == h.gatewayPub {
		if c.Kind() != server.CLIENT {
			return false
		}
		c.RegisterUser(&server.User{Username: "peage-gateway"})
		return true
	}
	if c.Kind() != server.LEAF {
		return false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for box, e := range h.boxes {
		if e.Nkey != opts.Nkey {
			continue
		}
		c.RegisterUser(&server.User{Username: box, Permissions: BoxPermissions(box)})
		if h.links[box] == nil {
			h.links[box] = map[uint64]time.Time{}
		}
		h.links[box][c.GetID()] = time.Now()
		if len(h.links[box]) > maxLinks {
			go h.prune(box)
		}
		return true
	}
	return false
}

// maxLinks bounds the connection ids remembered per box before the closed ones are dropped (a
// box's line that flaps opens a link each time).
const maxLinks = 8

// handshakeWithin bounds the time from Check to the server listing the link.
const handshakeWithin = 10 * time.Second

func (h *Hub) cutWhenListed(cid uint64, until time.Time) {
	for time.Now().Before(until) {
		if h.srv.DisconnectClientByID(cid) == nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linkGrace is how long an authenticated link is kept in mind even when the server does not
// list it: the server lists a leaf link only once its handshake is over, after Check.
const linkGrace = time.Minute

// prune forgets box's links that have closed. The server is asked without the hub's lock,
// which Check holds while the server may hold its own.
func (h *Hub) prune(box string) {
	h.mu.Lock()
	var old []uint64
	for cid, at := range h.links[box] {
		if time.Since(at) > linkGrace {
			old = append(old, cid)
		}
	}
	h.mu.Unlock()
	var closed []uint64
	for _, cid := range old {
		if h.srv.GetLeafNode(cid) == nil {
			closed = append(closed, cid)
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, cid := range closed {
		delete(h.links[box], cid)
	}
}

func verified(pub, sig string, nonce []byte) bool {
	raw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		if raw, err = base64.StdEncoding.DecodeString(sig); err != nil {
			return false
		}
	}
	key, err := nkeys.FromPublicKey(pub)
	if err != nil {
		return false
	}
	return len(nonce) > 0 && key.Verify(nonce, raw) == nil
}

func (h *Hub) saveLocked() error {
	data, err := json.MarshalIndent(h.boxes, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFile(h.cfg.StateDir, boxesFile, data); err != nil {
		return fmt.Errorf("fleet hub: save enrolment: %w", err)
	}
	return nil
}

func (h *Hub) loadBoxes() error {
	h.boxes = map[string]enrolled{}
	h.links = map[string]map[uint64]time.Time{}
	h.caPins, h.pushed = map[string][]string{}, map[string]time.Time{}
	data, err := os.ReadFile(filepath.Join(h.cfg.StateDir, boxesFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("fleet hub: %w", err)
	}
	if err := json.Unmarshal(data, &h.boxes); err != nil {
		return fmt.Errorf("fleet hub: %s: %w", boxesFile, err)
	}
	return nil
}

// options is the embedded server's configuration.
func (h *Hub) options() *server.Options {
	return &server.Options{
		ServerName: "peage-hub",
		DontListen: true,
		NoSigs:     true,
		NoLog:      true,
		JetStream:  true,
		StoreDir:   h.cfg.StoreDir,
		// Nonces are what keys sign; the server sends them only when it knows of nkeys.
		AlwaysEnableNonce:          true,
		CustomClientAuthentication: h,
		LeafNode: server.LeafNodeOpts{
			Host:        h.leafHost,
			Port:        h.leafPort,
			TLSConfig:   h.leafTLS,
			TLSTimeout:  5,
			AuthTimeout: 5,
		},
	}
}

// BoxPermissions are what a box's leaf link may carry, seen from the box: it publishes its
// own heartbeat and replies to callers' inboxes, and receives its own subjects, the routes'
// queue subjects and the micro discovery requests. No JetStream API, no other box's subjects.
func BoxPermissions(box string) *server.Permissions {
	return &server.Permissions{
		Publish: &server.SubjectPermission{Allow: []string{
			fleet.HeartbeatSubject(box), nats.InboxPrefix + ">",
		}},
		Subscribe: &server.SubjectPermission{Allow: []string{
			fleet.BoxSubjects(box), fleet.RouteSubjects, "$SRV.>",
		}},
	}
}

func loadOrMakeSeed(path string) (nkeys.KeyPair, error) {
	seed, err := os.ReadFile(path)
	if err == nil {
		return nkeys.FromSeed(seed)
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	kp, err := nkeys.CreateUser()
	if err != nil {
		return nil, err
	}
	seed, _ = kp.Seed()
	if err := writeFile(filepath.Dir(path), filepath.Base(path), seed); err != nil {
		return nil, err
	}
	return kp, nil
}

func freePort(host string) (int, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}
