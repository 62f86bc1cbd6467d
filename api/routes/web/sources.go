package web

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/search"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmerr"
	"github.com/peage/appliance/internal/fanout"
)

// Searcher is what /v1/search/sources needs of the web-search providers.
type Searcher interface {
	Ready() error
	Web(ctx context.Context, q search.Query) (*search.Results, error)
}

// WithSearch gives the routes a search provider chain for /v1/search/sources; without one
// the route stays listed, unavailable.
func (r *Routes) WithSearch(s Searcher) *Routes { r.search = s; return r }

// sourcesReady is ready while both the farm and a search provider are.
func (r *Routes) sourcesReady() error {
	if r.search == nil {
		return search.ErrNone
	}
	return errors.Join(r.farm.Ready(), r.search.Ready())
}

// Reasons of a page that could not be read, besides problem's.
const (
	reasonRefused = "refused" // the egress guard refused the URL or a redirect hop
	reasonTimeout = "timeout" // not loaded before the call's deadline
	reasonEmpty   = "empty"   // loaded, but no readable main content
	reasonBusy    = "busy"    // no browser free before the deadline
	reasonFailed  = "failed"  // anything else (crash, network error)
)

// sourcesMargin is kept from the call's deadline for assembling the answer.
const sourcesMargin = 2 * time.Second

// Source is one search result with the markdown of its page, or why it could not be read.
type Source struct {
	Position  int    `json:"position"`
	Title     string `json:"title"`
	URL       string `json:"url"`
	Snippet   string `json:"snippet"`
	OK        bool   `json:"ok"`
	FinalURL  string `json:"final_url,omitempty"`
	PageTitle string `json:"page_title,omitempty"`
	Markdown  string `json:"markdown,omitempty"`
	Chars     int    `json:"chars"`
	Truncated bool   `json:"truncated"`
	Reason    string `json:"reason,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Sources is the answer of /v1/search/sources.
type Sources struct {
	Q        string   `json:"q"`
	Provider string   `json:"provider"`
	Read     int      `json:"read"`
	Failed   int      `json:"failed"`
	Results  []Source `json:"results"`
}

// reasonOf names why the farm could not give a page.
func reasonOf(err error) string {
	switch farmerr.KindOf(err) {
	case farmerr.Refused:
		return reasonRefused
	case farmerr.Timeout:
		return reasonTimeout
	case farmerr.Busy:
		return reasonBusy
	default:
		return reasonFailed
	}
}

// cut keeps the first max characters (runes) of s.
func cut(s string, max int) (string, bool) {
	n := 0
	for i := range s {
		if n == max {
			return s[:i], true
		}
		n++
	}
	return s, false
}

// readSource loads one page with the extraction of /v1/extract.
func (r *Routes) readSource(ctx context.Context, s *Source, free bool, maxChars int) {
	fail := func(reason string, err error) {
		s.Reason = reason
		if fe := farmerr.As(err); fe != nil {
			s.Error = fe.Message
		} else if err != nil {
			s.Error = apierr.From(err).Message
		}
	}
	res, err := r.farm.Do(ctx, browserfarm.Task{URL: s.URL, Free: free, Layout: true, ServerHTML: true})
	if err != nil {
		fail(reasonOf(err), err)
		return
	}
	if reason, err := problem(res, acceptText); err != nil {
		fail(reason, err)
		return
	}
	c, err := contentOf(&page{res: res})
	if err != nil {
		fail(reasonFailed, err)
		return
	}
	md := strings.TrimSpace(c.Markdown)
	if md == "" {
		fail(reasonEmpty, errors.New("the page has no readable content"))
		return
	}
	s.OK, s.FinalURL, s.PageTitle = true, res.Landed(), c.Title
	s.Markdown, s.Truncated = cut(md, maxChars)
	s.Chars = len([]rune(s.Markdown))
}

func (r *Routes) sources(ctx context.Context, req *catalog.Request) (any, error) {
	q := strings.TrimSpace(req.Args.Str("q"))
	top, maxChars := int(req.Args.Int("top")), int(req.Args.Int("max_chars"))
	res, err := r.search.Web(ctx, search.Query{Q: q})
	if err != nil {
		return nil, err
	}
	out := Sources{Q: q, Provider: res.Provider, Results: []Source{}}
	for _, o := range res.Organic {
		if len(out.Results) == top {
			break
		}
		out.Results = append(out.Results, Source{Position: o.Position, Title: o.Title, URL: o.URL, Snippet: o.Snippet})
	}
	if len(out.Results) == 0 {
		return out, nil // a search with no result is an answer
	}
	// Every page is read at once, under one deadline: the call's, less a margin to answer.
	reads := make([]func(context.Context) error, len(out.Results))
	for i := range out.Results {
		reads[i] = func(ctx context.Context) error { r.readSource(ctx, &out.Results[i], req.Free, maxChars); return nil }
	}
	for i, err := range (&fanout.Runner{Margin: sourcesMargin}).Go(ctx, reads...) {
		if err != nil { // the read panicked: that page is unread, the others stand
			out.Results[i].OK, out.Results[i].Reason, out.Results[i].Error = false, reasonFailed, "internal error"
		}
	}
	for _, s := range out.Results {
		if s.OK {
			out.Read++
		} else {
			out.Failed++
		}
	}
	if out.Read == 0 {
		return nil, &apierr.Error{Code: apierr.CodeUpstream, Upstream: "target",
			Message: "none of the top pages could be read (" + out.Results[0].Reason + " first); nothing was charged"}
	}
	return out, nil
}
