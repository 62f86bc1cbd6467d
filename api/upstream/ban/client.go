// Package ban is the connector of the Base Adresse Nationale geocoder (IGN Géoplateforme).
package ban

import (
	"context"
	"net/url"
	"strconv"

	"github.com/peage/appliance/api/upstream/httpc"
)

// Name is the registry name.
const Name = "ban"

// Client geocodes forward and reverse.
type Client struct{ h *httpc.Client }

func New(h *httpc.Client) *Client { return &Client{h: h} }

func (c *Client) Ready() error { return c.h.Ready() }

// Collection is a GeoCodeJSON FeatureCollection.
type Collection struct {
	Features []Feature `json:"features"`
}

// Feature is one address. Coordinates are [lon, lat].
type Feature struct {
	Geometry struct {
		Coordinates [2]float64 `json:"coordinates"`
	} `json:"geometry"`
	Properties struct {
		Label    string   `json:"label"`
		Score    float64  `json:"score"`
		Type     string   `json:"type"`
		Postcode string   `json:"postcode"`
		Citycode string   `json:"citycode"` // arrondissement code in Paris, Lyon, Marseille
		City     string   `json:"city"`
		Context  string   `json:"context"`
		Distance *float64 `json:"distance"`
	} `json:"properties"`
}

// Search geocodes q.
func (c *Client) Search(ctx context.Context, q string, limit int) (*Collection, error) {
	var out Collection
	err := c.h.GetJSON(ctx, "/search", url.Values{"q": {q}, "limit": {strconv.Itoa(limit)}}, &out)
	return &out, err
}

// reverseLimit is how many candidates Reverse asks: the geocoder ranks a street and a house
// number standing at the same distance in any order, so one candidate is not enough to
// prefer the house number (Nearest).
const reverseLimit = 5

// Reverse lists the addresses nearest to a point; Nearest picks the answer.
func (c *Client) Reverse(ctx context.Context, lat, lon float64) (*Collection, error) {
	var out Collection
	err := c.h.GetJSON(ctx, "/reverse", url.Values{
		"lat": {strconv.FormatFloat(lat, 'f', -1, 64)}, "lon": {strconv.FormatFloat(lon, 'f', -1, 64)}, "limit": {strconv.Itoa(reverseLimit)}}, &out)
	return &out, err
}

// Nearest is the closest feature, a house number before any other type at the same distance
// (a recorded answer lists "Grande Rue" before "23 Grande Rue", both at 149 m); nil when
// there is none. Features without a distance rank last.
func (c *Collection) Nearest() *Feature {
	var best *Feature
	for i := range c.Features {
		f := &c.Features[i]
		if best == nil || closer(f, best) {
			best = f
		}
	}
	return best
}

func closer(a, b *Feature) bool {
	da, db := a.Properties.Distance, b.Properties.Distance
	switch {
	case da == nil || db == nil:
		return da != nil && db == nil
	case *da != *db:
		return *da < *db
	}
	return a.Properties.Type == "housenumber" && b.Properties.Type != "housenumber"
}
