package annonces

import (
	"errors"

	"github.com/peage/appliance/api/family"
	"github.com/peage/appliance/api/routes/fr"
)

// New builds the routes on the browser farm (without one they stay unbound);
// biens-sous-cotes compares with estimation-immo's DVF median.
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
	if ref, err := fr.New(d); err == nil {
		p.Reference = ref
	}
	return With(p)
}
