package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/internal/egress"
)

func init() {
	register("browserfarm", "load one page through the browser farm and print a web route's answer (installation check)", runBrowserfarm)
}

func runBrowserfarm(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("browserfarm", flag.ContinueOnError)
	var allow stringList
	fs.Var(&allow, "allow-egress", "HOST:PORT the browser may reach although it is local (repeatable; tests and dev only)")
	route := fs.String("route", "extract", "web route ID to run, e.g. extract, meta, links, web.tables")
	size := fs.Int("size", 1, "browsers to start")
	chromium := fs.String("chromium", browserfarm.DefaultConfig().Chromium, "Chromium binary")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: appliance browserfarm [flags] URL")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return flag.ErrHelp
	}
	policy, err := egress.New(egress.Config{Allow: allow})
	if err != nil {
		return err
	}
	cfg := browserfarm.DefaultConfig()
	cfg.Size, cfg.Chromium = *size, *chromium
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	farm, err := browserfarm.New(ctx, cfg, policy, log)
	if err != nil {
		return err
	}
	defer farm.Close()
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		return err
	}
	if err := web.With(farm, policy).Bind(cat); err != nil {
		return err
	}
	e := cat.Entry(*route)
	if e == nil || e.Handler == nil {
		return fmt.Errorf("no web route %q; one of %v", *route, web.IDs)
	}
	args2, err := e.Decode(map[string]any{"url": fs.Arg(0)})
	if err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, e.Timeout)
	defer cancel()
	start := time.Now()
	out, err := e.Handler(cctx, &catalog.Request{Route: e, Args: args2})
	if err != nil {
		return err
	}
	if raw, ok := out.(*catalog.Raw); ok {
		fmt.Fprintf(os.Stderr, "%s, %d bytes, headers %v (%v); writing to stdout\n", raw.ContentType, len(raw.Body), raw.Header, time.Since(start).Round(time.Millisecond))
		_, err = os.Stdout.Write(raw.Body)
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	fmt.Fprintf(os.Stderr, "%s in %v; farm %+v\n", *route, time.Since(start).Round(time.Millisecond), farm.Stats())
	return enc.Encode(out)
}
