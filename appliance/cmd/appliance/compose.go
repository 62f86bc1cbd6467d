package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/peage/appliance/api/a2a"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/mcp"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/render"
	"github.com/peage/appliance/api/routes"
	"github.com/peage/appliance/api/routes/payments"
	proxyroutes "github.com/peage/appliance/api/routes/proxy"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/internal/cache"
	"github.com/peage/appliance/internal/credential"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/sdnotify"
	"github.com/peage/appliance/internal/state"
	"github.com/peage/appliance/internal/version"
	"github.com/peage/appliance/proxyd"
	proxyclient "github.com/peage/appliance/proxyd/client"
	settleclient "github.com/peage/appliance/settle/client"
)

// stringList is a repeatable flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

func newLogger(c config.Log) *slog.Logger {
	level := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}[c.Level]
	useJSON := c.Format == "json" || (c.Format == "auto" && !obs.StderrIsTerminal())
	return obs.NewLogger(os.Stderr, level, useJSON)
}

// app is an assembled API process: the catalog with every family bound, the server, and what
// the operator listener reports.
type app struct {
	cfg     config.Config
	log     *slog.Logger
	metrics *obs.Registry
	cat     *catalog.Catalog
	srv     *server.Server

	// operator are the sources of the operator's dashboard and `appliance status`.
	operator operator.Sources

	mu     sync.Mutex
	health map[string]func() error // component → nil when healthy
	// background runs with the server (the SMS reaper), until its context ends.
	background []func(context.Context)
	// setupMissing is what first-boot setup lacks (paid routes answer 503 until it is done).
	setupMissing []string
	proxyRoutes  *proxyroutes.Routes // nil without proxyd
	// adminRoutes add to the operator listener (a fleet gateway's enrolment).
	adminRoutes []func(*http.ServeMux)
	// healthDetail adds its keys to /healthz (a fleet box's link and tunnel).
	healthDetail func() map[string]any
}

// deps are the collaborators the composition provides to the route families.
type deps struct {
	gate     paywall.Gate
	receipts *receipt.Keyring // signs offers and receipts; nil without the credential
	payments payments.Source  // the settle daemon's ledger; nil with a remote facilitator
	cache    *cache.Cache
	store    *state.Store
	egress   *egress.Policy
	proxy    proxyclient.Service // proxyd: in-process in dev, its admin socket in production
	farm     *browserfarm.Farm   // nil when Chromium could not start: the web routes stay 503
	// learned is the process's set of the box's public addresses found at run time; every
	// egress policy of the process (API, browser farm, proxyd in dev) shares it.
	learned *egress.Learned
}

// openCommon opens what every API process needs: the durable store, the result cache and the
// egress policy. close releases them in reverse order.
func openCommon(cfg config.Config, log *slog.Logger) (deps, func(), error) {
	var d deps
	store, err := state.Open(cfg.StateDir, state.Options{Name: "api", Logger: log, InboxBudget: cfg.Inbox.BudgetBytes})
	if err != nil {
		return d, nil, fmt.Errorf("state: %w", err)
	}
	c, err := cache.New(cache.Options{})
	if err != nil {
		store.Close()
		return d, nil, err
	}
	learned := &egress.Learned{}
	pol, err := newPolicy(cfg, cfg.Egress.Allow, cfg.Egress.Self, learned)
	if err != nil {
		store.Close()
		c.Close()
		return d, nil, err
	}
	d.store, d.cache, d.egress, d.learned = store, c, pol, learned
	return d, func() {
		c.Close()
		if err := store.Close(); err != nil {
			log.Error("closing state", slog.String(obs.KeyErr, err.Error()))
		}
	}, nil
}

// newPolicy builds an egress policy from the configuration. Policies of one process pass the
// same learned set, so an exit address one of them learns is refused by all.
func newPolicy(cfg config.Config, allow, self []string, learned *egress.Learned) (*egress.Policy, error) {
	return egress.New(egress.Config{Allow: allow, Self: self, Learned: learned, InterfaceRefresh: cfg.Egress.InterfaceRefresh})
}

// learningProxy hands every exit address that proxyd reports (a sale's or a status's exit
// check) to the API's egress policy. In production proxyd is another process, and this is
// how the API learns the box's public address; in dev the set is shared anyway.
type learningProxy struct {
	proxyclient.Service
	pol *egress.Policy
	log *slog.Logger
}

func (p learningProxy) learn(ctx context.Context, ex *proxyclient.Exit) {
	if ex == nil {
		return
	}
	if a, err := netip.ParseAddr(ex.IP); err == nil && p.pol.LearnSelf(a) {
		p.log.LogAttrs(ctx, slog.LevelInfo, "learned the exit's public address from proxyd; user-chosen targets may not reach it",
			slog.String(obs.KeyAddr, a.String()))
	}
}

func (p learningProxy) Sell(ctx context.Context, gb int) (*proxyclient.Sale, error) {
	sale, err := p.Service.Sell(ctx, gb)
	if sale != nil {
		p.learn(ctx, &sale.Exit)
	}
	return sale, err
}

func (p learningProxy) Status(ctx context.Context) (*proxyclient.Status, error) {
	st, err := p.Service.Status(ctx)
	if st != nil {
		p.learn(ctx, st.Exit)
	}
	return st, err
}

// startLearningProxy is proxyd's admin client teaching pol every exit address it reports,
// the box's own asked for at once in the background (both daemons that sell proxies need it).
func startLearningProxy(ctx context.Context, cfg config.Config, pol *egress.Policy, log *slog.Logger) learningProxy {
	px := learningProxy{Service: proxyclient.New(cfg.Proxyd.AdminSocket), pol: pol, log: log}
	go learnExitAtStart(ctx, px)
	return px
}

// learnExitAtStart asks proxyd once for its exit, so the API refuses the box's public address
// before the first sale or status call; proxyd may still be starting, so it retries a while.
func learnExitAtStart(ctx context.Context, p learningProxy) {
	for wait := time.Second; wait <= time.Minute; wait *= 2 {
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		st, err := p.Status(cctx)
		cancel()
		if err == nil && st.Exit != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

func (a *app) addHealth(name string, check func() error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.health == nil {
		a.health = map[string]func() error{}
	}
	a.health[name] = check
}

// assemble builds the catalog, binds the discovery routes and every route family, and the server.
func assemble(cfg config.Config, log *slog.Logger, d deps) (*app, error) {
	cat, err := catalog.Default(cfg.Routes)
	if err != nil {
		return nil, err
	}
	a := &app{cfg: cfg, log: log, metrics: &obs.Registry{}, cat: cat}
	r := render.New(cat, render.Info{BaseURL: cfg.API.BaseURL, Pay: cfg.Payment, Version: version.String()})
	if err := r.Bind(cat); err != nil {
		return nil, err
	}
	if err := bindFamilies(a, d); err != nil {
		return nil, err
	}
	if d.receipts != nil {
		did, list := render.ReceiptKeyDocs(d.receipts)
		if err := cat.Bind(catalog.IDOf(render.DIDPath), did, nil); err != nil {
			return nil, err
		}
		if err := cat.Bind(catalog.IDOf(render.ReceiptKeysPath), list, nil); err != nil {
			return nil, err
		}
	}
	opts := server.Options{Gate: d.gate, Pay: cfg.Payment, Logger: log, Metrics: a.metrics, Receipts: d.receipts}
	if d.cache != nil {
		opts.Cache = d.cache
		a.metrics.GaugeFunc("peage_cache", "Result cache figures.", func() map[string]float64 {
			st := d.cache.Stats()
			return map[string]float64{"hits": float64(st.Hits), "misses": float64(st.Misses), "bytes_used": float64(st.BytesUsed)}
		}, "figure")
	}
	a.srv = server.New(cfg.API, cat, opts)
	if err := mcp.New(cat, r, a.srv, a.srv, version.String()).AllowOrigins(cfg.API.MCPAllowedOrigins).Bind(cat); err != nil {
		return nil, err
	}
	if err := a2a.New(cat, a.srv, a.srv, a2a.Options{BaseURL: cfg.API.BaseURL}).Bind(cat); err != nil {
		return nil, err
	}
	a.operator = operatorSources(a, d)
	a.metrics.GaugeFunc("peage_routes", "Catalog routes by availability.", func() map[string]float64 {
		m := map[string]float64{"available": 0, "unavailable": 0}
		for _, e := range cat.Entries() {
			if e.Available() {
				m["available"]++
			} else {
				m["unavailable"]++
			}
		}
		return m
	}, "state")
	return a, nil
}

// statsGauge exposes a component's numeric Stats fields (by their JSON names) as one gauge
// family with a "figure" label.
func (a *app) statsGauge(name, help string, stats func() any) {
	a.metrics.GaugeFunc(name, help, func() map[string]float64 {
		var m map[string]any
		b, _ := json.Marshal(stats())
		_ = json.Unmarshal(b, &m)
		out := map[string]float64{}
		for k, v := range m {
			if f, ok := v.(float64); ok {
				out[k] = f
			}
		}
		return out
	}, "figure")
}

func (a *app) addProxyMetrics(px *proxyd.Server) {
	a.statsGauge("peage_proxy", "Metered proxy: tunnels, refusals by reason, bytes, packages.", func() any { return px.Stats() })
}

// bindFamilies builds every route family of the list (api/routes/families.go) from the
// process's shared dependencies and binds it. A family whose collaborator is missing keeps
// its routes listed with available:false (503 before any 402).
func bindFamilies(a *app, d deps) error {
	specs, err := upstream.Resolve(a.cfg.Upstream)
	if err != nil {
		return err
	}
	fd := family.Deps{
		Config: family.Config{StateDir: a.cfg.StateDir, Names: a.cfg.Routes, Contact: a.cfg.Upstream.Contact,
			Sections: map[string]any{"dns": a.cfg.DNS, "chain": a.cfg.Chain, "llm": a.cfg.LLM}},
		Pool:      httpc.NewPool(specs, httpc.Options{Contact: a.cfg.Upstream.Contact, Logger: a.log}),
		Upstreams: specs,
		Cache:     d.cache,
		Store:     d.store,
		Egress:    d.egress,
		Proxy:     d.proxy,
		Receipts:  d.receipts,
		Log:       a.log,
		Now:       time.Now,
		Background: func(run func(context.Context)) {
			a.background = append(a.background, run)
		},
	}
	if d.payments != nil { // a nil ledger must stay a nil interface
		fd.Ledger = d.payments
	}
	if d.farm != nil {
		fd.Farm = d.farm
		a.metrics.GaugeFunc("peage_browserfarm", "Browser farm health: browsers up, jobs, queue, restarts, memory.", d.farm.Gauges, "stat")
		a.addHealth("browserfarm", d.farm.Ready)
	}
	if d.store != nil {
		a.addHealth("state", func() error { return nil })
	}
	built, err := routes.Bind(a.cat, fd)
	if err != nil {
		return err
	}
	a.proxyRoutes, _ = built["proxy"].(*proxyroutes.Routes)
	return nil
}

// newGate connects the paywall to the appliance's settle daemon at addr ("unix:/path"), whose
// ledger it returns too. A remote standard x402 facilitator (payment.facilitator_url) is the
// daemon's business: it forwards verify and settle there and keeps its ledger all the same.
func newGate(cfg config.Config, addr string, store *state.Store, keys *receipt.Keyring, log *slog.Logger) (paywall.Gate, payments.Source, error) {
	c, err := settleclient.New(addr)
	if err != nil {
		return nil, nil, fmt.Errorf("settle socket: %w", err)
	}
	return paywall.New(cfg.Payment, cfg.Settlement, c, paywall.GateOptions{Logger: log, FreeCalls: durableFreeCalls{store}, Receipts: keys}), c, nil
}

// loadReceiptKeys reads the keys that sign offers and receipts (payment.receipt_keys). A box
// whose first boot predates them, or a missing credential, runs without signing: paid calls
// still work, their answers carry no receipt, and the log says why.
func loadReceiptKeys(cfg config.Config, log *slog.Logger) *receipt.Keyring {
	text, err := credential.Read(cfg.Payment.ReceiptKeys)
	if err == nil {
		var kr *receipt.Keyring
		if kr, err = receipt.ParseKeyring(text, cfg.API.BaseURL, time.Now()); err == nil {
			return kr
		}
	}
	log.Warn("receipt keys unreadable; 402s carry no signed offers and paid answers no signed receipts (appliance firstboot makes them)",
		slog.String(obs.KeyFile, credential.Path(cfg.Payment.ReceiptKeys)), slog.String(obs.KeyErr, err.Error()))
	return nil
}

// durableFreeCalls keeps the gate's daily free calls in the journaled store, so a restart
// never grants a client a second free call on the same route and day.
type durableFreeCalls struct{ s *state.Store }

func (f durableFreeCalls) Take(client, route, _ string) (bool, error) {
	granted, _, err := f.s.UseFreeCall(client, route, route)
	return granted, err
}

func (f durableFreeCalls) GiveBack(client, route, day string) error {
	return f.s.ReleaseFreeCall(client, route, day)
}

// startFarm starts the browser pool. A farm that cannot start (no Chromium) is logged and
// left out: the web routes then answer 503 not_available, and everything else serves.
func startFarm(ctx context.Context, cfg config.Config, pol *egress.Policy, log *slog.Logger) *browserfarm.Farm {
	farm, err := browserfarm.New(ctx, cfg.Browser, pol, log)
	if err != nil {
		log.Error("browser farm not started; web routes unavailable", slog.String(obs.KeyErr, err.Error()))
		return nil
	}
	return farm
}

// serve runs the public API and the operator listener until ctx ends. Once both listen it
// tells systemd READY, then pings the watchdog while both still answer (sdnotify).
func (a *app) serve(ctx context.Context) error {
	apiLn, err := net.Listen("tcp", a.cfg.API.Addr)
	if err != nil {
		return fmt.Errorf("api listener: %w", err)
	}
	op, err := a.serveOperator(ctx)
	if err != nil {
		apiLn.Close()
		return err
	}
	defer op.stop()
	a.log.Info("listening", slog.String(obs.KeyComponent, "api"), slog.String(obs.KeyAddr, apiLn.Addr().String()))
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error { return a.srv.Serve(ctx, apiLn) })
	for _, run := range a.background {
		g.Go(func() error { run(ctx); return nil })
	}
	g.Go(func() error {
		select {
		case err := <-op.failed:
			return err
		case <-ctx.Done():
			return nil
		}
	})
	n := newNotifier(ctx, a.log, a.liveness(apiLn.Addr().String(), op.addr, op.token))
	defer n.stop()
	if len(a.setupMissing) > 0 {
		sdnotify.Status(a.log, "first-boot setup incomplete, missing: "+strings.Join(a.setupMissing, "; "))
	}
	n.ready()
	return g.Wait()
}

// operatorServer is the operator listener (admin.addr: the dashboard, /healthz, /metrics),
// served with its token; failed yields its failure, if it fails before stop.
type operatorServer struct {
	addr, token string
	failed      <-chan error
	stop        func()
}

// serveOperator starts the operator listener: the single appliance and a fleet box both serve it.
func (a *app) serveOperator(ctx context.Context) (*operatorServer, error) {
	token, err := operatorToken(a.cfg.Admin)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a.cfg.Admin.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin listener: %w", err)
	}
	a.log.Info("listening", slog.String(obs.KeyComponent, "admin"), slog.String(obs.KeyAddr, ln.Addr().String()))
	srv := &http.Server{Handler: requireToken(token, a.adminMux()), ReadHeaderTimeout: 5 * time.Second}
	failed := make(chan error, 1)
	go func() {
		defer close(failed)
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("admin listener", slog.String(obs.KeyErr, err.Error()))
			failed <- err
		}
	}()
	return &operatorServer{addr: ln.Addr().String(), token: token, failed: failed, stop: func() {
		shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		for range failed { // until Serve has returned
		}
	}}, nil
}

// healthReport runs the components' checks and counts the available routes.
func (a *app) healthReport() operator.Health {
	a.mu.Lock()
	checks := make(map[string]func() error, len(a.health))
	for k, v := range a.health {
		checks[k] = v
	}
	a.mu.Unlock()
	h := operator.Health{Status: "ok", Components: map[string]string{}, Routes: len(a.cat.Entries())}
	for name, check := range checks {
		if err := check(); err != nil {
			h.Components[name], h.Status = err.Error(), "degraded"
		} else {
			h.Components[name] = "ok"
		}
	}
	for _, e := range a.cat.Entries() {
		if e.Available() {
			h.Available++
		}
	}
	return h
}

// operatorSources are what the dashboard reads: the settle daemon's ledger (a remote
// facilitator's payments included), the state store's free calls, this process's metrics (calls, browser
// farm) and proxyd's counters and exit check.
func operatorSources(a *app, d deps) operator.Sources {
	src := operator.Sources{Metrics: a.metrics, Health: a.healthReport, Version: version.String(), Started: time.Now()}
	if l, ok := d.payments.(operator.Ledger); ok {
		src.Ledger = l
	}
	if d.store != nil {
		src.Free = d.store
	}
	src.Proxy = proxyFigures(d.proxy)
	return src
}

// proxyFigures gives the dashboard proxyd's counters beside its exit check: read in process
// in dev, over the admin socket in production. Status goes through p itself, so the exit the
// dashboard shows is learned as everywhere else.
func proxyFigures(p proxyclient.Service) operator.Proxy {
	inner := p
	if lp, ok := p.(learningProxy); ok {
		inner = lp.Service
	}
	switch v := inner.(type) {
	case *proxyd.Server:
		return proxyWithStats{p, func(context.Context) (*proxyclient.Stats, error) { st := v.Stats(); return &st, nil }}
	case *proxyclient.Client:
		return proxyWithStats{p, v.Stats}
	}
	return nil
}

type proxyWithStats struct {
	proxyclient.Service
	stats func(context.Context) (*proxyclient.Stats, error)
}

func (p proxyWithStats) Stats(ctx context.Context) (*proxyclient.Stats, error) { return p.stats(ctx) }

// liveness is the API daemon's watchdog check: the public listener still accepts, and the
// operator listener answers /livez (its handler goroutines and mux are running).
func (a *app) liveness(apiAddr, adminAddr, token string) func(context.Context) error {
	hc := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	return func(ctx context.Context) error {
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", apiAddr)
		if err != nil {
			return fmt.Errorf("public listener: %w", err)
		}
		c.Close()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+adminAddr+"/livez", nil)
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return fmt.Errorf("operator listener: %w", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("operator listener: /livez answered %d", resp.StatusCode)
		}
		return nil
	}
}

// adminMux is the operator listener: health and metrics, never on the public listener.
func (a *app) adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		h := a.healthReport()
		w.Header().Set("Content-Type", "application/json")
		if h.Status != "ok" {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		unbound := a.cat.Unbound() // routes no family bound: a composition mistake
		if unbound == nil {
			unbound = []string{}
		}
		body := map[string]any{"status": h.Status, "version": version.String(),
			"components": h.Components, "routes": h.Routes, "routes_available": h.Available, "routes_unbound": unbound}
		if len(a.setupMissing) > 0 { // the process is healthy; the box is not set up yet
			body["setup_missing"] = a.setupMissing
		}
		if a.healthDetail != nil {
			maps.Copy(body, a.healthDetail())
		}
		_ = json.NewEncoder(w).Encode(body)
	})
	mux.HandleFunc("GET /livez", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("alive\n")) })
	operator.Register(mux, func(ctx context.Context) operator.Snapshot { return operator.Build(ctx, a.operator) })
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		a.metrics.WriteText(w)
	})
	for _, add := range a.adminRoutes {
		add(mux)
	}
	return mux
}
