// Package search is the web-search connector behind /v1/search, /v1/search/news and
// /v1/search/sources: one Provider interface, two providers (Serper, a keyed Google SERP API,
// and a self-hosted SearXNG instance answering JSON), chosen by configuration. Serper is the
// primary when its key is set; a configured SearXNG answers alone or when Serper fails.
// Nothing configured leaves the routes unavailable (503 before any 402).
package search

import (
	"context"
	"errors"
	"fmt"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Results is the top of ten organic results, a single answer box and a knowledge graph when
// the provider gives them; every provider's answer is normalised to it.
type Results struct {
	Provider       string          `json:"provider"`
	Organic        []Organic       `json:"results"`
	AnswerBox      *AnswerBox      `json:"answer_box"`
	KnowledgeGraph *KnowledgeGraph `json:"knowledge_graph"`
	Related        []string        `json:"related_searches"`
}

// Organic is one organic result.
type Organic struct {
	Position int    `json:"position"`
	Title    string `json:"title"`
	URL      string `json:"url"`
	Snippet  string `json:"snippet"`
	Date     string `json:"date,omitempty"`
}

// AnswerBox is the provider's direct answer.
type AnswerBox struct {
	Title   string `json:"title,omitempty"`
	Answer  string `json:"answer,omitempty"`
	Snippet string `json:"snippet,omitempty"`
	URL     string `json:"url,omitempty"`
}

// KnowledgeGraph is the entity panel (Google's knowledge graph, SearXNG's infobox).
type KnowledgeGraph struct {
	Title       string            `json:"title"`
	Type        string            `json:"type,omitempty"`
	Description string            `json:"description,omitempty"`
	Website     string            `json:"website,omitempty"`
	Source      string            `json:"source,omitempty"`
	SourceURL   string            `json:"source_url,omitempty"`
	Attributes  map[string]string `json:"attributes"`
}

// News is one news result.
type News struct {
	Title   string `json:"title"`
	Link    string `json:"link"`
	Date    string `json:"date"`
	Source  string `json:"source"`
	Snippet string `json:"snippet"`
}

// Query is what the routes ask: the text, a country (gl) and a language (hl), both
// two-letter codes.
type Query struct {
	Q  string
	GL string
	HL string
}

// Provider is one search backend.
type Provider interface {
	Name() string
	Web(ctx context.Context, q Query) (*Results, error)
	News(ctx context.Context, q Query) ([]News, error)
}

// MaxOrganic is the spec's "10 results per call".
const MaxOrganic = 10

// ErrNone is the readiness error when no provider is configured.
var ErrNone = fmt.Errorf("search: %w (set upstream.override.serper.key, or upstream.override.searxng.base_url to a SearXNG instance with the JSON format enabled)", upstream.ErrNotConfigured)

// Chain asks its providers in order and answers with the first that succeeds.
type Chain []Provider

// Ready is nil when at least one provider is configured.
func (c Chain) Ready() error {
	if len(c) == 0 {
		return ErrNone
	}
	return nil
}

// Web asks each provider in turn; the last error is returned when all fail.
func (c Chain) Web(ctx context.Context, q Query) (*Results, error) {
	return first(ctx, c, func(p Provider) (*Results, error) { return p.Web(ctx, q) })
}

// News asks each provider in turn.
func (c Chain) News(ctx context.Context, q Query) ([]News, string, error) {
	var name string
	out, err := first(ctx, c, func(p Provider) ([]News, error) { name = p.Name(); return p.News(ctx, q) })
	return out, name, err
}

func first[T any](ctx context.Context, c Chain, call func(Provider) (T, error)) (T, error) {
	var zero T
	if len(c) == 0 {
		return zero, ErrNone
	}
	var errs error
	for _, p := range c {
		out, err := call(p)
		if err == nil {
			return out, nil
		}
		errs = err // the caller names the last upstream that failed
		if ctx.Err() != nil {
			break
		}
	}
	if errs == nil {
		errs = errors.New("search: no provider answered")
	}
	return zero, errs
}

// FromPool builds the chain from the resolved registry: Serper when its key is set, then
// SearXNG when its address is set. An empty chain is not an error: the routes stay listed,
// unavailable.
func FromPool(pool interface {
	Client(string) (*httpc.Client, error)
}, specs map[string]upstream.Spec) (Chain, error) {
	var c Chain
	if s, ok := specs[SerperName]; ok && s.Ready() == nil {
		h, err := pool.Client(SerperName)
		if err != nil {
			return nil, err
		}
		c = append(c, NewSerper(h))
	}
	if s, ok := specs[SearXNGName]; ok && s.Ready() == nil {
		h, err := pool.Client(SearXNGName)
		if err != nil {
			return nil, err
		}
		c = append(c, NewSearXNG(h))
	}
	return c, nil
}
