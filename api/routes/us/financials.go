package us

import (
	"context"
	"math"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/annual"
	"github.com/peage/appliance/api/upstream/secedgar"
)

// years is how many fiscal years the financial routes cover.
const years = 3

// seriesMethod says how every series is built; the answers carry it.
const seriesMethod = "XBRL company facts of SEC EDGAR, us-gaap concepts in USD. Annual values only: facts of 10-K and 10-K/A " +
	"reports with fiscal period FY, flows over 350 to 380 days, balances at the fiscal year end. One value per period: " +
	"the latest filing wins; restated is true, with the first reported value, when an earlier annual report said otherwise. " +
	"Among the concepts a line may be reported under (revenue: RevenueFromContractWithCustomerExcludingAssessedTax, " +
	"Revenues, SalesRevenueNet, ...), the one with the most recent annual value is used; a year it lacks comes from the next " +
	"and names its concept."

// Financials is the /v1/us/financials answer; every series is newest first.
type Financials struct {
	CIK             string            `json:"cik"`
	Name            string            `json:"name"`
	Ticker          string            `json:"ticker,omitempty"`
	Currency        string            `json:"currency"`
	FiscalYears     []string          `json:"fiscal_years"` // the year ends, newest first
	Revenue         []annual.Point    `json:"revenue"`
	NetIncome       []annual.Point    `json:"net_income"`
	OperatingIncome []annual.Point    `json:"operating_income"`
	Assets          []annual.Point    `json:"assets"`
	Liabilities     []annual.Point    `json:"liabilities"`
	Equity          []annual.Point    `json:"equity"`
	Cash            []annual.Point    `json:"cash"`
	Concepts        map[string]string `json:"concepts"` // metric → us-gaap concept used
	Method          string            `json:"method"`
	Source          string            `json:"source"`
}

// facts reads the company facts and the last fiscal years; a company without annual XBRL
// figures (none filed, or only under other forms such as 20-F) is a 404.
func (r *Routes) facts(ctx context.Context, req *catalog.Request) (company, *secedgar.CompanyFacts, []string, error) {
	c, err := r.resolve(ctx, req)
	if err != nil {
		return c, nil, nil, err
	}
	cf, err := r.sec.CompanyFacts(ctx, c.cik)
	if err != nil {
		return c, nil, nil, notFound(err, c.cik, "XBRL company facts")
	}
	ends := annual.YearEnds(cf, years)
	if len(ends) == 0 {
		return c, nil, nil, apierr.NotFound("SEC EDGAR has no annual (10-K) XBRL figures for CIK %s", secedgar.CIK10(c.cik))
	}
	return c, cf, ends, nil
}

func financialsOf(c company, cf *secedgar.CompanyFacts, ends []string) Financials {
	out := Financials{CIK: secedgar.CIK10(c.cik), Name: cf.EntityName, Ticker: c.ticker, Currency: annual.USD, FiscalYears: ends,
		Concepts: map[string]string{}, Method: seriesMethod, Source: source}
	for _, m := range []struct {
		metric annual.Metric
		dst    *[]annual.Point
	}{
		{annual.Revenue, &out.Revenue}, {annual.NetIncome, &out.NetIncome}, {annual.OperatingIncome, &out.OperatingIncome},
		{annual.Assets, &out.Assets}, {annual.Liabilities, &out.Liabilities}, {annual.Equity, &out.Equity}, {annual.Cash, &out.Cash},
	} {
		s := annual.Annual(cf, m.metric, ends)
		*m.dst = s.Points
		if s.Concept != "" {
			out.Concepts[m.metric.Name] = s.Concept
		}
	}
	return out
}

func (r *Routes) financials(ctx context.Context, req *catalog.Request) (any, error) {
	c, cf, ends, err := r.facts(ctx, req)
	if err != nil {
		return nil, err
	}
	return financialsOf(c, cf, ends), nil
}

// snapshotMethod writes the formulas the snapshot applies.
const snapshotMethod = "revenue_growth_pct = (revenue[t] - revenue[t-1]) / |revenue[t-1]| × 100; " +
	"net_margin_pct = net_income[t] / revenue[t] × 100; " +
	"roe_pct = net_income[t] / ((equity[t] + equity[t-1]) / 2) × 100, or net_income[t] / equity[t] × 100 when equity[t-1] " +
	"is not reported (roe_basis says which); t is the latest fiscal year, t-1 the one before; percentages rounded to 2 " +
	"decimals; null when an input is missing or a divisor is zero. Inputs: " + seriesMethod

// Snapshot is the /v1/us/snapshot answer.
type Snapshot struct {
	CIK              string            `json:"cik"`
	Name             string            `json:"name"`
	Ticker           string            `json:"ticker,omitempty"`
	Currency         string            `json:"currency"`
	FiscalYearEnd    string            `json:"fiscal_year_end"`
	PriorYearEnd     string            `json:"prior_fiscal_year_end,omitempty"`
	Revenue          *float64          `json:"revenue"`
	RevenuePrior     *float64          `json:"revenue_prior"`
	NetIncome        *float64          `json:"net_income"`
	Equity           *float64          `json:"equity"`
	EquityPrior      *float64          `json:"equity_prior"`
	RevenueGrowthPct *float64          `json:"revenue_growth_pct"`
	NetMarginPct     *float64          `json:"net_margin_pct"`
	ROEPct           *float64          `json:"roe_pct"`
	ROEBasis         string            `json:"roe_basis,omitempty"` // "average equity" or "ending equity"
	Restated         bool              `json:"restated"`            // an input was restated by a later report
	Concepts         map[string]string `json:"concepts"`
	Method           string            `json:"method"`
	Source           string            `json:"source"`
}

func (r *Routes) snapshot(ctx context.Context, req *catalog.Request) (any, error) {
	c, cf, ends, err := r.facts(ctx, req)
	if err != nil {
		return nil, err
	}
	f := financialsOf(c, cf, ends)
	out := Snapshot{CIK: f.CIK, Name: f.Name, Ticker: f.Ticker, Currency: f.Currency, FiscalYearEnd: ends[0],
		Concepts: f.Concepts, Method: snapshotMethod, Source: source}
	if len(ends) > 1 {
		out.PriorYearEnd = ends[1]
	}
	val := func(pts []annual.Point, end string) *float64 {
		for _, p := range pts {
			if p.End == end {
				out.Restated = out.Restated || p.Restated
				v := p.Value
				return &v
			}
		}
		return nil
	}
	out.Revenue, out.NetIncome, out.Equity = val(f.Revenue, out.FiscalYearEnd), val(f.NetIncome, out.FiscalYearEnd), val(f.Equity, out.FiscalYearEnd)
	if out.PriorYearEnd != "" {
		out.RevenuePrior, out.EquityPrior = val(f.Revenue, out.PriorYearEnd), val(f.Equity, out.PriorYearEnd)
	}
	if out.Revenue != nil && out.RevenuePrior != nil && *out.RevenuePrior != 0 {
		out.RevenueGrowthPct = pct((*out.Revenue - *out.RevenuePrior) / math.Abs(*out.RevenuePrior))
	}
	if out.Revenue != nil && out.NetIncome != nil && *out.Revenue != 0 {
		out.NetMarginPct = pct(*out.NetIncome / *out.Revenue)
	}
	if out.NetIncome != nil && out.Equity != nil {
		base, basis := *out.Equity, "ending equity"
		if out.EquityPrior != nil {
			base, basis = (*out.Equity+*out.EquityPrior)/2, "average equity"
		}
		if base != 0 {
			out.ROEPct, out.ROEBasis = pct(*out.NetIncome/base), basis
		}
	}
	return out, nil
}

// pct is a ratio as a percentage rounded to 2 decimals.
func pct(ratio float64) *float64 {
	v := math.Round(ratio*10000) / 100
	return &v
}
