package fr

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
)

// The alert level of a director's companies is a points scale, written in
// api/routes/fr/doc/reseau-dirigeant.md; networkMethod names its version in every answer.
const networkMethod = "reseau-dirigeant-1"

// Bounds of one answer: the companies read from the register (one page) and those whose
// BODACC notices are read (the newest created first).
const (
	networkPage    = 25
	networkChecked = 10
)

// Reseau is the answer of /v1/fr/reseau-dirigeant.
type Reseau struct {
	Personne            Personne         `json:"personne"`
	TotalSocietes       int              `json:"total_societes"`
	Actives             int              `json:"actives"`
	Cessees             int              `json:"cessees"`
	NiveauAlerte        string           `json:"niveau_alerte"` // FAIBLE, MODERE or ELEVE
	Points              int              `json:"points"`
	MethodVersion       string           `json:"method_version"`
	Facteurs            []Factor         `json:"facteurs"`
	Societes            []SocieteDirigee `json:"societes"`
	AnneesNaissance     []string         `json:"annees_naissance"` // distinct birth years of the officers matched: more than one means namesakes
	ProceduresVerifiees int              `json:"procedures_verifiees"`
	Truncated           bool             `json:"truncated"` // more companies than one page read
	Sources             []Source         `json:"sources"`
	Confidence          float64          `json:"confidence"`
	Limites             string           `json:"limites"`
}

// Personne is who was searched.
type Personne struct {
	Nom            string `json:"nom"`
	Prenom         string `json:"prenom"`
	AnneeNaissance *int   `json:"annee_naissance"`
}

// SocieteDirigee is one company the person runs or ran.
type SocieteDirigee struct {
	Siren          string  `json:"siren"`
	Nom            string  `json:"nom"`
	Role           *string `json:"role"`
	AnneeNaissance *string `json:"annee_naissance"` // of the officer matched
	Active         bool    `json:"active"`
	Cessee         bool    `json:"cessee"`
	Status         string  `json:"status"`
	DateCreation   *string `json:"date_creation"`
	DateFermeture  *string `json:"date_fermeture"`
	NAF            *string `json:"naf"`
	Ville          string  `json:"ville"`
	Procedure      *string `json:"procedure"` // proceedings state; null when not checked
	Radiee         *bool   `json:"radiee"`
}

const networkLimits = "Current officers as the register lists them: past mandates are in the RNE (keyed), and namesakes are told apart only by birth year."

func (r *Routes) reseauDirigeant(ctx context.Context, req *catalog.Request) (any, error) {
	nom, prenom := strings.TrimSpace(req.Args.Str("nom")), strings.TrimSpace(req.Args.Str("prenom"))
	q := re.Query{NomPersonne: nom, PrenomsPersonne: prenom, TypePersonne: "dirigeant", PerPage: networkPage, Page: 1}
	out := Reseau{Personne: Personne{Nom: nom, Prenom: prenom}, MethodVersion: networkMethod, Societes: []SocieteDirigee{},
		AnneesNaissance: []string{}, Limites: networkLimits}
	if req.Args.Has("annee_naissance") {
		y := int(req.Args.Int("annee_naissance"))
		out.Personne.AnneeNaissance = &y
		q.DateNaissanceMin, q.DateNaissanceMax = strconv.Itoa(y)+"-01-01", strconv.Itoa(y)+"-12-31"
	}
	var res *re.Results
	srcs, errs := r.fanOutErrs(ctx, searchCall(r, q, &res))
	if err := essential(errs, 0); err != nil {
		return nil, err
	}
	out.Sources = srcs
	if len(res.Results) == 0 {
		// An empty list is the answer about this name: the person runs no company the
		// register lists.
		out.NiveauAlerte, out.Facteurs = networkLevel(0), r.networkFactors(nil, nil)
		out.Confidence = confidence(out.Sources)
		return out, nil
	}
	out.TotalSocietes, out.Truncated = res.TotalResults, res.TotalResults > len(res.Results)
	companies := slices.Clone(res.Results)
	// The newest companies are checked first: an alert is about the recent past.
	order := slices.Clone(companies)
	slices.SortStableFunc(order, func(a, b re.Unite) int { return strings.Compare(b.DateCreation, a.DateCreation) })
	checked := order[:min(len(order), networkChecked)]
	pages := make([]*ods.Page[bodacc.Annonce], len(checked))
	calls := make([]call, len(checked))
	for i, u := range checked {
		calls[i] = noticesCall(r, u.Siren, &pages[i])
	}
	out.Sources = append(out.Sources, r.fanOut(ctx, calls...)...)
	states := map[string]*Procedures{}
	for i, u := range checked {
		if pages[i] != nil {
			p := procedureState(u.Siren, pages[i].Results)
			states[u.Siren] = &p
		}
	}
	out.ProceduresVerifiees = len(states)
	years := map[string]bool{}
	for _, u := range companies {
		s := SocieteDirigee{Siren: u.Siren, Nom: nonEmpty(u.NomComplet, u.NomRaisonSociale), Active: u.EtatAdministratif == "A",
			Cessee: u.EtatAdministratif == "C", Status: status(u.EtatAdministratif), DateCreation: strPtr(u.DateCreation),
			DateFermeture: strPtr(u.DateFermeture), NAF: strPtr(u.ActivitePrincipale), Ville: u.Siege.LibelleCommune}
		if d, ok := matchOfficer(u.Dirigeants, nom, prenom); ok {
			s.Role, s.AnneeNaissance = strPtr(d.Qualite), strPtr(d.AnneeDeNaissance)
			if d.AnneeDeNaissance != "" {
				years[d.AnneeDeNaissance] = true
			}
		}
		if p := states[u.Siren]; p != nil {
			s.Procedure, s.Radiee = &p.Statut, &p.Radiee
		}
		if s.Active {
			out.Actives++
		}
		if s.Cessee {
			out.Cessees++
		}
		out.Societes = append(out.Societes, s)
	}
	for y := range years {
		out.AnneesNaissance = append(out.AnneesNaissance, y)
	}
	slices.Sort(out.AnneesNaissance)
	out.Facteurs = r.networkFactors(companies, states)
	for _, x := range out.Facteurs {
		out.Points += x.Points
	}
	out.NiveauAlerte = networkLevel(out.Points)
	out.Confidence = confidence(out.Sources)
	return out, nil
}

// matchOfficer finds the officer of a company who is the person: same last name, and the
// first name among their first names (case and accents folded).
func matchOfficer(ds []re.Dirigeant, nom, prenom string) (re.Dirigeant, bool) {
	for _, d := range ds {
		if d.TypeDirigeant == "personne morale" || fold.String(strings.TrimSpace(d.Nom)) != fold.String(nom) {
			continue
		}
		first := strings.Fields(fold.String(prenom))
		if len(first) == 0 || slices.Contains(strings.Fields(fold.String(d.Prenoms)), first[0]) {
			return d, true
		}
	}
	return re.Dirigeant{}, false
}

// networkLevel maps the alert points to the level.
func networkLevel(points int) string {
	switch {
	case points >= 40:
		return "ELEVE"
	case points >= 15:
		return "MODERE"
	}
	return "FAIBLE"
}

// networkFactors are the alert factors: points are alert points (more is worse), each
// factor earning at most its weight.
func (r *Routes) networkFactors(companies []re.Unite, states map[string]*Procedures) []Factor {
	liq, open, quick, ceased := []string{}, []string{}, []string{}, 0
	for _, u := range companies {
		if u.EtatAdministratif == "C" {
			ceased++
			if c, err := time.Parse(time.DateOnly, u.DateCreation); err == nil {
				if e, err := time.Parse(time.DateOnly, u.DateFermeture); err == nil && e.Before(c.AddDate(3, 0, 0)) {
					quick = append(quick, u.Siren)
				}
			}
		}
		p := states[u.Siren]
		switch {
		case p == nil:
		case p.Statut == "liquidation_judiciaire":
			liq = append(liq, u.Siren)
		case slices.Contains([]string{"redressement_judiciaire", "sauvegarde", "plan_en_cours", "retablissement_professionnel"}, p.Statut):
			open = append(open, u.Siren)
		}
	}
	checked := len(states) > 0 || len(companies) == 0
	var out []Factor
	x := f("procedures", "societes_en_liquidation", 40, liq, "bodacc")
	switch {
	case !checked:
		x.Resultat, x.Preuve = "manquant", "BODACC did not answer for any company"
	case len(liq) > 0:
		x = x.earn(40, "a company run by the person is in judicial liquidation")
	default:
		x = x.earn(0, "no liquidation among the companies checked")
	}
	out = append(out, x)
	x = f("procedures", "societes_en_procedure", 30, open, "bodacc")
	switch {
	case !checked:
		x.Resultat, x.Preuve = "manquant", "BODACC did not answer for any company"
	case len(open) > 0:
		x = x.earn(30, "a company run by the person is in a collective proceeding or plan")
	default:
		x = x.earn(0, "no proceeding under way among the companies checked")
	}
	out = append(out, x)
	x = f("cessations", "part_cessees", 15, ceased, re.Name)
	if ceased >= 2 && ceased*2 >= len(companies) {
		x = x.earn(15, strconv.Itoa(ceased)+" of "+strconv.Itoa(len(companies))+" companies ceased")
	} else {
		x = x.earn(0, strconv.Itoa(ceased)+" of "+strconv.Itoa(len(companies))+" companies ceased (alert from 2 and half)")
	}
	out = append(out, x)
	x = f("cessations", "cessations_rapides", 15, quick, re.Name)
	switch {
	case len(quick) >= 2:
		x = x.earn(15, "several companies ceased within 3 years of their creation")
	case len(quick) == 1:
		x = x.earn(8, "one company ceased within 3 years of its creation")
	default:
		x = x.earn(0, "no company ceased within 3 years of its creation")
	}
	out = append(out, x)
	return out
}
