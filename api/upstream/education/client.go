// Package education is the connector of data.education.gouv.fr (Opendatasoft): the school
// calendar and the directory of schools.
package education

import (
	"context"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/ods"
)

// Name is the registry name.
const Name = "data-education"

// Client reads both datasets.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Periode is one row of the calendar: one holiday period for one académie.
type Periode struct {
	Description   string `json:"description"`
	Population    string `json:"population"`
	StartDate     string `json:"start_date"` // RFC 3339 in UTC, standing for local midnight
	EndDate       string `json:"end_date"`   // the morning classes resume
	Location      string `json:"location"`
	Zones         string `json:"zones"`
	AnneeScolaire string `json:"annee_scolaire"`
}

// Calendrier lists the periods of zone (e.g. "Zone A") in a school year.
func (c *Client) Calendrier(ctx context.Context, zone, anneeScolaire string) (*ods.Page[Periode], error) {
	where := "zones=" + ods.Quote(zone) + " and annee_scolaire=" + ods.Quote(anneeScolaire)
	return ods.Records[Periode](ctx, c.h, "fr-en-calendrier-scolaire", ods.Query{Where: where, OrderBy: "start_date", Limit: ods.MaxLimit})
}

// Etablissement is one entry of the directory.
type Etablissement struct {
	UAI                  string   `json:"identifiant_de_l_etablissement"`
	Nom                  string   `json:"nom_etablissement"`
	Type                 string   `json:"type_etablissement"`
	Statut               string   `json:"statut_public_prive"`
	Nature               string   `json:"libelle_nature"`
	Adresse              string   `json:"adresse_1"`
	CodePostal           string   `json:"code_postal"`
	CodeCommune          string   `json:"code_commune"`
	NomCommune           string   `json:"nom_commune"`
	Telephone            string   `json:"telephone"`
	Mail                 string   `json:"mail"`
	Web                  string   `json:"web"`
	Latitude             *float64 `json:"latitude"`
	Longitude            *float64 `json:"longitude"`
	NombreDEleves        *int     `json:"nombre_d_eleves"`
	Etat                 string   `json:"etat"`
	EducationPrioritaire string   `json:"appartenance_education_prioritaire"`
}

const annuaireFields = "identifiant_de_l_etablissement,nom_etablissement,type_etablissement,statut_public_prive,libelle_nature,adresse_1,code_postal,code_commune,nom_commune,telephone,mail,web,latitude,longitude,nombre_d_eleves,etat,appartenance_education_prioritaire"

// Annuaire finds open establishments by name (full-text) and/or postal code.
func (c *Client) Annuaire(ctx context.Context, q, cp string, limit int) (*ods.Page[Etablissement], error) {
	where := []string{`etat="OUVERT"`}
	if q != "" {
		where = append(where, "search(nom_etablissement,"+ods.Quote(q)+")")
	}
	if cp != "" {
		where = append(where, "code_postal="+ods.Quote(cp))
	}
	return ods.Records[Etablissement](ctx, c.h, "fr-en-annuaire-education", ods.Query{
		Where: strings.Join(where, " and "), Select: annuaireFields, OrderBy: "nom_etablissement", Limit: limit})
}
