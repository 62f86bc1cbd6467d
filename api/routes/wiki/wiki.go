// Package wiki serves /v1/wiki/summary over Wikipedia (api/upstream/wikipedia): the summary
// of a title in a language; when the title has no page, the best match of Wikipedia's own
// search (its first hit, else its spelling suggestion) is summarised instead and the answer
// says so. Redirects are followed by the API and reported; disambiguation pages are flagged.
package wiki

import (
	"context"
	"errors"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wikipedia"
)

// Parts are the family's collaborators.
type Parts struct{ Pool *httpc.Pool }

// Routes holds the handler.
type Routes struct{ wp *wikipedia.Client }

// With builds the family; the pool must know the wikipedia upstream.
func With(d Parts) (*Routes, error) {
	h, err := d.Pool.Client(wikipedia.Name)
	if err != nil {
		return nil, err
	}
	return &Routes{wp: wikipedia.New(h)}, nil
}

// Bind attaches the handler. The catalog checks the shape of the language code; the list of
// open Wikipedias is the connector's, installed here so that an unknown language is a 400
// naming lang before any 402.
func (r *Routes) Bind(c *catalog.Catalog) error {
	if err := c.RefineFormat("wiki_lang", func(s string) error {
		if !wikipedia.Languages[s] {
			return errors.New("is not the code of an open Wikipedia (e.g. en, fr, de, simple, zh-min-nan)")
		}
		return nil
	}); err != nil {
		return err
	}
	return c.Bind("wiki.summary", r.summary, r.wp.Ready)
}

// How the answered article was found.
const (
	ByTitle    = "title"    // the title asked is the article's
	ByRedirect = "redirect" // the title asked redirects to the article
	BySearch   = "search"   // the title has no page; Wikipedia's search found the article
)

// Image is a picture of the article.
type Image struct {
	URL    string `json:"url"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
}

// Coordinates are the article subject's position.
type Coordinates struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// Answer is the summary.
type Answer struct {
	Title          string       `json:"title"`
	Description    string       `json:"description,omitempty"`
	Summary        string       `json:"summary"`
	URL            string       `json:"url"`
	Thumbnail      *Image       `json:"thumbnail"`
	Coordinates    *Coordinates `json:"coordinates"`
	Lang           string       `json:"lang"`
	Type           string       `json:"type"`
	Disambiguation bool         `json:"disambiguation"`
	RequestedTitle string       `json:"requested_title"`
	MatchedBy      string       `json:"matched_by"`
	Wikidata       string       `json:"wikidata,omitempty"`
	Updated        string       `json:"updated,omitempty"`
	License        string       `json:"license"`
}

func (r *Routes) summary(ctx context.Context, req *catalog.Request) (any, error) {
	lang, asked := req.Args.Str("lang"), strings.TrimSpace(req.Args.Str("title"))
	by := ByTitle
	s, err := r.wp.PageSummary(ctx, lang, asked)
	if upstream.IsNotFound(err) {
		sr, serr := r.wp.Search(ctx, lang, asked)
		if serr != nil {
			return nil, serr
		}
		best := sr.Title
		if best == "" {
			best = sr.Suggestion
		}
		if best == "" {
			return nil, apierr.NotFound("no %s.wikipedia.org article matches %q", lang, asked)
		}
		by = BySearch
		if s, err = r.wp.PageSummary(ctx, lang, best); upstream.IsNotFound(err) {
			return nil, apierr.NotFound("no %s.wikipedia.org article is titled %q, and its best match %q has no summary", lang, asked, best)
		}
	}
	if err != nil {
		return nil, err
	}
	if by == ByTitle && !sameTitle(asked, s.Title) && !sameTitle(asked, s.Titles.Normalized) {
		by = ByRedirect
	}
	a := &Answer{Title: s.Title, Description: s.Description, Summary: s.Extract, URL: s.ContentURLs.Desktop.Page,
		Lang: lang, Type: s.Type, Disambiguation: s.Type == "disambiguation", RequestedTitle: asked, MatchedBy: by,
		Wikidata: s.WikibaseItem, Updated: s.Timestamp,
		License: "Text from Wikipedia under CC BY-SA 4.0; attribute it to the article at url."}
	if s.Thumbnail != nil {
		a.Thumbnail = &Image{URL: s.Thumbnail.Source, Width: s.Thumbnail.Width, Height: s.Thumbnail.Height}
	}
	if s.Coordinates != nil {
		a.Coordinates = &Coordinates{Lat: s.Coordinates.Lat, Lon: s.Coordinates.Lon}
	}
	return a, nil
}

// sameTitle compares titles as MediaWiki does: underscores are spaces and the first letter is
// case-insensitive.
func sameTitle(a, b string) bool {
	norm := func(s string) string {
		s = strings.TrimSpace(strings.ReplaceAll(s, "_", " "))
		r, n := utf8.DecodeRuneInString(s)
		return string(unicode.ToUpper(r)) + s[n:]
	}
	return a != "" && b != "" && norm(a) == norm(b)
}
