package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/durable"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/enrol"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/sdnotify"
)

func init() {
	register("join", "run this appliance as a box of a fleet, dialling out to its gateway's hub; without credentials yet, first redeem the one-time token of appliance gateway token (--gateway, --token, --box or fleet.*)", runJoin)
}

func runJoin(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("join", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "configuration file")
	gateway := fs.String("gateway", "", "the gateway's enrolment `URL` (https://host:7423) [fleet.gateway]")
	token := fs.String("token", "", "the one-time enrolment token printed by appliance gateway token [fleet.token]")
	name := fs.String("box", "", "this box's name, the one the token was made for [fleet.box]")
	networkd := fs.String("networkd", "", "write the box's WireGuard peer as systemd-networkd files into `DIR` (e.g. /etc/systemd/network; an image with kernel WireGuard, fleet.kernel_tunnel) and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, os.Environ())
	if err != nil {
		return err
	}
	for flagValue, key := range map[*string]*string{gateway: &cfg.Fleet.Gateway, token: &cfg.Fleet.Token, name: &cfg.Fleet.Box} {
		if *flagValue != "" {
			*key = *flagValue
		}
	}
	if cfg.Fleet.Credentials == "" {
		cfg.Fleet.Credentials = filepath.Join(cfg.StateDir, "fleet-credentials.json")
	}
	if *networkd != "" {
		return writeNetworkd(cfg, *networkd)
	}
	log := newLogger(cfg.Log)
	creds, err := boxCredentials(ctx, cfg.Fleet, log)
	if err != nil {
		return err
	}
	return runBox(ctx, cfg, creds, log)
}

// boxCredentials reads the box's credentials, or, when it has none yet, redeems its token and
// writes them (0600): the nkey seed in them is made here and is the box's identity, and so is
// the WireGuard private key of its proxy tunnel. Both are written before the token is
// redeemed, so a box whose answer was lost (or that could not write it) asks again with the
// same keys, which the gateway answers again. Once the
// credentials are complete the token is not used again (it could not be: it is spent).
func boxCredentials(ctx context.Context, fc fleet.Config, log *slog.Logger) (fleet.Credentials, error) {
	creds, err := readCredentials(fc.Credentials)
	switch {
	case err == nil:
		if creds.LeafURL != "" {
			return creds, creds.Validate()
		}
	case !errors.Is(err, os.ErrNotExist):
		return creds, err
	}
	if fc.Gateway == "" || fc.Token == "" {
		return creds, fmt.Errorf("no credentials at %s: enrol with appliance join --box NAME --gateway URL --token TOKEN "+
			"(the gateway's operator runs appliance gateway token --box NAME)", fc.Credentials)
	}
	tok, err := fleet.ParseEnrolToken(fc.Token)
	if err != nil {
		return creds, fmt.Errorf("--token: %w", err)
	}
	if err := fleet.ValidName(fc.Box); err != nil {
		return creds, fmt.Errorf("--box: %w", err)
	}
	if creds.Seed == "" || creds.Box != fc.Box {
		seed, err := enrol.NewSeed()
		if err != nil {
			return creds, err
		}
		creds = fleet.Credentials{Box: fc.Box, Seed: string(seed)}
	}
	if creds.WireGuard == nil || creds.WireGuard.PrivateKey == "" {
		key, err := enrol.NewTunnelKey()
		if err != nil {
			return creds, err
		}
		creds.WireGuard = &fleet.WireGuard{PrivateKey: key}
	}
	if err := writeCredentials(fc.Credentials, creds); err != nil {
		return creds, err
	}
	if creds, err = enrol.Join(ctx, fc.Gateway, tok, fc.Box, []byte(creds.Seed), creds.WireGuard.PrivateKey); err != nil {
		return creds, err
	}
	if err := writeCredentials(fc.Credentials, creds); err != nil {
		return creds, err
	}
	log.Info("box enrolled", slog.String(obs.KeyComponent, "fleet"), slog.String(obs.KeyFile, fc.Credentials), slog.String(obs.KeyHost, creds.LeafURL))
	return creds, nil
}

// readCredentials reads the box's credentials file; a missing file is os.ErrNotExist.
func readCredentials(path string) (fleet.Credentials, error) {
	var creds fleet.Credentials
	raw, err := os.ReadFile(path)
	if err != nil {
		return creds, err
	}
	if err := json.Unmarshal(raw, &creds); err != nil {
		return creds, fmt.Errorf("%s: %w", path, err)
	}
	return creds, nil
}

// writeCredentials replaces the box's credentials file, readable by its owner only.
func writeCredentials(path string, creds fleet.Credentials) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	out, _ := json.MarshalIndent(creds, "", "  ")
	return durable.WriteFile(path, out, 0o600, "."+filepath.Base(path)+".*")
}

// runBox composes the appliance as `appliance api` does, without its public listener, and
// serves its relayable routes to the fleet through a leaf link it dials out.
func runBox(ctx context.Context, cfg config.Config, creds fleet.Credentials, log *slog.Logger) error {
	d, closeDeps, err := openCommon(cfg, log)
	if err != nil {
		return err
	}
	defer closeDeps()
	px := startLearningProxy(ctx, cfg, d.egress, log)
	d.proxy = px
	if d.farm = startFarm(ctx, cfg, d.egress, log); d.farm != nil {
		defer d.farm.Close()
	}
	a, err := assemble(cfg, log, d)
	if err != nil {
		return err
	}
	exit := fleet.Exit{Country: strings.ToUpper(cfg.Fleet.Country), ASN: cfg.Fleet.ASN}
	offer := relay.BoxOffer(a.cat, exit)
	tunnel, err := startBoxTunnel(ctx, cfg, creds, px, offer.Routes, log)
	if err != nil {
		return err
	}
	defer tunnel.stop()
	if len(offer.Routes) == 0 {
		return errors.New("this box can serve no route (no upstream configured, no browser)")
	}
	b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: offer.Routes, Withheld: offer.Withheld, Exit: exit, Logger: log,
		// A CA rotation's bundle is kept before it is trusted, so a restart trusts it too.
		OnCA: func(bundle []byte) error {
			kept := creds
			kept.CAPEM = string(bundle)
			return writeCredentials(cfg.Fleet.Credentials, kept)
		}})
	if err != nil {
		return err
	}
	defer b.Close()
	// The routes' own jobs (the SMS reaper, which releases rented numbers) run on a box as in
	// the single appliance's serve; a box ran none, so a number rented there was never released.
	jobs, stopJobs := context.WithCancel(ctx)
	defer stopJobs()
	for _, run := range a.background {
		go run(jobs)
	}
	tunnel.follow(b.Connected)
	addBoxHealth(a, b, creds.LeafURL, tunnel, px)
	// A box has no public listener; its operator listener (admin.addr, loopback by default) has
	// the single appliance's handlers, so /healthz, which the update gate proves a version by,
	// /livez and /metrics answer alike.
	op, err := a.serveOperator(ctx)
	if err != nil {
		return err
	}
	defer op.stop()
	log.Info("box started", slog.String(obs.KeyComponent, "fleet"), slog.String(obs.KeyHost, creds.LeafURL), slog.Int(obs.KeyCount, len(offer.Routes)))
	// READY=1 once joined: the unit is active when the box serves the fleet. Its liveness is
	// its own server running, not the link: a line that drops is the box's to wait out.
	n := newNotifier(ctx, log, func(context.Context) error {
		if !b.Server().Running() {
			return errors.New("the box's nats-server stopped")
		}
		return nil
	})
	defer n.stop()
	sdnotify.Status(log, "waiting for the gateway's hub at "+creds.LeafURL)
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !b.Connected() {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
	sdnotify.Status(log, "joined "+creds.LeafURL+" as "+creds.Box)
	n.ready()
	<-ctx.Done()
	return nil
}

// addBoxHealth gives a box's /healthz what applies to it of the single appliance's report
// (the browser pool and the state, already in a's checks) and its own: the link to the
// gateway (up, and a heartbeat acknowledged lately), the proxy tunnel's session and proxyd
// when the box sells proxy packages, and a "fleet" object saying where each stands.
func addBoxHealth(a *app, b *box.Box, hubURL string, tunnel boxTunnel, px learningProxy) {
	a.addHealth("fleet", b.Link)
	if tunnel.on {
		a.addHealth("tunnel", tunnel.health)
		if alive, ok := px.Service.(interface{ Alive(context.Context) error }); ok {
			a.addHealth("proxyd", func() error {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				return alive.Alive(ctx)
			})
		}
	}
	a.healthDetail = func() map[string]any {
		link := map[string]any{"box": b.Name(), "hub": hubURL, "connected": b.Connected(), "routes_served": len(b.Record("").Routes)}
		if at := b.LastAck(); !at.IsZero() {
			link["last_heartbeat_ack"] = at.UTC()
		}
		if tunnel.dev != nil {
			t := map[string]any{"endpoint": tunnel.dev.Endpoint().String()}
			if at := tunnel.dev.LastHandshake(); !at.IsZero() {
				t["last_handshake"] = at.UTC()
			}
			link["tunnel"] = t
		}
		return map[string]any{"fleet": link}
	}
	a.metrics.GaugeFunc("peage_fleet_box", "The box's link to its gateway: linked (0/1), seconds since the last heartbeat acknowledged and since the tunnel's last handshake (-1: never), calls held.", func() map[string]float64 {
		m := map[string]float64{"linked": 0, "heartbeat_ack_age_seconds": ageSeconds(b.LastAck()), "load": float64(b.Record("").Load)}
		if b.Connected() {
			m["linked"] = 1
		}
		if tunnel.dev != nil {
			m["tunnel_handshake_age_seconds"] = ageSeconds(tunnel.dev.LastHandshake())
		}
		return m
	}, "figure")
}

func ageSeconds(at time.Time) float64 {
	if at.IsZero() {
		return -1
	}
	return time.Since(at).Seconds()
}
