// Package apitest starts the real API server in-process on a loopback port for tests, so a test
// drives exactly the code path production runs (routing, params, 402, gate, handler, errors).
package apitest

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/receipt"
)

// Options configure the harness; zero values give a challenge-only gate and test pay settings.
type Options struct {
	Gate    paywall.Gate
	Pay     paywall.Config
	Cache   server.Cache
	Metrics *obs.Registry
	// Logger receives the server's log [discarded].
	Logger *slog.Logger
	// Configure has the last say on the server's configuration. The free-call limit starts
	// off here, since every test client is the one client 127.0.0.1; tests of the limit turn
	// it on.
	Configure func(*server.Config)
	// CheckShapes holds every successful JSON answer the harness's client receives to the
	// fields the spec names for its route (see shapeCheck). StartFamily always does; a test
	// whose handlers are stand-ins for the server's machinery leaves it off.
	CheckShapes bool
	// Receipts signs the 402s' offers (the gate signs receipts with its own option).
	Receipts *receipt.Keyring
	// Listener, when set, is where the server listens (a test that must know the address
	// before the server starts, as a did:web names it) [a new loopback port].
	Listener net.Listener
}

// TestPayTo is the recipient named in test challenges.
const TestPayTo = "0x000000000000000000000000000000000000dEaD"

// Harness is a running server.
type Harness struct {
	BaseURL string
	Server  *server.Server
	Client  *http.Client
}

// Start serves cat on 127.0.0.1 until the test ends.
func Start(t testing.TB, cat *catalog.Catalog, opt Options) *Harness {
	t.Helper()
	if opt.Pay.Network == "" {
		opt.Pay = paywall.DefaultConfig()
		opt.Pay.PayTo = TestPayTo
	}
	ln := opt.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	base := "http://" + ln.Addr().String()
	cfg := server.DefaultConfig()
	cfg.Addr, cfg.BaseURL = ln.Addr().String(), base
	cfg.FreePerMinute = 0
	if opt.Configure != nil {
		opt.Configure(&cfg)
	}
	srv := server.New(cfg, cat, server.Options{Gate: opt.Gate, Pay: opt.Pay, Cache: opt.Cache, Metrics: opt.Metrics, Logger: opt.Logger,
		Receipts: opt.Receipts})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	transport := http.DefaultTransport.(*http.Transport).Clone()
	t.Cleanup(func() {
		// A connection the client dialed for a concurrent request but never used waits, on the
		// server, for a first request until the read timeout (30 s), past the shutdown's 10 s.
		transport.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) {
			t.Errorf("server: %v", err)
		}
	})
	client := &http.Client{Transport: transport}
	if opt.CheckShapes {
		client.Transport = shapeCheck{t: t, cat: cat, next: transport}
	}
	return &Harness{BaseURL: base, Server: srv, Client: client}
}

// RecordingGate lets every call through without payment and records which calls would have
// been charged (work succeeded) and which not. It exists for handler tests only: production
// always has a verifying gate or the challenge-only one.
type RecordingGate struct {
	mu              sync.Mutex
	Charged, Waived []string // call keys
}

func (g *RecordingGate) Charge(ctx context.Context, call *paywall.Call, work func(context.Context) (any, error)) (any, map[string]string, error) {
	// An unpaid call to a route with a free first call runs as the free call it would be.
	call.Request.Free = call.Entry.FreeFirstCall && paywall.PaymentHeader(call.Request) == ""
	out, err := work(ctx)
	g.mu.Lock()
	defer g.mu.Unlock()
	if err != nil {
		g.Waived = append(g.Waived, call.Key)
	} else {
		g.Charged = append(g.Charged, call.Key)
	}
	return out, nil, err
}

// Counts returns how many calls were charged and waived so far.
func (g *RecordingGate) Counts() (charged, waived int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.Charged), len(g.Waived)
}

// Family is a route family: it binds its handlers to a catalog.
type Family interface {
	Bind(*catalog.Catalog) error
}

// StartFamily serves the default catalog, with the route names given, with fam bound, and
// checks the shape of every answer its client receives.
func StartFamily(t testing.TB, names catalog.Names, fam Family, opt Options) *Harness {
	t.Helper()
	cat, err := catalog.Default(names)
	if err != nil {
		t.Fatal(err)
	}
	if err := fam.Bind(cat); err != nil {
		t.Fatal(err)
	}
	opt.CheckShapes = true
	return Start(t, cat, opt)
}

// GetObject requests path with the query q and returns the status and the body, which must
// be a JSON object.
func (h *Harness) GetObject(t testing.TB, path string, q url.Values) (int, map[string]any) {
	t.Helper()
	status, b := h.Get(t, path, q)
	m, ok := Decode(t, b).(map[string]any)
	if !ok {
		t.Fatalf("%d %s: not a JSON object", status, b)
	}
	return status, m
}

// Get requests path with the query q and returns the status and the body.
func (h *Harness) Get(t testing.TB, path string, q url.Values) (int, []byte) {
	t.Helper()
	resp, err := h.Client.Get(h.BaseURL + path + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// Preflight sends the OPTIONS request a script of another origin's browser sends before it
// calls method on path with headers (a comma-separated list), and returns the answer, its
// body closed.
func (h *Harness) Preflight(t testing.TB, method, path, headers string) *http.Response {
	t.Helper()
	req, err := http.NewRequest("OPTIONS", h.BaseURL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Origin", "https://agent.example")
	req.Header.Set("Access-Control-Request-Method", method)
	req.Header.Set("Access-Control-Request-Headers", headers)
	resp, err := h.Client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// ReceiptKeys is a fresh receipt keyring for a box at base (what first boot makes).
func ReceiptKeys(tb testing.TB, base string) *receipt.Keyring {
	tb.Helper()
	text, err := receipt.NewKeyText()
	if err != nil {
		tb.Fatal(err)
	}
	keys, err := receipt.ParseKeyring(text, base, time.Now())
	if err != nil {
		tb.Fatal(err)
	}
	return keys
}
