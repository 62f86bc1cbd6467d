// Package bybit is the connector of Bybit's v5 public market data (https://api.bybit.com,
// keyless): the ticker of a linear (USDT or USDC margined) perpetual, which carries its
// funding rate, the next funding time, the funding interval and the rate's cap. Bybit allows
// about 600 requests per 5 seconds per IP; US addresses are refused.
package bybit

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "bybit"

// ErrUnknownSymbol means Bybit lists no such linear contract.
var ErrUnknownSymbol = errors.New("bybit lists no such symbol")

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the endpoint needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Ticker is one linear contract's ticker, the funding part of it.
type Ticker struct {
	Symbol              string     `json:"symbol"`
	MarkPrice           wire.Float `json:"markPrice"`
	IndexPrice          wire.Float `json:"indexPrice"`
	FundingRate         wire.Float `json:"fundingRate"`         // per interval, as a fraction
	NextFundingTime     wire.Int   `json:"nextFundingTime"`     // ms, sent as text
	FundingIntervalHour wire.Int   `json:"fundingIntervalHour"` // absent from older answers
	FundingCap          wire.Float `json:"fundingCap"`          // the rate's bound, both ways
	OpenInterest        wire.Float `json:"openInterest"`
	Turnover24h         wire.Float `json:"turnover24h"`
}

type tickers struct {
	RetCode int    `json:"retCode"`
	RetMsg  string `json:"retMsg"`
	Result  struct {
		List []Ticker `json:"list"`
	} `json:"result"`
}

// paramsError is Bybit's retCode for a request parameter it refuses, a symbol it does not list
// among them ("params error: symbol invalid").
const paramsError = 10001

// Linear asks the ticker of one linear perpetual ("BTCUSDT").
func (c *Client) Linear(ctx context.Context, symbol string) (Ticker, error) {
	const op = "GET /v5/market/tickers"
	var out tickers
	if err := c.h.GetJSON(ctx, "/v5/market/tickers", url.Values{"category": {"linear"}, "symbol": {symbol}}, &out); err != nil {
		return Ticker{}, err
	}
	switch {
	case out.RetCode == paramsError:
		return Ticker{}, ErrUnknownSymbol
	case out.RetCode != 0:
		// Bybit names its refusals inside an HTTP 200.
		return Ticker{}, &upstream.Error{Upstream: Name, Op: op, Status: http.StatusOK, Reason: fmt.Sprintf("retCode %d", out.RetCode),
			Err: fmt.Errorf("retCode %d: %s", out.RetCode, out.RetMsg)}
	}
	for _, t := range out.Result.List {
		if t.Symbol == symbol {
			if !t.FundingRate.Valid {
				return Ticker{}, upstream.BadAnswer(Name, op, http.StatusOK, "result.list.fundingRate", errors.New("no funding rate"))
			}
			return t, nil
		}
	}
	return Ticker{}, ErrUnknownSymbol
}
