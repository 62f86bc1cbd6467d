package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/dispatch"
	"github.com/peage/appliance/internal/fleet/enrol"
	"github.com/peage/appliance/internal/fleet/hub"
	"github.com/peage/appliance/internal/fleet/registry"
	"github.com/peage/appliance/internal/obs"
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
	// enrolURL is where boxes redeem their tokens ("" without an enrolment listener).
	enrolURL string
}

// startGatewayFleet starts the hub, the registry and the dispatcher, and binds every
// relayable route of gw to the fleet.
func startGatewayFleet(ctx context.Context, log *slog.Logger, gw *app, hc hub.Config, enrolAddr string) (g *gatewayFleet, err error) {
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
	if enrolAddr != "" {
		ln, err := net.Listen("tcp", enrolAddr)
		if err != nil {
			return nil, fmt.Errorf("fleet enrolment listener: %w", err)
		}
		g.enrolURL = "https://" + net.JoinHostPort(leafHost(h.LeafURL()), strconv.Itoa(ln.Addr().(*net.TCPAddr).Port))
		handler := enrol.Handler(h, enrol.Limits{}, log)
		log.Info("listening", slog.String(obs.KeyComponent, "fleet-enrol"), slog.String(obs.KeyAddr, ln.Addr().String()))
		gw.background = append(gw.background, func(ctx context.Context) {
			if err := enrol.Serve(ctx, ln, h.EnrolTLS(), handler); err != nil {
				log.Error("fleet enrolment listener", slog.String(obs.KeyErr, err.Error()))
			}
		})
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

func leafHost(leafURL string) string {
	u, err := url.Parse(leafURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

func (g *gatewayFleet) close() {
	if g.disp != nil {
		g.disp.Close()
	}
	g.stop()
	g.hub.Close()
}

// adminRoutes serve enrolment on the operator listener (behind its credential): POST
// /fleet/token?box=NAME[&ttl=1h] makes a one-time token for the box (the hub keeps its hash;
// the box redeems it on the public enrolment listener, so no seed crosses the network). GET
// /fleet/boxes lists the registry's live boxes.
func (g *gatewayFleet) adminRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /fleet/token", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("box")
		if err := fleet.ValidName(name); err != nil {
			http.Error(w, "box: "+err.Error(), http.StatusBadRequest)
			return
		}
		ttl := time.Hour
		if v := r.URL.Query().Get("ttl"); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 || d > hub.MaxTokenTTL {
				http.Error(w, fmt.Sprintf("ttl: a duration (e.g. 1h) above 0 and at most %v", hub.MaxTokenTTL), http.StatusBadRequest)
				return
			}
			ttl = d
		}
		if g.enrolURL == "" {
			http.Error(w, "fleet.enrol_addr is not set: boxes have nowhere to redeem a token", http.StatusServiceUnavailable)
			return
		}
		tok, expires, err := g.hub.NewToken(name, ttl)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(tokenAnswer{Box: name, Token: tok.String(), Gateway: g.enrolURL, Expires: expires})
	})
	mux.HandleFunc("POST /fleet/revoke", func(w http.ResponseWriter, r *http.Request) {
		name := r.URL.Query().Get("box")
		if err := fleet.ValidName(name); err != nil {
			http.Error(w, "box: "+err.Error(), http.StatusBadRequest)
			return
		}
		switch err := g.hub.Revoke(name); {
		case errors.Is(err, hub.ErrNotEnrolled):
			http.Error(w, "box: "+err.Error(), http.StatusNotFound)
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	})
	mux.HandleFunc("GET /fleet/ca", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(g.hub.CA())
	})
	mux.HandleFunc("POST /fleet/ca", func(w http.ResponseWriter, r *http.Request) {
		var err error
		switch r.URL.Query().Get("step") {
		case "stage":
			err = g.hub.StageCA()
		case "switch":
			err = g.hub.SwitchCA(r.URL.Query().Get("force") == "1")
		case "retire":
			err = g.hub.RetireCA()
		default:
			http.Error(w, "step: stage, switch or retire", http.StatusBadRequest)
			return
		}
		var behind *hub.BoxesBehindError
		switch {
		case errors.As(err, &behind), errors.Is(err, hub.ErrNoStagedCA):
			http.Error(w, err.Error(), http.StatusConflict)
			return
		case err != nil:
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(g.hub.CA())
	})
	mux.HandleFunc("GET /fleet/boxes", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"boxes": g.view.Boxes()})
	})
}

// tokenAnswer is the operator route's answer: what the box needs to join, once.
type tokenAnswer struct {
	Box     string    `json:"box"`
	Token   string    `json:"token"`
	Gateway string    `json:"gateway"`
	Expires time.Time `json:"expires"`
}

func runGateway(ctx context.Context, args []string) error {
	if len(args) > 0 && args[0] == "token" {
		return gatewayToken(ctx, os.Stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "revoke" {
		return gatewayRevoke(ctx, os.Stdout, args[1:])
	}
	if len(args) > 0 && args[0] == "ca" {
		return gatewayCA(ctx, os.Stdout, args[1:])
	}
	return runAPI(ctx, "gateway", args, true)
}

// gatewayRevoke removes a box from the fleet: its link is cut and its key refused from now
// on (a copy of its credentials included); it joins again only with a new token.
func gatewayRevoke(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("gateway revoke", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "the gateway's configuration file (admin.addr, admin.token_file)")
	name := fs.String("box", "", "the box's `NAME`")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fleet.ValidName(*name); err != nil {
		return fmt.Errorf("--box: %w", err)
	}
	if _, err := askGateway(ctx, *path, http.MethodPost, "/fleet/revoke", url.Values{"box": {*name}}); err != nil {
		return err
	}
	fmt.Fprintf(out, "box %s revoked: its link is cut and its key refused\n", *name)
	return nil
}

// gatewayCA shows or moves a CA rotation: stage (boxes come to trust the next CA), switch
// (the hub's certificate from it, once every box trusts it, or --force), retire (the old CA
// dropped).
func gatewayCA(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("gateway ca", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "the gateway's configuration file (admin.addr, admin.token_file)")
	force := fs.Bool("force", false, "switch even though some boxes do not trust the next CA yet (they join again with a new token)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	step := fs.Arg(0)
	method, q := http.MethodPost, url.Values{"step": {step}}
	switch step {
	case "", "status":
		method, q = http.MethodGet, url.Values{}
	case "stage", "switch", "retire":
		if *force {
			q.Set("force", "1")
		}
	default:
		return fmt.Errorf("gateway ca %q: want status, stage, switch or retire", step)
	}
	body, err := askGateway(ctx, *path, method, "/fleet/ca", q)
	if err != nil {
		return err
	}
	var st hub.CAStatus
	if err := json.Unmarshal(body, &st); err != nil {
		return err
	}
	fmt.Fprintf(out, "signing CA %s\nnext CA    %s\ntrusted    %s\n", st.Signing, orNone(st.Next), strings.Join(st.Trusted, " "))
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "box\ttrusts")
	for _, b := range slices.Sorted(maps.Keys(st.Boxes)) {
		fmt.Fprintf(w, "%s\t%s\n", b, orNone(strings.Join(st.Boxes[b], " ")))
	}
	return w.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// askGateway asks a fleet route of the gateway's operator port, with the operator's
// credential when the port needs it, and returns the answer of a success.
func askGateway(ctx context.Context, configPath, method, route string, q url.Values) ([]byte, error) {
	cfg, err := config.Load(configPath, os.Environ())
	if err != nil {
		return nil, err
	}
	cred, err := operatorToken(cfg.Admin)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+cfg.Admin.Addr+route+"?"+q.Encode(), nil)
	if err != nil {
		return nil, err
	}
	if cred != "" {
		req.Header.Set("Authorization", "Bearer "+cred)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		return nil, fmt.Errorf("is the gateway running? %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return nil, fmt.Errorf("the gateway answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	return body, nil
}

// gatewayToken asks the running gateway's operator port for a box's enrolment token and
// prints the command the box runs.
func gatewayToken(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("gateway token", flag.ContinueOnError)
	path := fs.String("config", defaultConfigPath, "the gateway's configuration file (admin.addr, admin.token_file)")
	name := fs.String("box", "", "the box's `NAME` (a-z, 0-9, '-', '_'); the token enrols only this name")
	ttl := fs.Duration("ttl", time.Hour, "how long the token may wait for its box")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := fleet.ValidName(*name); err != nil {
		return fmt.Errorf("--box: %w", err)
	}
	body, err := askGateway(ctx, *path, http.MethodPost, "/fleet/token", url.Values{"box": {*name}, "ttl": {ttl.String()}})
	if err != nil {
		return err
	}
	var tok tokenAnswer
	if err := json.Unmarshal(body, &tok); err != nil {
		return err
	}
	fmt.Fprintf(out, "enrolment token for box %s, valid once until %s:\n  %s\non the box:\n  appliance join --box %s --gateway %s --token %s\n",
		tok.Box, tok.Expires.Format(time.RFC3339), tok.Token, tok.Box, tok.Gateway, tok.Token)
	return nil
}

// hubConfig is the embedded hub of cfg: its state under the state directory.
func hubConfig(cfg config.Config) hub.Config {
	dir := cfg.StateDir + string(os.PathSeparator) + "fleet"
	return hub.Config{StateDir: dir, StoreDir: dir + string(os.PathSeparator) + "jetstream",
		LeafAddr: cfg.Fleet.LeafAddr, LeafHosts: cfg.Fleet.LeafHosts}
}
