package fr

import (
	"context"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/agencebio"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
)

// Enrich is the answer of /v1/fr/enrich: a normalised card of one company.
type Enrich struct {
	Query          string         `json:"query"`
	Identite       Identite       `json:"identite"`
	Siege          HQ             `json:"siege"`
	Dirigeants     []Officer      `json:"dirigeants"`
	Finances       []Finance      `json:"finances"`        // the register's yearly figures
	ComptesDeposes []Comptes      `json:"comptes_deposes"` // BCE/INPI filed accounts; null when that source did not answer
	Risque         *Insolvabilite `json:"risque_insolvabilite"`
	Contact        Contact        `json:"contact"`
	Labels         []string       `json:"labels"`
	Sources        []Source       `json:"sources"`
	Confidence     float64        `json:"confidence"`
}

// Insolvabilite is the insolvency state from BODACC.
type Insolvabilite struct {
	Statut     string `json:"statut"`
	Alerte     bool   `json:"alerte"`
	Radiee     bool   `json:"radiee"`
	Procedures int    `json:"procedures"`
	Complet    bool   `json:"complet"` // every proceeding notice was read
}

// Contact is what public registers publish to reach the company, each value with the
// register it comes from. No public register publishes a rating.
type Contact struct {
	Telephone  *string  `json:"telephone"`
	Email      *string  `json:"email"`
	SiteWeb    *string  `json:"site_web"`
	Note       *float64 `json:"note"` // always null: see NoteSource
	NoteAvis   *int     `json:"nombre_avis"`
	Origine    []string `json:"origine"` // the registers the values come from
	NoteSource string   `json:"note_source"`
}

const noRating = "no public register publishes ratings; /v1/maps reads them from a maps listing"

func (r *Routes) enrich(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("siren")
	if q == "" {
		q = strings.TrimSpace(req.Args.Str("name") + " " + req.Args.Str("city"))
	}
	u, reg, err := r.identifyQ(ctx, q)
	if err != nil {
		return nil, err
	}
	c := company(u)
	var (
		notices *ods.Page[bodacc.Annonce]
		ratios  *ods.Page[economie.Ratio]
		rge     *ademe.Lines[ademe.RGE]
		bio     *agencebio.Page
	)
	calls := []call{noticesCall(r, u.Siren, &notices), ratiosCall(r, u.Siren, &ratios)}
	// The contact registers are asked only about companies they list, as the register says.
	if u.Complements.EstRGE || len(u.Siege.ListeRGE) > 0 {
		calls = append(calls, rgeCall(r, u.Siege.Siret, &rge))
	}
	if u.Complements.EstBio || len(u.Siege.ListeIDBio) > 0 {
		calls = append(calls, bioCall(r, u.Siren, &bio))
	}
	sources := append([]Source{reg}, r.fanOut(ctx, calls...)...)
	out := Enrich{Query: q, Identite: identite(u), Siege: c.HQ, Dirigeants: c.Officers, Finances: c.Finances, Labels: labels(u.Complements),
		Contact: Contact{Origine: []string{}, NoteSource: noRating}, Sources: sources, Confidence: confidence(sources)}
	if ratios != nil {
		out.ComptesDeposes = comptes(ratios.Results)
	}
	if notices != nil {
		p := procedureState(u.Siren, notices.Results)
		out.Risque = &Insolvabilite{Statut: p.Statut, Alerte: p.Alerte, Radiee: p.Radiee, Procedures: len(p.Procedures), Complet: notices.TotalCount <= len(notices.Results)}
	}
	ct := &out.Contact
	set := func(dst **string, v, origin string) {
		if *dst == nil && strings.TrimSpace(v) != "" {
			*dst = strPtr(strings.TrimSpace(v))
			if len(ct.Origine) == 0 || ct.Origine[len(ct.Origine)-1] != origin {
				ct.Origine = append(ct.Origine, origin)
			}
		}
	}
	if rge != nil {
		for _, row := range rge.Results {
			set(&ct.Telephone, row.Telephone, ademe.Name)
			set(&ct.Email, row.Email, ademe.Name)
			set(&ct.SiteWeb, row.SiteInternet, ademe.Name)
		}
	}
	if bio != nil {
		for _, it := range bio.Items {
			set(&ct.Telephone, it.Telephone, agencebio.Name)
			set(&ct.Email, it.Email, agencebio.Name)
			for _, w := range it.SiteWebs {
				set(&ct.SiteWeb, w.URL, agencebio.Name)
			}
		}
	}
	return out, nil
}

// labels lists the register's labels the company holds.
func labels(c re.Complements) []string {
	out := []string{}
	for _, l := range []struct {
		on   bool
		name string
	}{{c.EstRGE, "rge"}, {c.EstBio, "bio"}, {c.EstESS, "ess"}, {c.EstQualiopi, "qualiopi"}, {c.EstAssociation, "association"},
		{c.EstEntrepreneurIndiv, "entrepreneur_individuel"}} {
		if l.on {
			out = append(out, l.name)
		}
	}
	return out
}
