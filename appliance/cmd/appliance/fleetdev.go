package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/obs"
)

// fleetTTL is the registry's TTL: a box that stops announcing itself (1 s heartbeats)
// leaves the rotation within it.
const fleetTTL = 3 * time.Second

// startDevFleet turns the dev appliance gw into a fleet's gateway with n boxes, all in this
// process on loopback (`appliance dev --boxes N`): an embedded hub (JetStream, its TLS leaf
// listener on a free loopback port), the registry and dispatcher, every relayable route of
// gw bound to the fleet, and n boxes, each enrolled with its own nkey, dialling the hub as a
// leaf node and serving the routes its own composition binds (the same families a single
// appliance binds). It returns once every box is in the registry; stop closes them all.
func startDevFleet(ctx context.Context, cfg config.Config, log *slog.Logger, d deps, gw *app, n int) (stop func(), err error) {
	dir := filepath.Join(cfg.StateDir, "fleet")
	g, err := startGatewayFleet(ctx, log, gw, hub.Config{StateDir: dir, StoreDir: filepath.Join(dir, "jetstream"), LeafAddr: "127.0.0.1:0"}, "")
	if err != nil {
		return nil, err
	}
	var boxes []*box.Box
	stop = func() {
		for _, b := range boxes {
			b.Close()
		}
		g.close()
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("box-%d", i)
		creds, err := g.hub.Enrol(name)
		if err != nil {
			return nil, err
		}
		// Each box composes its own catalog from the same families; in one process they
		// share the dev collaborators (store, cache, egress policy, browser farm).
		a, err := assemble(cfg, log, d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		// Their exit is the one fleet.country/fleet.asn name, as a joined box's is.
		exit := fleet.Exit{Country: strings.ToUpper(cfg.Fleet.Country), ASN: cfg.Fleet.ASN}
		offer := relay.BoxOffer(a.cat, exit)
		b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: offer.Routes, Withheld: offer.Withheld, Exit: exit, Logger: log})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		boxes = append(boxes, b)
	}
	if err := waitBoxes(ctx, g.view, n); err != nil {
		return nil, err
	}
	log.Info("fleet up", slog.String(obs.KeyComponent, "fleet"), slog.Int(obs.KeyCount, n), slog.String(obs.KeyAddr, g.hub.LeafURL()))
	return stop, nil
}

// waitBoxes waits until the registry lists n boxes, so that dev answers only once its
// routes are available.
func waitBoxes(ctx context.Context, view *registry.View, n int) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for len(view.Boxes()) < n {
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("%d of %d boxes joined", len(view.Boxes()), n), ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}
