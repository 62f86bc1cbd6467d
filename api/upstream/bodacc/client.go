// Package bodacc is the connector of the BODACC "annonces commerciales" dataset (DILA) on
// its Opendatasoft portal.
package bodacc

import (
	"context"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/ods"
)

// Name is the registry name.
const Name = "bodacc"

const dataset = "annonces-commerciales"

// Client reads the notices of a company.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Annonce is one notice. Its sub-objects are JSON inside strings on the wire.
type Annonce struct {
	ID                     string         `json:"id"`
	PublicationAvis        string         `json:"publicationavis"`
	Parution               string         `json:"parution"`
	DateParution           string         `json:"dateparution"`
	NumeroAnnonce          int            `json:"numeroannonce"`
	TypeAvis               string         `json:"typeavis"`
	TypeAvisLib            string         `json:"typeavis_lib"`
	FamilleAvis            string         `json:"familleavis"`
	FamilleAvisLib         string         `json:"familleavis_lib"`
	Tribunal               string         `json:"tribunal"`
	Commercant             string         `json:"commercant"`
	Ville                  string         `json:"ville"`
	CP                     string         `json:"cp"`
	Registre               ods.Values     `json:"registre"`
	Jugement               ods.JSONString `json:"jugement"`
	Depot                  ods.JSONString `json:"depot"`
	ListePersonnes         ods.JSONString `json:"listepersonnes"`
	ModificationsGenerales ods.JSONString `json:"modificationsgenerales"`
	RadiationAuRCS         ods.JSONString `json:"radiationaurcs"`
	URL                    string         `json:"url_complete"`
}

// Jugement is the parsed jugement field.
type Jugement struct {
	Type               string `json:"type"`
	Famille            string `json:"famille"`
	Nature             string `json:"nature"`
	Date               string `json:"date"` // ISO, or French free text on old notices
	ComplementJugement string `json:"complementJugement"`
}

// Depot is the parsed depot field (filed accounts).
type Depot struct {
	DateCloture string `json:"dateCloture"`
	TypeDepot   string `json:"typeDepot"`
	Descriptif  string `json:"descriptif"`
}

// Personnes is the parsed listepersonnes field; only the share capital is read.
type Personnes struct {
	Personne struct {
		Denomination string `json:"denomination"`
		Capital      *struct {
			MontantCapital string `json:"montantCapital"`
			Devise         string `json:"devise"`
		} `json:"capital"`
	} `json:"personne"`
}

// Famille codes used as filters.
const (
	Collective = "collective"
	DPC        = "dpc" // dépôts des comptes
	Radiation  = "radiation"
)

// Annonces lists the newest notices of siren (100 at most), of one famille when set.
func (c *Client) Annonces(ctx context.Context, siren, famille string) (*ods.Page[Annonce], error) {
	where := "registre like " + ods.Quote(siren)
	if famille != "" {
		where += " AND familleavis=" + ods.Quote(famille)
	}
	return ods.Records[Annonce](ctx, c.h, dataset, ods.Query{Where: where, OrderBy: "dateparution desc", Limit: ods.MaxLimit})
}
