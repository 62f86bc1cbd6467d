// Package farmtest starts a real browser farm for tests and serves the local pages the tests
// load: every case the web routes must handle (scripts, tables, forms, prices, contacts,
// redirects, slow and endless pages, crashes, SSRF bait) lives here once.
package farmtest

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"time"

	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/internal/egress"
)

// Env is a running farm and the local site it is allowed to reach.
type Env struct {
	Farm   *browserfarm.Farm
	Policy *egress.Policy
	Site   *httptest.Server
	// Base is the site's root URL, e.g. http://127.0.0.1:PORT.
	Base string
	// Other is a second local server that the policy does NOT allow (loopback bait);
	// OtherHits counts the requests it received, which must stay zero.
	Other     *httptest.Server
	OtherHits *atomic.Int64
	Hooks     *Hooks
	fontDir   string
}

// Start launches a farm of size browsers (and a queue of queue waiting calls) allowed to reach only the test site. It fails with
// a message naming ops/setup.sh when Chromium is missing, so a test never silently skips.
func Start(size, queue int) (*Env, error) { return StartTuned(size, queue, nil) }

// StartTuned is Start with a last say on the farm's configuration.
func StartTuned(size, queue int, tune func(*browserfarm.Config)) (*Env, error) {
	return start(size, queue, tune, nil)
}

// StartPages is Start with more pages on the test site: each pattern (as http.ServeMux reads
// it) answered by its handler, for routes that read pages of their own.
func StartPages(size, queue int, pages map[string]http.Handler) (*Env, error) {
	return start(size, queue, nil, pages)
}

// StartPagesTuned is StartPages with a last say on the farm's configuration (a route reading
// real pages bigger than the tests' 1 MiB bound sets the production one).
func StartPagesTuned(size, queue int, tune func(*browserfarm.Config), pages map[string]http.Handler) (*Env, error) {
	return start(size, queue, tune, pages)
}

func start(size, queue int, tune func(*browserfarm.Config), pages map[string]http.Handler) (*Env, error) {
	cfg := browserfarm.DefaultConfig()
	if _, err := os.Stat(cfg.Chromium); err != nil {
		return nil, fmt.Errorf("chromium is not installed at %s: run ops/setup.sh (it installs Debian's chromium)", cfg.Chromium)
	}
	fontDir, fontsConf, err := writeFontsConf()
	if err != nil {
		return nil, err
	}
	cfg.Fontconfig = fontsConf
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		_ = os.RemoveAll(fontDir)
		return nil, err
	}
	hooks := &Hooks{Waiting: make(chan struct{}, 8), Held: NewHeld(), Pages: pages}
	site := httptest.NewUnstartedServer(Site(hooks))
	site.Listener = ln
	site.Start()
	hits := &atomic.Int64{}
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		_, _ = w.Write([]byte("secret from a server the policy does not allow"))
	}))
	policy, err := egress.New(egress.Config{Allow: []string{ln.Addr().String()}})
	if err != nil {
		site.Close()
		other.Close()
		_ = os.RemoveAll(fontDir)
		return nil, err
	}
	cfg.Size = size
	cfg.Queue = queue
	cfg.MaxHTMLBytes = 1 << 20
	cfg.JobTimeout = 20 * time.Second
	cfg.RecycleJobs = 0
	// Generous on purpose: the tests check what scripts insert, on a machine that may be
	// busy; the benchmark measures the production default.
	cfg.SettleQuiet = 250 * time.Millisecond
	// The test pages are small; a small heap makes the page that allocates without end crash
	// its tab in a quarter of the production time, so a busy machine still sees the crash
	// within the job's deadline.
	cfg.JSHeapMB = 128
	if tune != nil {
		tune(&cfg)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	farm, err := browserfarm.New(ctx, cfg, policy, log)
	if err != nil {
		site.Close()
		other.Close()
		_ = os.RemoveAll(fontDir)
		return nil, err
	}
	return &Env{Farm: farm, Policy: policy, Site: site, Base: site.URL, Other: other, OtherHits: hits, Hooks: hooks, fontDir: fontDir}, nil
}

// Close stops the farm and the servers.
func (e *Env) Close() {
	e.Farm.Close()
	e.Site.Close()
	e.Other.Close()
	_ = os.RemoveAll(e.fontDir)
}

// URL is the absolute address of a site path.
func (e *Env) URL(path string) string { return e.Base + path }
