package annonces

import (
	"errors"

	"github.com/peage/appliance/api/family"
)

// New builds the routes on the browser farm (without one they stay unbound);
// biens-sous-cotes compares with estimation-immo's DVF median, which the fr family offers.
func New(d family.Deps) (*Routes, error) {
	if d.Farm == nil {
		return nil, nil
	}
	farm, ok := d.Farm.(Farm)
	if !ok {
		return nil, errors.New("annonces: the browser farm runs no tasks")
	}
	p := Parts{Farm: farm, Classifieds: d.Upstreams[ClassifiedsName].BaseURL,
		Listings: d.Upstreams[ListingsName].BaseURL, ListingsPlaces: d.Upstreams[ListingsPlacesName].BaseURL, Names: d.Config.Names}
	if d.References != nil {
		p.Reference = d.References
	}
	return With(p)
}
