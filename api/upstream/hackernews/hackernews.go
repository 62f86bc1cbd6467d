// Package hackernews is the Hacker News connector of the community routes, over the keyless
// Algolia HN Search API (hn.algolia.com/api/v1): /search (relevance), /search_by_date
// (newest) and /items/{id}, the whole nested thread in one answer.
package hackernews

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "hn-algolia"

// Client calls the API through the process-wide client (10,000 requests an hour per IP).
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Hit is one search hit.
type Hit struct {
	ObjectID    string  `json:"objectID"`
	Title       string  `json:"title"`
	URL         *string `json:"url"`
	Author      string  `json:"author"`
	Points      *int    `json:"points"`
	NumComments *int    `json:"num_comments"`
	CreatedAt   string  `json:"created_at"`
	CreatedAtI  int64   `json:"created_at_i"`
	StoryText   *string `json:"story_text"`
}

// Item is a node of /items/{id}: the story, then comments in children.
type Item struct {
	ID        int64   `json:"id"`
	Type      string  `json:"type"`
	Author    *string `json:"author"`
	Title     *string `json:"title"`
	URL       *string `json:"url"`
	Text      *string `json:"text"`
	Points    *int    `json:"points"`
	CreatedAt string  `json:"created_at"`
	Children  []Item  `json:"children"`
}

// Search asks /search (byDate false) or /search_by_date for stories, newer than since (unix
// seconds, 0 for any time).
func (c *Client) Search(ctx context.Context, q string, byDate bool, since int64, limit int) ([]Hit, error) {
	v := url.Values{"query": {q}, "tags": {"story"}, "hitsPerPage": {strconv.Itoa(limit)}}
	if since > 0 {
		v.Set("numericFilters", "created_at_i>"+strconv.FormatInt(since, 10))
	}
	path := "/search"
	if byDate {
		path = "/search_by_date"
	}
	var a struct {
		Hits []Hit `json:"hits"`
	}
	if err := c.h.GetJSON(ctx, path, v, &a); err != nil {
		return nil, err
	}
	return a.Hits, nil
}

// Item is /items/{id}.
func (c *Client) Item(ctx context.Context, id int64) (*Item, error) {
	var it Item
	if err := c.h.GetJSON(ctx, "/items/"+strconv.FormatInt(id, 10), nil, &it); err != nil {
		return nil, err
	}
	return &it, nil
}
