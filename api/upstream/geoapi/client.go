// Package geoapi is the connector of the API Découpage administratif (geo.api.gouv.fr).
package geoapi

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "geo-api"

// Fields asked for every commune.
const Fields = "nom,code,codesPostaux,centre,surface,population,codeDepartement,departement,codeRegion,region,codeEpci,epci"

// Client reads communes.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Commune is a commune with the asked fields.
type Commune struct {
	Nom          string   `json:"nom"`
	Code         string   `json:"code"`
	CodesPostaux []string `json:"codesPostaux"`
	Centre       *struct {
		Coordinates [2]float64 `json:"coordinates"` // [lon, lat]
	} `json:"centre"`
	Surface     *float64 `json:"surface"` // hectares
	Population  *int     `json:"population"`
	Departement *Ref     `json:"departement"`
	Region      *Ref     `json:"region"`
	EPCI        *Ref     `json:"epci"`
}

// Ref is a code and its name.
type Ref struct {
	Code string `json:"code"`
	Nom  string `json:"nom"`
}

// ByName searches by name, the most populated first.
func (c *Client) ByName(ctx context.Context, nom string, limit int) ([]Commune, error) {
	var out []Commune
	err := c.h.GetJSON(ctx, "/communes", url.Values{"nom": {nom}, "boost": {"population"}, "limit": {strconv.Itoa(limit)}, "fields": {Fields}}, &out)
	return out, err
}

// ByPostalCode lists the communes a postal code serves.
func (c *Client) ByPostalCode(ctx context.Context, cp string) ([]Commune, error) {
	var out []Commune
	err := c.h.GetJSON(ctx, "/communes", url.Values{"codePostal": {cp}, "fields": {Fields}}, &out)
	return out, err
}

// ByCode reads one commune; an unknown code is a 404 upstream.Error.
func (c *Client) ByCode(ctx context.Context, code string) (*Commune, error) {
	var out Commune
	if err := c.h.GetJSON(ctx, "/communes/"+url.PathEscape(code), url.Values{"fields": {Fields}}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// InDepartement lists the communes of a département with their population only, for the
// département's total.
func (c *Client) InDepartement(ctx context.Context, dep string) ([]Commune, error) {
	var out []Commune
	err := c.h.GetJSON(ctx, "/departements/"+url.PathEscape(dep)+"/communes", url.Values{"fields": {"population"}}, &out)
	return out, err
}
