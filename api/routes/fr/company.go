package fr

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/fold"
	"github.com/peage/appliance/api/compute/iban"
	"github.com/peage/appliance/api/compute/tva"
	"github.com/peage/appliance/api/upstream/ademe"
	"github.com/peage/appliance/api/upstream/boamp"
	"github.com/peage/appliance/api/upstream/bodacc"
	"github.com/peage/appliance/api/upstream/economie"
	"github.com/peage/appliance/api/upstream/ods"
	re "github.com/peage/appliance/api/upstream/rechercheentreprises"
	"github.com/peage/appliance/internal/fanout"
)

// Company is one result of /v1/fr/entreprise.
type Company struct {
	Siren            string    `json:"siren"`
	Nom              string    `json:"nom"`
	Sigle            *string   `json:"sigle"`
	TVA              *string   `json:"tva"`
	NAF              *string   `json:"naf"`
	FormeJuridique   *string   `json:"forme_juridique"` // INSEE legal category code
	Categorie        *string   `json:"categorie"`
	TrancheEffectif  *string   `json:"tranche_effectif"`
	DateCreation     *string   `json:"date_creation"`
	DateFermeture    *string   `json:"date_fermeture"`
	Status           string    `json:"status"` // active or ceased
	NbEtablissements int       `json:"nb_etablissements"`
	HQ               HQ        `json:"hq"`
	Officers         []Officer `json:"officers"`
	Finances         []Finance `json:"finances"`
}

// HQ is the head office.
type HQ struct {
	Siret      string   `json:"siret"`
	Adresse    string   `json:"adresse"`
	CodePostal string   `json:"code_postal"`
	Ville      string   `json:"ville"`
	Insee      string   `json:"insee"`
	Lat        *float64 `json:"lat"`
	Lon        *float64 `json:"lon"`
}

// Officer is a director: a person or a company.
type Officer struct {
	Nom            string  `json:"nom"`
	Role           string  `json:"role"`
	Type           string  `json:"type"` // personne physique / personne morale
	AnneeNaissance *string `json:"annee_naissance"`
	Siren          *string `json:"siren"`
}

// Finance is one year of published figures, in euros.
type Finance struct {
	Annee           string `json:"annee"`
	ChiffreAffaires *int64 `json:"chiffre_affaires"`
	ResultatNet     *int64 `json:"resultat_net"`
}

// status reads the register's etat_administratif; an empty or unknown state is said, not
// taken for active.
func status(etat string) string {
	switch etat {
	case "A":
		return "active"
	case "C":
		return "ceased"
	}
	return "unknown"
}

func coord(s string) *float64 {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return nil
	}
	return &f
}

func euros(f *float64) *int64 {
	if f == nil {
		return nil
	}
	v := int64(math.Round(*f))
	return &v
}

func company(u re.Unite) Company {
	c := Company{
		Siren: u.Siren, Nom: nonEmpty(u.NomComplet, u.NomRaisonSociale), Sigle: strPtr(u.Sigle),
		NAF: strPtr(u.ActivitePrincipale), FormeJuridique: strPtr(u.NatureJuridique), Categorie: strPtr(u.CategorieEntreprise),
		TrancheEffectif: strPtr(u.TrancheEffectifSalarie), DateCreation: strPtr(u.DateCreation), DateFermeture: strPtr(u.DateFermeture),
		Status: status(u.EtatAdministratif), NbEtablissements: u.NombreEtablissements,
		HQ: HQ{Siret: u.Siege.Siret, Adresse: u.Siege.Adresse, CodePostal: u.Siege.CodePostal, Ville: u.Siege.LibelleCommune,
			Insee: u.Siege.Commune, Lat: coord(u.Siege.Latitude), Lon: coord(u.Siege.Longitude)},
		Officers: []Officer{}, Finances: []Finance{},
	}
	if n, err := tva.Number(u.Siren); err == nil {
		c.TVA = &n
	}
	for _, d := range u.Dirigeants {
		o := Officer{Role: d.Qualite, Type: d.TypeDirigeant, AnneeNaissance: strPtr(d.AnneeDeNaissance), Siren: strPtr(d.Siren)}
		o.Nom = nonEmpty(d.Denomination, strings.TrimSpace(d.Prenoms+" "+d.Nom))
		c.Officers = append(c.Officers, o)
	}
	years := make([]string, 0, len(u.Finances))
	for y := range u.Finances {
		years = append(years, y)
	}
	slices.Sort(years)
	slices.Reverse(years)
	for _, y := range years {
		f := u.Finances[y]
		c.Finances = append(c.Finances, Finance{Annee: y, ChiffreAffaires: euros(f.CA), ResultatNet: euros(f.ResultatNet)})
	}
	return c
}

// isID reports whether q is a SIREN or SIRET, spaces allowed.
func isID(q string) (string, bool) {
	id := strings.ReplaceAll(q, " ", "")
	if len(id) != 9 && len(id) != 14 {
		return id, false
	}
	for _, c := range id {
		if c < '0' || c > '9' {
			return id, false
		}
	}
	return id, true
}

// CompanySearch is the answer of /v1/fr/entreprise.
type CompanySearch struct {
	Query   string    `json:"query"`
	Total   int       `json:"total"`
	Results []Company `json:"results"`
}

func (r *Routes) entreprise(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("q")
	res, err := r.entreprises.Find(ctx, q, 10)
	if err != nil {
		return nil, err
	}
	if id, ok := isID(q); ok && len(res.Results) == 0 {
		return nil, apierr.NotFound("no company with SIREN/SIRET %s in the public register (non-diffusible companies are absent)", id)
	}
	out := CompanySearch{Query: q, Total: res.TotalResults, Results: make([]Company, 0, len(res.Results))}
	for _, u := range res.Results {
		out.Results = append(out.Results, company(u))
	}
	return out, nil
}

// FreeCompany is the reduced first result of /free/entreprise.
type FreeCompany struct {
	Siren  string  `json:"siren"`
	Nom    string  `json:"nom"`
	NAF    *string `json:"naf"`
	Ville  string  `json:"ville"`
	Status string  `json:"status"`
}

func (r *Routes) freeEntreprise(ctx context.Context, req *catalog.Request) (any, error) {
	res, err := r.entreprises.Find(ctx, req.Args.Str("q"), 1)
	if err != nil {
		return nil, err
	}
	if len(res.Results) == 0 {
		return nil, apierr.NotFound("no company matches %q", req.Args.Str("q"))
	}
	u := res.Results[0]
	return FreeCompany{Siren: u.Siren, Nom: nonEmpty(u.NomComplet, u.NomRaisonSociale), NAF: strPtr(u.ActivitePrincipale),
		Ville: u.Siege.LibelleCommune, Status: status(u.EtatAdministratif)}, nil
}

// Etablissements is the answer of /v1/fr/etablissements.
type Etablissements struct {
	Siren            string `json:"siren"`
	Nom              string `json:"nom"`
	NbEtablissements int    `json:"nb_etablissements"`
	NbOuverts        int    `json:"nb_ouverts"`
	Siege            Etab   `json:"siege"`
	Etablissements   []Etab `json:"etablissements"`
	Note             string `json:"note"`
}

// Etab is one establishment.
type Etab struct {
	Siret   string `json:"siret"`
	Address string `json:"address"`
	Status  string `json:"status"` // active or closed
	Ville   string `json:"ville,omitempty"`
	Siege   bool   `json:"siege"`
}

func etabStatus(etat string) string {
	if etat == "F" {
		return "closed"
	}
	return "active"
}

func (r *Routes) etablissements(ctx context.Context, req *catalog.Request) (any, error) {
	siren := req.Args.Str("siren")
	res, err := r.entreprises.Find(ctx, siren, 1)
	if err != nil {
		return nil, err
	}
	if len(res.Results) == 0 {
		return nil, apierr.NotFound("no company with SIREN %s in the public register", siren)
	}
	u := res.Results[0]
	out := Etablissements{Siren: u.Siren, Nom: nonEmpty(u.NomComplet, u.NomRaisonSociale), NbEtablissements: u.NombreEtablissements,
		NbOuverts: u.NombreEtablissementsOuvert, Etablissements: []Etab{},
		Siege: Etab{Siret: u.Siege.Siret, Address: u.Siege.Adresse, Status: etabStatus(u.Siege.EtatAdministratif), Ville: u.Siege.LibelleCommune, Siege: true},
		Note:  "etablissements lists at most 100 establishments known to the search index; nb_etablissements is the full count"}
	for _, e := range u.MatchingEtablissements {
		out.Etablissements = append(out.Etablissements, Etab{Siret: e.Siret, Address: e.Adresse, Status: etabStatus(e.EtatAdministratif), Ville: e.LibelleCommune, Siege: e.EstSiege})
	}
	return out, nil
}

// Associations is the answer of /v1/fr/association.
type Associations struct {
	Query   string        `json:"query"`
	Total   int           `json:"total"`
	Results []Association `json:"results"`
}

// Association is one association known to SIRENE.
type Association struct {
	Nom          string  `json:"nom"`
	Siren        string  `json:"siren"`
	RNA          *string `json:"rna"`
	DateCreation *string `json:"date_creation"`
	Ville        string  `json:"ville"`
	CodePostal   string  `json:"code_postal"`
	Status       string  `json:"status"`
}

func (r *Routes) association(ctx context.Context, req *catalog.Request) (any, error) {
	q := req.Args.Str("q")
	res, err := r.entreprises.Search(ctx, re.Query{Q: q, PerPage: 20, EstAssociation: true})
	if err != nil {
		return nil, err
	}
	out := Associations{Query: q, Total: res.TotalResults, Results: []Association{}}
	for _, u := range res.Results {
		out.Results = append(out.Results, Association{Nom: nonEmpty(u.NomComplet, u.NomRaisonSociale), Siren: u.Siren,
			RNA: strPtr(u.Complements.IdentifiantAssociation), DateCreation: strPtr(u.DateCreation),
			Ville: u.Siege.LibelleCommune, CodePostal: u.Siege.CodePostal, Status: status(u.EtatAdministratif)})
	}
	return out, nil
}

// Annonces is the answer of /v1/fr/bodacc.
type Annonces struct {
	Siren    string    `json:"siren"`
	Total    int       `json:"total"`
	Annonces []Annonce `json:"annonces"`
}

// Annonce is one legal notice.
type Annonce struct {
	Date        string  `json:"date"`
	Type        string  `json:"type"`
	Famille     string  `json:"famille"`
	FamilleCode string  `json:"famille_code"`
	Tribunal    string  `json:"tribunal"`
	Reference   string  `json:"reference"`
	Details     *string `json:"details"`
	URL         string  `json:"url"`
}

func annonceDetails(a bodacc.Annonce) *string {
	var j bodacc.Jugement
	if a.Jugement.Decode(&j) {
		return strPtr(nonEmpty(j.ComplementJugement, j.Nature))
	}
	var d bodacc.Depot
	if a.Depot.Decode(&d) {
		return strPtr(strings.TrimSpace(d.TypeDepot + " (clôture " + d.DateCloture + ")"))
	}
	var m struct {
		Descriptif string `json:"descriptif"`
	}
	if a.ModificationsGenerales.Decode(&m) {
		return strPtr(m.Descriptif)
	}
	var rad struct {
		RadiationPM string `json:"radiationPM"`
		Commentaire string `json:"commentaire"`
	}
	if a.RadiationAuRCS.Decode(&rad) {
		return strPtr(nonEmpty(rad.Commentaire, "Radiation du RCS"))
	}
	return nil
}

func (r *Routes) annonces(ctx context.Context, req *catalog.Request) (any, error) {
	siren := req.Args.Str("siren")
	p, err := r.bodacc.Annonces(ctx, siren, "")
	if err != nil {
		return nil, err
	}
	out := Annonces{Siren: siren, Total: p.TotalCount, Annonces: []Annonce{}}
	for _, a := range p.Results {
		out.Annonces = append(out.Annonces, annonce(a))
	}
	return out, nil
}

func annonce(a bodacc.Annonce) Annonce {
	return Annonce{Date: a.DateParution, Type: a.TypeAvisLib, Famille: a.FamilleAvisLib, FamilleCode: a.FamilleAvis,
		Tribunal: a.Tribunal, Reference: "BODACC " + a.PublicationAvis + " n°" + a.Parution + " annonce " + strconv.Itoa(a.NumeroAnnonce),
		Details: annonceDetails(a), URL: a.URL}
}

// oneLine joins the lines of a postal address VIES sends on several.
func oneLine(addr string) string {
	return strings.Join(strings.FieldsFunc(addr, func(r rune) bool { return r == '\n' }), ", ")
}

// Bilans is the answer of /v1/fr/bilans.
type Bilans struct {
	Siren                 string    `json:"siren"`
	Denomination          *string   `json:"denomination"`
	ComptesAnnuelsDeposes []Depot   `json:"comptes_annuels_deposes"`
	Exercice              *string   `json:"exercice"` // closing date of the figures below
	ChiffreAffaires       *int64    `json:"chiffre_affaires"`
	ResultatNet           *int64    `json:"resultat_net"`
	Capital               *Capital  `json:"capital"`
	Comptes               []Comptes `json:"comptes"`
}

// Depot is a filing of annual accounts announced in BODACC C.
type Depot struct {
	DateCloture  string `json:"date_cloture"`
	DateDepot    string `json:"date_depot"`
	Type         string `json:"type"`
	Confidentiel bool   `json:"confidentiel"`
}

// Capital is the share capital of the newest notice that states it.
type Capital struct {
	Montant    float64 `json:"montant"`
	Devise     string  `json:"devise"`
	SourceDate string  `json:"source_date"`
}

// Comptes is one year of the BCE/INPI ratios.
type Comptes struct {
	DateCloture     string `json:"date_cloture"`
	Type            string `json:"type"`
	ChiffreAffaires *int64 `json:"chiffre_affaires"`
	ResultatNet     *int64 `json:"resultat_net"`
	EBE             *int64 `json:"ebe"`
}

var typeBilan = map[string]string{"C": "complet", "S": "simplifie", "K": "consolide"}

func (r *Routes) bilans(ctx context.Context, req *catalog.Request) (any, error) {
	siren := req.Args.Str("siren")
	var (
		ratios  *ods.Page[economie.Ratio]
		notices *ods.Page[bodacc.Annonce]
	)
	errs := fanout.Go(ctx, nil,
		func(ctx context.Context) (err error) { ratios, err = r.economie.Ratios(ctx, siren); return },
		func(ctx context.Context) (err error) { notices, err = r.bodacc.Annonces(ctx, siren, ""); return })
	if err := cmp.Or(errs...); err != nil {
		return nil, err
	}
	if ratios.TotalCount == 0 && notices.TotalCount == 0 {
		return nil, apierr.NotFound("no filed accounts nor legal notice known for SIREN %s", siren)
	}
	out := Bilans{Siren: siren, ComptesAnnuelsDeposes: []Depot{}, Comptes: []Comptes{}}
	for _, a := range notices.Results {
		if out.Denomination == nil && a.Commercant != "" {
			out.Denomination = strPtr(a.Commercant)
		}
		var d bodacc.Depot
		if a.FamilleAvis == bodacc.DPC && a.Depot.Decode(&d) {
			out.ComptesAnnuelsDeposes = append(out.ComptesAnnuelsDeposes, Depot{DateCloture: d.DateCloture, DateDepot: a.DateParution,
				Type: d.TypeDepot, Confidentiel: strings.Contains(fold.String(d.Descriptif), "confidentialit")})
		}
		var p bodacc.Personnes
		if out.Capital == nil && a.ListePersonnes.Decode(&p) && p.Personne.Capital != nil {
			if m, err := strconv.ParseFloat(strings.ReplaceAll(p.Personne.Capital.MontantCapital, " ", ""), 64); err == nil {
				out.Capital = &Capital{Montant: m, Devise: nonEmpty(p.Personne.Capital.Devise, "EUR"), SourceDate: a.DateParution}
			}
		}
	}
	for _, x := range ratios.Results {
		out.Comptes = append(out.Comptes, Comptes{DateCloture: x.DateClotureExercice, Type: nonEmpty(typeBilan[x.TypeBilan], x.TypeBilan),
			ChiffreAffaires: euros(x.ChiffreDAffaires), ResultatNet: euros(x.ResultatNet), EBE: euros(x.EBE)})
	}
	// The headline figures are those of the newest individual (not consolidated) accounts.
	for _, c := range out.Comptes {
		if c.Type != "consolide" {
			out.Exercice, out.ChiffreAffaires, out.ResultatNet = strPtr(c.DateCloture), c.ChiffreAffaires, c.ResultatNet
			break
		}
	}
	return out, nil
}

// Procedures is the answer of /v1/fr/procedures-collectives.
type Procedures struct {
	Siren      string      `json:"siren"`
	Statut     string      `json:"statut"`
	Alerte     bool        `json:"alerte"`
	Radiee     bool        `json:"radiee"` // a deregistration notice was published
	Procedures []Procedure `json:"procedures"`
	// Complet is false when the company has more collective-proceeding notices than one
	// read returns (100): the statut is then that of the newest ones read.
	Complet bool `json:"complet"`
}

// Procedure is one judgment notice.
type Procedure struct {
	Famille         string `json:"famille"`
	Nature          string `json:"nature"`
	DateJugement    string `json:"date_jugement"`
	Tribunal        string `json:"tribunal"`
	DatePublication string `json:"date_publication"`
	Type            string `json:"type"`
	URL             string `json:"url"`
}

// classify applies the research's rules, case- and accent-insensitive, in this order.
func classify(nature string) string {
	n := fold.String(nature)
	switch {
	case strings.Contains(n, "cloture"):
		return "procedure_cloturee"
	case strings.Contains(n, "arretant le plan") || strings.Contains(n, "plan de redressement") ||
		strings.Contains(n, "plan de sauvegarde") || strings.Contains(n, "plan de cession"):
		return "plan_en_cours"
	case strings.Contains(n, "liquidation"):
		return "liquidation_judiciaire"
	case strings.Contains(n, "redressement"):
		return "redressement_judiciaire"
	case strings.Contains(n, "sauvegarde"):
		return "sauvegarde"
	case strings.Contains(n, "retablissement professionnel"):
		return "retablissement_professionnel"
	}
	return ""
}

var frMonths = map[string]string{"janvier": "01", "fevrier": "02", "mars": "03", "avril": "04", "mai": "05", "juin": "06",
	"juillet": "07", "aout": "08", "septembre": "09", "octobre": "10", "novembre": "11", "decembre": "12"}

// isoDate reads BODACC judgment dates: ISO, or French text ("10 décembre 2009", "1er mars 2010")
// on old notices. It returns "" when it cannot.
func isoDate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		return s[:10]
	}
	f := strings.Fields(fold.String(s))
	if len(f) != 3 {
		return ""
	}
	d, err := strconv.Atoi(strings.TrimSuffix(f[0], "er"))
	m, ok := frMonths[f[1]]
	if err != nil || !ok || len(f[2]) != 4 || d < 1 || d > 31 {
		return ""
	}
	return f[2] + "-" + m + "-" + strconv.Itoa(100 + d)[1:]
}

func (r *Routes) procedures(ctx context.Context, req *catalog.Request) (any, error) {
	siren := req.Args.Str("siren")
	// Proceedings and deregistrations are asked for apart, so that the newest 100 notices of
	// other kinds (filings, changes) never push a judgment out of the read.
	var coll, rad *ods.Page[bodacc.Annonce]
	errs := fanout.Go(ctx, nil,
		func(ctx context.Context) (err error) {
			coll, err = r.bodacc.Annonces(ctx, siren, bodacc.Collective)
			return
		},
		func(ctx context.Context) (err error) {
			rad, err = r.bodacc.Annonces(ctx, siren, bodacc.Radiation)
			return
		})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := procedureState(siren, append(slices.Clip(coll.Results), rad.Results...))
	out.Complet = coll.TotalCount <= len(coll.Results)
	return out, nil
}

// procedureState derives the collective-proceedings state of a company from its notices:
// the class of the newest judgment, and whether a deregistration was published.
func procedureState(siren string, notices []bodacc.Annonce) Procedures {
	out := Procedures{Siren: siren, Statut: "aucune", Procedures: []Procedure{}}
	type event struct{ date, class string }
	var events []event
	for _, a := range notices {
		if a.FamilleAvis == "radiation" {
			out.Radiee = true
		}
		if a.FamilleAvis != bodacc.Collective {
			continue
		}
		var j bodacc.Jugement
		a.Jugement.Decode(&j)
		date := nonEmpty(isoDate(j.Date), a.DateParution)
		out.Procedures = append(out.Procedures, Procedure{Famille: j.Famille, Nature: j.Nature, DateJugement: nonEmpty(isoDate(j.Date), j.Date),
			Tribunal: a.Tribunal, DatePublication: a.DateParution, Type: a.TypeAvisLib, URL: a.URL})
		if c := classify(nonEmpty(j.Nature, j.ComplementJugement)); c != "" {
			events = append(events, event{date, c})
		}
	}
	if len(out.Procedures) > 0 {
		out.Statut = "autre"
	}
	if len(events) > 0 {
		latest := slices.MaxFunc(events, func(a, b event) int { return strings.Compare(a.date, b.date) })
		out.Statut = latest.class
	}
	out.Alerte = out.Statut != "aucune" && out.Statut != "procedure_cloturee"
	return out
}

// VATCheck is the answer of /v1/fr/vat-eu.
type VATCheck struct {
	VAT       string  `json:"vat"`
	Valid     bool    `json:"valid"`
	Country   string  `json:"country"`
	Name      *string `json:"name"`
	Address   *string `json:"address"`
	CheckedAt *string `json:"checked_at"`
}

func (r *Routes) vatEU(ctx context.Context, req *catalog.Request) (any, error) {
	v := strings.ToUpper(strings.NewReplacer(" ", "", ".", "", "-", "").Replace(req.Args.Str("vat")))
	res, err := r.vies.Check(ctx, v[:2], v[2:])
	if err != nil {
		return nil, err
	}
	addr := oneLine(res.Address)
	return VATCheck{VAT: v, Valid: res.Valid, Country: v[:2], Name: strPtr(res.Name), Address: strPtr(addr), CheckedAt: strPtr(res.RequestDate)}, nil
}

// TVA is the answer of /v1/fr/tva.
type TVA struct {
	Siren string `json:"siren"`
	TVA   string `json:"tva"`
	Cle   string `json:"cle"`
	Note  string `json:"note"`
}

func (r *Routes) tva(_ context.Context, req *catalog.Request) (any, error) {
	siren := req.Args.Str("siren")
	n, err := tva.Number(siren)
	if err != nil {
		return nil, apierr.BadParam("siren", "siren %s", err.Error())
	}
	return TVA{Siren: siren, TVA: n, Cle: n[2:4], Note: "computed from the SIREN; whether the company is VAT-registered is answered by /v1/fr/vat-eu"}, nil
}

func (r *Routes) iban(_ context.Context, req *catalog.Request) (any, error) {
	return iban.Check(req.Args.Str("iban")), nil
}

// RGEList is the answer of /v1/fr/rge.
type RGEList struct {
	CP       string    `json:"cp"`
	Domaine  *string   `json:"domaine"`
	Total    int       `json:"total"`
	Artisans []Artisan `json:"artisans"`
	// Truncated: the postcode has more qualification lines than one read returns (1000);
	// the list is then incomplete.
	Truncated bool `json:"truncated"`
}

// Artisan is one RGE-certified establishment.
type Artisan struct {
	Nom            string          `json:"nom"`
	Siret          string          `json:"siret"`
	Domaine        string          `json:"domaine"`
	Domaines       []string        `json:"domaines"`
	Telephone      *string         `json:"telephone"`
	Email          *string         `json:"email"`
	Site           *string         `json:"site"`
	Adresse        string          `json:"adresse"`
	Commune        string          `json:"commune"`
	Qualifications []Qualification `json:"qualifications"`
}

// Qualification is one RGE qualification.
type Qualification struct {
	Domaine   string  `json:"domaine"`
	Nom       string  `json:"nom"`
	Organisme string  `json:"organisme"`
	Debut     *string `json:"debut"` // null when the register gives no date (some rows carry none)
	Fin       *string `json:"fin"`
	Valide    bool    `json:"valide"`
}

func (r *Routes) valid(row ademe.RGE) bool {
	today := r.parisDate().Format("2006-01-02")
	return row.LienDateDebut <= today && (row.LienDateFin == "" || today <= row.LienDateFin)
}

func (r *Routes) qualification(row ademe.RGE) Qualification {
	return Qualification{Domaine: row.Domaine, Nom: row.NomQualification, Organisme: row.Organisme, Debut: strPtr(row.LienDateDebut), Fin: strPtr(row.LienDateFin), Valide: r.valid(row)}
}

func (r *Routes) rge(ctx context.Context, req *catalog.Request) (any, error) {
	cp, dom := req.Args.Str("cp"), req.Args.Str("domaine")
	lines, err := r.ademe.RGEByCP(ctx, cp)
	if err != nil {
		return nil, err
	}
	out := RGEList{CP: cp, Domaine: strPtr(dom), Artisans: []Artisan{}, Truncated: lines.Total > len(lines.Results)}
	idx := map[string]int{}
	for _, row := range lines.Results {
		// The upstream's keyword match is accent- and case-sensitive: filter here instead.
		if !r.valid(row) || dom != "" && !fold.Contains(row.Domaine+" "+row.MetaDomaine+" "+row.NomQualification, dom) {
			continue
		}
		i, seen := idx[row.Siret]
		if !seen {
			i = len(out.Artisans)
			idx[row.Siret] = i
			out.Artisans = append(out.Artisans, Artisan{Nom: row.NomEntreprise, Siret: row.Siret, Domaines: []string{},
				Telephone: strPtr(row.Telephone), Email: strPtr(row.Email), Site: strPtr(row.SiteInternet),
				Adresse: row.Adresse, Commune: row.Commune, Qualifications: []Qualification{}})
		}
		a := &out.Artisans[i]
		if row.Domaine != "" && !slices.Contains(a.Domaines, row.Domaine) {
			a.Domaines = append(a.Domaines, row.Domaine)
		}
		a.Domaine = strings.Join(a.Domaines, "; ")
		a.Qualifications = append(a.Qualifications, r.qualification(row))
	}
	out.Total = len(out.Artisans)
	return out, nil
}

// RGECheck is the answer of /v1/fr/rge-check.
type RGECheck struct {
	Siret          string          `json:"siret"`
	RGE            bool            `json:"rge"`
	Nom            *string         `json:"nom"`
	ExpireLe       *string         `json:"expire_le"` // earliest end among the valid qualifications
	Qualifications []Qualification `json:"qualifications"`
}

func (r *Routes) rgeCheck(ctx context.Context, req *catalog.Request) (any, error) {
	siret := req.Args.Str("siret")
	lines, err := r.ademe.RGEBySiret(ctx, siret)
	if err != nil {
		return nil, err
	}
	out := RGECheck{Siret: siret, Qualifications: []Qualification{}}
	for _, row := range lines.Results {
		q := r.qualification(row)
		out.Qualifications = append(out.Qualifications, q)
		out.Nom = strPtr(row.NomEntreprise)
		if q.Valide {
			out.RGE = true
			if q.Fin != nil && (out.ExpireLe == nil || *q.Fin < *out.ExpireLe) {
				out.ExpireLe = q.Fin
			}
		}
	}
	return out, nil
}

// Bio is the answer of /v1/fr/bio.
type Bio struct {
	Total      int            `json:"total"`
	Operateurs []OperateurBio `json:"operateurs"`
}

// OperateurBio is one organic operator.
type OperateurBio struct {
	Nom           string   `json:"nom"`
	RaisonSociale string   `json:"raison_sociale"`
	Siret         *string  `json:"siret"`
	NumeroBio     *string  `json:"numeroBio"`
	NAF           *string  `json:"naf"`
	Commune       *string  `json:"commune"`
	CP            *string  `json:"cp"`
	Activites     []string `json:"activites"`
	Organisme     *string  `json:"organisme"`
	Etat          *string  `json:"etat_certification"`
	Actif         bool     `json:"actif"` // certified and not stopped: the upstream also lists operators that left organic farming
	Depuis        *string  `json:"depuis"`
	CertificatURL *string  `json:"certificat_url"`
}

func (r *Routes) operateursBio(ctx context.Context, req *catalog.Request) (any, error) {
	p, err := r.bio.Operateurs(ctx, req.Args.Str("departement"), req.Args.Str("q"), 50)
	if err != nil {
		return nil, err
	}
	out := Bio{Total: len(p.Items), Operateurs: []OperateurBio{}}
	if p.NbTotal.Valid {
		out.Total = int(p.NbTotal.V)
	}
	for _, it := range p.Items {
		o := OperateurBio{Nom: nonEmpty(it.Denomination, it.RaisonSociale), RaisonSociale: it.RaisonSociale, Siret: strPtr(it.Siret),
			NAF: strPtr(it.CodeNAF), Activites: []string{}}
		o.NumeroBio = strPtr(string(it.NumeroBio))
		if len(it.Adresses) > 0 {
			o.Commune, o.CP = strPtr(it.Adresses[0].Ville), strPtr(it.Adresses[0].CodePostal)
		}
		for _, a := range it.Activites {
			o.Activites = append(o.Activites, a.Nom)
		}
		if len(it.Certificats) > 0 {
			c := it.Certificats[0]
			o.Organisme, o.Etat, o.Depuis, o.CertificatURL = strPtr(c.Organisme), strPtr(c.EtatCertification), strPtr(c.DateEngagement), strPtr(c.URL)
			o.Actif = c.DateArret == ""
		}
		out.Operateurs = append(out.Operateurs, o)
	}
	return out, nil
}

// Marches is the answer of /v1/fr/marches-publics.
type Marches struct {
	Total   int      `json:"total"`
	Marches []Marche `json:"marches"`
}

// Marche is one tender notice.
type Marche struct {
	ID              string   `json:"id"`
	Objet           string   `json:"objet"`
	Acheteur        string   `json:"acheteur"`
	DatePublication string   `json:"date_publication"`
	DateLimite      *string  `json:"date_limite"`
	JoursRestants   *int     `json:"jours_restants"`
	Departements    []string `json:"departements"`
	Type            []string `json:"type"`
	Nature          string   `json:"nature"`
	Procedure       string   `json:"procedure"`
	MotsCles        []string `json:"mots_cles"`
	URL             string   `json:"url"`
}

func (r *Routes) marchesPublics(ctx context.Context, req *catalog.Request) (any, error) {
	today := r.parisDate()
	q := boamp.Query{Text: req.Args.Str("q"), Departement: req.Args.Str("departement"), ByDeadline: req.Args.Str("order") == "deadline", Max: int(req.Args.Int("max"))}
	if req.Args.Bool("actif") {
		q.OpenOn = today.Format("2006-01-02")
	}
	p, err := r.boamp.Search(ctx, q)
	if err != nil {
		return nil, err
	}
	out := Marches{Total: p.TotalCount, Marches: []Marche{}}
	for _, a := range p.Results {
		m := Marche{ID: a.IDWeb, Objet: a.Objet, Acheteur: a.NomAcheteur, DatePublication: a.DateParution, DateLimite: strPtr(a.DateLimiteReponse),
			Departements: nonNil(a.CodeDepartement), Type: nonNil(a.TypeMarche), Nature: a.NatureText(), Procedure: a.FamilleLibelle,
			MotsCles: nonNil(a.DescripteurLibelle), URL: a.URLAvis}
		if len(a.DateLimiteReponse) >= 10 {
			if d, err := parseDay(a.DateLimiteReponse[:10]); err == nil {
				n := max(0, int(d.Sub(today).Hours()/24)) // a closed tender has no days left; date_limite says when it closed
				m.JoursRestants = &n
			}
		}
		out.Marches = append(out.Marches, m)
	}
	return out, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
