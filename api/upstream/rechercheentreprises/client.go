// Package rechercheentreprises is the connector of the API Recherche d'entreprises (DINUM),
// the keyless search behind annuaire-entreprises.data.gouv.fr.
package rechercheentreprises

import (
	"context"
	"net/url"
	"strconv"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "recherche-entreprises"

// MaxPerPage is the upstream's page-size cap.
const MaxPerPage = 25

// Client calls GET /search.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

// Ready reports whether the upstream is usable.
func (c *Client) Ready() error { return c.h.Ready() }

// Query is a /search request.
type Query struct {
	Q              string
	Page, PerPage  int
	EstAssociation bool
	// MatchingEtab asks for up to n matching establishments (1-100).
	MatchingEtab int

	// Filters (empty: not sent). A company matches a geographic filter when any of its
	// establishments is in the area, not only its head office.
	ActivitePrincipale string // NAF code, e.g. 43.22A
	Departement        string
	Region             string
	CodePostal         string
	CodeCommune        string
	EtatAdministratif  string // A or C
	// Person search (reseau-dirigeant): officers named so.
	NomPersonne, PrenomsPersonne string
	TypePersonne                 string // dirigeant or elu
	// DateNaissanceMin and Max bound the person's birth date (YYYY-MM-DD).
	DateNaissanceMin, DateNaissanceMax string
}

// Results is the /search envelope.
type Results struct {
	Results      []Unite `json:"results"`
	TotalResults int     `json:"total_results"`
	Page         int     `json:"page"`
	PerPage      int     `json:"per_page"`
	TotalPages   int     `json:"total_pages"`
}

// Unite is one company (unité légale).
type Unite struct {
	Siren                      string             `json:"siren"`
	NomComplet                 string             `json:"nom_complet"`
	NomRaisonSociale           string             `json:"nom_raison_sociale"`
	Sigle                      string             `json:"sigle"`
	ActivitePrincipale         string             `json:"activite_principale"`
	SectionActivitePrincipale  string             `json:"section_activite_principale"`
	NatureJuridique            string             `json:"nature_juridique"`
	CategorieEntreprise        string             `json:"categorie_entreprise"`
	TrancheEffectifSalarie     string             `json:"tranche_effectif_salarie"`
	DateCreation               string             `json:"date_creation"`
	DateFermeture              string             `json:"date_fermeture"`
	EtatAdministratif          string             `json:"etat_administratif"`
	StatutDiffusion            string             `json:"statut_diffusion"`
	NombreEtablissements       int                `json:"nombre_etablissements"`
	NombreEtablissementsOuvert int                `json:"nombre_etablissements_ouverts"`
	Siege                      Etablissement      `json:"siege"`
	Dirigeants                 []Dirigeant        `json:"dirigeants"`
	Finances                   map[string]Finance `json:"finances"`
	Complements                Complements        `json:"complements"`
	MatchingEtablissements     []Etablissement    `json:"matching_etablissements"`
}

// Etablissement is the head office or a matching establishment.
type Etablissement struct {
	Siret              string      `json:"siret"`
	Adresse            string      `json:"adresse"`
	CodePostal         string      `json:"code_postal"`
	LibelleCommune     string      `json:"libelle_commune"`
	Commune            string      `json:"commune"`
	Departement        string      `json:"departement"`
	Region             string      `json:"region"`
	EtatAdministratif  string      `json:"etat_administratif"`
	EstSiege           bool        `json:"est_siege"`
	ActivitePrincipale string      `json:"activite_principale"`
	DateCreation       string      `json:"date_creation"`
	Latitude           string      `json:"latitude"` // decimal text, as the upstream sends it
	Longitude          string      `json:"longitude"`
	ListeRGE           []string    `json:"liste_rge"`
	ListeIDBio         []wire.Text `json:"liste_id_bio"` // numbers on the wire
	// ActiviteRegistreMetier is the trade code of the Répertoire des métiers (craftsmen).
	ActiviteRegistreMetier string `json:"activite_principale_registre_metier"`
}

// Dirigeant is an officer: a person or a company.
type Dirigeant struct {
	TypeDirigeant    string `json:"type_dirigeant"`
	Nom              string `json:"nom"`
	Prenoms          string `json:"prenoms"`
	AnneeDeNaissance string `json:"annee_de_naissance"`
	DateDeNaissance  string `json:"date_de_naissance"`
	Nationalite      string `json:"nationalite"`
	Qualite          string `json:"qualite"`
	Siren            string `json:"siren"`
	Denomination     string `json:"denomination"`
}

// Finance is one year of published accounts, in euros.
type Finance struct {
	CA          *float64 `json:"ca"`
	ResultatNet *float64 `json:"resultat_net"`
}

// Complements are the labels.
type Complements struct {
	EstAssociation         bool   `json:"est_association"`
	IdentifiantAssociation string `json:"identifiant_association"`
	EstRGE                 bool   `json:"est_rge"`
	EstBio                 bool   `json:"est_bio"`
	EstESS                 bool   `json:"est_ess"`
	EstEntrepreneurIndiv   bool   `json:"est_entrepreneur_individuel"`
	EstQualiopi            bool   `json:"est_qualiopi"`
}

// Search calls /search.
func (c *Client) Search(ctx context.Context, q Query) (*Results, error) {
	v := url.Values{}
	if q.Q != "" {
		v.Set("q", q.Q)
	}
	for name, val := range map[string]string{"activite_principale": q.ActivitePrincipale, "departement": q.Departement,
		"region": q.Region, "code_postal": q.CodePostal, "code_commune": q.CodeCommune, "etat_administratif": q.EtatAdministratif,
		"nom_personne": q.NomPersonne, "prenoms_personne": q.PrenomsPersonne, "type_personne": q.TypePersonne,
		"date_naissance_personne_min": q.DateNaissanceMin, "date_naissance_personne_max": q.DateNaissanceMax} {
		if val != "" {
			v.Set(name, val)
		}
	}
	page := max(q.Page, 1)
	per := q.PerPage
	if per <= 0 || per > MaxPerPage {
		per = 10
	}
	v.Set("page", strconv.Itoa(page))
	v.Set("per_page", strconv.Itoa(per))
	if q.EstAssociation {
		v.Set("est_association", "true")
	}
	if q.MatchingEtab > 0 {
		v.Set("limite_matching_etablissements", strconv.Itoa(min(q.MatchingEtab, 100)))
	}
	var r Results
	if err := c.h.GetJSON(ctx, "/search", v, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// Find resolves a SIREN, a SIRET or a name. For an identifier it keeps only the exact
// company, since the full-text search also matches the number inside addresses.
func (c *Client) Find(ctx context.Context, q string, per int) (*Results, error) {
	// Spaces are dropped only from a number ("552 032 534"): a name keeps its words, or
	// "credit agricole" would be searched as "creditagricole" and never found.
	id := strings.ReplaceAll(q, " ", "")
	if !isDigits(id) {
		id = strings.Join(strings.Fields(q), " ")
	}
	r, err := c.Search(ctx, Query{Q: id, PerPage: per, MatchingEtab: 100})
	if err != nil {
		return nil, err
	}
	if !isDigits(id) || (len(id) != 9 && len(id) != 14) {
		return r, nil
	}
	kept := r.Results[:0]
	for _, u := range r.Results {
		if len(id) == 9 && u.Siren == id || len(id) == 14 && hasSiret(u, id) {
			kept = append(kept, u)
		}
	}
	r.Results, r.TotalResults = kept, len(kept)
	return r, nil
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// hasSiret reports whether siret is the head office or one of the matching establishments.
func hasSiret(u Unite, siret string) bool {
	if u.Siege.Siret == siret {
		return true
	}
	for _, e := range u.MatchingEtablissements {
		if e.Siret == siret {
			return true
		}
	}
	return false
}
