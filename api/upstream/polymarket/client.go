// Package polymarket is the connector of Polymarket's Gamma API (keyless market metadata):
// active markets ordered by 24 h volume. Its outcomes and prices arrive as JSON-encoded text.
package polymarket

import (
	"context"
	"encoding/json"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "polymarket"

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the Gamma API needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Market is one market of GET /markets (the fields read).
type Market struct {
	ID            string     `json:"id"`
	Question      string     `json:"question"`
	Slug          string     `json:"slug"`
	EndDate       string     `json:"endDate"`
	Outcomes      string     `json:"outcomes"`      // JSON text: ["Yes","No"]
	OutcomePrices string     `json:"outcomePrices"` // JSON text: ["0.62","0.38"]
	Volume24hr    wire.Float `json:"volume24hr"`
	Liquidity     wire.Float `json:"liquidityNum"`
	Active        bool       `json:"active"`
	Closed        bool       `json:"closed"`
	Events        []struct {
		Slug  string `json:"slug"`
		Title string `json:"title"`
	} `json:"events"`
}

// Outcome is one outcome with its price (the market's probability of it).
type Outcome struct {
	Name  string
	Price float64
}

// Parsed decodes the JSON-encoded outcome names and prices; false when they do not pair up.
func (m Market) Parsed() ([]Outcome, bool) {
	var names []string
	var prices []wire.Float
	if json.Unmarshal([]byte(m.Outcomes), &names) != nil || json.Unmarshal([]byte(m.OutcomePrices), &prices) != nil || len(names) != len(prices) {
		return nil, false
	}
	out := make([]Outcome, len(names))
	for i := range names {
		out[i] = Outcome{Name: names[i], Price: prices[i].V}
	}
	return out, true
}

// Link is the market's public page: its event's, where Polymarket shows it.
func (m Market) Link() string {
	if len(m.Events) > 0 && m.Events[0].Slug != "" {
		return "https://polymarket.com/event/" + m.Events[0].Slug
	}
	return "https://polymarket.com/market/" + m.Slug
}

// TopByVolume lists up to limit active, open markets, the most traded over 24 h first.
func (c *Client) TopByVolume(ctx context.Context, limit int) ([]Market, error) {
	q := url.Values{"active": {"true"}, "closed": {"false"}, "order": {"volume24hr"}, "ascending": {"false"}, "limit": {strconv.Itoa(limit)}}
	var out []Market
	if err := c.h.GetJSON(ctx, "/markets", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}
