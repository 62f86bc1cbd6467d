package main

import (
	"context"
	"flag"
	"log/slog"
	"os"
	"strings"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/obs"
)

func init() {
	register("api", "run the public API daemon (production: its own unit, settle over a Unix socket)", func(ctx context.Context, args []string) error {
		return runAPI(ctx, "api", args, false)
	})
}

// runAPI runs the public API daemon; as a fleet's gateway (appliance gateway) it also runs the
// hub and sends the paid routes to the boxes, which have the browsers, so it starts no farm.
func runAPI(ctx context.Context, name string, args []string, gateway bool) error {
	cfg, err := loadDaemonConfig(name, args)
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log)
	// A box not set up yet still starts and says what it lacks; it takes no payment.
	missing := setupMissing(cfg)
	if len(missing) == 0 {
		if err := cfg.SettlePayment().Validate(); err != nil {
			return err
		}
	} else {
		log.Warn("first-boot setup incomplete; paid routes answer 503 until it is done", slog.String(obs.KeyMissing, strings.Join(missing, "; ")))
	}
	d, closeDeps, err := openCommon(cfg, log)
	if err != nil {
		return err
	}
	defer closeDeps()
	d.proxy = startLearningProxy(ctx, cfg, d.egress, log)
	d.receipts = loadReceiptKeys(cfg, log)
	if d.gate, d.payments, err = newGate(cfg, "unix:"+cfg.Settle.Socket, d.store, d.receipts, log); err != nil {
		return err
	}
	if !gateway {
		if d.farm = startFarm(ctx, cfg, d.egress, log); d.farm != nil {
			defer d.farm.Close()
		}
	}
	a, err := assemble(cfg, log, d)
	if err != nil {
		return err
	}
	if gateway {
		hc := hubConfig(cfg)
		wg, err := startFleetTunnel(cfg, &hc, log)
		if err != nil {
			return err
		}
		if wg != nil {
			defer wg.Close()
		}
		g, err := startGatewayFleet(ctx, log, a, hc, cfg.Fleet.EnrolAddr)
		if err != nil {
			return err
		}
		defer g.close()
		if wg != nil {
			if err := g.serveFleetProxies(ctx, cfg, wg, a, log); err != nil {
				return err
			}
		}
	}
	a.gateSetup(missing)
	return a.serve(ctx)
}

// loadDaemonConfig parses a daemon's one flag, --config, and loads the configuration.
func loadDaemonConfig(name string, args []string) (config.Config, error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "configuration file")
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	return config.Load(*path, os.Environ())
}
