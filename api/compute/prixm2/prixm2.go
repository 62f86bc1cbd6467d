// Package prixm2 computes the price per m² of a set of recorded property sales (DVF): which
// sales count, which prices are outliers, and the median and quartiles of the rest. The
// method is written in api/routes/fr/doc/estimation-immo.md; Version names it in answers.
package prixm2

import (
	"math"
	"slices"
)

// Version is the method the answers cite; change it with any rule below.
const Version = "prixm2-1"

// Sale is one recorded sale, its price counted once whatever the number of lines it spans.
type Sale struct {
	ID         string
	Date       string
	Nature     string  // nature_mutation
	Type       string  // Maison, Appartement, Mixte, Terrain, Local…
	Dwellings  int     // distinct houses and flats in the sale
	Commercial bool    // the sale includes business premises
	Price      float64 // euros, the whole sale
	Surface    int     // m² of the dwelling
}

// Bounds of a usable sale and of a plausible price per m² (research notes §12.2).
const (
	MinPrice   = 1000.0
	MinSurface = 9
	MinPerM2   = 300.0
	MaxPerM2   = 30000.0
)

// Why a sale was left out.
const (
	OutNature     = "nature"     // not a sale (exchange, expropriation, auction, building land)
	OutType       = "type"       // not a dwelling of the asked type
	OutMultiple   = "multiple"   // several dwellings, or business premises: no price per dwelling
	OutIncomplete = "incomplete" // price or surface missing or too small
	OutBounds     = "bounds"     // price per m² outside [MinPerM2, MaxPerM2]
	OutOutlier    = "outlier"    // outside the Tukey fences of the sample
)

// Commerce is the DVF type of business premises.
const Commerce = "Local industriel. commercial ou assimilé"

// Eligible says whether s is a sale of one dwelling of type typ (Maison or Appartement), or of
// business premises without dwelling (typ Commerce), with a usable price and surface, and if
// not, why.
func Eligible(s Sale, typ string) (bool, string) {
	business := typ == Commerce && s.Dwellings == 0
	switch {
	case s.Nature != "Vente" && s.Nature != "Vente en l'état futur d'achèvement":
		return false, OutNature
	case s.Dwellings > 1 || (s.Commercial && !business) || s.Type == "Mixte":
		return false, OutMultiple
	case s.Type != typ:
		return false, OutType
	case s.Price < MinPrice || s.Surface < MinSurface:
		return false, OutIncomplete
	}
	return true, ""
}

// Stats are the figures of a cleaned sample of prices per m².
type Stats struct {
	N      int
	Median float64
	Q1, Q3 float64
	Min    float64
	Max    float64
}

// Sample is the outcome of Compute: the kept sales with their price per m², the stats, and
// how many sales were left out and why.
type Sample struct {
	Kept  []Kept
	Stats Stats
	Out   map[string]int
}

// Kept is a sale of the sample.
type Kept struct {
	Sale
	PerM2 float64
}

// Compute keeps the eligible sales of type typ, drops prices per m² outside the absolute
// bounds, then outside the Tukey fences [Q1 − 1.5·IQR, Q3 + 1.5·IQR] of what remains, and
// describes the rest. Fences need four prices to mean anything: below that none is dropped.
func Compute(sales []Sale, typ string) Sample {
	out := Sample{Out: map[string]int{}}
	var kept []Kept
	for _, s := range sales {
		ok, why := Eligible(s, typ)
		if !ok {
			out.Out[why]++
			continue
		}
		pm := s.Price / float64(s.Surface)
		if pm < MinPerM2 || pm > MaxPerM2 {
			out.Out[OutBounds]++
			continue
		}
		kept = append(kept, Kept{Sale: s, PerM2: pm})
	}
	if len(kept) >= 4 {
		v := perM2(kept)
		q1, q3 := Quantile(v, 0.25), Quantile(v, 0.75)
		lo, hi := q1-1.5*(q3-q1), q3+1.5*(q3-q1)
		n := 0
		for _, k := range kept {
			if k.PerM2 < lo || k.PerM2 > hi {
				out.Out[OutOutlier]++
				continue
			}
			kept[n] = k
			n++
		}
		kept = kept[:n]
	}
	out.Kept = kept
	out.Stats = Describe(perM2(kept))
	return out
}

func perM2(ks []Kept) []float64 {
	v := make([]float64, len(ks))
	for i, k := range ks {
		v[i] = k.PerM2
	}
	slices.Sort(v)
	return v
}

// Describe gives the count, median and quartiles of v (any order).
func Describe(v []float64) Stats {
	if len(v) == 0 {
		return Stats{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return Stats{N: len(s), Median: Quantile(s, 0.5), Q1: Quantile(s, 0.25), Q3: Quantile(s, 0.75), Min: s[0], Max: s[len(s)-1]}
}

// Quantile of sorted v by linear interpolation between closest ranks: position h = q·(n−1),
// Q = v[⌊h⌋] + (h − ⌊h⌋)·(v[⌊h⌋+1] − v[⌊h⌋]) (numpy's default, Excel's QUARTILE.INC).
func Quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	h := q * float64(len(v)-1)
	i := int(math.Floor(h))
	if i+1 >= len(v) {
		return v[len(v)-1]
	}
	return v[i] + (h-float64(i))*(v[i+1]-v[i])
}

// Reliability labels a sample size: under 10 "faible", under 30 "moyenne", else "bonne".
func Reliability(n int) string {
	switch {
	case n < 10:
		return "faible"
	case n < 30:
		return "moyenne"
	}
	return "bonne"
}

// Enough is the sample size under which the area or the period is widened.
const Enough = 10
