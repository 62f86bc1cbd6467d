package search

import (
	"context"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
)

// SerperName is the registry name of Serper (google.serper.dev, X-API-KEY).
const SerperName = "serper"

// Serper is the keyed Google SERP API: POST /search and /news with a JSON body.
type Serper struct{ h *httpc.Client }

// NewSerper wraps the registry's client.
func NewSerper(h *httpc.Client) *Serper { return &Serper{h: h} }

func (s *Serper) Name() string { return SerperName }

type serperQuery struct {
	Q   string `json:"q"`
	GL  string `json:"gl,omitempty"`
	HL  string `json:"hl,omitempty"`
	Num int    `json:"num"`
}

type serperSearch struct {
	AnswerBox *struct {
		Title   string `json:"title"`
		Answer  string `json:"answer"`
		Snippet string `json:"snippet"`
		Link    string `json:"link"`
	} `json:"answerBox"`
	KnowledgeGraph *struct {
		Title             string            `json:"title"`
		Type              string            `json:"type"`
		Website           string            `json:"website"`
		Description       string            `json:"description"`
		DescriptionSource string            `json:"descriptionSource"`
		DescriptionLink   string            `json:"descriptionLink"`
		Attributes        map[string]string `json:"attributes"`
	} `json:"knowledgeGraph"`
	Organic []struct {
		Title    string `json:"title"`
		Link     string `json:"link"`
		Snippet  string `json:"snippet"`
		Date     string `json:"date"`
		Position int    `json:"position"`
	} `json:"organic"`
	RelatedSearches []struct {
		Query string `json:"query"`
	} `json:"relatedSearches"`
}

type serperNews struct {
	News []struct {
		Title   string `json:"title"`
		Link    string `json:"link"`
		Snippet string `json:"snippet"`
		Date    string `json:"date"`
		Source  string `json:"source"`
	} `json:"news"`
}

func serperBody(q Query) serperQuery {
	return serperQuery{Q: q.Q, GL: strings.ToLower(q.GL), HL: strings.ToLower(q.HL), Num: MaxOrganic}
}

// Web is POST /search.
func (s *Serper) Web(ctx context.Context, q Query) (*Results, error) {
	var a serperSearch
	if err := s.h.PostJSON(ctx, "/search", serperBody(q), &a); err != nil {
		return nil, err
	}
	out := &Results{Provider: SerperName, Organic: []Organic{}, Related: []string{}}
	for i, o := range a.Organic {
		if len(out.Organic) == MaxOrganic {
			break
		}
		pos := o.Position
		if pos == 0 {
			pos = i + 1
		}
		out.Organic = append(out.Organic, Organic{Position: pos, Title: o.Title, URL: o.Link, Snippet: o.Snippet, Date: o.Date})
	}
	if b := a.AnswerBox; b != nil {
		out.AnswerBox = &AnswerBox{Title: b.Title, Answer: b.Answer, Snippet: b.Snippet, URL: b.Link}
	}
	if k := a.KnowledgeGraph; k != nil {
		attrs := k.Attributes
		if attrs == nil {
			attrs = map[string]string{}
		}
		out.KnowledgeGraph = &KnowledgeGraph{Title: k.Title, Type: k.Type, Description: k.Description, Website: k.Website,
			Source: k.DescriptionSource, SourceURL: k.DescriptionLink, Attributes: attrs}
	}
	for _, r := range a.RelatedSearches {
		out.Related = append(out.Related, r.Query)
	}
	return out, nil
}

// News is POST /news.
func (s *Serper) News(ctx context.Context, q Query) ([]News, error) {
	var a serperNews
	if err := s.h.PostJSON(ctx, "/news", serperBody(q), &a); err != nil {
		return nil, err
	}
	out := make([]News, 0, len(a.News))
	for _, n := range a.News {
		out = append(out, News{Title: n.Title, Link: n.Link, Date: n.Date, Source: n.Source, Snippet: n.Snippet})
	}
	return out, nil
}
