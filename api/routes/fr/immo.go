package fr

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/compute/prixm2"
	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/upstream/ban"
	"github.com/peage/appliance/api/upstream/dvf"
)

// Property estimates (estimation-immo, its free trial, analyse-immo) start from the address:
// the geocoder says which commune (arrondissement in Paris, Lyon and Marseille) the sample is
// drawn from, so it is the one source they cannot stand without. The sales are the DVF files
// of that commune, one call per year in parallel; a year whose file failed is declared in
// sources[] and the estimate is made from the others, a year without a file (not published,
// or no sale) is said in echantillon. The method is doc/estimation-immo.md (prixm2.Version).

// ImmoPlace is the geocoded address.
type ImmoPlace struct {
	Label    string  `json:"label"`
	Insee    string  `json:"insee"` // arrondissement code in Paris, Lyon, Marseille
	Commune  string  `json:"commune"`
	Postcode string  `json:"cp"`
	Lat      float64 `json:"lat"`
	Lon      float64 `json:"lon"`
	Score    float64 `json:"score"` // the geocoder's confidence in its match, 0 to 1
}

// PrixM2 and Echantillon are shared with the families that compare prices with DVF's
// (api/family).
type (
	PrixM2      = family.PrixM2
	Echantillon = family.Echantillon
)

// EstimationBien is the estimate of the property, euros rounded to the hundred.
type EstimationBien struct {
	ValeurEstimee float64 `json:"valeur_estimee"` // median × surface
	Basse         float64 `json:"basse"`          // q1 × surface
	Haute         float64 `json:"haute"`          // q3 × surface
}

// EstimationImmo is the answer of /v1/fr/estimation-immo.
type EstimationImmo struct {
	Adresse       ImmoPlace      `json:"adresse"`
	Ville         string         `json:"ville"`
	Type          string         `json:"type"`
	SurfaceM2     float64        `json:"surface_m2"`
	PrixM2        PrixM2         `json:"prix_m2"`
	Estimation    EstimationBien `json:"estimation"`
	SampleSize    int            `json:"sample_size"`
	Echantillon   Echantillon    `json:"echantillon"`
	Comparables   []Comparable   `json:"comparables"` // the most recent sales of the sample
	MethodVersion string         `json:"method_version"`
	Methode       string         `json:"methode"`
	Source        string         `json:"source"`
	Sources       []Source       `json:"sources"`
	Confidence    float64        `json:"confidence"`
}

// Comparable is one sale of the sample.
type Comparable struct {
	ID        string  `json:"id_mutation"`
	Date      string  `json:"date"`
	Prix      float64 `json:"prix"`
	SurfaceM2 int     `json:"surface_m2"`
	PrixM2    float64 `json:"prix_m2"`
	Adresse   string  `json:"adresse"`
}

const (
	dvfSourceName  = "DVF (DGFiP), fichiers géolocalisés d'Etalab"
	estimationDoc  = "https://github.com/peage/appliance/blob/main/api/routes/fr/doc/estimation-immo.md"
	maxComparables = 10
	keepDVF        = 24 * time.Hour // files change twice a year
	// dvfWindow is the years read first (the last two full years and the current one);
	// dvfBack the earlier years added when the sample is too small.
	dvfWindow = 3
	dvfBack   = 3
)

// geocodeCall geocodes an address (five candidates, the best first), kept an hour.
func geocodeCall(r *Routes, q string, out **ban.Collection) call {
	return call{Source: ban.Name, Key: "fr/immo/ban/" + strings.ToLower(q), TTL: time.Hour, Out: out,
		Run: func(ctx context.Context) (err error) { *out, err = r.ban.Search(ctx, q, 5); return }}
}

// dvfYear is one DVF file: its sales, or Absent when DVF publishes no file.
type dvfYear struct {
	Year   int
	Absent bool
	Sales  []dvf.Mutation
}

func dvfCall(r *Routes, insee string, year int, out **dvfYear) call {
	return call{Source: dvf.Name, Key: fmt.Sprintf("fr/immo/dvf/%s/%d", insee, year), TTL: keepDVF, Out: out,
		Run: func(ctx context.Context) error {
			ms, err := r.dvf.Mutations(ctx, year, insee)
			if errors.Is(err, dvf.ErrNoFile) {
				*out = &dvfYear{Year: year, Absent: true}
				return nil
			}
			if err != nil {
				return err
			}
			// Kept in the answer cache: what the estimates do not read is dropped (a year
			// of Paris is some 35 000 sales).
			for i := range ms {
				ms[i].Parcelles, ms[i].Lat, ms[i].Lon = nil, nil, nil
			}
			*out = &dvfYear{Year: year, Sales: ms}
			return nil
		}}
}

// locate geocodes the address of a property route: no match is a 404, a commune DVF does not
// cover a 404 naming why (both before any sale file is read, and not charged).
func (r *Routes) locate(ctx context.Context, adresse string) (ImmoPlace, Source, error) {
	var res *ban.Collection
	src, err := r.fetch(ctx, geocodeCall(r, adresse, &res))
	if err != nil {
		return ImmoPlace{}, src, err
	}
	if len(res.Features) == 0 {
		return ImmoPlace{}, src, apierr.NotFound("no French address matches %q", adresse)
	}
	a := address(res.Features[0])
	p := ImmoPlace{Label: a.Label, Insee: a.Insee, Commune: a.City, Postcode: a.Postcode, Lat: a.Lat, Lon: a.Lon, Score: round(a.Score, 2)}
	if notCovered(p.Insee) {
		return p, src, apierr.NotFound("DVF does not cover %s (%s): Alsace-Moselle (57, 67, 68) and Mayotte keep their land registry apart", p.Commune, p.Insee)
	}
	return p, src, nil
}

// immoReady: the property routes need the geocoder and DVF.
func (r *Routes) immoReady() error { return errors.Join(r.ban.Ready(), r.dvf.Ready()) }

func notCovered(insee string) bool {
	d := insee[:min(2, len(insee))]
	return d == "57" || d == "67" || d == "68" || strings.HasPrefix(insee, "976")
}

// dvfYears reads the files of insee for years in parallel. It fails only when every file
// failed (502 naming DVF, not charged).
func (r *Routes) dvfYears(ctx context.Context, insee string, years []int) ([]*dvfYear, []Source, error) {
	files := make([]*dvfYear, len(years))
	calls := make([]call, len(years))
	for i, y := range years {
		calls[i] = dvfCall(r, insee, y, &files[i])
	}
	srcs, errs := r.fanOutErrs(ctx, calls...)
	for i, y := range years {
		srcs[i].Detail = fmt.Sprintf("%s %d", insee, y)
	}
	for i := range errs {
		if errs[i] == nil {
			return files, srcs, nil
		}
	}
	return nil, srcs, errs[0]
}

// sample is the sales read for an estimate and how they were read.
type sample struct {
	insee   string
	files   []*dvfYear
	failed  []int
	sources []Source
	widened []string
}

func (s *sample) sales() []prixm2.Sale {
	var out []prixm2.Sale
	for _, f := range s.files {
		for _, m := range f.Sales {
			v := 0.0
			if m.Valeur != nil {
				v = *m.Valeur
			}
			out = append(out, prixm2.Sale{ID: m.ID, Date: m.Date, Nature: m.Nature, Type: m.Type, Dwellings: m.Dwellings,
				Commercial: m.Commercial, Price: v, Surface: m.SurfaceBati})
		}
	}
	return out
}

// read reads insee for years and reports the files it could not read.
func (r *Routes) read(ctx context.Context, s *sample, years []int) error {
	files, srcs, err := r.dvfYears(ctx, s.insee, years)
	s.sources = append(s.sources, srcs...)
	if err != nil {
		s.failed = append(s.failed, years...)
		return err
	}
	for i, f := range files {
		if f == nil {
			s.failed = append(s.failed, years[i])
			continue
		}
		s.files = append(s.files, f)
	}
	return nil
}

func yearsFrom(first, last int) []int {
	var ys []int
	for y := last; y >= first; y-- {
		ys = append(ys, y)
	}
	return ys
}

// estimateSample draws the sample of typ (Maison or Appartement) around p: the commune over
// the last dvfWindow years; when too small, dvfBack earlier years; when still too small and
// p is an arrondissement, the whole city over the same years. Neighbouring communes are not
// read (no neighbourhood source is connected): the note says so.
func (r *Routes) estimateSample(ctx context.Context, p ImmoPlace, typ string, widen bool) (*sample, prixm2.Sample, error) {
	last := r.parisDate().Year()
	s := &sample{insee: p.Insee}
	years := yearsFrom(last-dvfWindow+1, last)
	if err := r.read(ctx, s, years); err != nil {
		return s, prixm2.Sample{}, err
	}
	if allAbsent(s.files) && !widen {
		return s, prixm2.Sample{}, s.nothing(p)
	}
	got := prixm2.Compute(s.sales(), typ)
	if !widen || got.Stats.N >= prixm2.Enough {
		return s, got, nil
	}
	back := yearsFrom(last-dvfWindow-dvfBack+1, last-dvfWindow)
	if r.read(ctx, s, back) == nil {
		s.widened = append(s.widened, fmt.Sprintf("années %d à %d ajoutées (moins de %d ventes)", back[len(back)-1], back[0], prixm2.Enough))
		got = prixm2.Compute(s.sales(), typ)
	}
	if city := plm.Commune(p.Insee); got.Stats.N < prixm2.Enough && city != p.Insee {
		// The city over the window only: twenty files a year for Paris.
		c := &sample{insee: city}
		if r.read(ctx, c, years) == nil {
			wider := prixm2.Compute(c.sales(), typ)
			if wider.Stats.N > got.Stats.N {
				c.sources = slices.Concat(s.sources, c.sources)
				c.widened = append(slices.Clone(s.widened), "toute la ville (arrondissements réunis)")
				s, got = c, wider
			}
		} else {
			s.sources = append(s.sources, c.sources...)
		}
	}
	if allAbsent(s.files) {
		return s, got, s.nothing(p)
	}
	return s, got, nil
}

func allAbsent(fs []*dvfYear) bool {
	for _, f := range fs {
		if !f.Absent {
			return false
		}
	}
	return true
}

// nothing is the error of a sample without any file read: a 404 when DVF publishes none for
// the years asked, but a 502 when some of them failed (they may hold the sales).
func (s *sample) nothing(p ImmoPlace) error {
	var years []int
	for _, f := range s.files {
		years = append(years, f.Year)
	}
	years = append(years, s.failed...)
	slices.Sort(years)
	if len(s.failed) > 0 {
		return apierr.Upstream(dvf.Name, nil, "DVF has no file for %s (%s) in the years it answered, and failed on %v: no sample", p.Commune, p.Insee, s.failed)
	}
	return apierr.NotFound("DVF publishes no sale file for %s (%s) in %d-%d: no recorded sale to compare with", p.Commune, p.Insee, years[0], years[len(years)-1])
}

func noSale(p ImmoPlace, typ, periode string) error {
	return apierr.NotFound("no recorded sale of a single %s in %s (%s) over %s: no price per m² to estimate from", typ, p.Commune, p.Insee, periode)
}

// echantillon describes s for the answer.
func (s *sample) echantillon(p ImmoPlace, got prixm2.Sample) Echantillon {
	e := Echantillon{Ventes: got.Stats.N, Ecartees: got.Out, Annees: []int{}, AnneesSansFichier: []int{}, AnneesEnEchec: slices.Clone(s.failed),
		Codes: s.insee, Elargissements: append([]string{}, s.widened...), Fiabilite: prixm2.Reliability(got.Stats.N)}
	if e.AnneesEnEchec == nil {
		e.AnneesEnEchec = []int{}
	}
	for _, f := range s.files {
		if f.Absent {
			e.AnneesSansFichier = append(e.AnneesSansFichier, f.Year)
		} else {
			e.Annees = append(e.Annees, f.Year)
		}
	}
	for _, l := range [][]int{e.Annees, e.AnneesSansFichier, e.AnneesEnEchec} {
		slices.Sort(l)
	}
	all := slices.Concat(e.Annees, e.AnneesSansFichier, e.AnneesEnEchec)
	if len(all) > 0 {
		e.Periode = fmt.Sprintf("%d-%d", slices.Min(all), slices.Max(all))
	}
	switch {
	case s.insee != p.Insee:
		e.Perimetre = "ville"
	case plm.Commune(p.Insee) != p.Insee:
		e.Perimetre = "arrondissement"
	default:
		e.Perimetre = "commune"
	}
	if got.Stats.N < prixm2.Enough {
		n := fmt.Sprintf("échantillon faible (%d ventes) : les communes voisines ne sont pas lues, l'estimation est indicative", got.Stats.N)
		e.Note = &n
	}
	return e
}

func prixM2Of(st prixm2.Stats) PrixM2 {
	q1, q3 := round(st.Q1, 0), round(st.Q3, 0)
	return PrixM2{Median: round(st.Median, 0), Q1: q1, Q3: q3, Range: [2]float64{q1, q3}, Min: round(st.Min, 0), Max: round(st.Max, 0)}
}

func hundred(v float64) float64 { return math.Round(v/100) * 100 }

func comparables(got prixm2.Sample, files []*dvfYear) []Comparable {
	addr := map[string]string{}
	for _, f := range files {
		for _, m := range f.Sales {
			addr[m.ID] = m.Adresse
		}
	}
	ks := slices.Clone(got.Kept)
	slices.SortStableFunc(ks, func(a, b prixm2.Kept) int { return strings.Compare(b.Date+b.ID, a.Date+a.ID) })
	out := []Comparable{}
	for _, k := range ks[:min(len(ks), maxComparables)] {
		out = append(out, Comparable{ID: k.ID, Date: k.Date, Prix: k.Price, SurfaceM2: k.Surface, PrixM2: round(k.PerM2, 0), Adresse: addr[k.ID]})
	}
	return out
}

// dvfType is the DVF type_local of the type parameter.
func dvfType(t string) string {
	if t == "maison" {
		return "Maison"
	}
	return "Appartement"
}

func (r *Routes) estimationImmo(ctx context.Context, req *catalog.Request) (any, error) {
	p, geo, err := r.locate(ctx, req.Args.Str("adresse"))
	if err != nil {
		return nil, err
	}
	typ := nonEmpty(req.Args.Str("type"), "appartement")
	return r.estimate(ctx, p, geo, req.Args.Float("surface"), typ)
}

// estimate is the estimation of a property of surface m² and type typ at p.
func (r *Routes) estimate(ctx context.Context, p ImmoPlace, geo Source, surface float64, typ string) (*EstimationImmo, error) {
	s, got, err := r.estimateSample(ctx, p, dvfType(typ), true)
	if err != nil {
		return nil, err
	}
	if got.Stats.N == 0 {
		return nil, noSale(p, typ, s.echantillon(p, got).Periode)
	}
	pm := prixM2Of(got.Stats)
	sources := append([]Source{geo}, s.sources...)
	return &EstimationImmo{Adresse: p, Ville: p.Commune, Type: typ, SurfaceM2: surface, PrixM2: pm,
		Estimation: EstimationBien{ValeurEstimee: hundred(got.Stats.Median * surface), Basse: hundred(got.Stats.Q1 * surface), Haute: hundred(got.Stats.Q3 * surface)},
		SampleSize: got.Stats.N, Echantillon: s.echantillon(p, got), Comparables: comparables(got, s.files),
		MethodVersion: prixm2.Version, Methode: estimationDoc, Source: dvfSourceName, Sources: sources, Confidence: confidence(sources)}, nil
}

// FreeEstimation is the answer of /free/estimation-immo: the commune's median price per m²
// over the last years, per type, without widening nor estimate.
type FreeEstimation struct {
	Adresse       ImmoPlace           `json:"adresse"`
	Ville         string              `json:"ville"`
	PrixM2Median  map[string]*float64 `json:"prix_m2_median"` // appartement, maison; null without sale
	Ventes        map[string]int      `json:"ventes"`
	Periode       string              `json:"periode"`
	MethodVersion string              `json:"method_version"`
	Note          string              `json:"note"`
	Sources       []Source            `json:"sources"`
}

func (r *Routes) freeEstimation(ctx context.Context, req *catalog.Request) (any, error) {
	p, geo, err := r.locate(ctx, req.Args.Str("adresse"))
	if err != nil {
		return nil, err
	}
	return r.communeMedian(ctx, p, geo)
}

// communeMedian is the free trial's answer at p.
func (r *Routes) communeMedian(ctx context.Context, p ImmoPlace, geo Source) (*FreeEstimation, error) {
	s, _, err := r.estimateSample(ctx, p, "Appartement", false)
	if err != nil {
		return nil, err
	}
	out := FreeEstimation{Adresse: p, Ville: p.Commune, PrixM2Median: map[string]*float64{}, Ventes: map[string]int{}, MethodVersion: prixm2.Version,
		Note:    "free trial: the median of the commune's sales over the last years, without widening; /v1/fr/estimation-immo gives the quartiles, the estimate and a widened sample",
		Sources: append([]Source{geo}, s.sources...)}
	sales := s.sales()
	for _, t := range []string{"appartement", "maison"} {
		got := prixm2.Compute(sales, dvfType(t))
		out.Ventes[t] = got.Stats.N
		if got.Stats.N > 0 {
			m := round(got.Stats.Median, 0)
			out.PrixM2Median[t] = &m
		} else {
			out.PrixM2Median[t] = nil
		}
	}
	out.Periode = s.echantillon(p, prixm2.Sample{}).Periode
	return &out, nil
}
