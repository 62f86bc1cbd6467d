package marketplace

import (
	"github.com/peage/appliance/api/family"
)

// New builds the route on the browser farm; without one it stays unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Farm == nil {
		return nil, nil
	}
	return With(Parts{Farm: d.Farm, Base: d.Upstreams[Name].BaseURL, Names: d.Config.Names})
}
