// Package binance is the connector of Binance's USDⓈ-M futures public market data
// (https://fapi.binance.com, keyless): a perpetual's mark and index prices with its last
// funding rate (GET /fapi/v1/premiumIndex), and the symbols whose funding cap, floor or
// interval Binance adjusted (GET /fapi/v1/fundingInfo). premiumIndex weighs 1 with a symbol,
// of 2,400 a minute per IP; fundingInfo shares 500 requests per 5 minutes per IP with the
// funding history. US addresses are refused with 451.
package binance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "binance-futures"

// DefaultIntervalHours is the funding interval of a symbol fundingInfo does not list
// (Binance's documentation: symbols absent from it keep the default 8 hours).
const DefaultIntervalHours = 8

// ErrUnknownSymbol means Binance lists no such USDⓈ-M contract (its error -1121).
var ErrUnknownSymbol = errors.New("binance lists no such symbol")

// Client calls the API through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the endpoints need no key.
func (c *Client) Ready() error { return c.h.Ready() }

// PremiumIndex is one contract's mark price and funding.
type PremiumIndex struct {
	Symbol          string     `json:"symbol"`
	MarkPrice       wire.Float `json:"markPrice"`
	IndexPrice      wire.Float `json:"indexPrice"`
	LastFundingRate wire.Float `json:"lastFundingRate"` // per interval, as a fraction
	InterestRate    wire.Float `json:"interestRate"`
	NextFundingTime wire.Int   `json:"nextFundingTime"` // ms
	Time            wire.Int   `json:"time"`            // ms
}

// FundingInfo is a symbol whose funding limits or interval differ from the defaults.
type FundingInfo struct {
	Symbol               string     `json:"symbol"`
	AdjustedCap          wire.Float `json:"adjustedFundingRateCap"`
	AdjustedFloor        wire.Float `json:"adjustedFundingRateFloor"`
	FundingIntervalHours wire.Int   `json:"fundingIntervalHours"`
}

// apiError is the body of Binance's refusals: {"code":-1121,"msg":"Invalid symbol."}.
type apiError struct {
	Code int    `json:"code"`
	Msg  string `json:"msg"`
}

// invalidSymbol is Binance's error code for a symbol it does not list.
const invalidSymbol = -1121

// Premium asks the premium index of one symbol ("BTCUSDT").
func (c *Client) Premium(ctx context.Context, symbol string) (PremiumIndex, error) {
	var out PremiumIndex
	err := c.h.GetJSON(ctx, "/fapi/v1/premiumIndex", url.Values{"symbol": {symbol}}, &out)
	if upstream.StatusOf(err) == http.StatusBadRequest {
		var e apiError
		if json.Unmarshal(upstream.BodyOf(err), &e) == nil && e.Code == invalidSymbol {
			return PremiumIndex{}, ErrUnknownSymbol
		}
	}
	if err != nil {
		return PremiumIndex{}, err
	}
	if out.Symbol == "" || !out.LastFundingRate.Valid {
		return PremiumIndex{}, upstream.BadAnswer(Name, "GET /fapi/v1/premiumIndex", http.StatusOK, "lastFundingRate", errors.New("no symbol or funding rate"))
	}
	return out, nil
}

// FundingInfos lists the symbols with adjusted funding limits or interval.
func (c *Client) FundingInfos(ctx context.Context) ([]FundingInfo, error) {
	var out []FundingInfo
	if err := c.h.GetJSON(ctx, "/fapi/v1/fundingInfo", nil, &out); err != nil {
		return nil, err
	}
	return out, nil
}
