// Package family is the one shape of a route family: every family is built by a constructor
// taking Deps, the dependencies the families share, builds its own connectors from them, and
// binds its entries to the catalog. The families themselves are listed in order in
// api/routes/families.go.
package family

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/internal/cache"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/internal/state"
	proxyclient "github.com/peage/appliance/proxyd/client"
	"github.com/peage/appliance/settle/ledger"
)

// Deps are what the composition gives every family. A nil collaborator is one the process
// does not have (no Chromium, no proxyd, no ledger): a family needing it is left unbound and
// its routes stay listed, answering 503 before any 402.
type Deps struct {
	Config Config
	// Pool is the process-wide client pool: every caller of an upstream shares its bucket.
	Pool *httpc.Pool
	// Upstreams are the resolved registry rows: upstream.Resolve(cfg.Upstream).
	Upstreams map[string]upstream.Spec
	Cache     *cache.Cache // results shared between calls; nil keeps none
	Store     *state.Store // the journaled store
	Egress    *egress.Policy
	Farm      Farm                // the browser pool; nil when Chromium could not start
	Proxy     proxyclient.Service // proxyd: in process in dev, its admin socket in production
	Ledger    Ledger              // the settle daemon's ledger
	Receipts  *receipt.Keyring    // signs offers and receipts; nil without the credential
	// Pages reads pages for reasoning, offered by the web family to the families after it
	// in the list; nil without the browser farm.
	Pages PageReader
	// References answers DVF's sale price per m², offered by the fr family; nil without it.
	References References
	Log        *slog.Logger
	Now        func() time.Time
	// Background runs work beside the server until the server's context ends (the SMS
	// reaper); nil when nothing runs in the background (tests).
	Background func(run func(context.Context))
}

// Config is the part of the appliance's configuration the families read.
type Config struct {
	StateDir string
	Names    catalog.Names
	// Contact is the operator's address some upstreams ask for in the User-Agent.
	Contact string
	// Sections are the configuration sections a family reads, by their key in the file
	// ("chain": chainrpc.Config, "dns": resolver.Config, "llm": llm.Config), each typed by the
	// package it configures; Section reads one. They are held untyped so that this package,
	// and so every family's tests, link none of those packages (go-ethereum for "chain").
	Sections map[string]any
}

// Section returns the configuration section key as its owner's type T: a missing section,
// or one of another type, is an error naming it, which stops the start.
func Section[T any](c Config, key string) (T, error) {
	v, ok := c.Sections[key].(T)
	if !ok {
		return v, fmt.Errorf("no [%s] section of type %T in the families' configuration", key, v)
	}
	return v, nil
}

// Farm is the browser pool (a *browserfarm.Farm). The families that run tasks on it assert
// their own interface (Do and Ready), so that this package does not link the browser code.
type Farm interface {
	Ready() error
}

// Ledger is the settle daemon's ledger as the API reads it (settle/client.Client).
type Ledger interface {
	Payment(ctx context.Context, payer, nonce string) (ledger.Summary, error)
}

// Binder binds a family's handlers to a catalog.
type Binder interface {
	Bind(*catalog.Catalog) error
}

// BindFunc is a Binder written as a function (a check joined to a format).
type BindFunc func(*catalog.Catalog) error

// Bind calls f.
func (f BindFunc) Bind(c *catalog.Catalog) error { return f(c) }

// Family is one entry of the list: its name and its constructor. A constructor returning a
// nil family leaves its routes unbound (a collaborator is missing).
type Family struct {
	Name string
	New  func(Deps) (Binder, error)
}

// Of lists a family by its constructor, func New(family.Deps) (*Routes, error).
func Of[T any, P interface {
	*T
	Binder
}](name string, build func(Deps) (P, error)) Family {
	return Family{Name: name, New: func(d Deps) (Binder, error) {
		r, err := build(d)
		if err != nil || r == nil {
			return nil, err
		}
		return r, nil
	}}
}

// Page is a page read for a reader that reasons over it: the web family reads it through the
// browser farm, refusing what is not the page itself; the model routes reason over it.
type Page struct {
	URL      string `json:"url"`
	FinalURL string `json:"final_url"`
	Title    string `json:"title"`
	Markdown string `json:"-"`
	Text     string `json:"-"`
}

// PageReader reads pages for reasoning. The web family offers it to the families listed after
// it (Deps.Pages), so that no family imports another.
type PageReader interface {
	ReadPage(ctx context.Context, url string, free bool) (*Page, error)
	ReadyToRead() error
}

// Control is one deterministic check of a verification block (`controles[]`), the shape the
// web family's verified retrieval and the language-model routes' answers share.
type Control struct {
	Controle string `json:"controle"`
	OK       bool   `json:"ok"`
}
