// Package tabular is the connector of data.gouv.fr's tabular API, used for the national
// base of EV charging points (IRVE).
package tabular

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/compute/plm"
	"github.com/peage/appliance/api/upstream/httpc"
	"github.com/peage/appliance/api/upstream/wire"
)

// Name is the registry name.
const Name = "data-gouv-tabular"

// IRVEResource is the stable resource id of the consolidated IRVE file.
const IRVEResource = "eb76d20a-8501-400e-b336-d85724de5435"

// maxPages bounds the pages read for one commune (200 charge points each).
const maxPages = 10

// Client reads the IRVE resource.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// PDC is one charge point (one row).
type PDC struct {
	IDStation      string     `json:"id_station_itinerance"`
	IDPDC          string     `json:"id_pdc_itinerance"`
	NomStation     string     `json:"nom_station"`
	NomOperateur   string     `json:"nom_operateur"`
	NomEnseigne    string     `json:"nom_enseigne"`
	Adresse        string     `json:"adresse_station"`
	CodeINSEE      string     `json:"code_insee_commune"`
	Puissance      wire.Float `json:"puissance_nominale"` // a number, or the CSV's text ("350")
	PriseEF        any        `json:"prise_type_ef"`      // booleans arrive as true, "true", "1"…
	Prise2         any        `json:"prise_type_2"`
	PriseCCS       any        `json:"prise_type_combo_ccs"`
	PriseChademo   any        `json:"prise_type_chademo"`
	PriseAutre     any        `json:"prise_type_autre"`
	Gratuit        any        `json:"gratuit"`
	ConditionAcces string     `json:"condition_acces"`
	Horaires       string     `json:"horaires"`
	Longitude      wire.Float `json:"consolidated_longitude"`
	Latitude       wire.Float `json:"consolidated_latitude"`
}

type page struct {
	Data  []PDC `json:"data"`
	Links struct {
		Next *string `json:"next"`
	} `json:"links"`
	Meta struct {
		Total int `json:"total"`
	} `json:"meta"`
}

// IRVE lists the charge points of a commune. Producers file Paris, Lyon and Marseille under
// the commune code or an arrondissement code, so both are read. truncated is true when a
// code had more than maxPages pages: the list is then incomplete, and says so.
func (c *Client) IRVE(ctx context.Context, insee string) (pdcs []PDC, truncated bool, err error) {
	codes := append([]string{insee}, plm.Arrondissements(insee)...)
	for _, code := range codes {
		for p := 1; ; p++ {
			var pg page
			v := url.Values{"code_insee_commune__exact": {code}, "page_size": {"200"}, "page": {strconv.Itoa(p)}}
			if err := c.h.GetJSON(ctx, "/api/resources/"+IRVEResource+"/data/", v, &pg); err != nil {
				return nil, false, err
			}
			pdcs = append(pdcs, pg.Data...)
			// Only the presence of next is used: its host is the upstream's, never followed.
			if pg.Links.Next == nil || *pg.Links.Next == "" {
				break
			}
			if p == maxPages {
				truncated = true
				break
			}
		}
	}
	return pdcs, truncated, nil
}

// Bool reads the IRVE booleans, which producers write in several ways.
func Bool(v any) bool {
	switch x := v.(type) {
	case bool:
		return x
	case string:
		return x == "true" || x == "1" || x == "True" || x == "TRUE" || x == "oui"
	case float64:
		return x != 0
	}
	return false
}
