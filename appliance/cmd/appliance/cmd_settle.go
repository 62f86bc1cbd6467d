package main

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"time"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/settle"
	settleclient "github.com/peage/appliance/settle/client"
)

func init() {
	register("settle", "run the x402 facilitator (verify, settle, ledger) on its Unix socket", runSettle)
}

func runSettle(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("settle", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "configuration file (its [settle] table)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, os.Environ())
	if err != nil {
		return err
	}
	if cfg.Settle.StateDir == settle.DefaultConfig().StateDir {
		cfg.Settle.StateDir = filepath.Join(cfg.StateDir, "settle")
	}
	cfg.Settle.Payment = cfg.SettlePayment()
	cfg.Settle.FacilitatorURL = cfg.Settlement.Facilitator
	cfg.Settle.SettleMargin = time.Duration(cfg.Settlement.SettleMarginSeconds) * time.Second
	log := newLogger(cfg.Log)
	addr := "unix:" + cfg.Settle.Socket
	if cfg.Settle.Socket == "" {
		addr = "http://" + cfg.Settle.Listen
	}
	self, err := settleclient.New(addr)
	if err != nil {
		return err
	}
	// Alive means the facilitator answers its own socket (handler, ledger lock, listener).
	live := func(ctx context.Context) error { _, err := self.Supported(ctx); return err }
	n := newNotifier(ctx, log, live)
	defer n.stop()
	return settle.Run(ctx, cfg.Settle, log, n.ready)
}
