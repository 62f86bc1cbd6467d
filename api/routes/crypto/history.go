package crypto

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/coingecko"
)

// maxPoints bounds a history; longer series are thinned evenly, first and last points kept.
const maxPoints = 500

// platforms maps the chain names the route accepts to CoinGecko's asset platform ids.
var platforms = map[string]string{
	"base": "base", "ethereum": "ethereum", "arbitrum": "arbitrum-one", "optimism": "optimistic-ethereum",
	"polygon": "polygon-pos", "bsc": "binance-smart-chain", "avalanche": "avalanche",
}

// PricePoint is one point of a history.
type PricePoint struct {
	T        string  `json:"t"` // RFC 3339, UTC
	PriceUSD float64 `json:"price_usd"`
}

// HistoryAnswer is /v1/token/price-history.
type HistoryAnswer struct {
	Coin       string       `json:"coin"`
	Symbol     *string      `json:"symbol"` // from CoinGecko's market row; null for a contract
	Mode       string       `json:"mode"`   // "range" (days) or "at" (one date)
	Days       *int64       `json:"days"`   // null in mode "at"
	At         string       `json:"at,omitempty"`
	Period     string       `json:"period"` // the sampling CoinGecko answered in
	ChangePct  *float64     `json:"change_pct"`
	HighUSD    *float64     `json:"high_usd"`
	LowUSD     *float64     `json:"low_usd"`
	PriceUSD   *float64     `json:"price_usd,omitempty"` // mode "at": the first price of that day (UTC)
	Points     int          `json:"points"`
	Downsample *Downsample  `json:"downsampled,omitempty"`
	Prices     []PricePoint `json:"prices"`
	Source     string       `json:"source"`
}

// Downsample says a series was thinned to fit maxPoints.
type Downsample struct {
	From int `json:"from_points"`
	To   int `json:"to_points"`
}

func parseCoin(ref string) coingecko.Coin {
	chain, addr, ok := strings.Cut(ref, ":")
	if !ok {
		return coingecko.Coin{ID: ref}
	}
	return coingecko.Coin{Platform: platforms[chain], Address: strings.ToLower(addr)}
}

func (r *Routes) priceHistory(ctx context.Context, req *catalog.Request) (any, error) {
	ref := req.Args.Str("coin")
	coin := parseCoin(ref)
	out := HistoryAnswer{Coin: ref, Source: "CoinGecko market_chart"}
	var (
		chart *coingecko.Chart
		err   error
	)
	if at := req.Args.Str("at"); at != "" {
		// The catalog's past_year_date format has already refused a future date or one older
		// than CoinGecko's public year of history, before any 402.
		day, perr := time.Parse(time.DateOnly, at)
		if perr != nil {
			return nil, apierr.BadParam("at", "at must be a date YYYY-MM-DD")
		}
		out.Mode, out.At, out.Period = "at", at, "5-minute to hourly (CoinGecko's for a one-day range)"
		chart, err = r.gecko.MarketChartRange(ctx, coin, day.Unix(), day.Add(24*time.Hour).Unix())
		if err == nil && len(chart.Prices) > 0 {
			p := chart.Prices[0].Value
			out.PriceUSD = &p
		}
	} else {
		days := req.Args.Int("days")
		period := req.Args.Str("period")
		interval := ""
		switch {
		case period == "daily":
			interval, out.Period = "daily", "daily"
		case days == 1:
			out.Period = "5-minute"
		case days <= 90:
			out.Period = "hourly"
		default:
			// CoinGecko's public API answers daily beyond 90 days, hourly asked or not.
			out.Period = "daily"
		}
		out.Mode, out.Days = "range", &days
		chart, err = r.gecko.MarketChart(ctx, coin, int(days), interval)
	}
	if err != nil {
		if upstream.IsNotFound(err) {
			return nil, apierr.NotFound("CoinGecko has no coin %s", ref)
		}
		return nil, err
	}
	if len(chart.Prices) == 0 {
		return nil, apierr.NotFound("CoinGecko has no price for %s in that period", ref)
	}
	if coin.ID != "" {
		// The symbol is a nicety: a failure here leaves it null rather than failing the call.
		if rows, err := r.gecko.Markets(ctx, []string{coin.ID}); err == nil {
			for _, row := range rows {
				if row.ID == coin.ID {
					s := strings.ToUpper(row.Symbol)
					out.Symbol = &s
				}
			}
		}
	}
	summarise(&out, chart.Prices)
	return out, nil
}

// summarise fills change, high, low and the (thinned) points from the full series.
func summarise(out *HistoryAnswer, pts []coingecko.Point) {
	hi, lo := math.Inf(-1), math.Inf(1)
	for _, p := range pts {
		hi, lo = max(hi, p.Value), min(lo, p.Value)
	}
	out.HighUSD, out.LowUSD = &hi, &lo
	if first := pts[0].Value; first != 0 {
		c := (pts[len(pts)-1].Value - first) / first * 100
		out.ChangePct = &c
	}
	kept := thin(pts, maxPoints)
	if len(kept) < len(pts) {
		out.Downsample = &Downsample{From: len(pts), To: len(kept)}
	}
	out.Prices = make([]PricePoint, len(kept))
	for i, p := range kept {
		out.Prices[i] = PricePoint{T: time.UnixMilli(p.MS).UTC().Format(time.RFC3339), PriceUSD: p.Value}
	}
	out.Points = len(kept)
}

// thin keeps at most n points evenly spread over pts, the first and the last among them.
func thin(pts []coingecko.Point, n int) []coingecko.Point {
	if len(pts) <= n {
		return pts
	}
	out := make([]coingecko.Point, n)
	for i := range n {
		out[i] = pts[i*(len(pts)-1)/(n-1)]
	}
	return out
}
