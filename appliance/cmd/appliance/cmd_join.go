package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/durable"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/obs"
	proxyclient "github.com/peage/appliance/proxyd/client"
)

func init() {
	register("join", "run this appliance as a box of a fleet (dialling out to its gateway's hub, fleet.credentials); with --enrol, fetch the box's credentials from the gateway first", runJoin)
}

func runJoin(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("join", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "configuration file")
	enrol := fs.String("enrol", "", "the gateway's operator `URL` to enrol at (e.g. http://gateway.lan:8403); writes --out and exits")
	name := fs.String("box", "", "enrol: this box's name (a-z, 0-9, '-', '_')")
	tokenFile := fs.String("token-file", "", "enrol: file holding the gateway's operator credential")
	out := fs.String("out", "", "enrol: where to write the credentials (mode 0600), to name in fleet.credentials")
	networkd := fs.String("networkd", "", "write the box's WireGuard peer as systemd-networkd files into `DIR` (e.g. /etc/systemd/network; an image with kernel WireGuard, fleet.kernel_tunnel) and exit")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *enrol != "" {
		return enrolBox(ctx, *enrol, *name, *tokenFile, *out)
	}
	cfg, err := config.Load(*path, os.Environ())
	if err != nil {
		return err
	}
	if *networkd != "" {
		return writeNetworkd(cfg, *networkd)
	}
	return runBox(ctx, cfg)
}

// enrolBox asks the gateway for the box's credentials and writes them, readable by the owner
// only: the nkey seed in them is the box's identity, shown once.
func enrolBox(ctx context.Context, gateway, name, tokenFile, out string) error {
	if err := fleet.ValidName(name); err != nil {
		return fmt.Errorf("--box: %w", err)
	}
	if out == "" {
		return errors.New("--out is required with --enrol")
	}
	u := strings.TrimRight(gateway, "/") + "/fleet/enrol?box=" + url.QueryEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	if tokenFile != "" {
		tok, err := os.ReadFile(tokenFile)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("enrol: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("enrol: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("enrol: the gateway answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	var creds fleet.Credentials
	if err := json.Unmarshal(body, &creds); err != nil {
		return fmt.Errorf("enrol: %w", err)
	}
	if err := creds.Validate(); err != nil {
		return fmt.Errorf("enrol: %w", err)
	}
	return durable.WriteFile(out, body, 0o600, "."+filepath.Base(out)+".*")
}

// runBox composes the appliance as `appliance api` does, without its public listener, and
// serves its relayable routes to the fleet through a leaf link it dials out.
func runBox(ctx context.Context, cfg config.Config) error {
	if cfg.Fleet.Credentials == "" {
		return errors.New("fleet.credentials is not set: enrol with appliance join --enrol first")
	}
	raw, err := os.ReadFile(cfg.Fleet.Credentials)
	if err != nil {
		return err
	}
	var creds fleet.Credentials
	if err := json.Unmarshal(raw, &creds); err != nil {
		return fmt.Errorf("%s: %w", cfg.Fleet.Credentials, err)
	}
	log := newLogger(cfg.Log)
	d, closeDeps, err := openCommon(cfg, log)
	if err != nil {
		return err
	}
	defer closeDeps()
	px := learningProxy{Service: proxyclient.New(cfg.Proxyd.AdminSocket), pol: d.egress, log: log}
	go learnExitAtStart(ctx, px)
	d.proxy = px
	if d.farm = startFarm(ctx, cfg, d.egress, log); d.farm != nil {
		defer d.farm.Close()
	}
	a, err := assemble(cfg, log, d)
	if err != nil {
		return err
	}
	routes := relay.BoxRoutes(a.cat)
	stopTunnel, followLink, err := startBoxTunnel(ctx, cfg, creds, px, routes, log)
	if err != nil {
		return err
	}
	defer stopTunnel()
	if len(routes) == 0 {
		return errors.New("this box can serve no route (no upstream configured, no browser)")
	}
	b, err := box.Start(ctx, box.Config{Credentials: creds, Routes: routes, Logger: log,
		Exit: fleet.Exit{Country: strings.ToUpper(cfg.Fleet.Country), ASN: cfg.Fleet.ASN}})
	if err != nil {
		return err
	}
	defer b.Close()
	followLink(b.Connected)
	log.Info("box started", slog.String(obs.KeyComponent, "fleet"), slog.String(obs.KeyHost, creds.LeafURL), slog.Int(obs.KeyCount, len(routes)))
	<-ctx.Done()
	return nil
}
