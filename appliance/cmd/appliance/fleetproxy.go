package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/relay"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/durable"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/proxyhop"
	"github.com/peage/appliance/internal/fleet/registry"
	wgtunnel "github.com/peage/appliance/internal/fleet/tunnel"
	"github.com/peage/appliance/internal/obs"
	proxyclient "github.com/peage/appliance/proxyd/client"
)

// Proxy packages across a fleet (docs/fleet.md, "Proxy tunnels"): the gateway runs a
// userspace WireGuard device, gives each enrolled box a peer, sells packages on the boxes and
// carries buyers' tunnels from its proxy port to the box's proxyd; a box dials the tunnel out
// and forwards its tunnel port to its own proxyd on loopback.

const gatewayTunnelKey = "fleet-wg.key"

// startFleetTunnel brings up the gateway's WireGuard device when fleet.proxy_listen is set,
// and names it in hc so that enrolment hands boxes a peer; nil when proxy sales stay off.
func startFleetTunnel(cfg config.Config, hc *hub.Config, log *slog.Logger) (*wgtunnel.Gateway, error) {
	fc := cfg.Fleet
	if fc.ProxyListen == "" {
		return nil, nil
	}
	key, err := loadOrMakeTunnelKey(filepath.Join(hc.StateDir, gatewayTunnelKey))
	if err != nil {
		return nil, err
	}
	wg, err := wgtunnel.StartGateway(wgtunnel.GatewayConfig{PrivateKey: key, Listen: fc.TunnelPort,
		Address: hub.TunnelNetwork.Addr().Next(), Logger: log})
	if err != nil {
		return nil, err
	}
	hc.Tunnels = wg
	hc.TunnelEndpoint = fc.TunnelEndpoint
	if hc.TunnelEndpoint == "" {
		hc.TunnelEndpoint = net.JoinHostPort(publicHost(cfg), strconv.Itoa(wg.Port()))
	}
	return wg, nil
}

// publicHost is the name boxes and buyers reach the gateway by.
func publicHost(cfg config.Config) string {
	if len(cfg.Fleet.LeafHosts) > 0 {
		return cfg.Fleet.LeafHosts[0]
	}
	host, _, _ := net.SplitHostPort(cfg.Fleet.LeafAddr)
	return host
}

func loadOrMakeTunnelKey(path string) (wgtunnel.Key, error) {
	raw, err := os.ReadFile(path)
	if err == nil {
		return wgtunnel.ParseKey(string(raw))
	}
	if !errors.Is(err, os.ErrNotExist) {
		return wgtunnel.Key{}, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return wgtunnel.Key{}, err
	}
	k, err := wgtunnel.GenerateKey()
	if err != nil {
		return wgtunnel.Key{}, err
	}
	return k, durable.WriteFile(path, []byte(k.String()+"\n"), 0o600, "."+filepath.Base(path)+".*")
}

// serveFleetProxies sells the gateway's proxy packages on its boxes (the proxy routes rebound
// to the fleet) and serves the proxy port buyers connect to, until ctx ends.
func (g *gatewayFleet) serveFleetProxies(ctx context.Context, cfg config.Config, wg *wgtunnel.Gateway, gw *app, log *slog.Logger) error {
	js, err := jetstream.New(g.hub.Conn())
	if err != nil {
		return err
	}
	packages, err := registry.OpenPackages(ctx, js)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Fleet.ProxyListen)
	if err != nil {
		return fmt.Errorf("fleet.proxy_listen: %w", err)
	}
	host := cfg.Fleet.ProxyHost
	if host == "" {
		host = publicHost(cfg)
	}
	svc := relay.NewProxyService(g.disp, packages, g.hub.TunnelAddr, host, ln.Addr().(*net.TCPAddr).Port)
	if err := proxyroutes.With(svc, log).Rebind(gw.cat); err != nil {
		_ = ln.Close()
		return err
	}
	port, err := proxyhop.New(proxyhop.Config{Locate: svc.Locate, Dial: wg.Dial, Logger: log})
	if err != nil {
		_ = ln.Close()
		return err
	}
	go func() {
		if err := port.Serve(ctx, ln); err != nil {
			log.LogAttrs(ctx, slog.LevelError, "fleet proxy port stopped", slog.String(obs.KeyErr, err.Error()))
		}
	}()
	log.LogAttrs(ctx, slog.LevelInfo, "fleet proxy port", slog.String(obs.KeyAddr, ln.Addr().String()), slog.String(obs.KeyHost, "udp:"+strconv.Itoa(wg.Port())))
	return nil
}

// boxTunnel is a box's end of the fleet's proxy tunnel, as runBox uses it.
type boxTunnel struct {
	stop func()
	// follow, given the box's link state, makes the tunnel handshake again whenever the link
	// to the hub comes back (the gateway may have restarted).
	follow func(connected func() bool)
	dev    *wgtunnel.Box // nil with the kernel's tunnel (networkd), or without a tunnel
	on     bool          // the box has a tunnel, so it sells proxy packages through it
}

// tunnelStale is how old the last handshake may be while the tunnel still carries bytes:
// WireGuard rejects a session 180 s after its handshake (RejectAfterTime), and renews a live
// one before.
const tunnelStale = 180 * time.Second

// health is nil while the userspace tunnel has a session with the gateway; the kernel's
// tunnel is networkd's to watch.
func (t boxTunnel) health() error {
	if t.dev == nil {
		return nil
	}
	last := t.dev.LastHandshake()
	switch {
	case last.IsZero():
		return fmt.Errorf("no handshake with the gateway at %s yet", t.dev.Endpoint())
	case time.Since(last) > tunnelStale:
		return fmt.Errorf("no handshake with the gateway at %s for %s", t.dev.Endpoint(), time.Since(last).Round(time.Second))
	}
	return nil
}

// startBoxTunnel dials the gateway's WireGuard tunnel out, forwards the box's tunnel port to
// its proxyd, and adds the proxy routes to what the box serves; a tunnel that is off when the
// box was enrolled without a peer. The gateway's name is looked up again while the tunnel has
// no recent handshake (tunnel.Box.FollowEndpoint).
func startBoxTunnel(ctx context.Context, cfg config.Config, creds fleet.Credentials, px proxyclient.Service, routes map[string]box.Handler, log *slog.Logger) (boxTunnel, error) {
	if creds.WireGuard == nil {
		return boxTunnel{stop: func() {}, follow: func(func() bool) {}}, nil
	}
	bc, err := wgtunnel.BoxConfigOf(creds.WireGuard, log)
	if err != nil {
		return boxTunnel{}, err
	}
	var (
		ln net.Listener
		tb *wgtunnel.Box
	)
	if cfg.Fleet.KernelTunnel {
		// networkd brought the interface up: the tunnel port is a socket on its address,
		// forwarded as in user space (the gateway's PROXY line is read here, not by proxyd).
		if ln, err = net.Listen("tcp", netip.AddrPortFrom(bc.Address, fleet.ProxyPort).String()); err != nil {
			return boxTunnel{}, fmt.Errorf("fleet.kernel_tunnel: %w", err)
		}
	} else {
		if tb, err = wgtunnel.StartBox(ctx, bc); err != nil {
			return boxTunnel{}, err
		}
		if ln, err = tb.Listen(fleet.ProxyPort); err != nil {
			tb.Close()
			return boxTunnel{}, err
		}
	}
	target := loopbackOf(cfg.Proxyd.Listen)
	run, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := wgtunnel.Forward(run, ln, target, log); err != nil {
			log.LogAttrs(run, slog.LevelError, "fleet tunnel port stopped", slog.String(obs.KeyErr, err.Error()))
		}
	}()
	for route, h := range relay.BoxProxyRoutes(px) {
		routes[route] = h
	}
	log.LogAttrs(ctx, slog.LevelInfo, "fleet tunnel", slog.String(obs.KeyAddr, bc.Address.String()), slog.String(obs.KeyHost, bc.Endpoint))
	var following sync.WaitGroup
	if tb != nil {
		// A gateway re-created at another address behind its name is followed there.
		following.Add(1)
		go func() {
			defer following.Done()
			tb.FollowEndpoint(run, wgtunnel.ReresolveEvery, wgtunnel.StaleHandshake)
		}()
	}
	return boxTunnel{dev: tb, on: true,
		follow: func(connected func() bool) {
			if tb == nil {
				return // the kernel's tunnel handshakes again by itself (networkd)
			}
			following.Add(1)
			go func() {
				defer following.Done()
				tb.FollowLink(run, connected, time.Second)
			}()
		},
		stop: func() {
			cancel()
			<-done
			following.Wait()
			if tb != nil {
				tb.Close()
			}
		}}, nil
}

// loopbackOf is where the box reaches its own proxyd: its listen address, or loopback when it
// listens on every address.
func loopbackOf(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// writeNetworkd writes the box's WireGuard peer (from its credentials) as systemd-networkd
// files into dir, for an image whose kernel has WireGuard (fleet.kernel_tunnel); the key file
// is readable by networkd's group only.
func writeNetworkd(cfg config.Config, dir string) error {
	creds, err := readCredentials(cfg.Fleet.Credentials)
	if err != nil {
		return err
	}
	keyFile := filepath.Join(dir, wgtunnel.Interface+".key")
	nd, err := wgtunnel.RenderNetworkd(creds.Box, creds.WireGuard, keyFile)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(keyFile, []byte(nd.Key), 0o640, "."+wgtunnel.Interface+".key.*"); err != nil {
		return err
	}
	if g, err := user.LookupGroup("systemd-network"); err == nil {
		if gid, err := strconv.Atoi(g.Gid); err == nil {
			if err := os.Chown(keyFile, 0, gid); err != nil {
				return err
			}
		}
	}
	for name, text := range map[string]string{"90-" + wgtunnel.Interface + ".netdev": nd.NetDev, "90-" + wgtunnel.Interface + ".network": nd.Network} {
		if err := durable.WriteFile(filepath.Join(dir, name), []byte(text), 0o644, "."+name+".*"); err != nil {
			return err
		}
	}
	return nil
}
