package fr

import (
	"context"
	"math"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
)

// The company score is a points scorecard from public data, written in
// api/routes/fr/doc/score-entreprise.md; scoreMethod names its version in every answer. It is
// a risk indicator, not a rating: no payment incident is public.
const scoreMethod = "score-1"

// Factor is one line of the scorecard: its input value, the most it can earn, the points it
// earned, and why.
type Factor struct {
	Pilier   string  `json:"pilier"`
	Facteur  string  `json:"facteur"`
	Valeur   any     `json:"valeur"`
	Poids    int     `json:"poids"`
	Points   int     `json:"points"`
	Resultat string  `json:"resultat"` // ok, or manquant (no data: 40 % of the weight)
	Preuve   string  `json:"preuve"`
	Source   *string `json:"source"`
}

// KnockOut is a rule that overrides the sum.
type KnockOutRule struct {
	Regle  string `json:"regle"`
	Effet  string `json:"effet"`
	Preuve string `json:"preuve"`
}

// scoreInputs are the answers a score is computed from; nil means the source failed or was
// not asked (called says which).
type scoreInputs struct {
	u       re.Unite
	notices *ods.Page[bodacc.Annonce]
	ratios  *ods.Page[economie.Ratio]
	called  map[string]bool
	today   time.Time
}

// Grade bounds (score at least) and the words of each grade.
var grades = []struct {
	min           int
	grade, niveau string
}{{80, "A", "solide"}, {65, "B", "satisfaisant"}, {50, "C", "moyen"}, {35, "D", "fragile"}, {0, "E", "risque_eleve"}}

func grade(score int) (string, string) {
	for _, g := range grades {
		if score >= g.min {
			return g.grade, g.niveau
		}
	}
	return "E", "risque_eleve"
}

func f(pilier, facteur string, poids int, valeur any, source string) Factor {
	x := Factor{Pilier: pilier, Facteur: facteur, Poids: poids, Valeur: valeur, Resultat: "ok"}
	if source != "" {
		x.Source = &source
	}
	return x
}

func (x Factor) earn(points int, why string) Factor { x.Points, x.Preuve = points, why; return x }

// missing is a factor without data: it earns 40 % of its weight, a mild penalty (hidden
// accounts say less than published ones), and lowers confidence.
func (x Factor) missing(why string) Factor {
	x.Resultat, x.Preuve, x.Points = "manquant", why, int(math.Round(float64(x.Poids)*missingShare))
	return x
}

const missingShare = 0.4

// bins returns the points of the first bin whose lower bound v reaches.
func bins(v float64, bounds []float64, points []int) int {
	for i, b := range bounds {
		if v >= b {
			return points[i]
		}
	}
	return points[len(points)-1]
}

// scorecard computes the factors and knock-outs and the final score.
func scorecard(in scoreInputs) (factors []Factor, kos []KnockOutRule, score int) {
	u := in.u
	var proc *Procedures
	if in.notices != nil {
		p := procedureState(u.Siren, in.notices.Results)
		proc = &p
	}

	// A. Financial strength: the newest individual (C or S) public accounts closed within
	// 24 months, and the year before for the trend.
	var latest, previous *economie.Ratio
	if in.ratios != nil {
		limit := in.today.AddDate(0, -24, 0).Format(time.DateOnly)
		for i := range in.ratios.Results {
			x := &in.ratios.Results[i]
			if (x.TypeBilan != "C" && x.TypeBilan != "S") || strings.EqualFold(x.Confidentiality, "Confidentiel") {
				continue
			}
			if latest == nil {
				if x.DateClotureExercice >= limit {
					latest = x
				}
			} else if previous == nil && x.DateClotureExercice < latest.DateClotureExercice {
				previous = x
			}
		}
	}
	src := economie.Name
	fin := []Factor{
		f("A", "resultat_net", 5, nil, src), f("A", "marge_ebe", 5, nil, src), f("A", "autonomie_financiere", 10, nil, src),
		f("A", "capacite_de_remboursement", 10, nil, src), f("A", "ratio_de_liquidite", 5, nil, src), f("A", "evolution_ca", 5, nil, src),
	}
	switch {
	case latest == nil:
		why := "no public individual accounts closed within 24 months"
		if in.ratios == nil && in.called[economie.Name] {
			why = "the accounts source did not answer"
		} else if !in.called[economie.Name] {
			why = "accounts not read by this variant"
		}
		for i := range fin {
			fin[i] = fin[i].missing(why)
		}
	default:
		at := " (accounts closed " + latest.DateClotureExercice + ")"
		if v := latest.ResultatNet; v != nil {
			fin[0].Valeur = *v
			fin[0] = fin[0].earn(map[bool]int{true: 5}[*v > 0], "net income"+at)
		} else {
			fin[0] = fin[0].missing("not published" + at)
		}
		type ratio struct {
			v      *float64
			bounds []float64
			points []int
		}
		for i, r := range []ratio{
			{latest.MargeEBE, []float64{10, 5, 0}, []int{5, 3, 1, 0}},
			{latest.AutonomieFinanciere, []float64{30, 20, 10, 0}, []int{10, 7, 4, 2, 0}},
			{nil, nil, nil}, // repayment capacity: lower is better, below
			{latest.RatioDeLiquidite, []float64{100, 80}, []int{5, 3, 0}},
		} {
			x := &fin[i+1]
			if r.bounds == nil {
				continue
			}
			if r.v == nil {
				*x = x.missing("not published" + at)
				continue
			}
			x.Valeur = *r.v
			*x = x.earn(bins(*r.v, r.bounds, r.points), "as published"+at)
		}
		if v := latest.CapaciteDeRemboursement; v == nil {
			fin[3] = fin[3].missing("not published" + at)
		} else {
			fin[3].Valeur = *v
			p := 0
			switch {
			case *v <= 0:
				p = 0 // no financial debt is published as 0 only when cash flow is nil too: not a strength
			case *v <= 3:
				p = 10
			case *v <= 4:
				p = 7
			case *v <= 7:
				p = 3
			}
			fin[3] = fin[3].earn(p, "years of cash flow to repay financial debt"+at)
		}
		switch {
		case previous == nil || previous.ChiffreDAffaires == nil || latest.ChiffreDAffaires == nil || *previous.ChiffreDAffaires <= 0:
			fin[5] = fin[5].missing("no earlier year to compare" + at)
		default:
			g := (*latest.ChiffreDAffaires/(*previous.ChiffreDAffaires) - 1) * 100
			g = math.Round(g*10) / 10
			fin[5].Valeur = g
			fin[5] = fin[5].earn(bins(g, []float64{5, 0, -20}, []int{5, 3, 1, 0}), "revenue change in % from "+previous.DateClotureExercice)
		}
	}
	factors = append(factors, fin...)

	// B. Judicial history.
	b := f("B", "procedures_collectives", 25, nil, bodacc.Name)
	switch {
	case proc == nil:
		b = b.missing("BODACC did not answer")
	case len(proc.Procedures) == 0:
		b.Valeur = proc.Statut
		b = b.earn(25, "no collective proceeding in BODACC")
	case proc.Statut == "procedure_cloturee":
		last := proc.Procedures[0].DatePublication
		b.Valeur = proc.Statut
		if last < in.today.AddDate(-5, 0, 0).Format(time.DateOnly) {
			b = b.earn(15, "last proceeding closed more than 5 years ago ("+last+")")
		} else {
			b = b.earn(8, "last proceeding closed within 5 years ("+last+")")
		}
	default:
		b.Valeur = proc.Statut
		b = b.earn(0, "a proceeding is open ("+proc.Statut+")")
	}
	factors = append(factors, b)

	// C. Maturity.
	c := f("C", "anciennete_ans", 15, nil, re.Name)
	if created, err := time.Parse(time.DateOnly, u.DateCreation); err != nil {
		c = c.missing("no creation date")
	} else {
		years := math.Floor(in.today.Sub(created).Hours()/24/365.25*10) / 10
		c.Valeur = years
		c = c.earn(bins(years, []float64{10, 5, 3, 1}, []int{15, 12, 8, 4, 0}), "created "+u.DateCreation)
	}
	factors = append(factors, c)

	// D. Size.
	d := f("D", "taille", 10, nonEmpty(u.CategorieEntreprise, u.TrancheEffectifSalarie), re.Name)
	switch t := u.TrancheEffectifSalarie; {
	case u.CategorieEntreprise == "GE" || u.CategorieEntreprise == "ETI":
		d = d.earn(10, "category "+u.CategorieEntreprise)
	case t >= "11" && t != "NN":
		d = d.earn(7, "10 employees or more (band "+t+")")
	case t == "01" || t == "02" || t == "03":
		d = d.earn(5, "1 to 9 employees (band "+t+")")
	default:
		d = d.earn(2, "no employee or unknown (band "+nonEmpty(t, "none")+")")
	}
	factors = append(factors, d)

	// E. Filing discipline.
	e := f("E", "depot_des_comptes", 10, nil, economie.Name)
	newest := ""
	if in.ratios != nil {
		for _, x := range in.ratios.Results {
			newest = max(newest, x.DateClotureExercice)
		}
	}
	if in.notices != nil {
		for _, a := range in.notices.Results {
			var dep bodacc.Depot
			if a.FamilleAvis == bodacc.DPC && a.Depot.Decode(&dep) {
				newest = max(newest, dep.DateCloture)
			}
		}
	}
	e.Valeur = strPtr(newest)
	switch {
	case !strings.HasPrefix(u.NatureJuridique, "5"):
		e = e.earn(5, "not required to file (legal category "+nonEmpty(u.NatureJuridique, "unknown")+"): neutral")
	case newest >= in.today.AddDate(0, -18, 0).Format(time.DateOnly):
		e = e.earn(10, "accounts closed "+newest)
	case newest >= in.today.AddDate(0, -30, 0).Format(time.DateOnly):
		e = e.earn(5, "accounts closed "+newest+", 18 to 30 months ago")
	case !in.called[economie.Name]:
		e = e.missing("accounts not read by this variant, and none in the BODACC notices read")
	case in.ratios == nil:
		e = e.missing("the accounts source did not answer, and none in the BODACC notices read")
	default:
		e = e.earn(0, "no accounts closed within 30 months")
	}
	factors = append(factors, e)

	for _, x := range factors {
		score += x.Points
	}
	// Knock-outs, applied after the sum.
	switch {
	case u.EtatAdministratif == "C":
		kos = append(kos, KnockOutRule{"cessee", "score 0", "the register says the company ceased"})
		score = 0
	case proc != nil && proc.Radiee:
		kos = append(kos, KnockOutRule{"radiation", "score 0", "a deregistration notice was published in BODACC"})
		score = 0
	case proc != nil && proc.Statut == "liquidation_judiciaire":
		kos = append(kos, KnockOutRule{"liquidation_judiciaire", "score 0", "a liquidation is open"})
		score = 0
	case proc != nil && (proc.Statut == "redressement_judiciaire" || proc.Statut == "sauvegarde" || proc.Statut == "retablissement_professionnel"):
		kos = append(kos, KnockOutRule{proc.Statut, "score capped at 25", "a proceeding is open"})
		score = min(score, 25)
	case proc != nil && proc.Statut == "plan_en_cours":
		kos = append(kos, KnockOutRule{"plan_en_cours", "score capped at 45", "a plan is being carried out"})
		score = min(score, 45)
	}
	return factors, kos, score
}

// factorConfidence is the share of the factors that had real data.
func factorConfidence(factors []Factor) float64 {
	n := 0
	for _, x := range factors {
		if x.Resultat == "ok" {
			n++
		}
	}
	return math.Round(float64(n)/float64(len(factors))*100) / 100
}

// Score is the answer of /v1/fr/score-entreprise.
type Score struct {
	Siren         string         `json:"siren"`
	Denomination  string         `json:"denomination"`
	Score         int            `json:"score"`
	Grade         string         `json:"grade"`
	Niveau        string         `json:"niveau"`
	MethodVersion string         `json:"method_version"`
	Facteurs      []Factor       `json:"facteurs"`
	KnockOuts     []KnockOutRule `json:"knock_outs"`
	Finances      []Comptes      `json:"finances"` // null when the accounts source failed
	Sources       []Source       `json:"sources"`
	Confidence    float64        `json:"confidence"` // share of the factors with real data
	Limites       string         `json:"limites"`
}

const scoreLimits = "A risk indicator from public data, not a credit rating: payment incidents are not public, and ratios are binned as data.economie publishes them."

func (r *Routes) scoreRun(ctx context.Context, req *catalog.Request, accounts bool) (scoreInputs, []Source, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return scoreInputs{}, nil, err
	}
	in := scoreInputs{u: u, today: r.parisDate(), called: map[string]bool{bodacc.Name: true, economie.Name: accounts}}
	calls := []call{noticesCall(r, u.Siren, &in.notices)}
	if accounts {
		calls = append(calls, ratiosCall(r, u.Siren, &in.ratios))
	}
	return in, append([]Source{reg}, r.fanOut(ctx, calls...)...), nil
}

func (r *Routes) scoreEntreprise(ctx context.Context, req *catalog.Request) (any, error) {
	in, sources, err := r.scoreRun(ctx, req, true)
	if err != nil {
		return nil, err
	}
	factors, kos, score := scorecard(in)
	g, niveau := grade(score)
	out := Score{Siren: in.u.Siren, Denomination: nonEmpty(in.u.NomComplet, in.u.NomRaisonSociale), Score: score, Grade: g, Niveau: niveau,
		MethodVersion: scoreMethod, Facteurs: factors, KnockOuts: append([]KnockOutRule{}, kos...), Sources: sources,
		Confidence: factorConfidence(factors), Limites: scoreLimits}
	if len(kos) > 0 && kos[0].Effet == "score 0" && (kos[0].Regle == "cessee" || kos[0].Regle == "radiation") {
		out.Niveau = "cessee"
	}
	if in.ratios != nil {
		out.Finances = comptes(in.ratios.Results)
	}
	return out, nil
}

// ScorePartial is the answer of /v1/fr/score-entreprise/partial: without the accounts, so
// pillar A scores its default and the filing factor reads BODACC only.
type ScorePartial struct {
	Siren         string         `json:"siren"`
	Score         int            `json:"score"`
	Niveau        string         `json:"niveau"`
	MethodVersion string         `json:"method_version"`
	Procedures    *int           `json:"procedures_collectives"` // insolvency notices read, null when BODACC failed
	KnockOuts     []KnockOutRule `json:"knock_outs"`
	Facteurs      []Factor       `json:"facteurs"`
	Sources       []Source       `json:"sources"`
	Confidence    float64        `json:"confidence"`
	Partial       bool           `json:"_partial"`
}

func (r *Routes) scorePartial(ctx context.Context, req *catalog.Request) (any, error) {
	in, sources, err := r.scoreRun(ctx, req, false)
	if err != nil {
		return nil, err
	}
	factors, kos, score := scorecard(in)
	_, niveau := grade(score)
	out := ScorePartial{Siren: in.u.Siren, Score: score, Niveau: niveau, MethodVersion: scoreMethod, KnockOuts: append([]KnockOutRule{}, kos...),
		Facteurs: factors, Sources: sources, Confidence: factorConfidence(factors), Partial: true}
	if in.notices != nil {
		n := len(procedureState(in.u.Siren, in.notices.Results).Procedures)
		out.Procedures = &n
	}
	return out, nil
}

// FreeScore is the free trial: the partial computation's score and grade, without the
// breakdown.
type FreeScore struct {
	Siren         string   `json:"siren"`
	Score         int      `json:"score"`
	Niveau        string   `json:"niveau"`
	MethodVersion string   `json:"method_version"`
	Sources       []Source `json:"sources"`
	Trial         bool     `json:"_trial"`
}

func (r *Routes) freeScore(ctx context.Context, req *catalog.Request) (any, error) {
	in, sources, err := r.scoreRun(ctx, req, false)
	if err != nil {
		return nil, err
	}
	_, _, score := scorecard(in)
	_, niveau := grade(score)
	return FreeScore{Siren: in.u.Siren, Score: score, Niveau: niveau, MethodVersion: scoreMethod, Sources: sources, Trial: true}, nil
}
