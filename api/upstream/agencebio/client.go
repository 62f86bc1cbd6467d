// Package agencebio is the connector of Agence Bio's "API Professionnels BIO".
package agencebio

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "agence-bio"

// Client searches organic operators.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Page is the /operateurs/ envelope.
type Page struct {
	NbTotal *int        `json:"nbTotal"`
	Items   []Operateur `json:"items"`
}

// Operateur is one operator.
type Operateur struct {
	ID            int64  `json:"id"`
	RaisonSociale string `json:"raisonSociale"`
	Denomination  string `json:"denominationcourante"`
	Siret         string `json:"siret"`
	NumeroBio     any    `json:"numeroBio"` // a number on the wire, text on some rows
	CodeNAF       string `json:"codeNAF"`
	Adresses      []struct {
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
