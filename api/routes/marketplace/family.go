package marketplace

import (
	"errors"

	"github.com/peage/appliance/api/family"
)

// New builds the route on the browser farm; without one it stays unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Farm == nil {
		return nil, nil
	}
	farm, ok := d.Farm.(Farm)
	if !ok {
		return nil, errors.New("marketplace: the browser farm runs no tasks")
	}
	return With(Parts{Farm: farm, Base: d.Upstreams[Name].BaseURL, Names: d.Config.Names})
}
