// Package coingecko is the connector of the CoinGecko public API v3: simple prices, the global
// market figures, coin market rows and price charts by coin id or by token contract. It works
// keyless (a shared per-IP limit); a Demo key (upstream.override.coingecko.key) goes in the
// x-cg-demo-api-key header on the same host.
package coingecko

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "coingecko"

// Client calls CoinGecko through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the keyless tier needs nothing.
func (c *Client) Ready() error { return c.h.Ready() }

// Quotes are /simple/price: coin id → field ("usd", "usd_24h_change", "last_updated_at") →
// value. CoinGecko leaves unknown ids out of the answer rather than failing.
type Quotes map[string]map[string]wire.Float

// SimplePrice asks the prices of ids in each vs currency, with the 24 h change and the time of
// the last update, at full precision.
func (c *Client) SimplePrice(ctx context.Context, ids, vs []string) (Quotes, error) {
	q := url.Values{
		"ids":                     {strings.Join(ids, ",")},
		"vs_currencies":           {strings.Join(vs, ",")},
		"include_24hr_change":     {"true"},
		"include_last_updated_at": {"true"},
		"precision":               {"full"},
	}
	var out Quotes
	if err := c.h.GetJSON(ctx, "/simple/price", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Global is /global's data object.
type Global struct {
	ActiveCryptocurrencies wire.Int              `json:"active_cryptocurrencies"`
	Markets                wire.Int              `json:"markets"`
	TotalMarketCap         map[string]wire.Float `json:"total_market_cap"`
	TotalVolume            map[string]wire.Float `json:"total_volume"`
	MarketCapPercentage    map[string]wire.Float `json:"market_cap_percentage"`
	MarketCapChange24hUSD  wire.Float            `json:"market_cap_change_percentage_24h_usd"`
	VolumeChange24hUSD     wire.Float            `json:"volume_change_percentage_24h_usd"`
	UpdatedAt              wire.Int              `json:"updated_at"`
}

// GlobalData asks the global market figures.
func (c *Client) GlobalData(ctx context.Context) (*Global, error) {
	var out struct {
		Data Global `json:"data"`
	}
	if err := c.h.GetJSON(ctx, "/global", nil, &out); err != nil {
		return nil, err
	}
	return &out.Data, nil
}

// Market is one row of /coins/markets (the fields read).
type Market struct {
	ID                 string     `json:"id"`
	Symbol             string     `json:"symbol"`
	Name               string     `json:"name"`
	CurrentPrice       wire.Float `json:"current_price"`
	MarketCap          wire.Float `json:"market_cap"`
	ATH                wire.Float `json:"ath"`
	ATHChangePercent   wire.Float `json:"ath_change_percentage"`
	ATHDate            string     `json:"ath_date"`
	LastUpdated        string     `json:"last_updated"`
	PriceChange24hPct  wire.Float `json:"price_change_percentage_24h"`
	TotalVolume        wire.Float `json:"total_volume"`
	CirculatingSupply  wire.Float `json:"circulating_supply"`
	MarketCapRank      wire.Int   `json:"market_cap_rank"`
	MarketCapChange24h wire.Float `json:"market_cap_change_percentage_24h"`
}

// Markets asks the market rows of ids in USD.
func (c *Client) Markets(ctx context.Context, ids []string) ([]Market, error) {
	q := url.Values{"vs_currency": {"usd"}, "ids": {strings.Join(ids, ",")}}
	var out []Market
	if err := c.h.GetJSON(ctx, "/coins/markets", q, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// Coin is what a chart is asked about: a CoinGecko coin id, or a token contract on an asset
// platform (Platform set).
type Coin struct {
	ID       string
	Platform string
	Address  string
}

func (c Coin) path() string {
	if c.Platform != "" {
		return "/coins/" + url.PathEscape(c.Platform) + "/contract/" + url.PathEscape(c.Address)
	}
	return "/coins/" + url.PathEscape(c.ID)
}

// Point is one [milliseconds, value] pair of a chart.
type Point struct {
	MS    int64
	Value float64
}

// Chart is the answer of the market_chart paths; only prices are read.
type Chart struct {
	Prices []Point
}

type rawChart struct {
	Prices [][2]wire.Float `json:"prices"`
}

func (r rawChart) chart() *Chart {
	out := &Chart{Prices: make([]Point, 0, len(r.Prices))}
	for _, p := range r.Prices {
		if p[0].Valid && p[1].Valid {
			out.Prices = append(out.Prices, Point{MS: int64(p[0].V), Value: p[1].V})
		}
	}
	return out
}

// MarketChart asks days of USD prices; interval "daily" forces one point a day, "" lets
// CoinGecko choose (5 minutes for 1 day, hourly up to 90 days, daily beyond).
func (c *Client) MarketChart(ctx context.Context, coin Coin, days int, interval string) (*Chart, error) {
	q := url.Values{"vs_currency": {"usd"}, "days": {strconv.Itoa(days)}}
	if interval != "" {
		q.Set("interval", interval)
	}
	var raw rawChart
	if err := c.h.GetJSON(ctx, coin.path()+"/market_chart", q, &raw); err != nil {
		return nil, err
	}
	return raw.chart(), nil
}

// MarketChartRange asks the USD prices between two Unix times (seconds).
func (c *Client) MarketChartRange(ctx context.Context, coin Coin, from, to int64) (*Chart, error) {
	q := url.Values{"vs_currency": {"usd"}, "from": {strconv.FormatInt(from, 10)}, "to": {strconv.FormatInt(to, 10)}}
	var raw rawChart
	if err := c.h.GetJSON(ctx, coin.path()+"/market_chart/range", q, &raw); err != nil {
		return nil, err
	}
	return raw.chart(), nil
}
