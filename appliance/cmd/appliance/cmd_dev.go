package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/settle"
)

func init() {
	register("dev", "run everything in one process on loopback: API, settle on an embedded chain with Circle's USDC, proxyd, browser farm", runDev)
}

func runDev(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dev", flag.ContinueOnError)
	path := fs.String("config", "", "optional configuration file (the embedded default needs none)")
	apiAddr := fs.String("api-addr", "", "API listen address (default 127.0.0.1:8402)")
	adminAddr := fs.String("admin-addr", "", "operator listen address (default 127.0.0.1:8403)")
	stateDir := fs.String("state-dir", "", "state directory (default ./.state/dev)")
	proxyAddr := fs.String("proxy-addr", "127.0.0.1:8118", "where the metered proxy listens for buyers")
	boxes := fs.Int("boxes", 0, "run a fleet: this API as its gateway (embedded NATS hub) and `N` boxes on loopback serving its paid routes")
	var allow stringList
	fs.Var(&allow, "allow-egress", "exact `HOST:PORT` that pages, URL routes and proxy tunnels may reach although it is local, e.g. 127.0.0.1:9000:\n"+
		"it passes the egress guard and proxyd's port rule for that host only; other ports stay refused (repeatable; dev and tests only)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, os.Environ())
	if err != nil {
		return err
	}
	if *path == "" && os.Getenv("PEAGE_STATE_DIR") == "" {
		cfg.StateDir = filepath.Join(".state", "dev")
	}
	if *stateDir != "" {
		cfg.StateDir = *stateDir
	}
	if *apiAddr != "" {
		cfg.API.Addr = *apiAddr
		cfg.API.BaseURL = "http://" + *apiAddr
	}
	if *adminAddr != "" {
		cfg.Admin.Addr = *adminAddr
	}
	cfg.Egress.Allow = append(cfg.Egress.Allow, allow...)
	if err := cfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(cfg.StateDir, 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	log := newLogger(cfg.Log)
	d, closeDeps, err := openCommon(cfg, log)
	if err != nil {
		return err
	}
	defer closeDeps()
	pxCfg := cfg.Proxyd
	pxCfg.Listen = *proxyAddr
	host, port, err := net.SplitHostPort(*proxyAddr)
	if err != nil {
		return fmt.Errorf("--proxy-addr: %w", err)
	}
	pxCfg.PublicHost = host
	if pxCfg.PublicPort, err = strconv.Atoi(port); err != nil {
		return fmt.Errorf("--proxy-addr: %w", err)
	}
	px, stopProxy, err := proxyd.StartDev(ctx, pxCfg, cfg.StateDir, cfg.Egress.Allow, d.learned, log)
	if err != nil {
		return fmt.Errorf("proxyd: %w", err)
	}
	defer func() {
		if err := stopProxy(); err != nil {
			log.Error("stopping proxyd", slog.String(obs.KeyErr, err.Error()))
		}
	}()
	d.proxy = px
	claim, err := settle.DevClaimPolicy(cfg.Settle)
	if err != nil {
		return err
	}
	chain, err := settle.StartDevWith(ctx, settle.DevOptions{StateDir: cfg.StateDir, Logger: log, Claim: claim, FacilitatorURL: cfg.Settlement.Facilitator})
	if err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	defer chain.Close()
	cfg.Payment.Network, cfg.Payment.Asset, cfg.Payment.PayTo = chain.Network, chain.Asset, chain.PayTo
	cfg.Payment.TokenName, cfg.Payment.TokenVersion = chain.TokenName, chain.TokenVersion
	if cfg.Settlement.Facilitator == "" { // batch-settlement goes through the embedded settle only
		cfg.Payment.ReceiverAuthorizer = chain.ReceiverAuthorizer
	}
	// The chain routes read the embedded chain unless the configuration names another endpoint.
	if cfg.Chain.RPC == "" {
		cfg.Chain.RPC, cfg.Chain.USDC = chain.RPCURL, chain.Asset
		// No indexer knows the embedded chain: the address route reads its logs, all of them;
		// nor has it Basenames (ENS needs chain.ens_rpc, an Ethereum mainnet endpoint).
		cfg.Chain.Indexer = false
		cfg.Chain.BasenamesRegistry = ""
	}
	// The dev box has its own receipt keys, made once in its state directory.
	if _, err := credential.Create(cfg.StateDir, receipt.CredentialName, receipt.NewKeyText); err != nil {
		return fmt.Errorf("receipt keys: %w", err)
	}
	cfg.Payment.ReceiptKeys = filepath.Join(cfg.StateDir, receipt.CredentialName)
	d.receipts = loadReceiptKeys(cfg, log)
	if d.gate, d.payments, err = newGate(cfg, chain.Addr(), d.store, d.receipts, log); err != nil {
		return err
	}
	if d.farm = startFarm(ctx, cfg, d.egress, log); d.farm != nil {
		defer d.farm.Close()
	}
	a, err := assemble(cfg, log, d)
	if err != nil {
		return err
	}
	a.addProxyMetrics(px)
	if *boxes > 0 {
		stopFleet, err := startDevFleet(ctx, cfg, log, d, a, *boxes)
		if err != nil {
			return fmt.Errorf("fleet: %w", err)
		}
		defer stopFleet()
	}
	// The dev exit is a loopback echo: check it now, so a package is for sale from the start.
	if err := a.proxyRoutes.CheckExit(ctx); err != nil {
		log.Warn("the dev exit check failed; proxy packages are unavailable", slog.String(obs.KeyErr, err.Error()))
	}
	fmt.Fprintln(os.Stderr, chain.HowToPay(cfg.API.BaseURL))
	fmt.Fprintf(os.Stderr, "péage dev: API on %s (catalog %s/, OpenAPI %s/openapi.json), operator on http://%s (dashboard at /, /status.json, /healthz, /metrics), proxy on %s, state in %s\n",
		cfg.API.BaseURL, cfg.API.BaseURL, cfg.API.BaseURL, cfg.Admin.Addr, *proxyAddr, cfg.StateDir)
	return a.serve(ctx)
}
