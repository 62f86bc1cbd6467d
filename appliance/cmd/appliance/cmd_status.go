package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/appliance/operator"
)

func init() {
	register("status", "print the running box's figures at a glance (revenue, calls, browser farm, proxy, exit, settlement): its dashboard's JSON", runStatus)
}

func runStatus(ctx context.Context, args []string) error { return statusTo(ctx, os.Stdout, args) }

// statusTo is the status command writing to out. A box whose health is not ok exits 1 after
// printing, so scripts and timers can act on it.
func statusTo(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("status", flag.ContinueOnError)
	addr := fs.String("addr", "", "operator listener `HOST:PORT` or URL [admin.addr of -config, else 127.0.0.1:8403]")
	path := fs.String("config", "", "configuration file to read admin.addr from [/etc/peage/appliance.toml when it exists]")
	asJSON := fs.Bool("json", false, "print the snapshot as JSON (what the dashboard reads) instead of text")
	timeout := fs.Duration("timeout", 20*time.Second, "how long to wait for the box")
	if err := fs.Parse(args); err != nil {
		return err
	}
	base := *addr
	if base == "" {
		p := *path
		if p == "" {
			if _, err := os.Stat(defaultConfigPath); err == nil {
				p = defaultConfigPath
			}
		}
		cfg, err := config.Load(p, os.Environ())
		if err != nil {
			return err
		}
		base = cfg.Admin.Addr
	}
	if !strings.Contains(base, "://") {
		base = "http://" + base
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	snap, err := operator.Fetch(ctx, http.DefaultClient, base)
	if err != nil {
		return fmt.Errorf("%w (is the appliance running? name its operator listener with -addr)", err)
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		err = enc.Encode(snap)
	} else {
		err = operator.WriteText(out, snap)
	}
	if err != nil {
		return err
	}
	if snap.Health.Status != "ok" {
		return exitCode(1)
	}
	return nil
}
