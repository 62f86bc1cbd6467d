package main

import (
	"context"
	"flag"
	"os"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/proxyd"
	proxyclient "github.com/peage/appliance/proxyd/client"
)

func init() {
	register("proxyd", "run the metered residential CONNECT proxy and its admin socket (production: its own unit)", runProxyd)
}

func runProxyd(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("proxyd", flag.ContinueOnError)
	path := fset.String("config", defaultConfigPath, "configuration file")
	if err := fset.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, os.Environ())
	if err != nil {
		return err
	}
	px := cfg.Proxyd
	px.AllowEgress = append(px.AllowEgress, cfg.Egress.Allow...)
	px.Self = append(px.Self, cfg.Egress.Self...)
	pol, err := egress.New(egress.Config{Allow: px.AllowEgress, Self: px.Self, DialTimeout: px.DialTimeout,
		InterfaceRefresh: cfg.Egress.InterfaceRefresh})
	if err != nil {
		return err
	}
	log := newLogger(cfg.Log)
	// Alive means the admin socket answers /stats, which takes the meters' and packages' locks:
	// a wedged store or a dead admin loop misses the watchdog. (Not /status: that checks the
	// exit over the internet, which says nothing about this process.)
	self := proxyclient.New(px.AdminSocket)
	n := newNotifier(ctx, log, func(ctx context.Context) error { return self.Alive(ctx) })
	defer n.stop()
	return proxyd.RunDaemon(ctx, px, cfg.StateDir, pol, log, n.ready)
}
