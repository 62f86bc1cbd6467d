package crypto

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/rss"
	"github.com/peage/appliance/internal/fanout"
)

// summaryMax bounds an article's summary, in characters.
const summaryMax = 400

// Article is one article of the answer.
type Article struct {
	Title      string   `json:"title"`
	Link       string   `json:"link"`
	Published  string   `json:"published"` // RFC 3339, UTC; "" when the feed gave no date
	Source     string   `json:"source"`
	Summary    string   `json:"summary"`
	Authors    []string `json:"authors,omitempty"`
	Categories []string `json:"categories,omitempty"`
	published  time.Time
}

// NewsAnswer is /v1/crypto/news.
type NewsAnswer struct {
	Count           int             `json:"count"`
	SourcesAnswered []string        `json:"sources_answered"`
	SourcesFailed   []fanout.Source `json:"sources_failed"`
	Duplicates      int             `json:"duplicates_removed"`
	Articles        []Article       `json:"articles"`
	Method          string          `json:"method"`
}

const newsMethod = "The RSS feeds of CoinDesk, Cointelegraph, Decrypt and The Block read at once; an article is a duplicate " +
	"of another when its link (host lowercased, query, fragment and trailing slash dropped) or its title (case and " +
	"spacing ignored) is the same, and the first read is kept; newest first; q keeps articles with every word of q " +
	"in the title or summary. Links lose their utm_* tracking parameters."

func (r *Routes) news(ctx context.Context, req *catalog.Request) (any, error) {
	got := make([][]rss.Item, len(rss.Newsrooms))
	calls := make([]fanout.Call, len(rss.Newsrooms))
	for i, f := range rss.Newsrooms {
		calls[i] = fanout.Call{Source: f.Source, Out: &got[i],
			Run: func(ctx context.Context) (err error) { got[i], err = rss.Fetch(ctx, r.feeds[f.Name], f); return }}
	}
	outcomes, errs := r.fan().Run(ctx, calls...)
	out := NewsAnswer{SourcesAnswered: []string{}, SourcesFailed: []fanout.Source{}, Articles: []Article{}, Method: newsMethod}
	q := strings.ToLower(req.Args.Str("q"))
	seenLink, seenTitle := map[string]bool{}, map[string]bool{}
	for i, f := range rss.Newsrooms {
		if errs[i] != nil {
			out.SourcesFailed = append(out.SourcesFailed, outcomes[i])
			continue
		}
		out.SourcesAnswered = append(out.SourcesAnswered, f.Source)
		for _, it := range got[i] {
			if it.Title == "" || it.Link == "" {
				continue
			}
			link, title := canonicalLink(it.Link), strings.ToLower(strings.Join(strings.Fields(it.Title), " "))
			if seenLink[link] || seenTitle[title] {
				out.Duplicates++
				continue
			}
			seenLink[link], seenTitle[title] = true, true
			if !matches(it.Title+" "+it.Summary, q) {
				continue
			}
			a := Article{Title: it.Title, Link: it.Link, Source: f.Source, Summary: truncate(it.Summary, summaryMax),
				Authors: it.Authors, Categories: it.Categories, published: it.Published}
			if !it.Published.IsZero() {
				a.Published = it.Published.Format(time.RFC3339)
			}
			out.Articles = append(out.Articles, a)
		}
	}
	if len(out.SourcesAnswered) == 0 {
		return nil, apierr.Upstream("rss", errs[0], "none of the four newsroom feeds answered")
	}
	slices.SortStableFunc(out.Articles, func(a, b Article) int { return b.published.Compare(a.published) })
	if limit := int(req.Args.Int("limit")); len(out.Articles) > limit {
		out.Articles = out.Articles[:limit]
	}
	out.Count = len(out.Articles)
	return out, nil
}

// canonicalLink is the identity of an article's address: scheme and host lowercased, the
// query (tracking parameters) and fragment dropped, no trailing slash.
func canonicalLink(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Host == "" {
		return strings.ToLower(s)
	}
	return strings.ToLower(u.Host) + strings.TrimSuffix(u.EscapedPath(), "/")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return strings.TrimSpace(string(r[:n-1])) + "…"
}
