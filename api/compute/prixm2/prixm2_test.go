package prixm2

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// The quantile definition is fixed: linear interpolation between closest ranks, the values
// numpy.quantile gives by default.
func TestQuantile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 10}
	for _, tt := range []struct{ q, want float64 }{{0, 1}, {0.25, 2}, {0.5, 3}, {0.75, 4}, {1, 10}, {0.1, 1.4}, {0.9, 7.6}} {
		if got := Quantile(v, tt.q); !near(got, tt.want) {
			t.Errorf("Quantile(%v) = %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := Quantile([]float64{3000, 4000}, 0.5); got != 3500 {
		t.Errorf("median of two = %v", got)
	}
	if !math.IsNaN(Quantile(nil, 0.5)) {
		t.Error("quantile of nothing is not NaN")
	}
}

func TestEligible(t *testing.T) {
	flat := Sale{Nature: "Vente", Type: "Appartement", Dwellings: 1, Price: 500000, Surface: 52}
	for _, tt := range []struct {
		name string
		edit func(*Sale)
		typ  string
		ok   bool
		why  string
	}{
		{"a flat", func(*Sale) {}, "Appartement", true, ""},
		{"off plan", func(s *Sale) { s.Nature = "Vente en l'état futur d'achèvement" }, "Appartement", true, ""},
		{"asked a house", func(*Sale) {}, "Maison", false, OutType},
		{"exchange", func(s *Sale) { s.Nature = "Echange" }, "Appartement", false, OutNature},
		{"building land", func(s *Sale) { s.Nature = "Vente terrain à bâtir" }, "Appartement", false, OutNature},
		{"two flats", func(s *Sale) { s.Dwellings = 2 }, "Appartement", false, OutMultiple},
		{"with a shop", func(s *Sale) { s.Commercial = true }, "Appartement", false, OutMultiple},
		{"house and flat", func(s *Sale) { s.Type = "Mixte" }, "Appartement", false, OutMultiple},
		{"no surface", func(s *Sale) { s.Surface = 0 }, "Appartement", false, OutIncomplete},
		{"symbolic price", func(s *Sale) { s.Price = 1 }, "Appartement", false, OutIncomplete},
		{"a shop", func(s *Sale) { s.Type, s.Dwellings, s.Commercial = Commerce, 0, true }, Commerce, true, ""},
		{"a shop asked as a flat", func(s *Sale) { s.Type, s.Dwellings, s.Commercial = Commerce, 0, true }, "Appartement", false, OutMultiple},
		{"a flat asked as a shop", func(*Sale) {}, Commerce, false, OutType},
		{"a shop with a flat", func(s *Sale) { s.Commercial = true; s.Type = "Mixte" }, Commerce, false, OutMultiple},
	} {
		s := flat
		tt.edit(&s)
		ok, why := Eligible(s, tt.typ)
		if ok != tt.ok || why != tt.why {
			t.Errorf("%s: %v %q, want %v %q", tt.name, ok, why, tt.ok, tt.why)
		}
	}
}

// The two flats of the recorded Boulogne-Billancourt lines (api/upstream/dvf/testdata/
// 92012_2025.csv): 425 200 € for 44 m² and 500 000 € for 52 m². By hand: 9663.64 and
// 9615.38 €/m², median (mean of the two) 9639.51; two prices are too few for fences.
func TestRecordedBoulogneFlats(t *testing.T) {
	sales := []Sale{
		{ID: "2025-1193201", Nature: "Vente", Type: "Appartement", Dwellings: 1, Price: 500000, Surface: 52},
		{ID: "2025-1193189", Nature: "Vente", Type: "Appartement", Dwellings: 1, Price: 425200, Surface: 44},
	}
	s := Compute(sales, "Appartement")
	if s.Stats.N != 2 || !near(s.Stats.Median, (425200.0/44+500000.0/52)/2) || !near(s.Stats.Q1, 500000.0/52+0.25*(425200.0/44-500000.0/52)) {
		t.Errorf("stats = %+v", s.Stats)
	}
	if math.Round(s.Stats.Median*100)/100 != 9639.51 {
		t.Errorf("median = %v, want 9639.51", s.Stats.Median)
	}
	if Reliability(s.Stats.N) != "faible" {
		t.Errorf("reliability = %s", Reliability(s.Stats.N))
	}
	if h := Compute(sales, "Maison"); h.Stats.N != 0 || h.Out[OutType] != 2 {
		t.Errorf("houses = %+v", h)
	}
}

// Bounds first, then the fences of what remains: 20 €/m² and 50 000 €/m² are out of bounds,
// 9 000 €/m² lies past Q3 + 1.5·IQR of {2000, 2100, 2200, 2300, 2400, 9000}
// (Q1 2125, Q3 2375, upper fence 2750).
func TestBoundsThenFences(t *testing.T) {
	var sales []Sale
	for _, pm := range []float64{2000, 2100, 2200, 2300, 2400, 9000, 20, 50000} {
		sales = append(sales, Sale{Nature: "Vente", Type: "Maison", Dwellings: 1, Price: pm * 100, Surface: 100})
	}
	sales[6].Price = 2000 // 20 €/m², above MinPrice
	s := Compute(sales, "Maison")
	if s.Out[OutBounds] != 2 || s.Out[OutOutlier] != 1 || s.Stats.N != 5 || s.Stats.Median != 2200 || s.Stats.Q1 != 2100 || s.Stats.Q3 != 2300 {
		t.Errorf("sample = %+v", s)
	}
}

func TestReliability(t *testing.T) {
	for n, want := range map[int]string{0: "faible", 9: "faible", 10: "moyenne", 29: "moyenne", 30: "bonne"} {
		if got := Reliability(n); got != want {
			t.Errorf("Reliability(%d) = %s", n, got)
		}
	}
}
