package crypto

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/fanout"
)

// Prediction sources, as the sources parameter names them.
const (
	srcPolymarket = "polymarket"
	srcKalshi     = "kalshi"
	srcManifold   = "manifold"
)

// predictionSources is the order sources are asked and reported in.
var predictionSources = []string{srcPolymarket, srcKalshi, srcManifold}

// How many markets each source is asked for before the query filter and the merge.
const (
	polymarketPage = 100
	kalshiPage     = 200
)

// Outcome is one outcome and the probability the market gives it.
type Outcome struct {
	Outcome     string  `json:"outcome"`
	Probability float64 `json:"probability"`
}

// PredictionMarket is one market of the answer.
type PredictionMarket struct {
	Source   string    `json:"source"`
	Question string    `json:"question"`
	Outcomes []Outcome `json:"outcomes"`
	// Volume24hUSD is dollars traded over 24 h: Polymarket's volume24hr; Kalshi's contracts
	// × last price (a contract pays $1); null for Manifold, whose play money is in Volume24h.
	Volume24hUSD *float64 `json:"volume_24h_usd"`
	Volume24h    float64  `json:"volume_24h"`
	Currency     string   `json:"volume_currency"` // USD, contracts or MANA
	Liquidity    *float64 `json:"liquidity"`
	ClosesAt     string   `json:"closes_at,omitempty"`
	Link         string   `json:"link"`
}

// PredictionAnswer is /v1/markets/prediction.
type PredictionAnswer struct {
	Count           int                `json:"count"`
	SourcesAnswered []string           `json:"sources_answered"`
	SourcesFailed   []fanout.Source    `json:"sources_failed"`
	Markets         []PredictionMarket `json:"markets"`
	Method          string             `json:"method"`
}

const predictionMethod = "Polymarket: the 100 active markets with the most 24 h volume (Gamma); Kalshi: 200 open markets; " +
	"Manifold: open binary markets by 24 h volume, searched by q. Polymarket and Kalshi are filtered by q locally " +
	"(every word in the question). Sorted by volume_24h_usd, Manifold's play-money markets after, by their mana volume. " +
	"Kalshi's probability is the mid of the yes bid and ask, else the last price."

func (r *Routes) prediction(ctx context.Context, req *catalog.Request) (any, error) {
	q := strings.ToLower(strings.TrimSpace(req.Args.Str("q")))
	limit := int(req.Args.Int("limit"))
	want := dedupe(req.Args.List("sources"))
	if len(want) == 0 {
		want = predictionSources
	}
	var asked []string
	for _, src := range predictionSources {
		if slices.Contains(want, src) {
			asked = append(asked, src)
		}
	}
	got := make([][]PredictionMarket, len(asked))
	calls := make([]fanout.Call, len(asked))
	for i, src := range asked {
		calls[i] = fanout.Call{Source: src, Out: &got[i],
			Run: func(ctx context.Context) (err error) { got[i], err = r.askPrediction(ctx, src, q, limit); return }}
	}
	outcomes, errs := r.fan().Run(ctx, calls...)
	out := PredictionAnswer{SourcesAnswered: []string{}, SourcesFailed: []fanout.Source{}, Markets: []PredictionMarket{}, Method: predictionMethod}
	for i, src := range asked {
		if errs[i] != nil {
			out.SourcesFailed = append(out.SourcesFailed, outcomes[i])
			continue
		}
		out.SourcesAnswered = append(out.SourcesAnswered, src)
		out.Markets = append(out.Markets, got[i]...)
	}
	if len(out.SourcesAnswered) == 0 {
		return nil, apierr.Upstream("prediction-markets", nil, "no prediction market source answered (%s)", strings.Join(asked, ", "))
	}
	slices.SortStableFunc(out.Markets, func(a, b PredictionMarket) int {
		switch {
		case a.Volume24hUSD != nil && b.Volume24hUSD != nil:
			return cmp.Compare(*b.Volume24hUSD, *a.Volume24hUSD)
		case a.Volume24hUSD != nil:
			return -1
		case b.Volume24hUSD != nil:
			return 1
		}
		return cmp.Compare(b.Volume24h, a.Volume24h)
	})
	if len(out.Markets) > limit {
		out.Markets = out.Markets[:limit]
	}
	out.Count = len(out.Markets)
	return out, nil
}

// matches reports whether every word of q is in the question.
func matches(question, q string) bool {
	question = strings.ToLower(question)
	for _, w := range strings.Fields(q) {
		if !strings.Contains(question, w) {
			return false
		}
	}
	return true
}

func (r *Routes) askPrediction(ctx context.Context, src, q string, limit int) ([]PredictionMarket, error) {
	var out []PredictionMarket
	switch src {
	case srcPolymarket:
		ms, err := r.poly.TopByVolume(ctx, polymarketPage)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			oc, ok := m.Parsed()
			if !ok || m.Closed || !matches(m.Question, q) {
				continue
			}
			pm := PredictionMarket{Source: src, Question: m.Question, Volume24hUSD: m.Volume24hr.Ptr(), Volume24h: m.Volume24hr.V,
				Currency: "USD", Liquidity: m.Liquidity.Ptr(), ClosesAt: m.EndDate, Link: m.Link()}
			for _, o := range oc {
				pm.Outcomes = append(pm.Outcomes, Outcome{Outcome: o.Name, Probability: o.Price})
			}
			out = append(out, pm)
		}
	case srcKalshi:
		ms, err := r.kalshi.OpenMarkets(ctx, kalshiPage)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			question := m.Title
			if m.YesSubTitle != "" && !strings.Contains(strings.ToLower(m.Title), strings.ToLower(m.YesSubTitle)) {
				question += " — " + m.YesSubTitle
			}
			if m.MarketType != "" && m.MarketType != "binary" || !matches(question, q) {
				continue
			}
			p := m.LastPrice.V
			if m.YesBid.V > 0 && m.YesAsk.V > 0 {
				p = (m.YesBid.V + m.YesAsk.V) / 2
			}
			usd := m.Volume24h.V * m.LastPrice.V
			out = append(out, PredictionMarket{Source: src, Question: question,
				Outcomes:     []Outcome{{"Yes", p}, {"No", 1 - p}},
				Volume24hUSD: &usd, Volume24h: m.Volume24h.V, Currency: "contracts", Liquidity: m.Liquidity.Ptr(),
				ClosesAt: m.CloseTime, Link: "https://kalshi.com/markets/" + strings.ToLower(m.EventTicker)})
		}
	case srcManifold:
		ms, err := r.mani.Search(ctx, q, limit)
		if err != nil {
			return nil, err
		}
		for _, m := range ms {
			if m.IsResolved || !m.Probability.Valid {
				continue
			}
			pm := PredictionMarket{Source: src, Question: m.Question, Volume24h: m.Volume24Hours.V, Currency: "MANA",
				Liquidity: m.TotalLiquidity.Ptr(), Link: m.URL,
				Outcomes: []Outcome{{"Yes", m.Probability.V}, {"No", 1 - m.Probability.V}}}
			if m.CloseTime.Valid {
				pm.ClosesAt = time.UnixMilli(m.CloseTime.V).UTC().Format(time.RFC3339)
			}
			out = append(out, pm)
		}
	}
	return out, nil
}
