// Package hyperliquid is the connector of Hyperliquid's public info endpoint (POST /info with
// a JSON body naming the question): perpetual metadata with each asset's live context (mark
// and oracle prices, hourly funding, open interest, day volume). Keyless; the endpoint weighs
// metaAndAssetCtxs 20 of 1,200 per minute and IP, so the registry allows well under one a second.
package hyperliquid

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "hyperliquid"

// Client calls the info endpoint through the process-wide httpc client.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready is nil: the endpoint needs no key.
func (c *Client) Ready() error { return c.h.Ready() }

// Asset is one perpetual: its metadata and its context, joined by index as the API pairs them.
type Asset struct {
	Name         string // "BTC", or "xyz:TSLA" on a builder-deployed dex
	SzDecimals   int64
	MaxLeverage  int64
	IsDelisted   bool
	MarkPx       wire.Float
	OraclePx     wire.Float
	MidPx        wire.Float
	Funding      wire.Float // per hour, as a fraction
	Premium      wire.Float
	OpenInterest wire.Float
	DayNtlVlm    wire.Float
	PrevDayPx    wire.Float
}

type universeRow struct {
	Name        string   `json:"name"`
	SzDecimals  wire.Int `json:"szDecimals"`
	MaxLeverage wire.Int `json:"maxLeverage"`
	IsDelisted  bool     `json:"isDelisted"`
}

type assetCtx struct {
	MarkPx       wire.Float `json:"markPx"`
	OraclePx     wire.Float `json:"oraclePx"`
	MidPx        wire.Float `json:"midPx"`
	Funding      wire.Float `json:"funding"`
	Premium      wire.Float `json:"premium"`
	OpenInterest wire.Float `json:"openInterest"`
	DayNtlVlm    wire.Float `json:"dayNtlVlm"`
	PrevDayPx    wire.Float `json:"prevDayPx"`
}

// Request is the body of a metaAndAssetCtxs question; Dex "" is the main (crypto) dex.
type Request struct {
	Type string `json:"type"`
	Dex  string `json:"dex,omitempty"`
}

// MetaAndAssetCtxs asks every perpetual of dex with its live context.
func (c *Client) MetaAndAssetCtxs(ctx context.Context, dex string) ([]Asset, error) {
	const op = "POST /info metaAndAssetCtxs"
	var raw []json.RawMessage
	if err := c.h.PostJSON(ctx, "/info", Request{Type: "metaAndAssetCtxs", Dex: dex}, &raw); err != nil {
		return nil, err
	}
	if len(raw) != 2 {
		return nil, upstream.BadAnswer(Name, op, 200, "", fmt.Errorf("%d elements, want [meta, assetCtxs]", len(raw)))
	}
	var meta struct {
		Universe []universeRow `json:"universe"`
	}
	if err := json.Unmarshal(raw[0], &meta); err != nil {
		return nil, upstream.BadAnswer(Name, op, 200, "0."+httpc.FieldOf(err), err)
	}
	var ctxs []assetCtx
	if err := json.Unmarshal(raw[1], &ctxs); err != nil {
		return nil, upstream.BadAnswer(Name, op, 200, "1."+httpc.FieldOf(err), err)
	}
	if len(ctxs) != len(meta.Universe) {
		return nil, upstream.BadAnswer(Name, op, 200, "1", fmt.Errorf("%d contexts for %d assets", len(ctxs), len(meta.Universe)))
	}
	out := make([]Asset, len(ctxs))
	for i, u := range meta.Universe {
		x := ctxs[i]
		out[i] = Asset{Name: u.Name, SzDecimals: u.SzDecimals.V, MaxLeverage: u.MaxLeverage.V, IsDelisted: u.IsDelisted,
			MarkPx: x.MarkPx, OraclePx: x.OraclePx, MidPx: x.MidPx, Funding: x.Funding, Premium: x.Premium,
			OpenInterest: x.OpenInterest, DayNtlVlm: x.DayNtlVlm, PrevDayPx: x.PrevDayPx}
	}
	return out, nil
}

// Venue funding names of predictedFundings: Binance and Bybit perpetuals as Hyperliquid
// reports them, and its own.
const (
	VenueBinance     = "BinPerp"
	VenueBybit       = "BybitPerp"
	VenueHyperliquid = "HlPerp"
)

// VenueFunding is one venue's predicted funding of a coin.
type VenueFunding struct {
	FundingRate     wire.Float `json:"fundingRate"`     // per interval, as a fraction
	NextFundingTime wire.Int   `json:"nextFundingTime"` // ms
	// FundingIntervalHours is absent from some answers (the documented example has none).
	FundingIntervalHours wire.Int `json:"fundingIntervalHours"`
}

// PredictedFundings asks the predicted funding of every main-dex coin on Binance, Bybit and
// Hyperliquid: coin → venue → funding. A venue that does not list a coin is absent from it.
func (c *Client) PredictedFundings(ctx context.Context) (map[string]map[string]VenueFunding, error) {
	const op = "POST /info predictedFundings"
	var raw [][2]json.RawMessage
	if err := c.h.PostJSON(ctx, "/info", Request{Type: "predictedFundings"}, &raw); err != nil {
		return nil, err
	}
	out := make(map[string]map[string]VenueFunding, len(raw))
	for i, row := range raw {
		var coin string
		if err := json.Unmarshal(row[0], &coin); err != nil {
			return nil, upstream.BadAnswer(Name, op, 200, fmt.Sprintf("%d.0", i), err)
		}
		var venues [][2]json.RawMessage
		if err := json.Unmarshal(row[1], &venues); err != nil {
			return nil, upstream.BadAnswer(Name, op, 200, fmt.Sprintf("%d.1", i), err)
		}
		out[coin] = map[string]VenueFunding{}
		for j, v := range venues {
			var name string
			var f *VenueFunding // null when the venue does not list the coin
			if err := json.Unmarshal(v[0], &name); err != nil {
				return nil, upstream.BadAnswer(Name, op, 200, fmt.Sprintf("%d.1.%d.0", i, j), err)
			}
			if err := json.Unmarshal(v[1], &f); err != nil {
				return nil, upstream.BadAnswer(Name, op, 200, fmt.Sprintf("%d.1.%d.1", i, j), err)
			}
			if f != nil && f.FundingRate.Valid {
				out[coin][name] = *f
			}
		}
	}
	return out, nil
}
