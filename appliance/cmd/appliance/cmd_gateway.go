package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"os"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
)

func init() {
	register("gateway", "run the public API as a fleet's gateway: an embedded NATS hub boxes join by dialling out, the paid routes run on them", runGateway)
}

// gatewayFleet is a gateway's side of the fleet: the hub, the registry it watches and the
// dispatcher its relayed routes call.
type gatewayFleet struct {
	hub  *hub.Hub
	view *registry.View
	disp *dispatch.Dispatcher
	stop context.CancelFunc
}

// startGatewayFleet starts the hub, the registry and the dispatcher, and binds every
// relayable route of gw to the fleet.
func startGatewayFleet(ctx context.Context, log *slog.Logger, gw *app, hc hub.Config) (g *gatewayFleet, err error) {
	hc.Logger = log
	h, err := hub.Start(ctx, hc)
	if err != nil {
		return nil, err
	}
	run, cancel := context.WithCancel(context.WithoutCancel(ctx))
	started := &gatewayFleet{hub: h, stop: cancel}
	g = started
	defer func() {
		if err != nil {
			started.close() // g is nil by then
		}
	}()
	js, err := jetstream.New(h.Conn())
	if err != nil {
		return nil, err
	}
	kv, err := registry.Open(ctx, js, fleetTTL)
	if err != nil {
		return nil, err
	}
	if err := registry.Register(run, h.Conn(), kv, log); err != nil {
		return nil, err
	}
	if g.view, err = registry.Watch(run, kv, fleetTTL); err != nil {
		return nil, err
	}
	if g.disp, err = dispatch.New(h.Conn(), g.view, dispatch.Config{}); err != nil {
		return nil, err
	}
	if err := relay.NewGateway(g.disp, g.view).Bind(gw.cat); err != nil {
		return nil, err
	}
	gw.adminRoutes = append(gw.adminRoutes, g.adminRoutes)
	gw.operator.Boxes = g.boxStates
	return g, nil
}

// boxStates are the boxes the operator's view lists: every box the registry has held since
// the gateway started, and the enrolled ones that never joined.
func (g *gatewayFleet) boxStates() []operator.BoxState {
	var out []operator.BoxState
	known := map[string]bool{}
	for _, s := range g.view.Seen() {
		known[s.Box] = true
		out = append(out, operator.BoxState{Box: s.Box, Live: s.Live, Health: s.Health, Routes: s.Routes, Country: s.Exit.Country,
			ASN: s.Exit.ASN, Load: s.Load, Slots: s.Slots, LastSeen: s.At.UTC()})
	}
	for _, name := range g.hub.Enrolled() {
		if !known[name] {
			out = append(out, operator.BoxState{Box: name, Routes: []string{}})
		}
	}
	return out
}

func (g *gatewayFleet) close() {
	if g.disp != nil {
		g.disp.Close()
	}
	g.stop()
	g.hub.Close()
}

// adminRoutes serve enrolment on the operator listener (behind its credential): POST
// /fleet/enrol?box=NAME answers the box's credentials, shown this once (the hub keeps only the
// public key; enrolling a name again replaces its key and cuts the old one's link). GET
// /fleet/boxes lists the registry's live boxes.
func (g *gatewayFleet) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /fleet/enrol", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("box")
		if err := fleet.ValidName(name); err != nil {
			http.Error(w, "box: "+err.Error(), http.StatusBadRequest)
			return
		}
		creds, err := g.hub.Enrol(name)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(creds)
	})
	mux.HandleFunc("GET /fleet/boxes", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"boxes": g.view.Boxes()})
	})
}

func runGateway(ctx context.Context, args []string) error { return runAPI(ctx, "gateway", args, true) }

// loadDaemonConfig parses a daemon's one flag, --config, and loads the configuration.
// hubConfig is the embedded hub of cfg: its state under the state directory.
func hubConfig(cfg config.Config) hub.Config {
	dir := cfg.StateDir + string(os.PathSeparator) + "fleet"
	return hub.Config{StateDir: dir, StoreDir: dir + string(os.PathSeparator) + "jetstream",
		LeafAddr: cfg.Fleet.LeafAddr, LeafHosts: cfg.Fleet.LeafHosts}
}
