package crypto

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/binance"
	"github.com/peage/appliance/api/upstream/bybit"
	"github.com/peage/appliance/api/upstream/hyperliquid"
	"github.com/peage/appliance/internal/fanout"
)

// Hyperliquid settles funding every hour and caps it at 4 % an hour (its documentation,
// "Funding"); the rate it publishes is the one for the coming hour.
const (
	hlIntervalHours = 1
	hlCapPctPerHour = 4.0
)

// FundingRate is one symbol's rate.
type FundingRate struct {
	Symbol         string  `json:"symbol"`           // the venue's own symbol: BTC on Hyperliquid, BTCUSDT on Binance and Bybit
	FundingRatePct float64 `json:"funding_rate_pct"` // per interval, in percent
	AnnualizedPct  float64 `json:"annualized_pct"`   // rate × (24 / interval_hours) × 365
	Bias           string  `json:"bias"`             // longs_pay, shorts_pay or neutral
	IntervalHours  int     `json:"interval_hours"`
	NextFundingAt  string  `json:"next_funding_time"`
	// Bounds is nil when the venue publishes none for the symbol (Binance lists caps and floors
	// only for the symbols whose limits it adjusted).
	Bounds *Bounds `json:"bounds"`
	// MarkPrice and OraclePrice (Hyperliquid's oracle; the index price on Binance and Bybit) are
	// null when the rate came through Hyperliquid's predictedFundings, which has no prices.
	MarkPrice   *float64 `json:"mark_price"`
	OraclePrice *float64 `json:"oracle_price"`
	// OpenInterest (contracts) and DayVolumeUSD are left out where the venue's answer has none.
	OpenInterest *float64 `json:"open_interest,omitempty"`
	DayVolumeUSD *float64 `json:"day_volume_usd,omitempty"`
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
	// Via is "hyperliquid" when the venue itself failed and its rates are those Hyperliquid
	// reports for it (predictedFundings); FallbackReason says why.
	Via            string `json:"via,omitempty"`
	FallbackReason string `json:"fallback_reason,omitempty"`
}

const annualised = "annualized_pct = funding_rate_pct × (24 / interval_hours) × 365, without compounding; longs pay shorts when positive."

// fundingMethods say, per venue, where each figure comes from.
var fundingMethods = map[string]string{
	"hyperliquid": "Hyperliquid metaAndAssetCtxs (main perpetual dex): funding is the hourly rate for the coming hour, capped at 4 % an hour; " + annualised,
	"binance": "Binance USDⓈ-M premiumIndex (lastFundingRate, mark and index price) per symbol, fundingInfo for the symbols whose interval, " +
		"cap or floor Binance adjusted (others: 8 hours, bounds not published, null); " + annualised,
	"bybit": "Bybit v5 linear tickers: fundingRate for the coming settlement, fundingIntervalHour, fundingCap as the bound both ways; " + annualised,
}

// predictedMethod is the method of rates read through Hyperliquid when the venue failed.
const predictedMethod = "The venue did not answer (see fallback_reason); its rates are those Hyperliquid's predictedFundings reports for it " +
	"(BinPerp, BybitPerp): the predicted rate of the coming settlement, interval_hours from the answer or the venue's default 8 hours, " +
	"no prices and no bounds; " + annualised

// venueRates is one venue's answer: rates found, symbols it does not list.
type venueRates struct {
	rates    []FundingRate
	notFound []string
	// via names the source that answered for the venue, "" when the venue did.
	via, fallbackReason string
}

func (r *Routes) fundingRate(ctx context.Context, req *catalog.Request) (any, error) {
	exchange := req.Args.Str("exchange")
	if exchange == "" {
		exchange = "hyperliquid"
	}
	now := r.now().UTC()
	var got venueRates
	var err error
	switch exchange {
	case "binance":
		symbols := venueSymbols(req.Args.List("symbols"))
		if got, err = r.binanceRates(ctx, symbols); err != nil {
			got, err = r.predictedRates(ctx, symbols, hyperliquid.VenueBinance, err)
		}
	case "bybit":
		symbols := venueSymbols(req.Args.List("symbols"))
		if got, err = r.bybitRates(ctx, symbols); err != nil {
			got, err = r.predictedRates(ctx, symbols, hyperliquid.VenueBybit, err)
		}
	default:
		got, err = r.hyperliquidRates(ctx, dedupe(req.Args.List("symbols")), now)
	}
	if err != nil {
		return nil, err
	}
	if len(got.rates) == 0 {
		return nil, apierr.NotFound("%s lists no perpetual for %s", exchange, strings.Join(got.notFound, ", "))
	}
	method := fundingMethods[exchange]
	if got.via != "" {
		method = predictedMethod
	}
	return FundingAnswer{Exchange: exchange, Count: len(got.rates), Rates: got.rates, NotFound: got.notFound,
		AsOf: now.Format(time.RFC3339), Method: method, Via: got.via, FallbackReason: got.fallbackReason}, nil
}

// predictedRates reads the rates of venue (BinPerp, BybitPerp) from Hyperliquid's
// predictedFundings, the geo-safe source when the venue itself failed with cause (Binance and
// Bybit refuse US addresses). If Hyperliquid fails too, or reports none of the symbols for the
// venue (it lists only its own coins, so that says nothing of what the venue lists), the
// venue's own failure is answered.
func (r *Routes) predictedRates(ctx context.Context, symbols []string, venue string, cause error) (venueRates, error) {
	preds, err := r.hl.PredictedFundings(ctx)
	if err != nil {
		return venueRates{}, cause
	}
	out := venueRates{rates: []FundingRate{}, notFound: []string{}, via: "hyperliquid", fallbackReason: apierr.From(cause).Error()}
	for _, s := range symbols {
		// Hyperliquid reports the venues' USDT perpetuals under its own coin name.
		f, ok := preds[hyperliquidCoin(s)][venue]
		if !ok || !strings.HasSuffix(s, "USDT") {
			out.notFound = append(out.notFound, s)
			continue
		}
		interval := 8
		if f.FundingIntervalHours.V > 0 {
			interval = int(f.FundingIntervalHours.V)
		}
		out.rates = append(out.rates, newFundingRate(s, f.FundingRate.V*100, interval, time.UnixMilli(f.NextFundingTime.V), nil, nil, nil))
	}
	if len(out.rates) == 0 {
		return venueRates{}, cause
	}
	return out, nil
}

// hyperliquidCoin is the coin under which Hyperliquid lists a Binance or Bybit USDT perpetual:
// the symbol without USDT, with the venues' "1000" prefix of contracts on a thousand tokens
// written as Hyperliquid writes it, "k" (1000PEPEUSDT is kPEPE).
func hyperliquidCoin(symbol string) string {
	coin := strings.TrimSuffix(symbol, "USDT")
	if rest, ok := strings.CutPrefix(coin, "1000"); ok && rest != "" && !strings.HasPrefix(rest, "0") {
		return "k" + rest
	}
	return coin
}

// newFundingRate builds one rate from the venue's figures; pct is per interval, in percent.
func newFundingRate(symbol string, pct float64, intervalHours int, next time.Time, bounds *Bounds, mark, oracle *float64) FundingRate {
	bias := "neutral"
	switch {
	case pct > 0:
		bias = "longs_pay"
	case pct < 0:
		bias = "shorts_pay"
	}
	return FundingRate{Symbol: symbol, FundingRatePct: pct, AnnualizedPct: pct * 24 / float64(intervalHours) * 365, Bias: bias,
		IntervalHours: intervalHours, NextFundingAt: next.UTC().Format(time.RFC3339), Bounds: bounds, MarkPrice: mark, OraclePrice: oracle}
}

func (r *Routes) hyperliquidRates(ctx context.Context, symbols []string, now time.Time) (venueRates, error) {
	assets, err := r.hl.MetaAndAssetCtxs(ctx, "")
	if err != nil {
		return venueRates{}, err
	}
	next := now.Truncate(time.Hour).Add(time.Hour)
	out := venueRates{rates: []FundingRate{}, notFound: []string{}}
	for _, sym := range symbols {
		found := false
		for _, a := range assets {
			if !strings.EqualFold(a.Name, sym) || a.IsDelisted || !a.Funding.Valid {
				continue
			}
			fr := newFundingRate(a.Name, a.Funding.V*100, hlIntervalHours, next, &Bounds{MinPct: -hlCapPctPerHour, MaxPct: hlCapPctPerHour},
				a.MarkPx.Ptr(), a.OraclePx.Ptr())
			fr.OpenInterest, fr.DayVolumeUSD = a.OpenInterest.Ptr(), a.DayNtlVlm.Ptr()
			out.rates = append(out.rates, fr)
			found = true
			break
		}
		if !found {
			out.notFound = append(out.notFound, sym)
		}
	}
	return out, nil
}

// venueSymbols names USDT-margined perpetuals as Binance and Bybit do: BTC is BTCUSDT; a
// symbol already ending in USDT or USDC is kept.
func venueSymbols(symbols []string) []string {
	out := make([]string, 0, len(symbols))
	for _, s := range symbols {
		s = strings.ToUpper(s)
		if !strings.HasSuffix(s, "USDT") && !strings.HasSuffix(s, "USDC") {
			s += "USDT"
		}
		out = append(out, s)
	}
	return dedupe(out)
}

// eachSymbol asks one venue about every symbol at once and keeps the answers in the asked
// order; a symbol the venue does not list (errUnknown) is not found, any other failure fails
// the question.
func eachSymbol(ctx context.Context, symbols []string, errUnknown error, ask func(context.Context, string) (FundingRate, error)) (venueRates, error) {
	rates := make([]FundingRate, len(symbols))
	fns := make([]func(context.Context) error, len(symbols))
	for i, s := range symbols {
		fns[i] = func(ctx context.Context) (err error) { rates[i], err = ask(ctx, s); return }
	}
	errs := fanout.Go(ctx, nil, fns...)
	out := venueRates{rates: []FundingRate{}, notFound: []string{}}
	for i, s := range symbols {
		switch {
		case errors.Is(errs[i], errUnknown):
			out.notFound = append(out.notFound, s)
		case errs[i] != nil:
			return venueRates{}, errs[i]
		default:
			out.rates = append(out.rates, rates[i])
		}
	}
	return out, nil
}

func (r *Routes) binanceRates(ctx context.Context, symbols []string) (venueRates, error) {
	adjusted, _, _, err := r.binanceAdjusted.Get(ctx)
	if err != nil {
		return venueRates{}, err
	}
	return eachSymbol(ctx, symbols, binance.ErrUnknownSymbol, func(ctx context.Context, s string) (FundingRate, error) {
		p, err := r.binance.Premium(ctx, s)
		if err != nil {
			return FundingRate{}, err
		}
		interval := binance.DefaultIntervalHours
		var bounds *Bounds
		if fi, ok := adjusted[p.Symbol]; ok {
			if fi.FundingIntervalHours.V > 0 {
				interval = int(fi.FundingIntervalHours.V)
			}
			if fi.AdjustedCap.Valid && fi.AdjustedFloor.Valid {
				bounds = &Bounds{MinPct: fi.AdjustedFloor.V * 100, MaxPct: fi.AdjustedCap.V * 100}
			}
		}
		return newFundingRate(p.Symbol, p.LastFundingRate.V*100, interval, time.UnixMilli(p.NextFundingTime.V), bounds,
			p.MarkPrice.Ptr(), p.IndexPrice.Ptr()), nil
	})
}

func (r *Routes) bybitRates(ctx context.Context, symbols []string) (venueRates, error) {
	return eachSymbol(ctx, symbols, bybit.ErrUnknownSymbol, func(ctx context.Context, s string) (FundingRate, error) {
		t, err := r.bybit.Linear(ctx, s)
		if err != nil {
			return FundingRate{}, err
		}
		if t.FundingIntervalHour.V <= 0 {
			return FundingRate{}, upstream.BadAnswer(bybit.Name, "GET /v5/market/tickers", 200, "result.list.fundingIntervalHour",
				fmt.Errorf("%s: no funding interval, the rate cannot be annualised", s))
		}
		var bounds *Bounds
		if t.FundingCap.Valid {
			bounds = &Bounds{MinPct: -t.FundingCap.V * 100, MaxPct: t.FundingCap.V * 100}
		}
		fr := newFundingRate(t.Symbol, t.FundingRate.V*100, int(t.FundingIntervalHour.V), time.UnixMilli(t.NextFundingTime.V), bounds,
			t.MarkPrice.Ptr(), t.IndexPrice.Ptr())
		fr.OpenInterest, fr.DayVolumeUSD = t.OpenInterest.Ptr(), t.Turnover24h.Ptr()
		return fr, nil
	})
}
