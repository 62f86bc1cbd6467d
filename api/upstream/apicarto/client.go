// Package apicarto is the connector of IGN's API Carto, cadastre module (PCI Express).
package apicarto

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "apicarto"

// Client finds the parcel at a point.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Parcelles is the GeoJSON answer.
type Parcelles struct {
	Features []struct {
		Properties struct {
			IDU        string `json:"idu"`
			Numero     string `json:"numero"`
			Feuille    int    `json:"feuille"`
			Section    string `json:"section"`
			CodeDep    string `json:"code_dep"`
			NomCom     string `json:"nom_com"`
			CodeCom    string `json:"code_com"`
			ComAbs     string `json:"com_abs"`
			CodeArr    string `json:"code_arr"`
			Contenance *int   `json:"contenance"` // m²
			CodeINSEE  string `json:"code_insee"`
		} `json:"properties"`
	} `json:"features"`
}

// Parcelle returns the parcels containing the point (two on a boundary, none on a road).
func (c *Client) Parcelle(ctx context.Context, lat, lon float64) (*Parcelles, error) {
	geom := `{"type":"Point","coordinates":[` + strconv.FormatFloat(lon, 'f', -1, 64) + `,` + strconv.FormatFloat(lat, 'f', -1, 64) + `]}`
	var out Parcelles
	if err := c.h.GetJSON(ctx, "/api/cadastre/parcelle", url.Values{"geom": {geom}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
