// Package crypto serves the market-data routes: /v1/crypto/price, /v1/crypto/market,
// /v1/token/price-history (CoinGecko, DefiLlama for the stablecoin supply),
// /v1/crypto/funding-rate (Hyperliquid, Binance or Bybit), /v1/markets/prediction (Polymarket, Kalshi, Manifold)
// /v1/crypto/news (four newsroom feeds) and /v1/token/verdict (GoPlus and honeypot.is, scored
// by the rules of verdict.go, kept under the caller's requestKey) and /v1/perps/stock-gaps
// (Hyperliquid's stock perps against Yahoo Finance and Jupiter's xStock prices). Every figure names its source; a source that
// fails is left out of sources_answered and named in sources_failed, and a route whose every
// source failed is a 502 that charges nothing.
package crypto

import (
	"context"
	"errors"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/binance"
	"github.com/peage/appliance/api/upstream/bybit"
	"github.com/peage/appliance/api/upstream/coingecko"
	"github.com/peage/appliance/api/upstream/defillama"
	"github.com/peage/appliance/api/upstream/goplus"
	"github.com/peage/appliance/api/upstream/honeypot"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/hyperliquid"
	"github.com/peage/appliance/api/upstream/jupiter"
	"github.com/peage/appliance/api/upstream/kalshi"
	"github.com/peage/appliance/api/upstream/manifold"
	"github.com/peage/appliance/api/upstream/polymarket"
	"github.com/peage/appliance/api/upstream/rss"
	"github.com/peage/appliance/api/upstream/yahoo"
	"github.com/peage/appliance/internal/fanout"
)

// Parts are the family's collaborators.
type Parts struct {
	// Pool is the process-wide client pool: every caller of an upstream shares its bucket.
	Pool *httpc.Pool
	Now  func() time.Time
	// Results keeps verdicts under their requestKey; nil serves verdicts without keeping them
	// (a requestKey then cannot replay one).
	Results Results
	// MarketMaxAge is how long a market overview is served before it is refreshed (5 minutes).
	MarketMaxAge time.Duration
}

// Routes holds the handlers.
type Routes struct {
	gecko    *coingecko.Client
	llama    *defillama.Client
	hl       *hyperliquid.Client
	binance  *binance.Client
	bybit    *bybit.Client
	poly     *polymarket.Client
	kalshi   *kalshi.Client
	mani     *manifold.Client
	feeds    map[string]*httpc.Client // registry name → client, one per newsroom
	goplus   *goplus.Client
	honeypot *honeypot.Client
	results  Results
	jup      *jupiter.Client
	yahoo    *yahoo.Client
	now      func() time.Time
	market   *snapshot[Market]
	// binanceAdjusted is Binance's fundingInfo by symbol: it changes when Binance adjusts a
	// contract, and its endpoint shares 500 requests per 5 minutes per IP with the funding
	// history, so it is fetched at most every binanceAdjustedTTL, not on every call.
	binanceAdjusted *snapshot[map[string]binance.FundingInfo]
	// marketMaxAge is the longest a market overview is served.
	marketMaxAge time.Duration
}

// With builds the family from the pool.
func With(d Parts) (*Routes, error) {
	if d.Now == nil {
		d.Now = time.Now
	}
	if d.MarketMaxAge <= 0 {
		d.MarketMaxAge = 5 * time.Minute
	}
	cg, err := d.Pool.Client(coingecko.Name)
	if err != nil {
		return nil, err
	}
	dl, err := d.Pool.Client(defillama.Name)
	if err != nil {
		return nil, err
	}
	hl, err := d.Pool.Client(hyperliquid.Name)
	if err != nil {
		return nil, err
	}
	clients := map[string]*httpc.Client{}
	for _, name := range []string{polymarket.Name, kalshi.Name, manifold.Name, goplus.Name, honeypot.Name, jupiter.Name, yahoo.Name, binance.Name, bybit.Name} {
		if clients[name], err = d.Pool.Client(name); err != nil {
			return nil, err
		}
	}
	feeds := map[string]*httpc.Client{}
	for _, f := range rss.Newsrooms {
		if feeds[f.Name], err = d.Pool.Client(f.Name); err != nil {
			return nil, err
		}
	}
	r := &Routes{feeds: feeds, goplus: goplus.New(clients[goplus.Name]), honeypot: honeypot.New(clients[honeypot.Name]), results: d.Results,
		binance: binance.New(clients[binance.Name]), bybit: bybit.New(clients[bybit.Name]),
		jup: jupiter.New(clients[jupiter.Name]), yahoo: yahoo.New(clients[yahoo.Name]),
		poly: polymarket.New(clients[polymarket.Name]), kalshi: kalshi.New(clients[kalshi.Name]), mani: manifold.New(clients[manifold.Name]),
		gecko: coingecko.New(cg), llama: defillama.New(dl), hl: hyperliquid.New(hl), now: d.Now, marketMaxAge: d.MarketMaxAge}
	maxAge := d.MarketMaxAge
	r.market = newSnapshotTTL(d.Now, func(ctx context.Context) (Market, time.Duration, error) {
		m, ttl, err := r.fetchMarket(ctx)
		return m, min(ttl, maxAge), err
	})
	r.binanceAdjusted = newSnapshotTTL(d.Now, func(ctx context.Context) (map[string]binance.FundingInfo, time.Duration, error) {
		infos, err := r.binance.FundingInfos(ctx)
		adjusted := map[string]binance.FundingInfo{}
		for _, fi := range infos {
			adjusted[fi.Symbol] = fi
		}
		return adjusted, binanceAdjustedTTL, err
	})
	return r, nil
}

// binanceAdjustedTTL is how long Binance's list of adjusted contracts is served.
const binanceAdjustedTTL = 10 * time.Minute

// Bind attaches the handlers.
func (r *Routes) Bind(c *catalog.Catalog) error {
	return errors.Join(
		c.Bind("crypto.price", r.price, r.gecko.Ready),
		c.Bind("crypto.market", r.marketOverview, r.gecko.Ready),
		c.Bind("token.price-history", r.priceHistory, r.gecko.Ready),
		c.Bind("crypto.funding-rate", r.fundingRate, r.hl.Ready),
		c.Bind("markets.prediction", r.prediction, r.poly.Ready),
		c.Bind("crypto.news", r.news, nil),
		c.Bind("token.verdict", r.verdict, nil),
		c.Bind("perps.stock-gaps", r.stockGaps, r.hl.Ready),
	)
}

// fan runs the family's parallel sources (internal/fanout); a source that fails is declared
// in sources_failed with why, in the one shape every answer reports its sources in.
func (r *Routes) fan() *fanout.Runner {
	now := r.now
	if now == nil {
		now = time.Now
	}
	return &fanout.Runner{Now: now, Describe: func(err error) string { return apierr.From(err).Message }}
}
