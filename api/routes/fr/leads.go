package fr

import (
	"context"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/geoapi"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
)

// Qualified leads are the active companies of an activity in a place, each scored on fit,
// health and signals, written in api/routes/fr/doc/qualified-leads.md; leadsMethod names its
// version in every answer.
const leadsMethod = "qualified-leads-1"

// Lead categories and their lower bounds.
const (
	Hot      = "HOT"
	Warm     = "WARM"
	Cold     = "COLD"
	hotFrom  = 70
	warmFrom = 45
)

// Leads is the answer of /v1/fr/qualified-leads.
type Leads struct {
	Activite      string     `json:"activite"`
	NAFCible      string     `json:"naf_cible"`
	NAFResolution string     `json:"naf_resolution"` // how the activity became a NAF code
	Localisation  Lieu       `json:"localisation"`
	TotalMarche   int        `json:"total_marche"` // active companies of the NAF code in the place
	Leads         []Lead     `json:"leads"`
	Exclus        []Exclu    `json:"exclus"` // dropped: a collective proceeding is open, or deregistered
	Comptes       LeadCounts `json:"categories"`
	MethodVersion string     `json:"method_version"`
	Sources       []Source   `json:"sources"`
	Confidence    float64    `json:"confidence"`
	Limites       string     `json:"limites"`
}

// Lieu is the place the leads are in.
type Lieu struct {
	Saisie string `json:"saisie"`
	Type   string `json:"type"` // departement, code_postal or commune
	Code   string `json:"code"`
	Nom    string `json:"nom"`
}

// LeadCounts counts the leads per category.
type LeadCounts struct {
	Hot  int `json:"HOT"`
	Warm int `json:"WARM"`
	Cold int `json:"COLD"`
}

// Lead is one scored company.
type Lead struct {
	Rang         int            `json:"rang"`
	Siren        string         `json:"siren"`
	Nom          string         `json:"nom"`
	NAF          *string        `json:"naf"`
	Adresse      string         `json:"adresse"`
	Ville        string         `json:"ville"`
	CodePostal   string         `json:"code_postal"`
	Status       string         `json:"status"`
	DateCreation *string        `json:"date_creation"`
	AgeAns       *float64       `json:"age_ans"`
	Effectif     *string        `json:"tranche_effectif"`
	Dirigeants   []Officer      `json:"dirigeants"`
	Finances     FinanceRecente `json:"finances"`
	Labels       []string       `json:"labels"`
	Contact      Contact        `json:"contact"`
	Score        int            `json:"score"`
	Categorie    string         `json:"categorie"` // HOT, WARM or COLD
	Facteurs     []Factor       `json:"facteurs"`
}

// Exclu is a company left out, and why.
type Exclu struct {
	Siren  string `json:"siren"`
	Nom    string `json:"nom"`
	Raison string `json:"raison"`
}

const leadsLimits = "Registers only: a company's phone, e-mail and website are given where the RGE list publishes them; no public register publishes ratings (/v1/maps reads them from a maps listing)."

var departementCode = regexp.MustCompile(`^(0[1-9]|1[0-9]|2[1-9AB]|[3-8][0-9]|9[0-5]|97[1-6])$`)

// place resolves the location: a département code, a postal code, or a commune name (the
// most populated commune of that name, through API Géo).
func (r *Routes) place(ctx context.Context, s string) (Lieu, []Source, error) {
	s = strings.TrimSpace(s)
	switch up := strings.ToUpper(s); {
	case departementCode.MatchString(up):
		return Lieu{Saisie: s, Type: "departement", Code: up, Nom: up}, nil, nil
	case len(s) == 5 && isDigits(s):
		return Lieu{Saisie: s, Type: "code_postal", Code: s, Nom: s}, nil, nil
	}
	var communes []geoapi.Commune
	srcs, errs := r.fanOutErrs(ctx, call{Source: geoapi.Name, Key: "fr/report/commune/" + fold.String(s), TTL: keepDaily, Out: &communes,
		Run: func(ctx context.Context) (err error) { communes, err = r.geo.ByName(ctx, s, 5); return }})
	if err := essential(errs, 0); err != nil {
		return Lieu{}, srcs, err
	}
	var best *geoapi.Commune
	for i := range communes {
		c := &communes[i]
		if fold.String(c.Nom) != fold.String(s) {
			continue
		}
		if best == nil || c.Population != nil && (best.Population == nil || *c.Population > *best.Population) {
			best = c
		}
	}
	if best == nil {
		return Lieu{}, srcs, apierr.NotFound("no French commune is named %q (give a département code, a postal code or a commune name)", s)
	}
	return Lieu{Saisie: s, Type: "commune", Code: best.Code, Nom: best.Nom}, srcs, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func (l Lieu) filter(q *re.Query) {
	switch l.Type {
	case "departement":
		q.Departement = l.Code
	case "code_postal":
		q.CodePostal = l.Code
	case "commune":
		q.CodeCommune = l.Code
	}
}

// contains reports whether the head office e is in the place.
func (l Lieu) contains(e re.Etablissement) bool {
	switch l.Type {
	case "departement":
		return e.Departement == l.Code
	case "code_postal":
		return e.CodePostal == l.Code
	}
	return e.Commune == l.Code
}

func (r *Routes) qualifiedLeads(ctx context.Context, req *catalog.Request) (any, error) {
	activity, max := strings.TrimSpace(req.Args.Str("activity")), int(req.Args.Int("max"))
	lieu, sources, err := r.place(ctx, req.Args.Str("location"))
	if err != nil {
		return nil, err
	}
	out := Leads{Activite: activity, Localisation: lieu, Leads: []Lead{}, Exclus: []Exclu{}, MethodVersion: leadsMethod, Limites: leadsLimits}

	// The activity is a NAF code, or words: then the NAF code most frequent among the
	// companies of the place whose names match the words.
	if up := strings.ToUpper(activity); nafCode.MatchString(up) {
		out.NAFCible, out.NAFResolution = up, "given as a NAF code"
	} else {
		q := re.Query{Q: activity, EtatAdministratif: "A", Page: 1, PerPage: re.MaxPerPage}
		lieu.filter(&q)
		var res *re.Results
		srcs, errs := r.fanOutErrs(ctx, searchCall(r, q, &res))
		sources = append(sources, srcs...)
		if err := essential(errs, 0); err != nil {
			return nil, err
		}
		naf, n := modalNAF(res.Results)
		if naf == "" {
			return nil, apierr.NotFound("no active company matching %q in %s: give a NAF code (e.g. 43.22A) as activity", activity, lieu.Nom)
		}
		out.NAFCible = naf
		out.NAFResolution = "the most frequent NAF code (" + strconv.Itoa(n) + " of " + strconv.Itoa(len(res.Results)) + ") among the active companies of the place whose register entry matches \"" + activity + "\""
	}

	// The candidates: one or two pages of the register, the max asked for.
	pages := (max + re.MaxPerPage - 1) / re.MaxPerPage
	results := make([]*re.Results, pages)
	calls := make([]call, pages)
	for i := range pages {
		q := re.Query{ActivitePrincipale: out.NAFCible, EtatAdministratif: "A", Page: i + 1, PerPage: re.MaxPerPage}
		lieu.filter(&q)
		calls[i] = searchCall(r, q, &results[i])
	}
	srcs, errs := r.fanOutErrs(ctx, calls...)
	sources = append(sources, srcs...)
	if err := essential(errs, 0); err != nil {
		return nil, err
	}
	out.TotalMarche = results[0].TotalResults
	var candidates []re.Unite
	for _, res := range results {
		if res == nil {
			continue
		}
		for _, u := range res.Results {
			if len(candidates) < max && !slices.ContainsFunc(candidates, func(c re.Unite) bool { return c.Siren == u.Siren }) {
				candidates = append(candidates, u)
			}
		}
	}

	// Each candidate's notices (proceedings, recent events) and, for RGE companies, the
	// contact the RGE list publishes.
	notices := make([]*ods.Page[bodacc.Annonce], len(candidates))
	rge := make([]*ademe.Lines[ademe.RGE], len(candidates))
	calls = calls[:0]
	for i, u := range candidates {
		calls = append(calls, noticesCall(r, u.Siren, &notices[i]))
		if u.Complements.EstRGE || len(u.Siege.ListeRGE) > 0 {
			calls = append(calls, rgeCall(r, u.Siege.Siret, &rge[i]))
		}
	}
	sources = append(sources, r.fanOut(ctx, calls...)...)
	today := r.parisDate()
	for i, u := range candidates {
		var proc *Procedures
		if notices[i] != nil {
			p := procedureState(u.Siren, notices[i].Results)
			proc = &p
		}
		name := nonEmpty(u.NomComplet, u.NomRaisonSociale)
		if proc != nil && (proc.Alerte || proc.Radiee) {
			why := "collective proceeding: " + proc.Statut
			if proc.Radiee {
				why = "deregistration notice in BODACC"
			}
			out.Exclus = append(out.Exclus, Exclu{Siren: u.Siren, Nom: name, Raison: why})
			continue
		}
		c := company(u)
		l := Lead{Siren: u.Siren, Nom: name, NAF: c.NAF, Adresse: u.Siege.Adresse, Ville: u.Siege.LibelleCommune, CodePostal: u.Siege.CodePostal,
			Status: c.Status, DateCreation: c.DateCreation, Effectif: c.TrancheEffectif, Dirigeants: c.Officers, Finances: newestFinance(u),
			Labels: labels(u.Complements), Contact: Contact{Origine: []string{}, NoteSource: noRating}}
		if created, err := time.Parse(time.DateOnly, u.DateCreation); err == nil {
			age := math.Floor(today.Sub(created).Hours()/24/365.25*10) / 10
			l.AgeAns = &age
		}
		if rge[i] != nil {
			for _, row := range rge[i].Results {
				if l.Contact.Telephone == nil && row.Telephone != "" {
					l.Contact.Telephone = strPtr(row.Telephone)
				}
				if l.Contact.Email == nil && row.Email != "" {
					l.Contact.Email = strPtr(row.Email)
				}
				if l.Contact.SiteWeb == nil && row.SiteInternet != "" {
					l.Contact.SiteWeb = strPtr(row.SiteInternet)
				}
			}
			if l.Contact.Telephone != nil || l.Contact.Email != nil || l.Contact.SiteWeb != nil {
				l.Contact.Origine = []string{ademe.Name}
			}
		}
		l.Facteurs = leadFactors(u, out.NAFCible, lieu, notices[i], l.AgeAns, today)
		for _, x := range l.Facteurs {
			l.Score += x.Points
		}
		l.Categorie = leadCategory(l.Score)
		out.Leads = append(out.Leads, l)
	}
	slices.SortStableFunc(out.Leads, func(a, b Lead) int { return b.Score - a.Score })
	for i := range out.Leads {
		out.Leads[i].Rang = i + 1
		switch out.Leads[i].Categorie {
		case Hot:
			out.Comptes.Hot++
		case Warm:
			out.Comptes.Warm++
		default:
			out.Comptes.Cold++
		}
	}
	out.Sources, out.Confidence = sources, confidence(sources)
	return out, nil
}

func leadCategory(score int) string {
	switch {
	case score >= hotFrom:
		return Hot
	case score >= warmFrom:
		return Warm
	}
	return Cold
}

// modalNAF is the most frequent NAF code of the companies (the first met on a tie).
func modalNAF(us []re.Unite) (string, int) {
	counts := map[string]int{}
	best, n := "", 0
	for _, u := range us {
		if u.ActivitePrincipale == "" {
			continue
		}
		counts[u.ActivitePrincipale]++
		if c := counts[u.ActivitePrincipale]; c > n {
			best, n = u.ActivitePrincipale, c
		}
	}
	return best, n
}

// leadFactors scores one candidate: fit 50, health 30, signals 20.
func leadFactors(u re.Unite, naf string, lieu Lieu, notices *ods.Page[bodacc.Annonce], age *float64, today time.Time) []Factor {
	var out []Factor
	x := f("adequation", "naf", 20, u.ActivitePrincipale, re.Name)
	switch {
	case u.ActivitePrincipale == naf:
		x = x.earn(20, "same NAF code "+naf)
	case len(naf) >= 4 && strings.HasPrefix(u.ActivitePrincipale, naf[:4]):
		x = x.earn(10, "same NAF group "+naf[:4])
	default:
		x = x.earn(0, "another activity ("+nonEmpty(u.ActivitePrincipale, "none")+"): listed for an establishment in the place")
	}
	out = append(out, x)
	x = f("adequation", "siege_dans_la_zone", 10, u.Siege.Commune, re.Name)
	if lieu.contains(u.Siege) {
		x = x.earn(10, "head office in "+lieu.Nom)
	} else {
		x = x.earn(0, "head office elsewhere ("+nonEmpty(u.Siege.LibelleCommune, "unknown")+"); an establishment is in "+lieu.Nom)
	}
	out = append(out, x)
	x = f("adequation", "salaries", 10, strPtr(u.TrancheEffectifSalarie), re.Name)
	switch t := u.TrancheEffectifSalarie; {
	case t != "" && t != "NN" && t != "00":
		x = x.earn(10, "employer (band "+t+")")
	default:
		x = x.earn(0, "no employee declared (band "+nonEmpty(t, "none")+")")
	}
	out = append(out, x)
	fin := company(u).Finances
	x = f("adequation", "chiffre_affaires_publie", 10, nil, re.Name)
	if len(fin) > 0 && fin[0].ChiffreAffaires != nil && *fin[0].ChiffreAffaires > 0 {
		x.Valeur = *fin[0].ChiffreAffaires
		x = x.earn(10, "revenue published for "+fin[0].Annee)
	} else {
		x = x.earn(0, "no revenue published")
	}
	out = append(out, x)

	x = f("sante", "anciennete_ans", 10, nil, re.Name)
	switch {
	case age == nil:
		x = x.missing("no creation date")
	default:
		x.Valeur = *age
		x = x.earn(bins(*age, []float64{3, 1}, []int{10, 5, 0}), "created "+u.DateCreation)
	}
	out = append(out, x)
	x = f("sante", "resultat_net_positif", 10, nil, re.Name)
	if len(fin) > 0 && fin[0].ResultatNet != nil {
		x.Valeur = *fin[0].ResultatNet
		x = x.earn(map[bool]int{true: 10}[*fin[0].ResultatNet > 0], "net income "+fin[0].Annee)
	} else {
		x = x.earn(0, "no net income published")
	}
	out = append(out, x)
	x = f("sante", "croissance_ca", 10, nil, re.Name)
	if len(fin) > 1 && fin[0].ChiffreAffaires != nil && fin[1].ChiffreAffaires != nil && *fin[1].ChiffreAffaires > 0 {
		g := math.Round((float64(*fin[0].ChiffreAffaires)/float64(*fin[1].ChiffreAffaires)-1)*1000) / 10
		x.Valeur = g
		x = x.earn(map[bool]int{true: 10}[g > 0], "revenue change in % from "+fin[1].Annee+" to "+fin[0].Annee)
	} else {
		x = x.earn(0, "fewer than two years of revenue published")
	}
	out = append(out, x)

	x = f("signaux", "evenements_12_mois", 10, nil, bodacc.Name)
	if notices == nil {
		x = x.missing("BODACC did not answer")
	} else {
		since := today.AddDate(-1, 0, 0).Format(time.DateOnly)
		var seen []string
		for _, a := range notices.Results {
			if a.DateParution >= since && (a.FamilleAvis == "creation" || a.FamilleAvis == "modification" || a.FamilleAvis == "vente" || a.FamilleAvis == "immatriculation") {
				seen = append(seen, a.FamilleAvis+" "+a.DateParution)
			}
		}
		x.Valeur = len(seen)
		if len(seen) > 0 {
			x = x.earn(10, "BODACC notices within 12 months: "+strings.Join(seen, ", "))
		} else {
			x = x.earn(0, "no creation, change or sale notice within 12 months")
		}
	}
	out = append(out, x)
	ls := labels(u.Complements)
	ls = slices.DeleteFunc(ls, func(s string) bool { return s == "association" || s == "entrepreneur_individuel" })
	x = f("signaux", "labels", 10, ls, re.Name)
	if len(ls) > 0 {
		x = x.earn(10, "labels: "+strings.Join(ls, ", "))
	} else {
		x = x.earn(0, "no RGE, bio, ESS or Qualiopi label")
	}
	out = append(out, x)
	return out
}
