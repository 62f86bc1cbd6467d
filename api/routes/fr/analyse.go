package fr

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/compute/prixm2"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/georisques"
	"github.com/peage/appliance/api/upstream/loyers"
	"github.com/peage/appliance/internal/fanout"
)

// The investment analysis (analyse-immo and its partial) adds to the estimate the rent map,
// the commune's risks, energy diagnoses and population, and a score whose method is
// doc/analyse-immo.md (investMethod). The geocoder and DVF are essential, as for the
// estimate; the other sources are called in parallel with DVF, and one that fails is
// declared: its factor earns 40 % of its weight and is marked manquant. The partial variant
// calls only the geocoder, DVF (without widening) and the rent map.
const investMethod = "invest-2"

// Score factor outcomes.
const (
	FactorOK      = "ok"
	FactorMissing = "manquant"    // its source failed or has no data
	FactorNotRead = "non_evaluee" // the partial variant does not read its source
)

// Facteur is one factor of the investment score.
type Facteur struct {
	Facteur  string   `json:"facteur"`
	Valeur   *float64 `json:"valeur"`
	Poids    int      `json:"poids"`  // points at stake
	Points   int      `json:"points"` // points earned
	Resultat string   `json:"resultat"`
	Bareme   string   `json:"bareme"`
}

// ScoreInvest is the investment score with its breakdown.
type ScoreInvest struct {
	Score         int       `json:"score"` // 0 to 100
	Note          string    `json:"note"`  // A (≥ 75), B (≥ 60), C (≥ 45), D
	Facteurs      []Facteur `json:"facteurs"`
	KnockOuts     []string  `json:"knock_outs"` // none in this method: listed for the shape every score shares
	MethodVersion string    `json:"method_version"`
	Methode       string    `json:"methode"`
}

// Rendement is the rental yield from the rent map.
type Rendement struct {
	LoyerM2          float64  `json:"loyer_m2"` // €/m²/month, charges included, unfurnished
	LoyerM2Bas       float64  `json:"loyer_m2_bas"`
	LoyerM2Haut      float64  `json:"loyer_m2_haut"`
	LoyerMensuel     float64  `json:"loyer_mensuel"`
	RendementBrutPct float64  `json:"rendement_brut_pct"` // loyer_m2 × 12 / median price per m²
	RendementNetPct  float64  `json:"rendement_net_pct"`  // see hypotheses
	Niveau           string   `json:"niveau"`             // commune, or maille (a group of communes)
	Annonces         int      `json:"annonces"`           // listings observed in the commune
	Edition          string   `json:"edition"`
	Hypotheses       []string `json:"hypotheses"`
}

// Energie is the distribution of the commune's newest energy diagnoses.
type Energie struct {
	Diagnostics int            `json:"diagnostics"`
	Classes     map[string]int `json:"classes"`
	PartFGPct   float64        `json:"part_fg_pct"`
	Note        string         `json:"note"`
}

// RisquesCommune are the natural and technological risks Géorisques' report on the commune
// marks present.
type RisquesCommune struct {
	Total   int      `json:"total"`
	Risques []string `json:"risques"`
}

// Demographie is the commune's population and area.
type Demographie struct {
	Commune       string   `json:"commune"`
	Insee         string   `json:"insee"`
	Population    *int     `json:"population"`
	SurfaceKm2    *float64 `json:"surface_km2"`
	DensiteHabKm2 *float64 `json:"densite_hab_km2"`
	Departement   *Ref     `json:"departement"`
	Region        *Ref     `json:"region"`
	VentesAn      float64  `json:"ventes_an"` // single-dwelling sales a year in the files read
}

// EstimationResume is the estimate inside the analysis.
type EstimationResume struct {
	PrixM2Median  float64            `json:"prix_m2_median"`
	PrixM2        PrixM2             `json:"prix_m2"`
	ValeurEstimee float64            `json:"valeur_estimee"`
	SampleSize    int                `json:"sample_size"`
	Echantillon   Echantillon        `json:"echantillon"`
	MedianeParAn  map[string]float64 `json:"mediane_par_an"` // years with at least 5 sales
}

// AnalyseImmo is the answer of /v1/fr/analyse-immo.
type AnalyseImmo struct {
	Adresse             ImmoPlace        `json:"adresse"`
	Ville               string           `json:"ville"`
	Type                string           `json:"type"`
	SurfaceM2           float64          `json:"surface_m2"`
	Estimation          EstimationResume `json:"estimation"`
	ScoreInvestissement ScoreInvest      `json:"score_investissement"`
	Rendement           *Rendement       `json:"rendement"`   // null when the rent map failed or has no row
	Energie             *Energie         `json:"energie"`     // null when ADEME failed
	Risques             *RisquesCommune  `json:"risques"`     // null when Géorisques failed
	Demographie         *Demographie     `json:"demographie"` // null when geo.api failed
	Sources             []Source         `json:"sources"`
	Confidence          float64          `json:"confidence"`
}

// AnalysePartial is the answer of /v1/fr/analyse-immo/partial.
type AnalysePartial struct {
	Adresse             ImmoPlace   `json:"adresse"`
	Ville               string      `json:"ville"`
	PrixM2Median        float64     `json:"prix_m2_median"`
	ValeurEstimee       float64     `json:"valeur_estimee"`
	SampleSize          int         `json:"sample_size"`
	RendementBrutPct    *float64    `json:"rendement_brut_pct"`
	ScoreInvestissement ScoreInvest `json:"score_investissement"`
	Sources             []Source    `json:"sources"`
	Partial             bool        `json:"_partial"`
}

const analyseDoc = "https://github.com/peage/appliance/blob/main/api/routes/fr/doc/analyse-immo.md"

// analyseInputs are the side sources' answers; nil is a failed (or unread) source.
type analyseInputs struct {
	rent    *loyers.Rent
	risks   *georisques.Report
	dpe     *ademe.Lines[ademe.DPE]
	commune *geoapi.Commune
	full    bool
}

func rentCall(r *Routes, typ, insee string, out **loyers.Rent) call {
	return call{Source: loyers.Name, Key: "fr/immo/loyer/" + typ + "/" + insee, TTL: keepDVF, Out: out,
		Run: func(ctx context.Context) error {
			v, err := r.loyers.Rent(ctx, typ, insee)
			if errors.Is(err, loyers.ErrNoRent) {
				return nil // no row: the factor has no data, the source answered
			}
			if err != nil {
				return err
			}
			*out = &v
			return nil
		}}
}

func (r *Routes) analyseImmo(ctx context.Context, req *catalog.Request) (any, error) {
	p, geo, err := r.locate(ctx, req.Args.Str("adresse"))
	if err != nil {
		return nil, err
	}
	return r.analyse(ctx, p, geo, req.Args.Float("surface"), nonEmpty(req.Args.Str("type"), "appartement"))
}

func (r *Routes) analyseImmoPartial(ctx context.Context, req *catalog.Request) (any, error) {
	p, geo, err := r.locate(ctx, req.Args.Str("adresse"))
	if err != nil {
		return nil, err
	}
	return r.analysePartial(ctx, p, geo, req.Args.Float("surface"))
}

// sideSources calls the rent map, and for the full analysis the risks, the diagnoses and the
// commune, while DVF is read.
func (r *Routes) sideSources(ctx context.Context, p ImmoPlace, typ string, full bool) (analyseInputs, []Source) {
	in := analyseInputs{full: full}
	calls := []call{rentCall(r, typ, p.Insee, &in.rent)}
	if full {
		codes := plm.Arrondissements(plm.Commune(p.Insee))
		if codes == nil || plm.Commune(p.Insee) != p.Insee {
			codes = []string{p.Insee}
		}
		calls = append(calls,
			call{Source: georisques.Name, Key: "fr/immo/rapport-risques/" + plm.Commune(p.Insee), TTL: keepDaily, Out: &in.risks,
				Run: func(ctx context.Context) (err error) { in.risks, err = r.risques.Report(ctx, p.Insee); return }},
			call{Source: ademe.Name, Key: "fr/immo/dpe/" + p.Insee, TTL: keepDaily, Out: &in.dpe,
				Run: func(ctx context.Context) (err error) {
					in.dpe, err = r.ademe.DPE(ctx, ademe.DPEQuery{INSEE: codes, Size: 100})
					return
				}},
			communeCall(r, plm.Commune(p.Insee), &in.commune))
	}
	return in, r.fanOut(ctx, calls...)
}

// analyseParts runs DVF and the side sources at once.
func (r *Routes) analyseParts(ctx context.Context, p ImmoPlace, typ string, full bool) (*sample, prixm2.Sample, analyseInputs, []Source, error) {
	var (
		in   analyseInputs
		side []Source
		s    *sample
		got  prixm2.Sample
		err  error
	)
	// A panic in either read is the call's failure (nothing charged), not the process's.
	errs := fanout.Go(ctx, nil,
		func(ctx context.Context) error { in, side = r.sideSources(ctx, p, typ, full); return nil },
		func(ctx context.Context) error {
			s, got, err = r.estimateSample(ctx, p, dvfType(typ), full)
			return nil
		})
	if err == nil {
		err = cmp.Or(errs...)
	}
	if err == nil && got.Stats.N == 0 {
		err = noSale(p, typ, s.echantillon(p, got).Periode)
	}
	return s, got, in, side, err
}

func (r *Routes) analyse(ctx context.Context, p ImmoPlace, geo Source, surface float64, typ string) (*AnalyseImmo, error) {
	s, got, in, side, err := r.analyseParts(ctx, p, typ, true)
	if err != nil {
		return nil, err
	}
	sources := append(append([]Source{geo}, s.sources...), side...)
	out := &AnalyseImmo{Adresse: p, Ville: p.Commune, Type: typ, SurfaceM2: surface, Sources: sources, Confidence: confidence(sources),
		Estimation: EstimationResume{PrixM2Median: round(got.Stats.Median, 0), PrixM2: prixM2Of(got.Stats), ValeurEstimee: hundred(got.Stats.Median * surface),
			SampleSize: got.Stats.N, Echantillon: s.echantillon(p, got), MedianeParAn: mediansByYear(got)}}
	out.Rendement = rendement(in.rent, got.Stats.Median, surface)
	out.Energie = energie(in.dpe)
	out.Risques = risques(in.risks)
	out.Demographie = demographie(in.commune, s)
	out.ScoreInvestissement = scoreInvest(in, out.Rendement, out.Energie, out.Risques, out.Demographie, out.Estimation.MedianeParAn)
	return out, nil
}

func (r *Routes) analysePartial(ctx context.Context, p ImmoPlace, geo Source, surface float64) (*AnalysePartial, error) {
	s, got, in, side, err := r.analyseParts(ctx, p, "appartement", false)
	if err != nil {
		return nil, err
	}
	rd := rendement(in.rent, got.Stats.Median, surface)
	out := &AnalysePartial{Adresse: p, Ville: p.Commune, PrixM2Median: round(got.Stats.Median, 0), ValeurEstimee: hundred(got.Stats.Median * surface),
		SampleSize: got.Stats.N, Sources: append(append([]Source{geo}, s.sources...), side...), Partial: true,
		ScoreInvestissement: scoreInvest(in, rd, nil, nil, nil, nil)}
	if rd != nil {
		out.RendementBrutPct = &rd.RendementBrutPct
	}
	return out, nil
}

// Hypotheses of the net yield (research notes §12.3).
const (
	vacancy         = 1.0 / 12 // a month empty a year
	nonRecoverable  = 0.10     // of the rent: the rent map's rents include charges
	propertyTaxRent = 1.0      // months of rent
	acquisitionFees = 0.075    // notary fees of an existing dwelling
)

func rendement(rent *loyers.Rent, medianM2, surface float64) *Rendement {
	if rent == nil || medianM2 <= 0 {
		return nil
	}
	monthly := rent.PerM2 * surface
	annual := monthly * 12
	price := medianM2 * surface
	net := (annual*(1-vacancy) - nonRecoverable*annual - propertyTaxRent*monthly) / (price * (1 + acquisitionFees)) * 100
	return &Rendement{LoyerM2: round(rent.PerM2, 2), LoyerM2Bas: round(rent.Low, 2), LoyerM2Haut: round(rent.High, 2), LoyerMensuel: round(monthly, 0),
		RendementBrutPct: round(rent.PerM2*12/medianM2*100, 2), RendementNetPct: round(net, 2), Niveau: rent.Level, Annonces: rent.Listings,
		Edition: loyers.Edition, Hypotheses: []string{"vacance 1 mois par an", "charges non récupérables 10 % du loyer", "taxe foncière 1 mois de loyer",
			"frais d'acquisition 7,5 % (ancien)", "prix : médiane DVF × surface"}}
}

func energie(l *ademe.Lines[ademe.DPE]) *Energie {
	if l == nil {
		return nil
	}
	e := &Energie{Classes: map[string]int{}, Note: "les diagnostics les plus récents de la commune (100 au plus), tous logements"}
	fg := 0
	for _, d := range l.Results {
		if d.EtiquetteDPE == "" {
			continue
		}
		e.Diagnostics++
		e.Classes[d.EtiquetteDPE]++
		if d.EtiquetteDPE == "F" || d.EtiquetteDPE == "G" {
			fg++
		}
	}
	if e.Diagnostics > 0 {
		e.PartFGPct = round(float64(fg)/float64(e.Diagnostics)*100, 1)
	}
	return e
}

func risques(rep *georisques.Report) *RisquesCommune {
	if rep == nil {
		return nil
	}
	out := &RisquesCommune{Risques: []string{}}
	for _, p := range rep.Present() {
		out.Risques = append(out.Risques, p.Label())
	}
	out.Total = len(out.Risques)
	return out
}

func demographie(c *geoapi.Commune, s *sample) *Demographie {
	if c == nil {
		return nil
	}
	d := &Demographie{Commune: c.Nom, Insee: c.Code, Population: c.Population, Departement: ref(c.Departement), Region: ref(c.Region), VentesAn: ventesAn(s)}
	d.SurfaceKm2, d.DensiteHabKm2 = areaDensity(c)
	return d
}

// communeCall reads a commune's population and area from geo.api, kept a day.
func communeCall(r *Routes, code string, out **geoapi.Commune) call {
	return call{Source: geoapi.Name, Key: "fr/immo/commune/" + code, TTL: keepDaily, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.geo.ByCode(ctx, code); return }}
}

// areaDensity is c's area in km² (geo.api gives hectares), rounded to 2 decimals, and its
// population per km² of the unrounded area, rounded to 1; both nil without an area, the
// density nil without a population.
func areaDensity(c *geoapi.Commune) (km2, density *float64) {
	if c.Surface == nil || *c.Surface <= 0 {
		return nil, nil
	}
	a := round(*c.Surface/100, 2)
	if c.Population == nil {
		return &a, nil
	}
	d := round(float64(*c.Population)/(*c.Surface/100), 1)
	return &a, &d
}

// ventesAn is the single-dwelling sales (both types) a year over the files read.
func ventesAn(s *sample) float64 {
	years := 0
	for _, f := range s.files {
		if !f.Absent {
			years++
		}
	}
	if years == 0 {
		return 0
	}
	sales := s.sales()
	n := prixm2.Compute(sales, "Appartement").Stats.N + prixm2.Compute(sales, "Maison").Stats.N
	return round(float64(n)/float64(years), 1)
}

// mediansByYear is the median price per m² of each year with at least 5 kept sales.
func mediansByYear(got prixm2.Sample) map[string]float64 {
	by := map[string][]float64{}
	for _, k := range got.Kept {
		if len(k.Date) >= 4 {
			by[k.Date[:4]] = append(by[k.Date[:4]], k.PerM2)
		}
	}
	out := map[string]float64{}
	for y, v := range by {
		if len(v) >= 5 {
			out[y] = round(prixm2.Describe(v).Median, 0)
		}
	}
	return out
}

// momentum is the change in % of the median between the two latest consecutive years.
func momentum(m map[string]float64) *float64 {
	latest := 0
	for y := range m {
		if n, _ := strconv.Atoi(y); n > latest {
			if _, ok := m[strconv.Itoa(n-1)]; ok {
				latest = n
			}
		}
	}
	if latest == 0 {
		return nil
	}
	prev, cur := m[strconv.Itoa(latest-1)], m[strconv.Itoa(latest)]
	v := round((cur-prev)/prev*100, 1)
	return &v
}

// scoreInvest applies the method: each factor's sub-score s in [0, 1] earns round(weight × s)
// points; a factor without data earns 40 % of its weight, rounded.
func scoreInvest(in analyseInputs, rd *Rendement, en *Energie, ri *RisquesCommune, dm *Demographie, medians map[string]float64) ScoreInvest {
	out := ScoreInvest{KnockOuts: []string{}, MethodVersion: investMethod, Methode: analyseDoc}
	add := func(name string, weight int, value *float64, sub func(float64) float64, bareme string, read bool) {
		f := factor(name, weight, value, sub, bareme, read)
		out.Facteurs = append(out.Facteurs, f)
		out.Score += f.Points
	}
	var yield, liquidity, risk, fg *float64
	if rd != nil {
		yield = &rd.RendementBrutPct
	}
	if dm != nil && dm.Population != nil && *dm.Population > 0 {
		v := round(dm.VentesAn/float64(*dm.Population)*1000, 2)
		liquidity = &v
	}
	if ri != nil {
		v := float64(ri.Total)
		risk = &v
	}
	if en != nil && en.Diagnostics > 0 {
		fg = &en.PartFGPct
	}
	add("rendement_brut_pct", 40, yield, func(v float64) float64 { return (v - 3) / 6 }, "(rendement − 3) / 6 : 3 % → 0, 9 % → 1", true)
	add("ventes_pour_1000_hab", 20, liquidity, func(v float64) float64 { return v / 15 }, "ventes par an pour 1 000 habitants / 15", in.full)
	add("evolution_prix_pct", 15, momentum(medians), func(v float64) float64 { return (v + 5) / 10 }, "(évolution annuelle de la médiane + 5) / 10", in.full)
	add("risques_recenses", 15, risk, func(v float64) float64 { return 1 - math.Min(v/8, 1) }, "1 − risques / 8", in.full)
	add("part_dpe_fg_pct", 10, fg, func(v float64) float64 { return 1 - math.Min(v/40, 1) }, "1 − part F et G / 40 %", in.full)
	out.Note = gradeAD(out.Score)
	return out
}

// factor scores one factor of the property and location scores: round(weight × sub(value))
// points with sub clamped to [0, 1]; without a value, or unread by the variant, 40 % of the
// weight.
func factor(name string, weight int, value *float64, sub func(float64) float64, bareme string, read bool) Facteur {
	f := Facteur{Facteur: name, Valeur: value, Poids: weight, Bareme: bareme}
	switch {
	case !read:
		f.Resultat, f.Points = FactorNotRead, int(math.Round(0.4*float64(weight)))
	case value == nil:
		f.Resultat, f.Points = FactorMissing, int(math.Round(0.4*float64(weight)))
	default:
		f.Resultat, f.Points = FactorOK, int(math.Round(float64(weight)*clamp01(sub(*value))))
	}
	return f
}

// gradeAD is the grade of a property or location score: A from 75, B from 60, C from 45, D.
func gradeAD(score int) string {
	switch {
	case score >= 75:
		return "A"
	case score >= 60:
		return "B"
	case score >= 45:
		return "C"
	}
	return "D"
}

func clamp01(v float64) float64 { return math.Max(0, math.Min(1, v)) }
