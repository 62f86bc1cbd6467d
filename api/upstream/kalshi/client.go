// Package kalshi is the connector of Kalshi's public market data (Trade API v2, keyless
// reads): open markets with their fixed-point dollar prices and contract volumes.
package kalshi

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "kalshi"

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: market data needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Market is one market of GET /markets. Prices are dollars per contract (a contract pays $1);
// volumes are contracts. The older integer-cent fields are read when the dollar ones are absent.
type Market struct {
	Ticker         string     `json:"ticker"`
	EventTicker    string     `json:"event_ticker"`
	MarketType     string     `json:"market_type"`
	Title          string     `json:"title"`
	YesSubTitle    string     `json:"yes_sub_title"`
	Status         string     `json:"status"`
	CloseTime      string     `json:"close_time"`
	YesBid         wire.Float `json:"yes_bid_dollars"`
	YesAsk         wire.Float `json:"yes_ask_dollars"`
	LastPrice      wire.Float `json:"last_price_dollars"`
	Liquidity      wire.Float `json:"liquidity_dollars"`
	Volume24h      wire.Float `json:"volume_24h_fp"`
	Volume         wire.Float `json:"volume_fp"`
	OpenInterest   wire.Float `json:"open_interest_fp"`
	YesBidCents    wire.Float `json:"yes_bid"`
	YesAskCents    wire.Float `json:"yes_ask"`
	LastPriceCents wire.Float `json:"last_price"`
	Volume24hOld   wire.Float `json:"volume_24h"`
}

// Normalise fills the dollar fields from the integer-cent ones of older answers.
func (m *Market) Normalise() {
	cents := func(dst *wire.Float, src wire.Float) {
		if !dst.Valid && src.Valid {
			*dst = wire.Float{V: src.V / 100, Valid: true}
		}
	}
	cents(&m.YesBid, m.YesBidCents)
	cents(&m.YesAsk, m.YesAskCents)
	cents(&m.LastPrice, m.LastPriceCents)
	if !m.Volume24h.Valid {
		m.Volume24h = m.Volume24hOld
	}
}

// OpenMarkets lists up to limit open markets (one page; Kalshi pages with a cursor).
func (c *Client) OpenMarkets(ctx context.Context, limit int) ([]Market, error) {
	var out struct {
		Cursor  string   `json:"cursor"`
		Markets []Market `json:"markets"`
	}
	q := url.Values{"status": {"open"}, "limit": {strconv.Itoa(limit)}}
	if err := c.h.GetJSON(ctx, "/markets", q, &out); err != nil {
		return nil, err
	}
	for i := range out.Markets {
		out.Markets[i].Normalise()
	}
	return out.Markets, nil
}
