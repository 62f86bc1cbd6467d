// Package social serves the community routes: /v1/social/search, /v1/social/thread and
// /free/social/status, over Reddit (api/upstream/reddit) and Hacker News (the Algolia API,
// api/upstream/hackernews). Source codes are "reddit" and "hn"; ids are "<source>:<id>", the
// form the thread route takes back.
//
// A search asks every requested source in parallel under the call's deadline: a source that
// fails is left out of sources_answered and named in sources_failed, and when none answers
// the call is a 502, not charged. A thread is flattened depth first (depth 0 = a top-level
// comment), at most limit comments (200); Reddit's "more" stubs are expanded through
// /api/morechildren, in document order, while the limit is not reached and at most
// maxExpansions calls per thread (keyless Reddit allows about ten requests a minute).
package social

import (
	"context"
	"errors"
	"fmt"
	"html"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/hackernews"
	"github.com/peage/appliance/api/upstream/reddit"
	"github.com/peage/appliance/internal/fanout"
)

// Source codes.
const (
	Reddit = "reddit"
	HN     = "hn"
)

// maxExpansions bounds the /api/morechildren calls of one thread.
const maxExpansions = 3

// statusTTL is how long /free/social/status keeps a probe.
const statusTTL = time.Minute

// Routes holds the handlers.
type Routes struct {
	reddit *reddit.Client
	hn     *hackernews.Client
	now    func() time.Time

	mu       sync.Mutex
	status   *Status
	statusAt time.Time
}

// With builds the family.
func With(r *reddit.Client, h *hackernews.Client) *Routes {
	return &Routes{reddit: r, hn: h, now: time.Now}
}

// Bind attaches the three handlers; the sources are keyless, so they are always ready.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return errors.Join(c.Bind("social.search", r.search, nil), c.Bind("social.thread", r.thread, nil),
		c.Bind("free.social.status", r.probe, nil))
}

// Post is one search result.
type Post struct {
	Source      string `json:"source"`
	ID          string `json:"id"`
	Title       string `json:"title"`
	Score       int    `json:"score"`
	NumComments int    `json:"num_comments"`
	Author      string `json:"author"`
	Permalink   string `json:"permalink"`
	URL         string `json:"url,omitempty"`
	Excerpt     string `json:"excerpt"`
	CreatedAt   string `json:"created_at"`
	created     int64
}

// SearchAnswer is the answer of /v1/social/search.
type SearchAnswer struct {
	Q               string          `json:"q"`
	Sort            string          `json:"sort"`
	T               string          `json:"t"`
	Count           int             `json:"count"`
	SourcesAnswered []string        `json:"sources_answered"`
	SourcesFailed   []fanout.Source `json:"sources_failed"`
	Posts           []Post          `json:"posts"`
}

const excerptLen = 280

var tags = regexp.MustCompile(`<[^>]+>`)

// plain turns HN's HTML text into plain text.
func plain(s string) string {
	s = strings.ReplaceAll(s, "<p>", "\n\n")
	return strings.TrimSpace(html.UnescapeString(tags.ReplaceAllString(s, "")))
}

func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > excerptLen {
		return string(r[:excerptLen-1]) + "…"
	}
	return s
}

// since is the start of the time window t, 0 for all.
func since(now time.Time, t string) int64 {
	d := map[string]time.Duration{"hour": time.Hour, "day": 24 * time.Hour, "week": 7 * 24 * time.Hour,
		"month": 30 * 24 * time.Hour, "year": 365 * 24 * time.Hour}[t]
	if d == 0 {
		return 0
	}
	return now.Add(-d).Unix()
}

func (r *Routes) searchReddit(ctx context.Context, q, sort, t string, limit int) ([]Post, error) {
	ps, err := r.reddit.Search(ctx, q, sort, t, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Post, 0, len(ps))
	for _, p := range ps {
		text := p.Selftext
		if text == "" {
			text = p.URL
		}
		out = append(out, Post{Source: Reddit, ID: Reddit + ":" + p.ID, Title: p.Title, Score: p.Score, NumComments: p.NumComments,
			Author: p.Author, Permalink: "https://www.reddit.com" + p.Permalink, URL: p.URL, Excerpt: excerpt(text),
			CreatedAt: time.Unix(int64(p.CreatedUTC), 0).UTC().Format(time.RFC3339), created: int64(p.CreatedUTC)})
	}
	return out, nil
}

func (r *Routes) searchHN(ctx context.Context, q, sort, t string, limit int) ([]Post, error) {
	hits, err := r.hn.Search(ctx, q, sort == "new", since(r.now(), t), limit)
	if err != nil {
		return nil, err
	}
	out := make([]Post, 0, len(hits))
	for _, h := range hits {
		p := Post{Source: HN, ID: HN + ":" + h.ObjectID, Title: h.Title, Author: h.Author,
			Permalink: "https://news.ycombinator.com/item?id=" + h.ObjectID, CreatedAt: h.CreatedAt, created: h.CreatedAtI}
		if h.Points != nil {
			p.Score = *h.Points
		}
		if h.NumComments != nil {
			p.NumComments = *h.NumComments
		}
		if h.URL != nil {
			p.URL = *h.URL
		}
		if h.StoryText != nil {
			p.Excerpt = excerpt(plain(*h.StoryText))
		} else {
			p.Excerpt = p.URL
		}
		out = append(out, p)
	}
	return out, nil
}

func (r *Routes) search(ctx context.Context, req *catalog.Request) (any, error) {
	q := strings.TrimSpace(req.Args.Str("q"))
	sort, t, limit := req.Args.Str("sort"), req.Args.Str("t"), int(req.Args.Int("limit"))
	sources := req.Args.List("sources")
	if len(sources) == 0 {
		sources = []string{Reddit, HN}
	}
	sources = slices.Compact(slices.Sorted(slices.Values(sources)))
	posts := make([][]Post, len(sources))
	calls := make([]fanout.Call, len(sources))
	for i, s := range sources {
		calls[i] = fanout.Call{Source: s, Out: &posts[i], Run: func(ctx context.Context) (err error) {
			if s == Reddit {
				posts[i], err = r.searchReddit(ctx, q, sort, t, limit)
			} else {
				posts[i], err = r.searchHN(ctx, q, sort, t, limit)
			}
			return err
		}}
	}
	fan := &fanout.Runner{Now: r.now, Describe: func(err error) string { return apierr.From(err).Message }}
	outcomes, errs := fan.Run(ctx, calls...)
	ans := SearchAnswer{Q: q, Sort: sort, T: t, SourcesAnswered: []string{}, SourcesFailed: []fanout.Source{}, Posts: []Post{}}
	var lastErr error
	var lists [][]Post
	for i, s := range sources {
		if err := errs[i]; err != nil {
			lastErr = err
			ans.SourcesFailed = append(ans.SourcesFailed, outcomes[i])
			continue
		}
		ans.SourcesAnswered = append(ans.SourcesAnswered, s)
		lists = append(lists, posts[i])
	}
	if len(ans.SourcesAnswered) == 0 {
		return nil, lastErr
	}
	ans.Posts = merge(lists, sort, limit)
	ans.Count = len(ans.Posts)
	return ans, nil
}

// merge interleaves the sources' own rankings for relevance, and sorts by time (new) or score
// (top) otherwise, keeping at most limit posts.
func merge(lists [][]Post, sort string, limit int) []Post {
	var out []Post
	switch sort {
	case "new", "top":
		for _, l := range lists {
			out = append(out, l...)
		}
		slices.SortStableFunc(out, func(a, b Post) int {
			if sort == "new" {
				return int(b.created - a.created)
			}
			return b.Score - a.Score
		})
	default:
		for i := 0; ; i++ {
			added := false
			for _, l := range lists {
				if i < len(l) {
					out, added = append(out, l[i]), true
				}
			}
			if !added {
				break
			}
		}
	}
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []Post{}
	}
	return out
}

// ThreadPost is the post of a thread.
type ThreadPost struct {
	Source      string `json:"source"`
	ID          string `json:"id"`
	Title       string `json:"title"`
	Score       int    `json:"score"`
	Text        string `json:"text"`
	Author      string `json:"author"`
	URL         string `json:"url,omitempty"`
	Permalink   string `json:"permalink"`
	NumComments int    `json:"num_comments"`
	CreatedAt   string `json:"created_at"`
}

// ThreadComment is one comment of the flattened thread. Score is null where the source does
// not publish comment scores (Hacker News).
type ThreadComment struct {
	ID        string `json:"id"`
	Author    string `json:"author"`
	Score     *int   `json:"score"`
	Depth     int    `json:"depth"`
	Body      string `json:"body"`
	CreatedAt string `json:"created_at,omitempty"`
}

// ThreadAnswer is the answer of /v1/social/thread.
type ThreadAnswer struct {
	Post         ThreadPost      `json:"post"`
	CommentCount int             `json:"comment_count"`
	Comments     []ThreadComment `json:"comments"`
	// Truncated says the thread has more comments than returned (limit reached, or stubs left
	// unexpanded); MoreExpanded counts the /api/morechildren calls made.
	Truncated    bool `json:"truncated"`
	MoreExpanded int  `json:"more_expanded"`
}

var hnID = regexp.MustCompile(`^[0-9]{1,12}$`)
var redditID = regexp.MustCompile(`^[a-z0-9]{1,12}$`)

func (r *Routes) thread(ctx context.Context, req *catalog.Request) (any, error) {
	source, id, _ := strings.Cut(req.Args.Str("id"), ":")
	limit := int(req.Args.Int("limit"))
	switch {
	case source == Reddit && redditID.MatchString(strings.TrimPrefix(id, "t3_")):
		return r.redditThread(ctx, strings.TrimPrefix(id, "t3_"), limit)
	case source == HN && hnID.MatchString(id):
		n, _ := strconv.ParseInt(id, 10, 64)
		return r.hnThread(ctx, n, limit)
	case source == Reddit || source == HN:
		return nil, apierr.BadParam("id", "id %q is not a %s id", req.Args.Str("id"), source)
	default:
		return nil, apierr.BadParam("id", "unknown source %q: ids are reddit:<id> or hn:<id>", source)
	}
}

func (r *Routes) redditThread(ctx context.Context, id string, limit int) (any, error) {
	p, nodes, err := r.reddit.Thread(ctx, id, limit)
	if err != nil {
		if upstream.IsNotFound(err) {
			return nil, apierr.NotFound("no Reddit thread %s", id)
		}
		return nil, err
	}
	ans := ThreadAnswer{Post: ThreadPost{Source: Reddit, ID: Reddit + ":" + p.ID, Title: p.Title, Score: p.Score, Text: p.Selftext,
		Author: p.Author, URL: p.URL, Permalink: "https://www.reddit.com" + p.Permalink, NumComments: p.NumComments,
		CreatedAt: time.Unix(int64(p.CreatedUTC), 0).UTC().Format(time.RFC3339)}}
	count := func() int {
		n := 0
		for _, nd := range nodes {
			if nd.Comment != nil {
				n++
			}
		}
		return n
	}
	for ans.MoreExpanded < maxExpansions && count() < limit {
		i := slices.IndexFunc(nodes, func(n reddit.Node) bool { return n.More != nil && len(n.More.Children) > 0 })
		if i < 0 {
			break
		}
		stub := nodes[i].More
		more, err := r.reddit.MoreChildren(ctx, id, stub.Children)
		if err != nil {
			break // what was read stands; the thread says it is truncated
		}
		ans.MoreExpanded++
		for _, m := range more {
			if m.More != nil && m.More.Depth == 0 {
				m.More.Depth = stub.Depth
			}
		}
		nodes = slices.Concat(nodes[:i], more, nodes[i+1:])
	}
	ans.Comments = []ThreadComment{}
	for _, nd := range nodes {
		if nd.More != nil {
			ans.Truncated = true
			continue
		}
		if len(ans.Comments) == limit {
			ans.Truncated = true
			break
		}
		c := nd.Comment
		score := c.Score
		ans.Comments = append(ans.Comments, ThreadComment{ID: Reddit + ":" + c.ID, Author: c.Author, Score: &score, Depth: c.Depth, Body: c.Body,
			CreatedAt: time.Unix(int64(c.CreatedUTC), 0).UTC().Format(time.RFC3339)})
	}
	ans.CommentCount = len(ans.Comments)
	return ans, nil
}

func (r *Routes) hnThread(ctx context.Context, id int64, limit int) (any, error) {
	it, err := r.hn.Item(ctx, id)
	if err != nil {
		if upstream.IsNotFound(err) {
			return nil, apierr.NotFound("no Hacker News item %d", id)
		}
		return nil, err
	}
	ans := ThreadAnswer{Post: ThreadPost{Source: HN, ID: fmt.Sprintf("%s:%d", HN, it.ID), Title: deref(it.Title), Text: plain(deref(it.Text)),
		Author: deref(it.Author), URL: deref(it.URL), Permalink: fmt.Sprintf("https://news.ycombinator.com/item?id=%d", it.ID), CreatedAt: it.CreatedAt},
		Comments: []ThreadComment{}}
	if it.Points != nil {
		ans.Post.Score = *it.Points
	}
	var walk func(items []hackernews.Item, depth int)
	walk = func(items []hackernews.Item, depth int) {
		for _, c := range items {
			ans.Post.NumComments++
			if len(ans.Comments) == limit {
				ans.Truncated = true
			} else if c.Author != nil { // deleted comments have neither author nor text
				ans.Comments = append(ans.Comments, ThreadComment{ID: fmt.Sprintf("%s:%d", HN, c.ID), Author: *c.Author, Depth: depth,
					Body: plain(deref(c.Text)), CreatedAt: c.CreatedAt})
			}
			walk(c.Children, depth+1)
		}
	}
	walk(it.Children, 0)
	ans.CommentCount = len(ans.Comments)
	return ans, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// SourceStatus is one source's probe.
type SourceStatus struct {
	Source    string `json:"source"`
	OK        bool   `json:"ok"`
	LatencyMS int64  `json:"latency_ms"`
	Error     string `json:"error,omitempty"`
	Mode      string `json:"mode,omitempty"`
}

// Status is the answer of /free/social/status.
type Status struct {
	Sources   []SourceStatus `json:"sources"`
	CheckedAt string         `json:"checked_at"`
	CacheTTL  int            `json:"cache_seconds"`
}

// probe asks each source a one-result search, at most once a minute for the whole process.
func (r *Routes) probe(ctx context.Context, _ *catalog.Request) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.status != nil && r.now().Sub(r.statusAt) < statusTTL {
		return r.status, nil
	}
	st := &Status{CheckedAt: r.now().UTC().Format(time.RFC3339), CacheTTL: int(statusTTL / time.Second)}
	out := make([]SourceStatus, 2)
	probes := make([]func(context.Context) error, 2)
	for i, src := range []string{Reddit, HN} {
		probes[i] = func(ctx context.Context) error {
			start := time.Now()
			var err error
			if src == Reddit {
				_, err = r.reddit.Search(ctx, "news", "new", "day", 1)
			} else {
				_, err = r.hn.Search(ctx, "news", true, 0, 1)
			}
			s := SourceStatus{Source: src, OK: err == nil, LatencyMS: time.Since(start).Milliseconds()}
			if err != nil {
				s.Error = apierr.From(err).Error()
			}
			if src == Reddit {
				s.Mode = map[bool]string{true: "oauth", false: "keyless"}[r.reddit.OAuth()]
			}
			out[i] = s
			return nil
		}
	}
	for i, err := range fanout.Go(ctx, nil, probes...) {
		if err != nil { // the probe itself panicked
			out[i] = SourceStatus{Source: []string{Reddit, HN}[i], Error: "internal error"}
		}
	}
	st.Sources = out
	r.status, r.statusAt = st, r.now()
	return st, nil
}
