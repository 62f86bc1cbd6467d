// Package annual turns the XBRL company facts of SEC EDGAR into annual series: one value per
// fiscal year, taken from annual reports only, deduplicated by period with the latest filing
// winning, restatements said, and the concept chosen among the several that companies use
// for the same line (revenue has at least four).
package annual

import (
	"cmp"
	"slices"
	"time"

	"github.com/peage/appliance/api/upstream/secedgar"
)

// Metric names a financial line and the us-gaap concepts that report it, in order of
// preference when two are equally recent.
type Metric struct {
	Name     string
	Concepts []string
	Instant  bool // a balance at the year's end rather than a flow over the year
}

// Metrics are the lines /v1/us/financials returns.
var (
	Revenue = Metric{Name: "revenue", Concepts: []string{
		"RevenueFromContractWithCustomerExcludingAssessedTax", // ASC 606, most filers since 2018
		"Revenues",
		"SalesRevenueNet", // before ASC 606
		"RevenueFromContractWithCustomerIncludingAssessedTax",
		"SalesRevenueGoodsNet",
		"SalesRevenueServicesNet",
	}}
	NetIncome       = Metric{Name: "net_income", Concepts: []string{"NetIncomeLoss", "ProfitLoss", "NetIncomeLossAvailableToCommonStockholdersBasic"}}
	OperatingIncome = Metric{Name: "operating_income", Concepts: []string{"OperatingIncomeLoss"}}
	Assets          = Metric{Name: "assets", Concepts: []string{"Assets"}, Instant: true}
	Liabilities     = Metric{Name: "liabilities", Concepts: []string{"Liabilities"}, Instant: true}
	Equity          = Metric{Name: "equity", Concepts: []string{"StockholdersEquity", "StockholdersEquityIncludingPortionAttributableToNoncontrollingInterest"}, Instant: true}
	Cash            = Metric{Name: "cash", Concepts: []string{"CashAndCashEquivalentsAtCarryingValue", "CashCashEquivalentsRestrictedCashAndRestrictedCashEquivalents"}, Instant: true}
)

// Point is one fiscal year's value.
type Point struct {
	End   string  `json:"end"`
	Start string  `json:"start,omitempty"`
	Value float64 `json:"value"`
	FY    int     `json:"fy"`
	Form  string  `json:"form"`
	Filed string  `json:"filed"`
	Accn  string  `json:"accession"`
	// Concept is set when this year's value comes from another concept than the series'.
	Concept string `json:"concept,omitempty"`
	// Restated is true when an earlier annual report gave another value for the same period;
	// Original is the value first reported.
	Restated bool     `json:"restated"`
	Original *float64 `json:"original_value,omitempty"`
}

// Series is one metric over the chosen years, newest first.
type Series struct {
	Concept string  // the concept most points come from; "" when none reported the metric
	Points  []Point // newest first, only the years asked for
}

// USD is the unit of every metric here.
const USD = "USD"

// isAnnualReport accepts the 10-K and its amendment: the annual report of a domestic filer.
func isAnnualReport(f secedgar.Fact) bool {
	return (f.Form == "10-K" || f.Form == "10-K/A") && f.FP == "FY"
}

// yearLong accepts a duration of about one fiscal year: 52/53-week years run 364 or 371 days.
// A 10-K also carries quarterly values tagged FY; they are shorter.
func yearLong(f secedgar.Fact) bool {
	s, err1 := time.Parse(time.DateOnly, f.Start)
	e, err2 := time.Parse(time.DateOnly, f.End)
	if err1 != nil || err2 != nil {
		return false
	}
	d := e.Sub(s).Hours() / 24
	return d >= 350 && d <= 380
}

// byPeriod keeps one value per period end: the one of the latest filing, noting whether an
// earlier annual report said otherwise.
func byPeriod(facts []secedgar.Fact, instant bool) map[string]Point {
	out := map[string]Point{}
	first := map[string]secedgar.Fact{}
	for _, f := range facts {
		if !isAnnualReport(f) {
			continue
		}
		if instant != (f.Start == "") {
			continue
		}
		if !instant && !yearLong(f) {
			continue
		}
		p, seen := out[f.End]
		if !seen || later(f, p) {
			out[f.End] = Point{End: f.End, Start: f.Start, Value: f.Val, FY: f.FY, Form: f.Form, Filed: f.Filed, Accn: f.Accn}
		}
		if o, ok := first[f.End]; !ok || earlier(f, o) {
			first[f.End] = f
		}
	}
	for end, p := range out {
		if o := first[end]; o.Val != p.Value {
			v := o.Val
			p.Restated, p.Original = true, &v
			out[end] = p
		}
	}
	return out
}

func later(f secedgar.Fact, p Point) bool {
	if f.Filed != p.Filed {
		return f.Filed > p.Filed
	}
	return f.Accn > p.Accn
}

func earlier(f, o secedgar.Fact) bool {
	if f.Filed != o.Filed {
		return f.Filed < o.Filed
	}
	return f.Accn < o.Accn
}

// candidate is one concept's annual values.
type candidate struct {
	concept string
	points  map[string]Point
	latest  string
}

func candidates(facts *secedgar.CompanyFacts, m Metric) []candidate {
	gaap := facts.Facts["us-gaap"]
	var out []candidate
	for _, name := range m.Concepts {
		c, ok := gaap[name]
		if !ok {
			continue
		}
		pts := byPeriod(c.Units[USD], m.Instant)
		if len(pts) == 0 {
			continue
		}
		latest := ""
		for end := range pts {
			latest = max(latest, end)
		}
		out = append(out, candidate{concept: name, points: pts, latest: latest})
	}
	// The concept a company uses today is the one with the most recent annual value:
	// Apple still carries Revenues for 2018 and earlier, and NVIDIA
	// RevenueFromContractWithCustomerExcludingAssessedTax up to fiscal 2022.
	slices.SortStableFunc(out, func(a, b candidate) int { return cmp.Compare(b.latest, a.latest) })
	return out
}

// YearEnds returns the last n fiscal year ends of a company, newest first: the ends of the
// annual values of net income, or of revenue when it reports no net income.
func YearEnds(facts *secedgar.CompanyFacts, n int) []string {
	for _, m := range []Metric{NetIncome, Revenue} {
		cs := candidates(facts, m)
		if len(cs) == 0 {
			continue
		}
		var ends []string
		for end := range cs[0].points {
			ends = append(ends, end)
		}
		slices.Sort(ends)
		slices.Reverse(ends)
		return ends[:min(n, len(ends))]
	}
	return nil
}

// Annual returns metric m at each of ends (newest first), from the concept the company uses
// now; a year that concept lacks is taken from the next concept that has it, and says so.
func Annual(facts *secedgar.CompanyFacts, m Metric, ends []string) Series {
	cs := candidates(facts, m)
	if len(cs) == 0 {
		return Series{Points: []Point{}}
	}
	s := Series{Concept: cs[0].concept, Points: []Point{}}
	for _, end := range ends {
		for i, c := range cs {
			if p, ok := c.points[end]; ok {
				if i > 0 {
					p.Concept = c.concept
				}
				s.Points = append(s.Points, p)
				break
			}
		}
	}
	return s
}
