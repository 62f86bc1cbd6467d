// Package agencebio is the connector of Agence Bio's "API Professionnels BIO".
package agencebio

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "agence-bio"

// Client searches organic operators.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Page is the /operateurs/ envelope. nbTotal is served as text ("1").
type Page struct {
	NbTotal wire.Int    `json:"nbTotal"`
	Items   []Operateur `json:"items"`
}

// Operateur is one operator.
type Operateur struct {
	ID            int64     `json:"id"`
	RaisonSociale string    `json:"raisonSociale"`
	Denomination  string    `json:"denominationcourante"`
	Siret         string    `json:"siret"`
	NumeroBio     wire.Text `json:"numeroBio"` // a number on the wire, text on some rows
	CodeNAF       string    `json:"codeNAF"`
	Telephone     string    `json:"telephone"`
	Email         string    `json:"email"`
	SiteWebs      []struct {
		URL string `json:"url"`
	} `json:"siteWebs"`
	Adresses []struct {
		CodePostal    string `json:"codePostal"`
		Ville         string `json:"ville"`
		DepartementID any    `json:"departementId"`
		Active        bool   `json:"active"`
	} `json:"adressesOperateurs"`
	Activites []struct {
		Nom string `json:"nom"`
	} `json:"activites"`
	Certificats []struct {
		Organisme         string `json:"organisme"`
		EtatCertification string `json:"etatCertification"`
		DateEngagement    string `json:"dateEngagement"`
		DateArret         string `json:"dateArret"`
		URL               string `json:"url"`
	} `json:"certificats"`
}

// maxPerSiren bounds the establishments of one company read in one call; the annuaire
// asks for 1500, a chain's shops.
const maxPerSiren = 1500

// ParSiren lists the operators of a company: the siret parameter takes a SIREN as well.
func (c *Client) ParSiren(ctx context.Context, siren string) (*Page, error) {
	v := url.Values{"siret": {siren}, "nb": {strconv.Itoa(maxPerSiren)}}
	var p Page
	if err := c.h.GetJSON(ctx, "/operateurs/", v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// Operateurs searches by département and/or text; nb is the page size.
func (c *Client) Operateurs(ctx context.Context, departement, q string, nb int) (*Page, error) {
	v := url.Values{"nb": {strconv.Itoa(nb)}, "debut": {"0"}}
	if departement != "" {
		v.Set("departements", departement)
	}
	if q != "" {
		v.Set("q", q)
	}
	var p Page
	if err := c.h.GetJSON(ctx, "/operateurs/", v, &p); err != nil {
		return nil, err
	}
	return &p, nil
}
