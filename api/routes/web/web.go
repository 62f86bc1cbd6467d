// Package web serves the "Web access" routes of the spec through the browser farm: main
// content, rendered HTML, screenshots, PDFs, links, metadata and the structured extractions.
// It talks to browserfarm types only; the browser itself (rod) stays inside browserfarm.
//
// Outcomes that are not the page the caller asked for are errors, so nothing is charged:
// a URL the egress policy refuses (itself or by redirect) is 400 naming the reason; the
// target's own HTTP error status is 502 naming the status; an anti-bot challenge is 502
// naming the vendor (reported, never bypassed); a document that is not a web page (PDF,
// image, JSON) is 400 naming its type; a page that does not load in time is 504.
package web

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/extract/article"
	"github.com/peage/appliance/internal/egress"
)

// Farm is what the routes need of the browser pool.
type Farm interface {
	Do(ctx context.Context, t browserfarm.Task) (*browserfarm.Result, error)
	Ready() error
}

// Routes holds the dependencies of the web handlers.
type Routes struct {
	farm   Farm
	policy *egress.Policy
	now    func() time.Time
	search Searcher // nil until WithSearch: /v1/search/sources is then unavailable
	// Region is the default region for phone numbers written without a country code.
	Region string
	// ExitCountry reads the country the residential exit showed at its last check (ISO
	// code); nil when no exit check runs beside the farm.
	ExitCountry func(ctx context.Context) (string, error)
}

// With builds the web routes over a farm and the egress policy (used by unblock's
// render=false plain fetch).
func With(farm Farm, policy *egress.Policy) *Routes {
	return &Routes{farm: farm, policy: policy, now: time.Now, Region: "FR"}
}

// Bind attaches every web handler to its catalog entry, each ready only while the farm is.
func (r *Routes) Bind(c *catalog.Catalog) error {
	routes := map[string]catalog.Handler{
		"extract":          r.extract,
		"extract.verified": r.verified,
		"render":           r.render,
		"screenshot":       r.screenshot,
		"pdf":              r.pdf,
		"links":            r.links,
		"meta":             r.meta,
		"web.tables":       r.tables,
		"web.jsonld":       r.jsonld,
		"web.contacts":     r.contacts,
		"web.prices":       r.prices,
		"web.changed":      r.changed,
		"web.headings":     r.headings,
		"web.forms":        r.forms,
		"web.images":       r.images,
		"web.navigation":   r.navigation,
		"unblock":          r.unblock,
		"free.extract":     r.freeExtract,
	}
	for _, id := range IDs {
		if err := c.Bind(id, routes[id], r.farm.Ready); err != nil {
			return fmt.Errorf("web: %w", err)
		}
	}
	if err := c.Bind("search.sources", r.sources, r.sourcesReady); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	return nil
}

// IDs are the catalog entries this package serves, in the spec's order.
var IDs = []string{"extract", "extract.verified", "render", "screenshot", "pdf", "links", "meta",
	"web.tables", "web.jsonld", "web.contacts", "web.prices", "web.changed", "web.headings",
	"web.forms", "web.images", "web.navigation", "unblock", "free.extract"}

// accept says which documents a route can work on.
type accept int

const (
	acceptHTML      accept = iota // HTML pages only
	acceptText                    // HTML or plain text
	acceptDisplayed               // anything the browser displays (screenshot, pdf)
)

var htmlTypes = map[string]bool{"text/html": true, "application/xhtml+xml": true}

// page is a loaded page with its parsed DOM.
type page struct {
	res *browserfarm.Result
	doc *goquery.Document
	// fetched says res.HTML is the server's document itself, fetched without a browser
	// (unblock's render=false), not a rendered DOM.
	fetched bool
}

// load runs the task and turns what is not the requested page into an error.
func (r *Routes) load(ctx context.Context, t browserfarm.Task, acc accept) (*page, error) {
	res, err := r.farm.Do(ctx, t)
	if err != nil {
		return nil, err
	}
	if err := judge(res, acc); err != nil {
		return nil, err
	}
	doc, err := extract.Parse(res.HTML)
	if err != nil {
		return nil, fmt.Errorf("web: parse rendered html: %w", err)
	}
	return &page{res: res, doc: doc}, nil
}

// judge turns a result that is not the requested page into the error the caller sees.
func judge(res *browserfarm.Result, acc accept) error {
	_, err := problem(res, acc)
	return err
}

// Reasons a loaded result is not a readable page, as /v1/search/sources reports them.
const (
	reasonBlocked   = "blocked"    // anti-bot challenge (reported, never bypassed)
	reasonHTTPError = "http_error" // the page's own 4xx/5xx
	reasonNotHTML   = "not_html"   // a PDF, an image, JSON…
)

// problem is judge with the reason named.
func problem(res *browserfarm.Result, acc accept) (string, error) {
	if ch := res.Challenge(); ch != nil {
		return reasonBlocked, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target",
			Message: fmt.Sprintf("the page answered with an anti-bot challenge (%s; %s); it is reported, not bypassed, and nothing was charged", ch.Vendor, ch.Signal)}
	}
	if res.Status >= 400 {
		return reasonHTTPError, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target",
			Message: fmt.Sprintf("the page answered HTTP %d %s; nothing was charged", res.Status, http.StatusText(res.Status))}
	}
	ct := res.ContentType
	if !htmlTypes[ct] && acc != acceptDisplayed && (acc != acceptText || ct != "text/plain") {
		return reasonNotHTML, apierr.BadParam("url", "url is a %s document, not a web page this route can read", orUnknown(ct))
	}
	return "", nil
}

func orUnknown(s string) string {
	if s == "" {
		return "non-HTML"
	}
	return s
}

// task is the browser job of a call; a call nobody pays for runs within the pool's free share.
func task(req *catalog.Request) browserfarm.Task {
	return browserfarm.Task{URL: req.Args.Str("url"), Free: req.Free}
}

// contentTask is the job of a call that reads the main content (contentOf): the browser also
// reads the page's layout signals and keeps the server's own HTML, which only that pipeline
// uses.
func contentTask(req *catalog.Request) browserfarm.Task {
	t := task(req)
	t.Layout, t.ServerHTML = true, true
	return t
}

// blocked is the list of refused sub-requests, never null in JSON.
func blocked(res *browserfarm.Result) []browserfarm.BlockedRequest {
	if res.Blocked == nil {
		return []browserfarm.BlockedRequest{}
	}
	return res.Blocked
}

// contentOf is the page's main content through the one pipeline every content route uses
// (extract, free/extract, extract/verified, web.changed), so their markdown and hashes agree:
// read from the rendered DOM or from the server's own HTML, whichever holds the page's
// content (article.ExtractBest).
func contentOf(p *page) (article.Content, error) {
	read := article.ExtractBest
	if p.fetched {
		read = func(s article.Sources) (article.Content, error) {
			c, err := article.Extract(s.Rendered)
			c.Source = article.SourceServer
			return c, err
		}
	}
	c, err := read(article.Sources{
		Rendered: article.Page{HTML: p.res.HTML, ContentType: p.res.ContentType,
			Text: p.res.Text, URL: p.res.Landed(), Signals: (*article.Signals)(p.res.Layout)},
		Server:             p.res.ServerHTML,
		RenderedMisdecoded: p.res.Misdecoded(),
	})
	if err != nil {
		return c, fmt.Errorf("web: extract main content: %w", err)
	}
	if c.Title == "" && !p.res.Misdecoded() {
		c.Title = p.res.Title
	}
	return c, nil
}

// extractorOf names the reading of the page and the candidate the content came from, as
// the answers' extractor field says it: "rendered:trafilatura", "server:readability"…
func extractorOf(c article.Content) string {
	if c.Source == "" {
		return c.Method
	}
	return c.Source + ":" + c.Method
}

// Extract is the answer of /v1/extract.
type Extract struct {
	URL             string                       `json:"url"`
	FinalURL        string                       `json:"final_url"`
	Title           string                       `json:"title"`
	Markdown        string                       `json:"markdown"`
	Extractor       string                       `json:"extractor"`
	BlockedRequests []browserfarm.BlockedRequest `json:"blocked_requests"`
}

func (r *Routes) extract(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, contentTask(req), acceptText)
	if err != nil {
		return nil, err
	}
	c, err := contentOf(p)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(c.Markdown) == "" {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target", Message: "the page has no readable content; nothing was charged"}
	}
	return Extract{URL: req.Args.Str("url"), FinalURL: p.res.Landed(), Title: c.Title, Markdown: c.Markdown,
		Extractor: extractorOf(c), BlockedRequests: blocked(p.res)}, nil
}

// FreeExtract is the answer of /free/extract.
type FreeExtract struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Markdown  string `json:"markdown"`
	Truncated bool   `json:"truncated"`
	Full      string `json:"full_route"`
}

// freeChars is the free preview's length (spec: first 300 characters).
const freeChars = 300

func (r *Routes) freeExtract(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, contentTask(req), acceptText)
	if err != nil {
		return nil, err
	}
	c, err := contentOf(p)
	if err != nil {
		return nil, err
	}
	md := extract.Truncate(c.Markdown, freeChars)
	return FreeExtract{URL: req.Args.Str("url"), Title: c.Title, Markdown: md, Truncated: md != c.Markdown, Full: "/v1/extract"}, nil
}

// Render is the answer of /v1/render.
type Render struct {
	URL             string                       `json:"url"`
	FinalURL        string                       `json:"final_url"`
	Status          int                          `json:"status"`
	HTML            string                       `json:"html"`
	LoadComplete    bool                         `json:"load_complete"`
	BlockedRequests []browserfarm.BlockedRequest `json:"blocked_requests"`
}

func (r *Routes) render(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.load(ctx, task(req), acceptText)
	if err != nil {
		return nil, err
	}
	return Render{URL: req.Args.Str("url"), FinalURL: p.res.Landed(), Status: p.res.Status, HTML: p.res.HTML,
		LoadComplete: p.res.LoadComplete, BlockedRequests: blocked(p.res)}, nil
}

func (r *Routes) screenshot(ctx context.Context, req *catalog.Request) (any, error) {
	t := task(req)
	t.Screenshot = &browserfarm.Screenshot{FullPage: req.Args.Bool("fullPage")}
	p, err := r.load(ctx, t, acceptDisplayed)
	if err != nil {
		return nil, err
	}
	res := p.res
	h := map[string]string{
		"X-Final-URL":         res.Landed(),
		"X-Page-Height":       fmt.Sprint(res.PageHeight),
		"X-Screenshot-Height": fmt.Sprint(res.ShotHeight),
		"X-Screenshot-Width":  "1280",
	}
	if req.Args.Bool("fullPage") {
		// The cap is said out loud: a cut page must not pass for the whole page.
		h["X-Screenshot-Truncated"] = fmt.Sprint(res.ShotHeight < res.PageHeight)
	}
	return &catalog.Raw{ContentType: "image/png", Header: h, Body: res.PNG}, nil
}

func (r *Routes) pdf(ctx context.Context, req *catalog.Request) (any, error) {
	t := task(req)
	t.PDF = true
	p, err := r.load(ctx, t, acceptDisplayed)
	if err != nil {
		return nil, err
	}
	return &catalog.Raw{ContentType: "application/pdf", Header: map[string]string{"X-Final-URL": p.res.Landed(), "X-Paper": "A4"}, Body: p.res.PDF}, nil
}
