// Package websearch serves /v1/search and /v1/search/news over the search providers of
// api/upstream/search (Serper, SearXNG). Unconfigured, both routes stay listed, unavailable
// (503 before any 402); the first call of the UTC day per client is free (the gate decides it
// and merges free_first_call into the answer).
package websearch

import (
	"context"
	"errors"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/search"
)

// Searcher is what the routes need of the provider chain.
type Searcher interface {
	Ready() error
	Web(ctx context.Context, q search.Query) (*search.Results, error)
	News(ctx context.Context, q search.Query) ([]search.News, string, error)
}

// Routes holds the handlers.
type Routes struct{ s Searcher }

// With builds the family over a provider chain.
func With(s Searcher) *Routes { return &Routes{s: s} }

// Bind attaches both handlers, ready while a provider is configured.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return errors.Join(c.Bind("search", r.web, r.s.Ready), c.Bind("search.news", r.news, r.s.Ready))
}

// Web is the answer of /v1/search.
type Web struct {
	Q  string `json:"q"`
	GL string `json:"gl"`
	HL string `json:"hl"`
	*search.Results
}

// NewsAnswer is the answer of /v1/search/news.
type NewsAnswer struct {
	Q        string        `json:"q"`
	GL       string        `json:"gl"`
	HL       string        `json:"hl"`
	Provider string        `json:"provider"`
	News     []search.News `json:"news"`
}

func query(req *catalog.Request) search.Query {
	return search.Query{Q: strings.TrimSpace(req.Args.Str("q")), GL: strings.ToLower(req.Args.Str("gl")), HL: strings.ToLower(req.Args.Str("hl"))}
}

func (r *Routes) web(ctx context.Context, req *catalog.Request) (any, error) {
	q := query(req)
	res, err := r.s.Web(ctx, q)
	if err != nil {
		return nil, err
	}
	return Web{Q: q.Q, GL: q.GL, HL: q.HL, Results: res}, nil
}

func (r *Routes) news(ctx context.Context, req *catalog.Request) (any, error) {
	q := query(req)
	items, provider, err := r.s.News(ctx, q)
	if err != nil {
		return nil, err
	}
	return NewsAnswer{Q: q.Q, GL: q.GL, HL: q.HL, Provider: provider, News: items}, nil
}
