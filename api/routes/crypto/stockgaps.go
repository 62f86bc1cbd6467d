package crypto

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/hyperliquid"
	"github.com/peage/appliance/api/upstream/jupiter"
	"github.com/peage/appliance/api/upstream/yahoo"
	"github.com/peage/appliance/internal/fanout"
)

// stockDex is the Hyperliquid builder-deployed dex of stock perpetuals (trade.xyz).
const stockDex = "xyz"

// xStockMints are the Solana mints of the xStocks (Backed Finance) the research lists, by
// stock ticker; the issuer's list is the authority and grows.
var xStockMints = map[string]string{
	"TSLA": "XsDoVfqeBukxuZHWhdvWHBhgEHjGNst4MLodqsJHzoB", "NVDA": "Xsc9qvGR1efVDFGLrVsmkzv3qi45LTBjeUKSPmx9qEh",
	"AAPL": "XsbEhLAtcf6HdfpFZ5xEMdqW8nfAvcsP5bdudRLJzJp", "SPY": "XsoCS1TfEyfFhfvj8EtZ528L3CaKBDBRqRapnBbDF2W",
	"QQQ": "Xs8S1uUs1zvS2p7iwtsG3b6fkhpvmwz4GYU3gWAmWHZ", "COIN": "Xs7ZdzSHLU9ftNJsii5fCeJhoRWSC32SQGzGQtePxNu",
	"MSTR": "XsP7xzNPvEHS1m6qfanPUGjNmdnmsLKEoNAnHjdxxyZ", "HOOD": "XsvNBAYkrDRNhA7wPHQfX3ZUXZyZLdnCQDfHZ56bzpg",
	"GOOGL": "XsCPL9dNWBMvFtTmwcCA5v3xWPSMEBCszbQdiLLq6aN", "MSFT": "XspzcW1PRtgf6Wj92HCiZdjzKCyFekVD8P5Ueh3dRMX",
	"AMZN": "Xs3eBt7uRfJX8QUs4suhyU8p2M6DoUDrJyWBa8LLZsg", "META": "Xsa62P5mvPszXL1krVUnU5ar38bBSVcWAB6fmPCo5Zu",
	"CRCL": "XsueG8BtpquVJX9LVLLEGuViXUungE6WmK5YZ3p3bd1",
}

// Gap is one stock's row.
type Gap struct {
	Ticker             string   `json:"ticker"`
	PerpMark           float64  `json:"perp_mark"`
	PerpOracle         float64  `json:"perp_oracle"`
	MarkVsOracleBps    *float64 `json:"mark_vs_oracle_bps"`
	FundingAnnualized  *float64 `json:"funding_annualized_pct"`
	DayVolumeUSD       float64  `json:"day_volume_usd"`
	ReferencePrice     *float64 `json:"reference_stock_price"`
	ReferenceSession   string   `json:"reference_session,omitempty"` // regular, pre, post or closed
	PerpVsReferenceBps *float64 `json:"perp_vs_reference_bps"`
	XStockPrice        *float64 `json:"xstock_price"`
	PerpVsXStockBps    *float64 `json:"perp_vs_xstock_bps"`
	XStockVsRefBps     *float64 `json:"xstock_vs_reference_bps"`
}

// GapsAnswer is /v1/perps/stock-gaps.
type GapsAnswer struct {
	Dex             string          `json:"dex"`
	Count           int             `json:"count"`
	Gaps            []Gap           `json:"gaps"`
	NotFound        []string        `json:"not_found"`
	SourcesAnswered []string        `json:"sources_answered"`
	SourcesFailed   []fanout.Source `json:"sources_failed"`
	Method          string          `json:"method"`
}

const gapsMethod = "Perps: Hyperliquid dex xyz (metaAndAssetCtxs): mark, the deployer's oracle price, hourly funding " +
	"annualised (× 24 × 365). Reference: Yahoo Finance's last 1-minute price of the day, pre and post sessions " +
	"included, with the session it belongs to (gaps outside the regular session are expected). xStock: Jupiter's USD " +
	"price of the Backed Finance token, per token (a corporate-action multiplier is not applied). " +
	"bps(a, b) = (a / b − 1) × 10,000. Without tickers, the markets with the most 24 h volume first."

// Bps is the gap of a against b in basis points; nil when either is unknown or b is zero.
func Bps(a, b *float64) *float64 {
	if a == nil || b == nil || *b == 0 {
		return nil
	}
	v := (*a / *b - 1) * 10_000
	return &v
}

func (r *Routes) stockGaps(ctx context.Context, req *catalog.Request) (any, error) {
	assets, err := r.hl.MetaAndAssetCtxs(ctx, stockDex)
	if err != nil {
		return nil, err
	}
	byTicker := map[string]hyperliquid.Asset{}
	for _, a := range assets {
		if t, ok := strings.CutPrefix(a.Name, stockDex+":"); ok && !a.IsDelisted && a.MarkPx.Valid {
			byTicker[strings.ToUpper(t)] = a
		}
	}
	out := GapsAnswer{Dex: stockDex, Gaps: []Gap{}, NotFound: []string{}, SourcesAnswered: []string{hyperliquid.Name},
		SourcesFailed: []fanout.Source{}, Method: gapsMethod}
	var tickers []string
	if want := req.Args.List("tickers"); len(want) > 0 {
		for _, t := range dedupe(want) {
			if _, ok := byTicker[strings.ToUpper(t)]; ok {
				tickers = append(tickers, strings.ToUpper(t))
			} else {
				out.NotFound = append(out.NotFound, t)
			}
		}
		if len(tickers) == 0 {
			return nil, apierr.NotFound("Hyperliquid's dex %s lists no perpetual for %s", stockDex, strings.Join(out.NotFound, ", "))
		}
	} else {
		for t := range byTicker {
			tickers = append(tickers, t)
		}
		slices.SortFunc(tickers, func(a, b string) int {
			return cmp.Or(cmp.Compare(byTicker[b].DayNtlVlm.V, byTicker[a].DayNtlVlm.V), cmp.Compare(a, b))
		})
		tickers = tickers[:min(len(tickers), int(req.Args.Int("limit")))]
	}

	// xStocks in one request, reference prices one per stock, all at once.
	var mints []string
	for _, t := range tickers {
		if m, ok := xStockMints[t]; ok {
			mints = append(mints, m)
		}
	}
	var (
		prices map[string]jupiter.Price
		quotes = make([]*yahoo.Quote, len(tickers))
		refs   = map[string]*yahoo.Quote{}
	)
	calls := make([]fanout.Call, len(tickers), len(tickers)+1)
	for i, t := range tickers {
		calls[i] = fanout.Call{Source: yahoo.Name, Out: &quotes[i],
			Run: func(ctx context.Context) (err error) { quotes[i], err = r.yahoo.Chart(ctx, t); return }}
	}
	if len(mints) > 0 {
		calls = append(calls, fanout.Call{Source: jupiter.Name, Out: &prices,
			Run: func(ctx context.Context) (err error) { prices, err = r.jup.Prices(ctx, mints); return }})
	}
	outcomes, errs := r.fan().Run(ctx, calls...)
	if len(mints) > 0 {
		if j := len(tickers); errs[j] != nil {
			out.SourcesFailed = append(out.SourcesFailed, outcomes[j])
		} else {
			out.SourcesAnswered = append(out.SourcesAnswered, jupiter.Name)
		}
	}
	for i, t := range tickers {
		if errs[i] == nil {
			refs[t] = quotes[i]
		}
	}
	if len(refs) == 0 && len(tickers) > 0 {
		out.SourcesFailed = append(out.SourcesFailed, outcomes[0]) // every quote failed: Yahoo did
	} else {
		out.SourcesAnswered = append(out.SourcesAnswered, yahoo.Name)
	}
	for _, t := range tickers {
		a := byTicker[t]
		g := Gap{Ticker: t, PerpMark: a.MarkPx.V, PerpOracle: a.OraclePx.V, DayVolumeUSD: a.DayNtlVlm.V}
		mark := a.MarkPx.Ptr()
		g.MarkVsOracleBps = Bps(mark, a.OraclePx.Ptr())
		if a.Funding.Valid {
			apr := a.Funding.V * 100 * 24 * 365
			g.FundingAnnualized = &apr
		}
		if q := refs[t]; q != nil {
			switch {
			case q.Last.Valid:
				g.ReferencePrice, g.ReferenceSession = q.Last.Ptr(), q.Session(q.LastAt)
			case q.RegularMarketPrice.Valid:
				g.ReferencePrice, g.ReferenceSession = q.RegularMarketPrice.Ptr(), q.Session(q.RegularMarketTime.V)
			}
		}
		if p, ok := prices[xStockMints[t]]; ok && p.USDPrice.Valid {
			g.XStockPrice = p.USDPrice.Ptr()
		}
		g.PerpVsReferenceBps = Bps(mark, g.ReferencePrice)
		g.PerpVsXStockBps = Bps(mark, g.XStockPrice)
		g.XStockVsRefBps = Bps(g.XStockPrice, g.ReferencePrice)
		out.Gaps = append(out.Gaps, g)
	}
	out.Count = len(out.Gaps)
	return out, nil
}
