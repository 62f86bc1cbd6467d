package fr

import (
	"context"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/api/upstream/vies"
)

// Company reports (entreprise-360 and its partial and free variants) start from the company
// register: it says which company the report is about, so it is the one source a report
// cannot stand without. Its failure fails the call (502, not charged) and a company it does
// not know is a 404. Every other source is called in parallel afterwards, under the same
// deadline, and declared in sources[] however it answered.

// Identite is who the company is, from the register.
type Identite struct {
	Siren           string  `json:"siren"`
	Denomination    string  `json:"denomination"`
	Sigle           *string `json:"sigle"`
	TVA             *string `json:"tva"` // the intra-community number computed from the SIREN
	NAF             *string `json:"naf"`
	FormeJuridique  *string `json:"forme_juridique"`
	Categorie       *string `json:"categorie"`
	TrancheEffectif *string `json:"tranche_effectif"`
	DateCreation    *string `json:"date_creation"`
	DateFermeture   *string `json:"date_fermeture"`
	Status          string  `json:"status"` // active, ceased or unknown
}

func identite(u re.Unite) Identite {
	c := company(u)
	return Identite{Siren: c.Siren, Denomination: c.Nom, Sigle: c.Sigle, TVA: c.TVA, NAF: c.NAF, FormeJuridique: c.FormeJuridique,
		Categorie: c.Categorie, TrancheEffectif: c.TrancheEffectif, DateCreation: c.DateCreation, DateFermeture: c.DateFermeture, Status: c.Status}
}

// identify finds the company of a report: siren when given, else q (a SIREN, a SIRET, or a
// name, whose best match is taken).
func (r *Routes) identify(ctx context.Context, req *catalog.Request) (re.Unite, Source, error) {
	return r.identifyQ(ctx, nonEmpty(req.Args.Str("siren"), req.Args.Str("q")))
}

// identifyQ finds the company q names (a SIREN, a SIRET, or a name whose best match is taken).
func (r *Routes) identifyQ(ctx context.Context, q string) (re.Unite, Source, error) {
	var res *re.Results
	src, err := r.fetch(ctx, registerCall(r, q, &res))
	if err != nil {
		return re.Unite{}, src, err
	}
	if len(res.Results) == 0 {
		return re.Unite{}, src, apierr.NotFound("no company matches %q in the public register (non-diffusible companies are absent)", q)
	}
	return res.Results[0], src, nil
}

// Entreprise360 is the answer of /v1/fr/entreprise-360.
type Entreprise360 struct {
	Found           bool            `json:"found"`
	Query           string          `json:"query"`
	Identite        Identite        `json:"identite"`
	TVA             TVACheck        `json:"tva"`
	Siege           HQ              `json:"siege"`
	Dirigeants      []Officer       `json:"dirigeants"`
	Etablissements  EtabCounts      `json:"etablissements"`
	Finances        []Finance       `json:"finances"`         // the figures the register publishes
	ComptesDeposes  []Comptes       `json:"comptes_deposes"`  // BCE/INPI ratios of filed accounts; null when that source failed
	AnnoncesLegales *AnnoncesResume `json:"annonces_legales"` // null when BODACC failed
	RGE             *RGEResume      `json:"rge"`              // null when ADEME failed
	Sources         []Source        `json:"sources"`
	Confidence      float64         `json:"confidence"`
}

// TVACheck is the VAT number and what VIES says of it; valide_vies is null when VIES did
// not answer.
type TVACheck struct {
	Numero     *string `json:"numero"`
	ValideVIES *bool   `json:"valide_vies"`
	NomVIES    *string `json:"nom_vies"`
	AdresseVIE *string `json:"adresse_vies"`
	VerifieLe  *string `json:"verifie_le"`
}

// EtabCounts counts the establishments.
type EtabCounts struct {
	Total   int `json:"total"`
	Ouverts int `json:"ouverts"`
}

// AnnoncesResume is the count of BODACC notices and the newest ones.
type AnnoncesResume struct {
	Total    int       `json:"total"`
	Recentes []Annonce `json:"recentes"` // newest first, at most maxRecentes
}

const maxRecentes = 5

// RGEResume says whether the head office holds a valid RGE qualification.
type RGEResume struct {
	Certifie       bool            `json:"certifie"`
	Qualifications []Qualification `json:"qualifications"`
}

func (r *Routes) entreprise360(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	var (
		notices *ods.Page[bodacc.Annonce]
		check   *vies.Result
		rge     *ademe.Lines[ademe.RGE]
		ratios  *ods.Page[economie.Ratio]
	)
	c := company(u)
	calls := []call{noticesCall(r, u.Siren, &notices), rgeCall(r, u.Siege.Siret, &rge), ratiosCall(r, u.Siren, &ratios)}
	if c.TVA != nil {
		calls = append(calls, vatCall(r, *c.TVA, &check))
	}
	sources := append([]Source{reg}, r.fanOut(ctx, calls...)...)

	out := Entreprise360{Found: true, Query: nonEmpty(req.Args.Str("siren"), req.Args.Str("q")), Identite: identite(u),
		TVA: TVACheck{Numero: c.TVA}, Siege: c.HQ, Dirigeants: c.Officers, Finances: c.Finances,
		Etablissements: EtabCounts{Total: u.NombreEtablissements, Ouverts: u.NombreEtablissementsOuvert},
		Sources:        sources, Confidence: confidence(sources)}
	if notices != nil {
		out.AnnoncesLegales = &AnnoncesResume{Total: notices.TotalCount, Recentes: []Annonce{}}
		for _, a := range notices.Results[:min(len(notices.Results), maxRecentes)] {
			out.AnnoncesLegales.Recentes = append(out.AnnoncesLegales.Recentes, annonce(a))
		}
	}
	if check != nil {
		out.TVA.ValideVIES, out.TVA.NomVIES, out.TVA.AdresseVIE, out.TVA.VerifieLe = &check.Valid, strPtr(check.Name), strPtr(oneLine(check.Address)), strPtr(check.RequestDate)
	}
	if rge != nil {
		out.RGE = &RGEResume{Qualifications: []Qualification{}}
		for _, row := range rge.Results {
			q := r.qualification(row)
			out.RGE.Qualifications = append(out.RGE.Qualifications, q)
			out.RGE.Certifie = out.RGE.Certifie || q.Valide
		}
	}
	if ratios != nil {
		out.ComptesDeposes = comptes(ratios.Results)
	}
	return out, nil
}

// Entreprise360Partial is the answer of /v1/fr/entreprise-360/partial: two sources, the
// register and BODACC, instead of five.
type Entreprise360Partial struct {
	Found                bool     `json:"found"`
	Query                string   `json:"query"`
	Identite             Mini     `json:"identite"`
	AnnoncesLegalesTotal *int     `json:"annonces_legales_total"` // null when BODACC failed
	Sources              []Source `json:"sources"`
	Confidence           float64  `json:"confidence"`
	Partial              bool     `json:"_partial"`
}

// Mini is the identity of a partial report.
type Mini struct {
	Siren        string `json:"siren"`
	Denomination string `json:"denomination"`
	Status       string `json:"status"`
}

func (r *Routes) entreprise360Partial(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	var notices *ods.Page[bodacc.Annonce]
	sources := append([]Source{reg}, r.fanOut(ctx,
		noticesCall(r, u.Siren, &notices))...)
	out := Entreprise360Partial{Found: true, Query: nonEmpty(req.Args.Str("siren"), req.Args.Str("q")),
		Identite: Mini{Siren: u.Siren, Denomination: nonEmpty(u.NomComplet, u.NomRaisonSociale), Status: status(u.EtatAdministratif)},
		Sources:  sources, Confidence: confidence(sources), Partial: true}
	if notices != nil {
		out.AnnoncesLegalesTotal = &notices.TotalCount
	}
	return out, nil
}

// FreeEntreprise360 is the free trial: the register's identity of the company, nothing else.
type FreeEntreprise360 struct {
	Found    bool     `json:"found"`
	Query    string   `json:"query"`
	Identite Identite `json:"identite"`
	Sources  []Source `json:"sources"`
}

func (r *Routes) freeEntreprise360(ctx context.Context, req *catalog.Request) (any, error) {
	u, reg, err := r.identify(ctx, req)
	if err != nil {
		return nil, err
	}
	return FreeEntreprise360{Found: true, Query: req.Args.Str("q"), Identite: identite(u), Sources: []Source{reg}}, nil
}

func comptes(rs []economie.Ratio) []Comptes {
	out := []Comptes{}
	for _, x := range rs {
		out = append(out, Comptes{DateCloture: x.DateClotureExercice, Type: nonEmpty(typeBilan[x.TypeBilan], x.TypeBilan),
			ChiffreAffaires: euros(x.ChiffreDAffaires), ResultatNet: euros(x.ResultatNet), EBE: euros(x.EBE)})
	}
	return out
}
