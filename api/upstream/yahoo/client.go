// Package yahoo is the connector of Yahoo Finance's chart endpoint (unofficial, keyless): a
// stock's last price and the trading session it belongs to.
package yahoo

import (
	"context"
	"fmt"
	"net/url"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "yahoo-finance"

// Client calls the endpoint through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the endpoint needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

type period struct {
	Start wire.Int `json:"start"`
	End   wire.Int `json:"end"`
}

// Quote is what the chart's meta says of a stock.
type Quote struct {
	Symbol             string     `json:"symbol"`
	Currency           string     `json:"currency"`
	RegularMarketPrice wire.Float `json:"regularMarketPrice"`
	RegularMarketTime  wire.Int   `json:"regularMarketTime"`
	ChartPreviousClose wire.Float `json:"chartPreviousClose"`
	TradingPeriod      struct {
		Pre     period `json:"pre"`
		Regular period `json:"regular"`
		Post    period `json:"post"`
	} `json:"currentTradingPeriod"`
	// Last is the last 1-minute close of the day, pre and post sessions included, and LastAt
	// its time (Unix seconds); unset when the chart has no point.
	Last   wire.Float
	LastAt int64
}

// Session names the session of a Unix time: pre, regular, post or closed.
func (q Quote) Session(t int64) string {
	in := func(p period) bool { return p.Start.Valid && t >= p.Start.V && t < p.End.V }
	switch {
	case in(q.TradingPeriod.Regular):
		return "regular"
	case in(q.TradingPeriod.Pre):
		return "pre"
	case in(q.TradingPeriod.Post):
		return "post"
	}
	return "closed"
}

// Chart asks today's 1-minute chart of symbol, pre and post sessions included.
func (c *Client) Chart(ctx context.Context, symbol string) (*Quote, error) {
	var out struct {
		Chart struct {
			Result []struct {
				Meta       Quote      `json:"meta"`
				Timestamp  []wire.Int `json:"timestamp"`
				Indicators struct {
					Quote []struct {
						Close []wire.Float `json:"close"`
					} `json:"quote"`
				} `json:"indicators"`
			} `json:"result"`
			Error *struct {
				Code        string `json:"code"`
				Description string `json:"description"`
			} `json:"error"`
		} `json:"chart"`
	}
	path := "/v8/finance/chart/" + url.PathEscape(symbol)
	q := url.Values{"interval": {"1m"}, "range": {"1d"}, "includePrePost": {"true"}}
	if err := c.h.GetJSON(ctx, path, q, &out); err != nil {
		return nil, err
	}
	if out.Chart.Error != nil || len(out.Chart.Result) == 0 {
		return nil, &upstream.Error{Upstream: Name, Op: "GET " + path, Status: 404, Err: fmt.Errorf("no chart for %s", symbol)}
	}
	r := out.Chart.Result[0]
	quote := r.Meta
	if len(r.Indicators.Quote) > 0 {
		closes := r.Indicators.Quote[0].Close
		for i := min(len(closes), len(r.Timestamp)) - 1; i >= 0; i-- {
			if closes[i].Valid {
				quote.Last, quote.LastAt = closes[i], r.Timestamp[i].V
				break
			}
		}
	}
	return &quote, nil
}
