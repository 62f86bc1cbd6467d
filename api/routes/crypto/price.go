package crypto

import (
	"context"
	"slices"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
)

// PriceAnswer is /v1/crypto/price.
type PriceAnswer struct {
	// Prices maps each coin id found to its price in each vs currency ("usd") and the change
	// over 24 h in percent ("usd_24h_change"); last_updated_at is when CoinGecko last priced it.
	Prices   map[string]map[string]any `json:"prices"`
	NotFound []string                  `json:"not_found"`
	Source   string                    `json:"source"`
}

func (r *Routes) price(ctx context.Context, req *catalog.Request) (any, error) {
	ids, vs := dedupe(req.Args.List("ids")), dedupe(req.Args.List("vs"))
	quotes, err := r.gecko.SimplePrice(ctx, ids, vs)
	if err != nil {
		return nil, err
	}
	out := PriceAnswer{Prices: map[string]map[string]any{}, NotFound: []string{}, Source: "CoinGecko /simple/price"}
	for _, id := range ids {
		q, ok := quotes[id]
		if !ok {
			out.NotFound = append(out.NotFound, id)
			continue
		}
		row := map[string]any{}
		for _, v := range vs {
			row[v] = q[v].Ptr()
			row[v+"_24h_change"] = q[v+"_24h_change"].Ptr()
		}
		if t := q["last_updated_at"]; t.Valid {
			row["last_updated_at"] = time.Unix(int64(t.V), 0).UTC().Format(time.RFC3339)
		}
		out.Prices[id] = row
	}
	if len(out.Prices) == 0 {
		return nil, apierr.NotFound("CoinGecko knows none of these coin ids: %v (ids are CoinGecko's, e.g. bitcoin, usd-coin)", ids)
	}
	return out, nil
}

// dedupe keeps the first of each item, in order.
func dedupe(xs []string) []string {
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
