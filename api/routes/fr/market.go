package fr

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
)

// Competitors are the active companies of the target's NAF code in a zone, as the register
// lists them: a company is in the zone when any of its establishments is (the register's own
// rule), and siege_dans_zone says whether its head office is. One page is read, sorted by
// the newest revenue the register publishes.

// Concurrents is the answer of /v1/fr/concurrents.
type Concurrents struct {
	Cible          Mini         `json:"cible"`
	NAF            string       `json:"naf"`
	Zone           *Zone        `json:"zone"` // null: all of France
	TotalMarche    int          `json:"total_marche"`
	Lus            int          `json:"lus"` // companies read (one page)
	Truncated      bool         `json:"truncated"`
	TopConcurrents []Concurrent `json:"top_concurrents"`
	Sources        []Source     `json:"sources"`
	Confidence     float64      `json:"confidence"`
	Limites        string       `json:"limites"`
}

// Zone is a département or a region.
type Zone struct {
	Type string `json:"type"` // departement or region
	Code string `json:"code"`
}

// Concurrent is one competitor.
type Concurrent struct {
	Siren         string         `json:"siren"`
	Nom           string         `json:"nom"`
	NAF           *string        `json:"naf"`
	Ville         string         `json:"ville"`
	CodePostal    string         `json:"code_postal"`
	Departement   string         `json:"departement"`
	SiegeDansZone *bool          `json:"siege_dans_zone"`
	Effectif      *string        `json:"tranche_effectif"`
	DateCreation  *string        `json:"date_creation"`
	Finances      FinanceRecente `json:"finances"`
}

// FinanceRecente is the newest year of figures the register publishes; nulls when none.
type FinanceRecente struct {
	Annee       *string `json:"annee"`
	CA          *int64  `json:"ca"`
	ResultatNet *int64  `json:"resultat_net"`
}

const concurrentsLimits = "Same NAF code only (a company's declared main activity); companies that asked not to be listed are absent."

// zoneOf reads the zone parameter: a département code, or R and a region code.
func zoneOf(s string) *Zone {
	switch {
	case s == "":
		return nil
	case s[0] == 'R' || s[0] == 'r':
		return &Zone{Type: "region", Code: s[1:]}
	}
	return &Zone{Type: "departement", Code: strings.ToUpper(s)}
}

func newestFinance(u re.Unite) FinanceRecente {
	c := company(u)
	if len(c.Finances) == 0 {
		return FinanceRecente{}
	}
	x := c.Finances[0]
	return FinanceRecente{Annee: &x.Annee, CA: x.ChiffreAffaires, ResultatNet: x.ResultatNet}
}

func (r *Routes) concurrents(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	if u.ActivitePrincipale == "" {
		return nil, apierr.NotFound("the register gives no main activity (NAF) for SIREN %s: no competitors to look for", u.Siren)
	}
	zone := zoneOf(req.Args.Str("zone"))
	q := re.Query{ActivitePrincipale: u.ActivitePrincipale, EtatAdministratif: "A", Page: 1, PerPage: re.MaxPerPage}
	if zone != nil && zone.Type == "region" {
		q.Region = zone.Code
	} else if zone != nil {
		q.Departement = zone.Code
	}
	var res *re.Results
	srcs, errs := r.fanOutErrs(ctx, searchCall(r, q, &res))
	if err := essential(errs, 0); err != nil {
		return nil, err
	}
	sources := append([]Source{reg}, srcs...)
	out := Concurrents{Cible: Mini{Siren: u.Siren, Denomination: nonEmpty(u.NomComplet, u.NomRaisonSociale), Status: status(u.EtatAdministratif)},
		NAF: u.ActivitePrincipale, Zone: zone, TotalMarche: res.TotalResults, Lus: len(res.Results),
		Truncated: res.TotalResults > len(res.Results), TopConcurrents: []Concurrent{}, Sources: sources, Confidence: confidence(sources),
		Limites: concurrentsLimits}
	for _, c := range res.Results {
		if c.Siren == u.Siren {
			continue
		}
		x := Concurrent{Siren: c.Siren, Nom: nonEmpty(c.NomComplet, c.NomRaisonSociale), NAF: strPtr(c.ActivitePrincipale), Ville: c.Siege.LibelleCommune,
			CodePostal: c.Siege.CodePostal, Departement: c.Siege.Departement, Effectif: strPtr(c.TrancheEffectifSalarie),
			DateCreation: strPtr(c.DateCreation), Finances: newestFinance(c)}
		if zone != nil {
			in := zone.Type == "departement" && c.Siege.Departement == zone.Code || zone.Type == "region" && c.Siege.Region == zone.Code
			x.SiegeDansZone = &in
		}
		out.TopConcurrents = append(out.TopConcurrents, x)
	}
	// Largest revenue first; companies without published revenue after, larger headcount
	// band first (INSEE band codes sort as text).
	slices.SortStableFunc(out.TopConcurrents, func(a, b Concurrent) int {
		switch {
		case a.Finances.CA != nil && b.Finances.CA != nil:
			return cmpDesc(*a.Finances.CA, *b.Finances.CA)
		case a.Finances.CA != nil:
			return -1
		case b.Finances.CA != nil:
			return 1
		}
		return strings.Compare(band(b.Effectif), band(a.Effectif))
	})
	return out, nil
}

func cmpDesc(a, b int64) int {
	switch {
	case a > b:
		return -1
	case a < b:
		return 1
	}
	return 0
}

// band is a headcount band comparable as text: NN (not an employer) and none sort lowest.
func band(s *string) string {
	if s == nil || *s == "NN" {
		return ""
	}
	return *s
}

var nafCode = regexp.MustCompile(`^[0-9]{2}\.[0-9]{2}[A-Z]$`)
