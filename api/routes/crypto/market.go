package crypto

import (
	"context"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/coingecko"
	"github.com/peage/appliance/api/upstream/defillama"
	"github.com/peage/appliance/internal/fanout"
)

// Source names of the market overview.
const (
	srcGlobal      = "coingecko:/global"
	srcBitcoin     = "coingecko:/coins/markets"
	srcStablecoins = "defillama:/stablecoins"
)

// partialMaxAge is how long an overview missing a source is served: a short while, so the
// missing figure comes back soon without every caller hammering a failing source.
const partialMaxAge = 30 * time.Second

// Market is the overview as fetched; /v1/crypto/market adds the per-call fields.
type Market struct {
	TotalMarketCapUSD   *float64 `json:"total_market_cap_usd"`
	MarketCapChange24h  *float64 `json:"market_cap_change_24h_pct"`
	Volume24hUSD        *float64 `json:"volume_24h_usd"`
	BitcoinDominancePct *float64 `json:"bitcoin_dominance_pct"`
	EthereumDominance   *float64 `json:"ethereum_dominance_pct"`
	StablecoinSupplyUSD *float64 `json:"stablecoin_supply_usd"`
	// PctFromATH is Bitcoin's price against its all-time high, in percent (negative below it).
	PctFromATH             *float64        `json:"pct_from_ath"`
	BitcoinATHUSD          *float64        `json:"bitcoin_ath_usd"`
	BitcoinATHDate         string          `json:"bitcoin_ath_date,omitempty"`
	ActiveCryptocurrencies int64           `json:"active_cryptocurrencies"`
	Markets                int64           `json:"markets"`
	SourceUpdatedAt        string          `json:"source_updated_at,omitempty"` // CoinGecko's updated_at
	SourcesAnswered        []string        `json:"sources_answered"`
	SourcesFailed          []fanout.Source `json:"sources_failed"`
}

// MarketAnswer is /v1/crypto/market.
type MarketAnswer struct {
	Market
	AsOf       string `json:"as_of"`       // when this overview was fetched
	AgeSeconds int64  `json:"age_seconds"` // how old it is now
	Cached     bool   `json:"cached"`      // served from the shared snapshot
	MaxAge     int64  `json:"max_age_seconds"`
	Method     string `json:"method"`
}

const marketMethod = "Total capitalisation, volume and dominance from CoinGecko /global; pct_from_ath is Bitcoin's " +
	"ath_change_percentage from CoinGecko /coins/markets; stablecoin_supply_usd sums the circulating supply of the " +
	"dollar-pegged stablecoins DefiLlama tracks. Refreshed at most every 5 minutes (30 s while a source is missing); " +
	"concurrent callers share one refresh."

func (r *Routes) marketOverview(ctx context.Context, _ *catalog.Request) (any, error) {
	m, at, cached, err := r.market.Get(ctx)
	if err != nil {
		return nil, err
	}
	return MarketAnswer{Market: m, AsOf: at.UTC().Format(time.RFC3339), AgeSeconds: int64(r.now().Sub(at).Seconds()),
		Cached: cached, MaxAge: int64(r.marketMaxAge.Seconds()), Method: marketMethod}, nil
}

// fetchMarket asks the three sources at once. CoinGecko /global carries the overview itself:
// without it the call fails (502, nothing charged); the other two are declared when missing.
func (r *Routes) fetchMarket(ctx context.Context) (Market, time.Duration, error) {
	var (
		global  *coingecko.Global
		btc     []coingecko.Market
		stables []defillama.Stablecoin
	)
	fan := r.fan()
	outcomes, errs := fan.Run(ctx,
		fanout.Call{Source: srcGlobal, Out: &global, Run: func(ctx context.Context) (err error) { global, err = r.gecko.GlobalData(ctx); return }},
		fanout.Call{Source: srcBitcoin, Out: &btc, Run: func(ctx context.Context) (err error) { btc, err = r.gecko.Markets(ctx, []string{"bitcoin"}); return }},
		fanout.Call{Source: srcStablecoins, Out: &stables, Run: func(ctx context.Context) (err error) { stables, err = r.llama.Stablecoins(ctx); return }})
	gErr, bErr, sErr := errs[0], errs[1], errs[2]
	if gErr != nil {
		return Market{}, 0, gErr
	}
	m := Market{
		TotalMarketCapUSD:      global.TotalMarketCap["usd"].Ptr(),
		MarketCapChange24h:     global.MarketCapChange24hUSD.Ptr(),
		Volume24hUSD:           global.TotalVolume["usd"].Ptr(),
		BitcoinDominancePct:    global.MarketCapPercentage["btc"].Ptr(),
		EthereumDominance:      global.MarketCapPercentage["eth"].Ptr(),
		ActiveCryptocurrencies: global.ActiveCryptocurrencies.V,
		Markets:                global.Markets.V,
		SourcesAnswered:        []string{srcGlobal},
		SourcesFailed:          []fanout.Source{},
	}
	if global.UpdatedAt.Valid {
		m.SourceUpdatedAt = time.Unix(global.UpdatedAt.V, 0).UTC().Format(time.RFC3339)
	}
	i := -1
	for j, row := range btc {
		if row.ID == "bitcoin" {
			i = j
		}
	}
	if bErr == nil && i >= 0 {
		m.PctFromATH, m.BitcoinATHUSD, m.BitcoinATHDate = btc[i].ATHChangePercent.Ptr(), btc[i].ATH.Ptr(), btc[i].ATHDate
		m.SourcesAnswered = append(m.SourcesAnswered, srcBitcoin)
	} else if bErr != nil {
		m.SourcesFailed = append(m.SourcesFailed, outcomes[1])
	} else {
		m.SourcesFailed = append(m.SourcesFailed, fan.Missing(srcBitcoin, "CoinGecko listed no bitcoin market"))
	}
	if sErr == nil && len(stables) > 0 {
		v := defillama.USDSupply(stables)
		m.StablecoinSupplyUSD = &v
		m.SourcesAnswered = append(m.SourcesAnswered, srcStablecoins)
	} else if sErr != nil {
		m.SourcesFailed = append(m.SourcesFailed, outcomes[2])
	} else {
		m.SourcesFailed = append(m.SourcesFailed, fan.Missing(srcStablecoins, "DefiLlama listed no stablecoin"))
	}
	if len(m.SourcesFailed) > 0 {
		return m, partialMaxAge, nil
	}
	return m, 5 * time.Minute, nil
}
