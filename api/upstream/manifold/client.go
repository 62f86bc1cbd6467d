// Package manifold is the connector of Manifold's public API (keyless reads). Manifold trades
// play money (mana): its volumes are not dollars.
package manifold

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "manifold"

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: reads need no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Market is one market of /search-markets (the fields read); times are Unix milliseconds.
type Market struct {
	ID             string     `json:"id"`
	Question       string     `json:"question"`
	URL            string     `json:"url"`
	Probability    wire.Float `json:"probability"`
	Volume24Hours  wire.Float `json:"volume24Hours"`
	TotalLiquidity wire.Float `json:"totalLiquidity"`
	CloseTime      wire.Int   `json:"closeTime"`
	IsResolved     bool       `json:"isResolved"`
	OutcomeType    string     `json:"outcomeType"`
}

// Search lists open binary markets matching term ("" for all), the most traded over 24 h first.
func (c *Client) Search(ctx context.Context, term string, limit int) ([]Market, error) {
	q := url.Values{"term": {term}, "sort": {"24-hour-vol"}, "filter": {"open"}, "contractType": {"BINARY"}, "limit": {strconv.Itoa(limit)}}
	var out []Market
	if err := c.h.GetJSON(ctx, "/search-markets", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}
