package annual

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"testing"

	"github.com/peage/appliance/api/upstream/secedgar"
)

func load(t *testing.T, name string) *secedgar.CompanyFacts {
	t.Helper()
	f, err := os.Open("../../upstream/secedgar/testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var cf secedgar.CompanyFacts
	if err := json.NewDecoder(zr).Decode(&cf); err != nil {
		t.Fatal(err)
	}
	return &cf
}

// The expected figures are those printed in each company's latest 10-K (in millions of
// dollars): Apple's 10-K for fiscal 2025 (filed 2025-10-31, accession 0000320193-25-000079),
// consolidated statements of operations (total net sales 416,161 / 391,035 / 383,285; net
// income 112,010 / 93,736 / 96,995) and balance sheet (total assets 359,241, total
// liabilities 285,508, shareholders' equity 73,733, cash and cash equivalents 35,934 at
// 27 September 2025); NVIDIA's 10-K for fiscal 2026 (filed 2026-02-25, accession
// 0001045810-26-000021): revenue 215,938 / 130,497 / 60,922, net income 120,067 / 72,880 /
// 29,760, total assets 206,803, total liabilities 49,510, shareholders' equity 157,293 and
// cash and cash equivalents 10,605 at 25 January 2026.
func TestAnnualAgainstThe10K(t *testing.T) {
	const m = 1e6
	tests := []struct {
		file, revenueConcept          string
		ends                          []string
		revenue, netIncome            []float64
		assets, liabilities, eq, cash float64
		accn                          string
	}{
		{"companyfacts_CIK0000320193.json.gz", "RevenueFromContractWithCustomerExcludingAssessedTax",
			[]string{"2025-09-27", "2024-09-28", "2023-09-30"},
			[]float64{416161 * m, 391035 * m, 383285 * m}, []float64{112010 * m, 93736 * m, 96995 * m},
			359241 * m, 285508 * m, 73733 * m, 35934 * m, "0000320193-25-000079"},
		{"companyfacts_CIK0001045810.json.gz", "Revenues",
			[]string{"2026-01-25", "2025-01-26", "2024-01-28"},
			[]float64{215938 * m, 130497 * m, 60922 * m}, []float64{120067 * m, 72880 * m, 29760 * m},
			206803 * m, 49510 * m, 157293 * m, 10605 * m, "0001045810-26-000021"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			cf := load(t, tt.file)
			ends := YearEnds(cf, 3)
			if !equal(ends, tt.ends) {
				t.Fatalf("year ends = %v, want %v", ends, tt.ends)
			}
			rev := Annual(cf, Revenue, ends)
			if rev.Concept != tt.revenueConcept {
				t.Errorf("revenue concept = %s, want %s", rev.Concept, tt.revenueConcept)
			}
			check := func(name string, s Series, want []float64) {
				t.Helper()
				if len(s.Points) != len(want) {
					t.Fatalf("%s: %d points, want %d", name, len(s.Points), len(want))
				}
				for i, p := range s.Points {
					if p.End != tt.ends[i] || p.Value != want[i] {
						t.Errorf("%s[%d] = %s %.0f, want %s %.0f", name, i, p.End, p.Value, tt.ends[i], want[i])
					}
					if p.Form != "10-K" || p.Restated {
						t.Errorf("%s[%d]: form %s restated %v", name, i, p.Form, p.Restated)
					}
				}
			}
			check("revenue", rev, tt.revenue)
			check("net_income", Annual(cf, NetIncome, ends), tt.netIncome)
			for _, c := range []struct {
				m    Metric
				want float64
			}{{Assets, tt.assets}, {Liabilities, tt.liabilities}, {Equity, tt.eq}, {Cash, tt.cash}} {
				s := Annual(cf, c.m, ends)
				if len(s.Points) == 0 || s.Points[0].Value != c.want || s.Points[0].End != tt.ends[0] {
					t.Errorf("%s = %+v, want %.0f at %s", c.m.Name, s.Points, c.want, tt.ends[0])
				}
			}
			// The latest filing wins: every value of the newest year comes from the newest 10-K,
			// and older years from it too when it repeats them (comparative columns).
			if p := rev.Points[0]; p.Accn != tt.accn {
				t.Errorf("revenue[0] from %s, want %s", p.Accn, tt.accn)
			}
			if p := rev.Points[1]; p.Accn != tt.accn {
				t.Errorf("revenue[1] from %s, want the latest filing %s", p.Accn, tt.accn)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDedupAndRestatement runs the period rules on facts shaped as EDGAR reports them: the
// same year in three 10-Ks, one of which restated it, a quarterly value inside a 10-K, a
// 10-Q, and a 10-K/A filed last.
func TestDedupAndRestatement(t *testing.T) {
	f := func(start, end string, val float64, form, fp, filed, accn string) secedgar.Fact {
		return secedgar.Fact{Start: start, End: end, Val: val, Form: form, FP: fp, Filed: filed, Accn: accn}
	}
	cf := &secedgar.CompanyFacts{Facts: map[string]map[string]secedgar.Concept{"us-gaap": {
		"Revenues": {Units: map[string][]secedgar.Fact{USD: {
			f("2022-01-01", "2022-12-31", 100, "10-K", "FY", "2023-02-01", "a1"),
			f("2022-01-01", "2022-12-31", 100, "10-K", "FY", "2024-02-01", "a2"),
			f("2022-01-01", "2022-12-31", 90, "10-K/A", "FY", "2024-06-01", "a3"),
			f("2022-10-01", "2022-12-31", 30, "10-K", "FY", "2023-02-01", "a1"),
			f("2023-01-01", "2023-12-31", 120, "10-Q", "Q4", "2024-01-15", "q1"),
			f("2023-01-01", "2023-12-31", 125, "10-K", "FY", "2024-02-01", "a2"),
		}}},
	}}}
	s := Annual(cf, Revenue, []string{"2023-12-31", "2022-12-31", "2021-12-31"})
	if len(s.Points) != 2 {
		t.Fatalf("points = %+v, want 2 (no 2021)", s.Points)
	}
	if p := s.Points[0]; p.Value != 125 || p.Restated || p.Accn != "a2" {
		t.Errorf("2023 = %+v, want 125 from the 10-K, not restated", p)
	}
	if p := s.Points[1]; p.Value != 90 || !p.Restated || p.Original == nil || *p.Original != 100 || p.Form != "10-K/A" {
		t.Errorf("2022 = %+v, want 90 from the 10-K/A, restated from 100", p)
	}
}

// TestConceptByRecency: the concept with the most recent annual value is the series'
// concept even when it comes later in the preference order, and a year it lacks is taken
// from another concept that names itself.
func TestConceptByRecency(t *testing.T) {
	fy := func(end string, val float64) secedgar.Fact {
		start := end[:4] + "-01-01"
		return secedgar.Fact{Start: start, End: end, Val: val, Form: "10-K", FP: "FY", Filed: end[:4] + "-12-31", Accn: end}
	}
	cf := &secedgar.CompanyFacts{Facts: map[string]map[string]secedgar.Concept{"us-gaap": {
		"RevenueFromContractWithCustomerExcludingAssessedTax": {Units: map[string][]secedgar.Fact{USD: {fy("2019-12-31", 9), fy("2020-12-31", 10)}}},
		"Revenues": {Units: map[string][]secedgar.Fact{USD: {fy("2021-12-31", 11), fy("2022-12-31", 12)}}},
	}}}
	s := Annual(cf, Revenue, []string{"2022-12-31", "2021-12-31", "2020-12-31"})
	if s.Concept != "Revenues" || len(s.Points) != 3 {
		t.Fatalf("series = %+v, want Revenues with 3 points", s)
	}
	if p := s.Points[2]; p.Value != 10 || p.Concept != "RevenueFromContractWithCustomerExcludingAssessedTax" {
		t.Errorf("2020 = %+v, want 10 from the older concept, named", p)
	}
	if p := s.Points[0]; p.Concept != "" {
		t.Errorf("2022 names concept %q, want none (the series' own)", p.Concept)
	}
}
