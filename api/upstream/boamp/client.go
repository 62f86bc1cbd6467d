// Package boamp is the connector of the BOAMP public-tender notices (DILA) on Opendatasoft.
package boamp

import (
	"context"
	"strings"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/ods"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "boamp"

// Client searches tender notices.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Avis is one notice.
type Avis struct {
	IDWeb             string   `json:"idweb"`
	Objet             string   `json:"objet"`
	NomAcheteur       string   `json:"nomacheteur"`
	DateParution      string   `json:"dateparution"`
	DateFinDiffusion  string   `json:"datefindiffusion"`
	DateLimiteReponse string   `json:"datelimitereponse"` // RFC 3339, or null
	CodeDepartement   []string `json:"code_departement"`
	TypeMarche        []string `json:"type_marche"`
	Famille           string   `json:"famille"`
	FamilleLibelle    string   `json:"famille_libelle"`
	Nature            string   `json:"nature"`
	NatureLibelle     string   `json:"nature_libelle"`
	// NatureCategoriseLibelle is the normalised nature ("Avis de marché", "Résultat de marché"),
	// set on records whose nature_libelle is absent.
	NatureCategoriseLibelle string   `json:"nature_categorise_libelle"`
	DescripteurLibelle      []string `json:"descripteur_libelle"`
	URLAvis                 string   `json:"url_avis"`
	// Titulaire names the winners on award notices (a list, or one text on some records).
	Titulaire wire.List[string] `json:"titulaire"`
}

// NatureText is the notice's nature as BOAMP words it, from whichever of the two fields the
// record carries.
func (a Avis) NatureText() string {
	if a.NatureLibelle != "" {
		return a.NatureLibelle
	}
	return a.NatureCategoriseLibelle
}

// Query selects notices. OpenOn, when set (YYYY-MM-DD), keeps calls still open that day.
type Query struct {
	Text        string
	Departement string
	OpenOn      string
	ByDeadline  bool
	Max         int
}

// Search runs the query.
func (c *Client) Search(ctx context.Context, q Query) (*ods.Page[Avis], error) {
	var where []string
	if q.Text != "" {
		where = append(where, ods.Quote(q.Text)) // a bare literal is a full-text search
	}
	if q.Departement != "" {
		where = append(where, "code_departement="+ods.Quote(q.Departement))
	}
	if q.OpenOn != "" {
		where = append(where, "datelimitereponse >= date'"+q.OpenOn+"'")
	}
	order := "dateparution desc"
	if q.ByDeadline {
		order = "datelimitereponse asc"
	}
	return ods.Records[Avis](ctx, c.h, "boamp", ods.Query{Where: strings.Join(where, " AND "), OrderBy: order, Limit: q.Max})
}
