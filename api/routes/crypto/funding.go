package crypto

import (
	"context"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
)

// Hyperliquid settles funding every hour and caps it at 4 % an hour (its documentation,
// "Funding"); the rate it publishes is the one for the coming hour.
const (
	hlIntervalHours = 1
	hlCapPctPerHour = 4.0
)

// FundingRate is one symbol's rate.
type FundingRate struct {
	Symbol         string  `json:"symbol"`
	FundingRatePct float64 `json:"funding_rate_pct"` // per interval, in percent
	AnnualizedPct  float64 `json:"annualized_pct"`   // rate × (24 / interval_hours) × 365
	Bias           string  `json:"bias"`             // longs_pay, shorts_pay or neutral
	IntervalHours  int     `json:"interval_hours"`
	NextFundingAt  string  `json:"next_funding_time"`
	Bounds         Bounds  `json:"bounds"`
	MarkPrice      float64 `json:"mark_price"`
	OraclePrice    float64 `json:"oracle_price"`
	OpenInterest   float64 `json:"open_interest"`
	DayVolumeUSD   float64 `json:"day_volume_usd"`
}

// Bounds are the venue's limits on one interval's rate, in percent.
type Bounds struct {
	MinPct float64 `json:"min_pct"`
	MaxPct float64 `json:"max_pct"`
}

// FundingAnswer is /v1/crypto/funding-rate.
type FundingAnswer struct {
	Exchange string        `json:"exchange"`
	Count    int           `json:"count"`
	Rates    []FundingRate `json:"rates"`
	NotFound []string      `json:"not_found"`
	AsOf     string        `json:"as_of"`
	Method   string        `json:"method"`
}

const fundingMethod = "Hyperliquid metaAndAssetCtxs (main perpetual dex): funding is the hourly rate for the coming hour; " +
	"annualized_pct = funding_rate_pct × (24 / interval_hours) × 365, without compounding; longs pay shorts when positive."

func (r *Routes) fundingRate(ctx context.Context, req *catalog.Request) (any, error) {
	assets, err := r.hl.MetaAndAssetCtxs(ctx, "")
	if err != nil {
		return nil, upstream.APIError(err)
	}
	now := r.now().UTC()
	next := now.Truncate(time.Hour).Add(time.Hour).Format(time.RFC3339)
	out := FundingAnswer{Exchange: "hyperliquid", Rates: []FundingRate{}, NotFound: []string{}, AsOf: now.Format(time.RFC3339), Method: fundingMethod}
	for _, sym := range dedupe(req.Args.List("symbols")) {
		found := false
		for _, a := range assets {
			if !strings.EqualFold(a.Name, sym) || a.IsDelisted || !a.Funding.Valid {
				continue
			}
			pct := a.Funding.V * 100
			bias := "neutral"
			switch {
			case pct > 0:
				bias = "longs_pay"
			case pct < 0:
				bias = "shorts_pay"
			}
			out.Rates = append(out.Rates, FundingRate{
				Symbol: a.Name, FundingRatePct: pct, AnnualizedPct: pct * 24 / hlIntervalHours * 365, Bias: bias,
				IntervalHours: hlIntervalHours, NextFundingAt: next, Bounds: Bounds{MinPct: -hlCapPctPerHour, MaxPct: hlCapPctPerHour},
				MarkPrice: a.MarkPx.V, OraclePrice: a.OraclePx.V, OpenInterest: a.OpenInterest.V, DayVolumeUSD: a.DayNtlVlm.V,
			})
			found = true
			break
		}
		if !found {
			out.NotFound = append(out.NotFound, sym)
		}
	}
	if len(out.Rates) == 0 {
		return nil, apierr.NotFound("Hyperliquid lists no perpetual for %s", strings.Join(out.NotFound, ", "))
	}
	out.Count = len(out.Rates)
	return out, nil
}
