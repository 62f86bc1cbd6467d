package search

import (
	"context"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
)

// SearXNGName is the registry name of the self-hosted SearXNG instance.
const SearXNGName = "searxng"

// SearXNG is a self-hosted meta-search instance: GET /search?format=json. Its settings.yml
// must list json under search.formats (otherwise it answers 403) and, for a private
// instance, turn its bot limiter off.
type SearXNG struct{ h *httpc.Client }

// NewSearXNG wraps the registry's client.
func NewSearXNG(h *httpc.Client) *SearXNG { return &SearXNG{h: h} }

func (s *SearXNG) Name() string { return SearXNGName }

type searxAnswer struct {
	Results []struct {
		URL           string   `json:"url"`
		Title         string   `json:"title"`
		Content       string   `json:"content"`
		Engine        string   `json:"engine"`
		Engines       []string `json:"engines"`
		PublishedDate *string  `json:"publishedDate"`
	} `json:"results"`
	// Answers were plain strings before SearXNG 2024 and objects since.
	Answers   []any `json:"answers"`
	Infoboxes []struct {
		Infobox string `json:"infobox"`
		ID      string `json:"id"`
		Content string `json:"content"`
		Engine  string `json:"engine"`
		URLs    []struct {
			Title string `json:"title"`
			URL   string `json:"url"`
		} `json:"urls"`
		Attributes []struct {
			Label string `json:"label"`
			Value any    `json:"value"`
		} `json:"attributes"`
	} `json:"infoboxes"`
	Suggestions []string `json:"suggestions"`
}

// language is SearXNG's language parameter: hl, narrowed to the country (fr-FR) when gl is given.
func language(q Query) string {
	hl := strings.ToLower(q.HL)
	if hl == "" {
		return "all"
	}
	if q.GL != "" {
		return hl + "-" + strings.ToUpper(q.GL)
	}
	return hl
}

func (s *SearXNG) ask(ctx context.Context, q Query, category string) (*searxAnswer, error) {
	var a searxAnswer
	v := url.Values{"q": {q.Q}, "format": {"json"}, "categories": {category}, "language": {language(q)}, "pageno": {"1"}}
	if err := s.h.GetJSON(ctx, "/search", v, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Web is the general category; SearXNG returns about 20 results a page, trimmed to 10.
func (s *SearXNG) Web(ctx context.Context, q Query) (*Results, error) {
	a, err := s.ask(ctx, q, "general")
	if err != nil {
		return nil, err
	}
	out := &Results{Provider: SearXNGName, Organic: []Organic{}, Related: append([]string{}, a.Suggestions...)}
	for _, r := range a.Results {
		if len(out.Organic) == MaxOrganic {
			break
		}
		o := Organic{Position: len(out.Organic) + 1, Title: r.Title, URL: r.URL, Snippet: r.Content}
		if r.PublishedDate != nil {
			o.Date = *r.PublishedDate
		}
		out.Organic = append(out.Organic, o)
	}
	for _, an := range a.Answers {
		switch v := an.(type) {
		case string:
			out.AnswerBox = &AnswerBox{Answer: v}
		case map[string]any:
			ab := &AnswerBox{}
			ab.Answer, _ = v["answer"].(string)
			ab.URL, _ = v["url"].(string)
			out.AnswerBox = ab
		}
		if out.AnswerBox != nil {
			break
		}
	}
	if len(a.Infoboxes) > 0 {
		ib := a.Infoboxes[0]
		kg := &KnowledgeGraph{Title: ib.Infobox, Description: ib.Content, Source: ib.Engine, SourceURL: ib.ID, Attributes: map[string]string{}}
		for _, u := range ib.URLs {
			if kg.Website == "" && strings.EqualFold(u.Title, "Official website") {
				kg.Website = u.URL
			}
		}
		for _, at := range ib.Attributes {
			if s, ok := at.Value.(string); ok && at.Label != "" {
				kg.Attributes[at.Label] = s
			}
		}
		out.KnowledgeGraph = kg
	}
	return out, nil
}

// News is the news category.
func (s *SearXNG) News(ctx context.Context, q Query) ([]News, error) {
	a, err := s.ask(ctx, q, "news")
	if err != nil {
		return nil, err
	}
	out := make([]News, 0, len(a.Results))
	for _, r := range a.Results {
		n := News{Title: r.Title, Link: r.URL, Snippet: r.Content, Source: hostOf(r.URL)}
		if r.PublishedDate != nil {
			n.Date = *r.PublishedDate
		}
		out = append(out, n)
	}
	return out, nil
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return strings.TrimPrefix(u.Hostname(), "www.")
}
