// Package jupiter is the connector of Jupiter's Price API v3 (keyless host lite-api.jup.ag):
// USD prices of Solana tokens by mint, up to 50 a request.
package jupiter

import (
	"context"
	"net/url"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "jupiter"

// MaxIDs is how many mints one request may name.
const MaxIDs = 50

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the keyless host needs nothing.
func (c *Client) Ready() error { return c.h.Ready() }

// Price is one mint's entry; a mint Jupiter cannot price is left out of the answer.
type Price struct {
	USDPrice       wire.Float `json:"usdPrice"`
	BlockID        wire.Int   `json:"blockId"`
	Decimals       wire.Int   `json:"decimals"`
	PriceChange24h wire.Float `json:"priceChange24h"`
}

// Prices asks the USD price of mints (at most MaxIDs).
func (c *Client) Prices(ctx context.Context, mints []string) (map[string]Price, error) {
	out := map[string]Price{}
	if err := c.h.GetJSON(ctx, "/price/v3", url.Values{"ids": {strings.Join(mints, ",")}}, &out); err != nil {
		return nil, err
	}
	return out, nil
}
