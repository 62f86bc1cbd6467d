// Package economie is the connector of data.economie.gouv.fr (Opendatasoft): the BCE/INPI
// financial ratios of filed accounts and the live fuel-price feed.
package economie

import (
	"context"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/ods"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "data-economie"

// Client reads both datasets.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Ratio is one year of filed accounts (ratios_inpi_bce). Amounts are euros.
type Ratio struct {
	Siren               string   `json:"siren"`
	DateClotureExercice string   `json:"date_cloture_exercice"`
	TypeBilan           string   `json:"type_bilan"` // C complete, S simplified, K consolidated
	Confidentiality     string   `json:"confidentiality"`
	ChiffreDAffaires    *float64 `json:"chiffre_d_affaires"`
	EBE                 *float64 `json:"ebe"`
	EBIT                *float64 `json:"ebit"`
	ResultatNet         *float64 `json:"resultat_net"`
	MargeEBE            *float64 `json:"marge_ebe"`
	// Ratios as published: percentages, and years for the repayment capacity.
	AutonomieFinanciere     *float64 `json:"autonomie_financiere"`
	CapaciteDeRemboursement *float64 `json:"capacite_de_remboursement"`
	RatioDeLiquidite        *float64 `json:"ratio_de_liquidite"`
}

// Ratios lists the accounts of siren, newest first.
func (c *Client) Ratios(ctx context.Context, siren string) (*ods.Page[Ratio], error) {
	return ods.Records[Ratio](ctx, c.h, "ratios_inpi_bce", ods.Query{
		Where: "siren=" + ods.Quote(siren), OrderBy: "date_cloture_exercice desc", Limit: 20})
}

// Station is one fuel station of the instant feed. Prices are euros per litre, served as
// numbers or as text ("1.770") depending on the day.
type Station struct {
	ID      int64  `json:"id"`
	Adresse string `json:"adresse"`
	Ville   string `json:"ville"`
	CP      string `json:"cp"`
	Pop     string `json:"pop"` // R road, A motorway
	Geom    *struct {
		Lon float64 `json:"lon"`
		Lat float64 `json:"lat"`
	} `json:"geom"`
	GazolePrix  wire.Float `json:"gazole_prix"`
	GazoleMaj   string     `json:"gazole_maj"`
	SP95Prix    wire.Float `json:"sp95_prix"`
	SP95Maj     string     `json:"sp95_maj"`
	SP98Prix    wire.Float `json:"sp98_prix"`
	SP98Maj     string     `json:"sp98_maj"`
	E10Prix     wire.Float `json:"e10_prix"`
	E10Maj      string     `json:"e10_maj"`
	E85Prix     wire.Float `json:"e85_prix"`
	E85Maj      string     `json:"e85_maj"`
	GPLcPrix    wire.Float `json:"gplc_prix"`
	GPLcMaj     string     `json:"gplc_maj"`
	Automate    string     `json:"horaires_automate_24_24"`
	Services    []string   `json:"services_service"`
	RuptureDef  string     `json:"carburants_rupture_definitive"`
	RuptureTemp string     `json:"carburants_rupture_temporaire"`
}

const carburantsFields = "id,adresse,ville,cp,pop,geom,gazole_prix,gazole_maj,sp95_prix,sp95_maj,e10_prix,e10_maj,sp98_prix,sp98_maj,e85_prix,e85_maj,gplc_prix,gplc_maj,horaires_automate_24_24,services_service,carburants_rupture_temporaire,carburants_rupture_definitive"

// Carburants lists the stations of a postal code (100 at most).
func (c *Client) Carburants(ctx context.Context, cp string) (*ods.Page[Station], error) {
	return ods.Records[Station](ctx, c.h, "prix-des-carburants-en-france-flux-instantane-v2", ods.Query{
		Where: "cp=" + ods.Quote(cp), Select: carburantsFields, Limit: ods.MaxLimit})
}
