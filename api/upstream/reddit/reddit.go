// Package reddit is the Reddit connector of the community routes: search, a thread with its
// comment tree, and the expansion of "more" stubs through /api/morechildren.
//
// Two access modes. Keyless (the default): www.reddit.com/….json at Reddit's unauthenticated
// rate, about 10 requests a minute per IP (the registry's bucket). OAuth, when the key
// "client_id:client_secret" is configured (Reddit grants API access case by case since its
// Responsible Builder Policy of November 2025): an application-only token from
// /api/v1/access_token, then oauth.reddit.com without the .json suffix at 100 requests a minute.
package reddit

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/internal/version"
)

// Names in the registry.
const (
	Name     = "reddit"
	AuthName = "reddit-auth"
)

// Client calls Reddit.
type Client struct {
	h    *httpc.Client
	auth *httpc.Client // nil in keyless mode
	id   string
	sec  string
	ua   string
	now  func() time.Time

	mu     sync.Mutex
	token  string
	expiry time.Time
}

// New builds the client. spec is the resolved "reddit" row: a key "id:secret" selects OAuth,
// in which case auth (the "reddit-auth" client) fetches tokens.
func New(h, auth *httpc.Client, spec upstream.Spec, contact string) (*Client, error) {
	c := &Client{h: h, now: time.Now,
		// The form Reddit asks for: <platform>:<app id>:<version> (by <contact>).
		ua: fmt.Sprintf("server:peage-appliance:%s (by %s)", version.Version, contact)}
	if spec.Key != "" {
		id, sec, ok := strings.Cut(spec.Key, ":")
		if !ok || id == "" || sec == "" {
			return nil, fmt.Errorf("reddit: the key must be client_id:client_secret")
		}
		c.auth, c.id, c.sec = auth, id, sec
	}
	return c, nil
}

// OAuth reports whether the client uses an application token.
func (c *Client) OAuth() bool { return c.auth != nil }

// Post is a t3 thing.
type Post struct {
	ID          string  `json:"id"`
	Name        string  `json:"name"`
	Title       string  `json:"title"`
	Subreddit   string  `json:"subreddit"`
	Author      string  `json:"author"`
	Score       int     `json:"score"`
	NumComments int     `json:"num_comments"`
	CreatedUTC  float64 `json:"created_utc"`
	Permalink   string  `json:"permalink"`
	URL         string  `json:"url"`
	Selftext    string  `json:"selftext"`
	Over18      bool    `json:"over_18"`
}

// Comment is a t1 thing; Depth is its depth in the thread (0 for a top-level comment).
type Comment struct {
	ID         string  `json:"id"`
	Author     string  `json:"author"`
	Body       string  `json:"body"`
	Score      int     `json:"score"`
	CreatedUTC float64 `json:"created_utc"`
	ParentID   string  `json:"parent_id"`
	Depth      int     `json:"depth"`
}

// More is an unexpanded "more" stub: Children are the ids of the comments it stands for.
type More struct {
	ParentID string   `json:"parent_id"`
	Count    int      `json:"count"`
	Children []string `json:"children"`
	Depth    int      `json:"depth"`
}

// Node is a comment or a stub, in document order.
type Node struct {
	Comment *Comment
	More    *More
}

type thing struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

type listing struct {
	Kind string `json:"kind"`
	Data struct {
		After    string  `json:"after"`
		Children []thing `json:"children"`
	} `json:"data"`
}

// path adds the .json suffix the keyless host needs.
func (c *Client) path(p string) string {
	if c.OAuth() {
		return p
	}
	return p + ".json"
}

func (c *Client) get(ctx context.Context, p string, q url.Values, out any) error {
	hdr := http.Header{"User-Agent": {c.ua}}
	if c.OAuth() {
		tok, err := c.bearer(ctx)
		if err != nil {
			return err
		}
		hdr.Set("Authorization", "bearer "+tok)
	}
	q.Set("raw_json", "1") // bodies unescaped (&amp; → &)
	r, err := c.h.Send(ctx, httpc.Call{Method: http.MethodGet, Path: c.path(p), Query: q, Header: hdr})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(r.Body, out); err != nil {
		return upstream.BadAnswer(Name, "GET "+p, r.Status, httpc.FieldOf(err), err)
	}
	return nil
}

// bearer returns a valid application token, fetching one when the last expires within a minute.
func (c *Client) bearer(ctx context.Context) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.token != "" && c.now().Add(time.Minute).Before(c.expiry) {
		return c.token, nil
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	r, err := c.auth.Send(ctx, httpc.Call{Method: http.MethodPost, Path: "/api/v1/access_token", Body: []byte(form.Encode()),
		ContentType: "application/x-www-form-urlencoded", BasicUser: c.id, BasicPass: c.sec, Header: http.Header{"User-Agent": {c.ua}}})
	if err != nil {
		return "", err
	}
	var tok struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
	}
	if err := json.Unmarshal(r.Body, &tok); err != nil || tok.AccessToken == "" {
		return "", upstream.BadAnswer(AuthName, "POST /api/v1/access_token", r.Status, "access_token", fmt.Errorf("no token in the answer: %v", err))
	}
	c.token, c.expiry = tok.AccessToken, c.now().Add(time.Duration(tok.ExpiresIn)*time.Second)
	return c.token, nil
}

// Search is /search: sort relevance, new or top; t hour … all.
func (c *Client) Search(ctx context.Context, q, sort, t string, limit int) ([]Post, error) {
	var l listing
	v := url.Values{"q": {q}, "sort": {sort}, "t": {t}, "limit": {strconv.Itoa(limit)}, "type": {"link"}}
	if err := c.get(ctx, "/search", v, &l); err != nil {
		return nil, err
	}
	posts := make([]Post, 0, len(l.Data.Children))
	for i, ch := range l.Data.Children {
		if ch.Kind != "t3" {
			continue
		}
		var p Post
		if err := json.Unmarshal(ch.Data, &p); err != nil {
			return nil, upstream.BadAnswer(Name, "GET /search", 200, fmt.Sprintf("data.children[%d]", i), err)
		}
		posts = append(posts, p)
	}
	return posts, nil
}

// Thread is /comments/{id}: the post and its comment tree flattened in document order, "more"
// stubs kept where they stand.
func (c *Client) Thread(ctx context.Context, id string, limit int) (*Post, []Node, error) {
	var two []listing
	op := "GET /comments/" + id
	if err := c.get(ctx, "/comments/"+id, url.Values{"limit": {strconv.Itoa(limit)}, "sort": {"top"}}, &two); err != nil {
		return nil, nil, err
	}
	if len(two) != 2 || len(two[0].Data.Children) == 0 {
		return nil, nil, upstream.BadAnswer(Name, op, 200, "", fmt.Errorf("want [post listing, comment listing], got %d listings", len(two)))
	}
	var p Post
	if err := json.Unmarshal(two[0].Data.Children[0].Data, &p); err != nil {
		return nil, nil, upstream.BadAnswer(Name, op, 200, "[0].data.children[0]", err)
	}
	var nodes []Node
	if err := flatten(two[1].Data.Children, 0, &nodes); err != nil {
		return nil, nil, upstream.BadAnswer(Name, op, 200, "[1]", err)
	}
	return &p, nodes, nil
}

// flatten walks t1 things depth first; replies is "" or a nested Listing.
func flatten(things []thing, depth int, out *[]Node) error {
	for _, t := range things {
		switch t.Kind {
		case "t1":
			var raw struct {
				Comment
				Replies json.RawMessage `json:"replies"`
			}
			if err := json.Unmarshal(t.Data, &raw); err != nil {
				return err
			}
			cm := raw.Comment
			cm.Depth = depth
			*out = append(*out, Node{Comment: &cm})
			if len(raw.Replies) > 0 && raw.Replies[0] == '{' {
				var l listing
				if err := json.Unmarshal(raw.Replies, &l); err != nil {
					return err
				}
				if err := flatten(l.Data.Children, depth+1, out); err != nil {
					return err
				}
			}
		case "more":
			var m More
			if err := json.Unmarshal(t.Data, &m); err != nil {
				return err
			}
			m.Depth = depth
			*out = append(*out, Node{More: &m})
		}
	}
	return nil
}

// MaxChildren is how many ids one /api/morechildren call may name.
const MaxChildren = 100

// MoreChildren expands ids of post id. The answer is flat (each thing carries parent_id and
// its depth in the thread); base is the stub's depth, added when the answer lacks depth.
func (c *Client) MoreChildren(ctx context.Context, postID string, ids []string) ([]Node, error) {
	if len(ids) > MaxChildren {
		ids = ids[:MaxChildren]
	}
	var a struct {
		JSON struct {
			Errors []any `json:"errors"`
			Data   struct {
				Things []thing `json:"things"`
			} `json:"data"`
		} `json:"json"`
	}
	v := url.Values{"api_type": {"json"}, "link_id": {"t3_" + postID}, "children": {strings.Join(ids, ",")}, "sort": {"top"}}
	if err := c.get(ctx, "/api/morechildren", v, &a); err != nil {
		return nil, err
	}
	if len(a.JSON.Errors) > 0 {
		return nil, upstream.BadAnswer(Name, "GET /api/morechildren", 200, "json.errors", fmt.Errorf("%v", a.JSON.Errors))
	}
	var out []Node
	for _, t := range a.JSON.Data.Things {
		switch t.Kind {
		case "t1":
			var cm Comment
			if err := json.Unmarshal(t.Data, &cm); err != nil {
				return nil, upstream.BadAnswer(Name, "GET /api/morechildren", 200, "json.data.things", err)
			}
			out = append(out, Node{Comment: &cm})
		case "more":
			var m More
			if err := json.Unmarshal(t.Data, &m); err != nil {
				return nil, upstream.BadAnswer(Name, "GET /api/morechildren", 200, "json.data.things", err)
			}
			out = append(out, Node{More: &m})
		}
	}
	return out, nil
}
