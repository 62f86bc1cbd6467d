// Package defillama is the connector of DefiLlama's stablecoin API (stablecoins.llama.fi,
// keyless): the circulating supply of every tracked stablecoin.
package defillama

import (
	"context"
	"net/url"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "defillama-stablecoins"

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the API needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Stablecoin is one pegged asset of /stablecoins.
type Stablecoin struct {
	ID          string                `json:"id"`
	Name        string                `json:"name"`
	Symbol      string                `json:"symbol"`
	PegType     string                `json:"pegType"`
	Circulating map[string]wire.Float `json:"circulating"` // peg type → amount in the peg's unit
	Price       wire.Float            `json:"price"`
}

// Stablecoins lists every tracked stablecoin with its circulating amount.
func (c *Client) Stablecoins(ctx context.Context) ([]Stablecoin, error) {
	var out struct {
		PeggedAssets []Stablecoin `json:"peggedAssets"`
	}
	if err := c.h.GetJSON(ctx, "/stablecoins", url.Values{"includePrices": {"true"}}, &out); err != nil {
		return nil, err
	}
	return out.PeggedAssets, nil
}

// USDSupply sums the circulating amount of the dollar-pegged stablecoins, in dollars.
func USDSupply(coins []Stablecoin) float64 {
	var sum float64
	for _, s := range coins {
		if v := s.Circulating["peggedUSD"]; s.PegType == "peggedUSD" && v.Valid {
			sum += v.V
		}
	}
	return sum
}
