// Package georisques is the connector of the Géorisques API v1 (BRGM).
package georisques

import (
	"context"
	"net/url"

	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "georisques"

// Client reads the official risk list (GASPAR) of a commune.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Page is the paginated envelope of /gaspar/risques.
type Page struct {
	Results    int       `json:"results"`
	Page       int       `json:"page"`
	TotalPages int       `json:"total_pages"`
	Data       []Commune `json:"data"`
}

// Commune holds the risks of one commune.
type Commune struct {
	CodeINSEE      string `json:"code_insee"`
	LibelleCommune string `json:"libelle_commune"`
	RisquesDetail  []struct {
		NumRisque         string `json:"num_risque"`
		LibelleRisqueLong string `json:"libelle_risque_long"`
	} `json:"risques_detail"`
}

// Risques lists the risks of insee. Géorisques knows Paris, Lyon and Marseille only by
// their commune code, so arrondissement codes are mapped to it.
func (c *Client) Risques(ctx context.Context, insee string) (*Page, error) {
	var out Page
	err := c.h.GetJSON(ctx, "/gaspar/risques", url.Values{"code_insee": {plm.Commune(insee)}, "page": {"1"}, "page_size": {"10"}}, &out)
	return &out, err
}
