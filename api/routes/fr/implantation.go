package fr

import (
	"cmp"
	"context"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/compute/prixm2"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/geoapi"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/internal/fanout"
)

// The location study (etude-implantation) counts the active companies of an activity in a
// commune and in its département from the register, sets them against the populations from
// geo.api, and adds the commune's recorded prices of business premises (DVF). The method is
// doc/etude-implantation.md (implantationMethod). The register's count in the commune is the
// figure the study cannot stand without (502, not charged, when it fails); every other source
// is declared when it fails, and its factor earns 40 % of its weight.
const implantationMethod = "implantation-1"

// EtudeImplantation is the answer of /v1/fr/etude-implantation.
type EtudeImplantation struct {
	Commune                ImplantationCommune `json:"commune"`
	Activite               string              `json:"activite"`
	NAF                    string              `json:"naf"`
	NAFResolution          string              `json:"naf_resolution"`
	ConcurrentsActifs      int                 `json:"concurrents_actifs"`
	HabitantsParConcurrent *float64            `json:"habitants_par_concurrent"` // null without population or competitor
	Departement            *ZoneConcurrence    `json:"departement"`              // null when a source failed
	ScoreOpportunite       ScoreOpportunite    `json:"score_opportunite"`
	PrixLocauxCommerciaux  *PrixLocaux         `json:"prix_locaux_commerciaux"` // null when DVF failed
	Sources                []Source            `json:"sources"`
	Confidence             float64             `json:"confidence"`
}

// ImplantationCommune is the commune and its demographics.
type ImplantationCommune struct {
	Nom           *string  `json:"nom"`
	Insee         string   `json:"insee"`
	Population    *int     `json:"population"`
	SurfaceKm2    *float64 `json:"surface_km2"`
	DensiteHabKm2 *float64 `json:"densite_hab_km2"`
	Departement   string   `json:"departement"`
}

// ZoneConcurrence is the same count over the département.
type ZoneConcurrence struct {
	Code                   string   `json:"code"`
	ConcurrentsActifs      int      `json:"concurrents_actifs"`
	Population             int      `json:"population"`
	HabitantsParConcurrent *float64 `json:"habitants_par_concurrent"`
}

// PrixLocaux are the commune's recorded sales of business premises over three years.
type PrixLocaux struct {
	Ventes        int     `json:"ventes"`
	PrixM2        *PrixM2 `json:"prix_m2"` // null without sale
	Periode       string  `json:"periode"`
	Fiabilite     string  `json:"fiabilite"`
	AnneesEnEchec []int   `json:"annees_en_echec"`
}

// ScoreOpportunite is the opportunity score with its breakdown.
type ScoreOpportunite struct {
	Score         int       `json:"score"`
	Note          string    `json:"note"`
	Facteurs      []Facteur `json:"facteurs"`
	KnockOuts     []string  `json:"knock_outs"`
	MethodVersion string    `json:"method_version"`
	Methode       string    `json:"methode"`
}

const implantationDoc = "https://github.com/peage/appliance/blob/main/api/routes/fr/doc/etude-implantation.md"

var inseeCode = regexp.MustCompile(`^([0-9]{2}|2[AB])[0-9]{3}$`)

// departementOf is the département of a commune code (3 digits overseas).
func departementOf(insee string) string {
	if strings.HasPrefix(insee, "97") {
		return insee[:3]
	}
	return insee[:2]
}

func (r *Routes) etudeImplantation(ctx context.Context, req *catalog.Request) (any, error) {
	activity, commune := strings.TrimSpace(req.Args.Str("activite")), strings.TrimSpace(req.Args.Str("commune"))
	var sources []Source
	out := EtudeImplantation{Activite: activity}

	// The commune: an INSEE code is taken as given (its data is read below); a name is the
	// most populated commune of that name.
	code := strings.ToUpper(commune)
	if !inseeCode.MatchString(code) {
		l, srcs, err := r.place(ctx, commune)
		sources = append(sources, srcs...)
		if err != nil {
			return nil, err
		}
		if l.Type != "commune" {
			return nil, apierr.BadParam("commune", "give a commune name or its INSEE code, not a département or a postal code")
		}
		code = l.Code
	}
	code = plm.Commune(code)
	dep := departementOf(code)
	out.Commune = ImplantationCommune{Insee: code, Departement: dep}

	// The activity: a NAF code, or the NAF code most frequent among the commune's active
	// companies matching the words.
	if up := strings.ToUpper(activity); nafCode.MatchString(up) {
		out.NAF, out.NAFResolution = up, "given as a NAF code"
	} else {
		var res *re.Results
		srcs, errs := r.fanOutErrs(ctx, searchCall(r, re.Query{Q: activity, EtatAdministratif: "A", CodeCommune: code, Page: 1, PerPage: re.MaxPerPage}, &res))
		sources = append(sources, srcs...)
		if err := essential(errs, 0); err != nil {
			return nil, err
		}
		naf, n := modalNAF(res.Results)
		if naf == "" {
			return nil, apierr.NotFound("no active company matching %q in commune %s: give a NAF code (e.g. 10.71C) as activite", activity, code)
		}
		out.NAF = naf
		out.NAFResolution = "the most frequent NAF code (" + itoa(n) + " of " + itoa(len(res.Results)) + ") among the commune's active companies whose register entry matches \"" + activity + "\""
	}

	// The counts, the populations and the premises' prices at once.
	var (
		inCommune, inDep *re.Results
		deps             []geoapi.Commune
		c                *geoapi.Commune
		premises         *sample
		premisesSample   prixm2.Sample
		premisesErr      error
	)
	calls := []call{
		searchCall(r, re.Query{ActivitePrincipale: out.NAF, EtatAdministratif: "A", CodeCommune: code, Page: 1, PerPage: 1}, &inCommune),
		searchCall(r, re.Query{ActivitePrincipale: out.NAF, EtatAdministratif: "A", Departement: dep, Page: 1, PerPage: 1}, &inDep),
		{Source: geoapi.Name, Key: "fr/immo/departement/" + dep, TTL: keepDaily, Out: &deps,
			Run: func(ctx context.Context) (err error) { deps, err = r.geo.InDepartement(ctx, dep); return }},
		communeCall(r, code, &c),
	}
	var (
		srcs []Source
		errs []error
	)
	// A panic in either is the call's failure (nothing charged), not the process's.
	if err := cmp.Or(fanout.Go(ctx, nil,
		func(ctx context.Context) error {
			premises, premisesSample, premisesErr = r.estimateSample(ctx, ImmoPlace{Insee: code}, prixm2.Commerce, false)
			return nil
		},
		func(ctx context.Context) error { srcs, errs = r.fanOutErrs(ctx, calls...); return nil })...); err != nil {
		return nil, err
	}
	sources = append(sources, srcs...)
	if err := essential(errs, 0); err != nil {
		return nil, err
	}
	if upstream.IsNotFound(errs[3]) {
		return nil, apierr.NotFound("no commune has the INSEE code %s", code)
	}
	sources = append(sources, premises.sources...)

	out.ConcurrentsActifs = inCommune.TotalResults
	if c != nil {
		out.Commune.Nom, out.Commune.Population = strPtr(c.Nom), c.Population
		out.Commune.SurfaceKm2, out.Commune.DensiteHabKm2 = areaDensity(c)
	}
	out.HabitantsParConcurrent = perCompetitor(out.Commune.Population, out.ConcurrentsActifs)
	if inDep != nil && deps != nil {
		pop := 0
		for _, d := range deps {
			if d.Population != nil {
				pop += *d.Population
			}
		}
		out.Departement = &ZoneConcurrence{Code: dep, ConcurrentsActifs: inDep.TotalResults, Population: pop, HabitantsParConcurrent: perCompetitor(&pop, inDep.TotalResults)}
	}
	if premisesErr == nil || apierr.From(premisesErr).Status() == 404 {
		e := premises.echantillon(ImmoPlace{Insee: code}, premisesSample)
		pl := &PrixLocaux{Ventes: premisesSample.Stats.N, Periode: e.Periode, Fiabilite: e.Fiabilite, AnneesEnEchec: e.AnneesEnEchec}
		if premisesSample.Stats.N > 0 {
			pm := prixM2Of(premisesSample.Stats)
			pl.PrixM2 = &pm
		}
		out.PrixLocauxCommerciaux = pl
	}
	out.ScoreOpportunite = scoreOpportunite(out)
	out.Sources, out.Confidence = sources, confidence(sources)
	return out, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func perCompetitor(pop *int, n int) *float64 {
	if pop == nil || n == 0 {
		return nil
	}
	v := round(float64(*pop)/float64(n), 0)
	return &v
}

// scoreOpportunite applies implantation-1: competition against the département (50),
// population (30), density (20); a factor without data earns 40 % of its weight.
func scoreOpportunite(e EtudeImplantation) ScoreOpportunite {
	out := ScoreOpportunite{KnockOuts: []string{}, MethodVersion: implantationMethod, Methode: implantationDoc}
	add := func(name string, weight int, value *float64, sub func(float64) float64, bareme string) {
		f := factor(name, weight, value, sub, bareme, true)
		out.Facteurs = append(out.Facteurs, f)
		out.Score += f.Points
	}
	var ratio, pop *float64
	switch {
	case e.ConcurrentsActifs == 0 && e.Commune.Population != nil && e.Departement != nil:
		v := 2.0 // no competitor in the commune: the best case of the scale
		ratio = &v
	case e.HabitantsParConcurrent != nil && e.Departement != nil && e.Departement.HabitantsParConcurrent != nil:
		v := round(*e.HabitantsParConcurrent / *e.Departement.HabitantsParConcurrent, 2)
		ratio = &v
	}
	if e.Commune.Population != nil {
		v := float64(*e.Commune.Population)
		pop = &v
	}
	add("habitants_par_concurrent_vs_departement", 50, ratio, func(v float64) float64 { return (v - 0.5) / 1.5 }, "(ratio − 0,5) / 1,5 : moitié du département → 0, double → 1")
	add("population", 30, pop, func(v float64) float64 { return math.Log10(math.Max(v, 1)/1000) / 2 }, "log10(population / 1 000) / 2 : 1 000 → 0, 100 000 → 1")
	add("densite_hab_km2", 20, e.Commune.DensiteHabKm2, func(v float64) float64 { return math.Log10(math.Max(v, 1)/100) / 2 }, "log10(densité / 100) / 2 : 100 → 0, 10 000 → 1")
	out.Note = gradeAD(out.Score)
	return out
}
