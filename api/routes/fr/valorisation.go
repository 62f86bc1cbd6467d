package fr

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
)

// The valuation is a multiples method on the filed accounts, written in
// api/routes/fr/doc/valorisation.md; valorisationMethod names its version in every answer.
const valorisationMethod = "valorisation-1"

// Multiple is one multiple's low, central and high values.
type Multiple struct {
	Bas     float64 `json:"bas"`
	Central float64 `json:"central"`
	Haut    float64 `json:"haut"`
}

// Fourchette is a value range in euros.
type Fourchette struct {
	Bas     int64 `json:"bas"`
	Central int64 `json:"central"`
	Haut    int64 `json:"haut"`
}

// multiples are the default SME multiples of the method (the research notes' §15b), one set
// for every NAF section until a sourced sector table exists; revenueMultiple is the
// low-confidence fallback when earnings are not positive.
var multiples = map[string]Multiple{
	"ebe_x_ev_ebitda":   {4, 5, 6},
	"ebit_x_ev_ebit":    {6, 7.5, 9},
	"resultat_net_x_pe": {8, 10, 12},
	"ca_x_ev_ca":        {0.3, 0.5, 0.8},
}

// smallCompanyDiscount applies below smallCompanyRevenue of revenue (illiquidity, key-person
// risk).
const (
	smallCompanyDiscount = 0.20
	smallCompanyRevenue  = 2_000_000
	valuationYears       = 3
)

// Methode is one valuation method: the aggregate it multiplies, the multiples, the values,
// or why it does not apply.
type Methode struct {
	Methode       string      `json:"methode"`
	Agregat       string      `json:"agregat"`
	ValeurAgregat *int64      `json:"valeur_agregat"`
	Multiples     Multiple    `json:"multiples"`
	Valeur        *Fourchette `json:"valeur"` // null when the method does not apply
	Applicable    bool        `json:"applicable"`
	Raison        string      `json:"raison"`
}

// Valorisation is the answer of /v1/fr/valorisation.
type Valorisation struct {
	Siren           string        `json:"siren"`
	Denomination    string        `json:"denomination"`
	Status          string        `json:"status"`
	NAF             *string       `json:"naf"`
	Exercice        string        `json:"exercice"` // closing date of the newest accounts used
	ChiffreAffaires *int64        `json:"chiffre_affaires"`
	EBE             *int64        `json:"ebe"`
	EBIT            *int64        `json:"ebit"`
	ResultatNet     *int64        `json:"resultat_net"`
	ComptesUtilises []Comptes     `json:"comptes_utilises"` // the years averaged, newest first
	Valorisation    ValeurEstimee `json:"valorisation"`
	Methodes        []Methode     `json:"methodes"`
	Decote          *float64      `json:"decote_petite_entreprise"` // share taken off, null when none
	Fiabilite       string        `json:"fiabilite"`                // moyenne, or faible (revenue multiple only, old accounts)
	Avertissements  []string      `json:"avertissements"`
	MethodVersion   string        `json:"method_version"`
	Sources         []Source      `json:"sources"`
	Confidence      float64       `json:"confidence"`
	Limites         string        `json:"limites"`
}

// ValeurEstimee is the headline: the central estimate and its range.
type ValeurEstimee struct {
	EstimationCentrale int64  `json:"estimation_centrale"`
	Range              Range  `json:"range"`
	Devise             string `json:"devise"`
	Nature             string `json:"nature"`
}

// Range is the low and high bounds.
type Range struct {
	Bas  int64 `json:"bas"`
	Haut int64 `json:"haut"`
}

const valorisationLimits = "An indicative enterprise value from public filed accounts and default SME multiples, not an appraisal: net debt, assets, order book and sector multiples are not read; confidential accounts are absent."

func (r *Routes) valorisation(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	var ratios *ods.Page[economie.Ratio]
	srcs, errs := r.fanOutErrs(ctx, ratiosCall(r, u.Siren, &ratios))
	// The accounts are what is valued: without them there is no answer to sell.
	if err := essential(errs, 0); err != nil {
		return nil, err
	}
	sources := append([]Source{reg}, srcs...)
	c := company(u)
	var years []economie.Ratio
	if ratios != nil {
		years = valuationYearsOf(ratios.Results)
	}
	if len(years) == 0 {
		return nil, apierr.NotFound("no public individual accounts filed for SIREN %s (none filed, or filed confidential): no valuation from accounts", u.Siren)
	}
	out := valuate(years, r.parisDate())
	if !slices.ContainsFunc(out.Methodes, func(m Methode) bool { return m.Applicable }) {
		return nil, apierr.NotFound("SIREN %s: the public accounts show neither positive earnings nor revenue: no valuation from accounts", u.Siren)
	}
	out.Siren, out.Denomination, out.Status, out.NAF = c.Siren, c.Nom, c.Status, c.NAF
	out.Sources, out.Confidence, out.MethodVersion, out.Limites = sources, confidence(sources), valorisationMethod, valorisationLimits
	if c.Status == "ceased" {
		out.Avertissements = append(out.Avertissements, "the register says the company ceased: the figures describe a business that no longer trades")
		out.Fiabilite = "faible"
	}
	return out, nil
}

// valuationYearsOf keeps the newest individual (complete or simplified), public accounts, at
// most valuationYears, one per closing date, newest first.
func valuationYearsOf(rs []economie.Ratio) []economie.Ratio {
	var out []economie.Ratio
	for _, x := range rs {
		if (x.TypeBilan != "C" && x.TypeBilan != "S") || strings.EqualFold(x.Confidentiality, "Confidentiel") {
			continue
		}
		if slices.ContainsFunc(out, func(y economie.Ratio) bool { return y.DateClotureExercice == x.DateClotureExercice }) {
			continue
		}
		out = append(out, x)
	}
	slices.SortStableFunc(out, func(a, b economie.Ratio) int { return strings.Compare(b.DateClotureExercice, a.DateClotureExercice) })
	return out[:min(len(out), valuationYears)]
}

// average of the values present, and whether any was.
func average(years []economie.Ratio, field func(economie.Ratio) *float64) (float64, bool) {
	sum, n := 0.0, 0
	for _, y := range years {
		if v := field(y); v != nil {
			sum += *v
			n++
		}
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

func rangeOf(v float64, m Multiple, keep float64) *Fourchette {
	k := func(x float64) int64 { return int64(math.Round(v*x*keep/1000) * 1000) }
	return &Fourchette{Bas: k(m.Bas), Central: k(m.Central), Haut: k(m.Haut)}
}

func rounded(v float64) *int64 { x := int64(math.Round(v)); return &x }

// valuate applies the method to the years (newest first, at least one).
func valuate(years []economie.Ratio, today time.Time) Valorisation {
	latest := years[0]
	out := Valorisation{Exercice: latest.DateClotureExercice, ChiffreAffaires: euros(latest.ChiffreDAffaires), EBE: euros(latest.EBE),
		EBIT: euros(latest.EBIT), ResultatNet: euros(latest.ResultatNet), ComptesUtilises: comptes(years), Fiabilite: "moyenne",
		Avertissements: []string{}}
	keep := 1.0
	if ca := latest.ChiffreDAffaires; ca != nil && *ca < smallCompanyRevenue {
		d := smallCompanyDiscount
		out.Decote, keep = &d, 1-d
	}
	n := len(years)
	span := " (average of " + strconv.Itoa(n) + " year(s) to " + latest.DateClotureExercice + ")"
	ebe, hasEBE := average(years, func(x economie.Ratio) *float64 { return x.EBE })
	ebit, hasEBIT := average(years, func(x economie.Ratio) *float64 { return x.EBIT })

	m1 := Methode{Methode: "ebe_x_ev_ebitda", Agregat: "EBE moyen", Multiples: multiples["ebe_x_ev_ebitda"]}
	switch {
	case !hasEBE:
		m1.Raison = "EBE not published"
	case ebe <= 0:
		m1.ValeurAgregat, m1.Raison = rounded(ebe), "average EBE not positive"+span
	default:
		m1.ValeurAgregat, m1.Valeur, m1.Applicable, m1.Raison = rounded(ebe), rangeOf(ebe, m1.Multiples, keep), true, "enterprise value = EBE × EV/EBITDA"+span
	}
	m2 := Methode{Methode: "ebit_x_ev_ebit", Agregat: "EBIT moyen", Multiples: multiples["ebit_x_ev_ebit"]}
	switch {
	case !hasEBIT:
		m2.Raison = "EBIT not published"
	case ebit <= 0:
		m2.ValeurAgregat, m2.Raison = rounded(ebit), "average EBIT not positive"+span
	default:
		m2.ValeurAgregat, m2.Valeur, m2.Applicable, m2.Raison = rounded(ebit), rangeOf(ebit, m2.Multiples, keep), true, "enterprise value = EBIT × EV/EBIT"+span
	}
	m3 := Methode{Methode: "resultat_net_x_pe", Agregat: "résultat net du dernier exercice", Multiples: multiples["resultat_net_x_pe"]}
	switch net := latest.ResultatNet; {
	case net == nil:
		m3.Raison = "net income not published"
	case *net <= 0:
		m3.ValeurAgregat, m3.Raison = rounded(*net), "net income not positive ("+latest.DateClotureExercice+")"
	default:
		m3.ValeurAgregat, m3.Valeur, m3.Applicable = rounded(*net), rangeOf(*net, m3.Multiples, keep), true
		m3.Raison = "equity value = net income × P/E (" + latest.DateClotureExercice + "); read as enterprise value only with no net debt"
	}
	out.Methodes = []Methode{m1, m2, m3}
	var lows, centrals, highs []int64
	for _, m := range out.Methodes {
		if m.Applicable {
			lows, centrals, highs = append(lows, m.Valeur.Bas), append(centrals, m.Valeur.Central), append(highs, m.Valeur.Haut)
		}
	}
	if len(centrals) == 0 {
		m4 := Methode{Methode: "ca_x_ev_ca", Agregat: "chiffre d'affaires du dernier exercice", Multiples: multiples["ca_x_ev_ca"]}
		if ca := latest.ChiffreDAffaires; ca != nil && *ca > 0 {
			m4.ValeurAgregat, m4.Valeur, m4.Applicable = rounded(*ca), rangeOf(*ca, m4.Multiples, keep), true
			m4.Raison = "not valuable by earnings multiples (none positive): revenue multiple only, low confidence"
			lows, centrals, highs = []int64{m4.Valeur.Bas}, []int64{m4.Valeur.Central}, []int64{m4.Valeur.Haut}
		} else {
			m4.Raison = "no positive revenue either"
		}
		out.Methodes = append(out.Methodes, m4)
		out.Fiabilite = "faible"
		out.Avertissements = append(out.Avertissements, "no positive earnings: only a revenue multiple applies")
	}
	out.Valorisation = ValeurEstimee{EstimationCentrale: median(centrals), Range: Range{Bas: median(lows), Haut: median(highs)}, Devise: "EUR",
		Nature: "enterprise value (before net debt), median of the applicable methods"}
	if latest.DateClotureExercice < today.AddDate(0, -24, 0).Format(time.DateOnly) {
		out.Fiabilite = "faible"
		out.Avertissements = append(out.Avertissements, "newest public accounts closed on "+latest.DateClotureExercice+", more than 24 months ago")
	}
	return out
}

// median of the values (the mean of the two middle ones of an even count); 0 for none.
func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
