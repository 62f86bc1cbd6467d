package preflight

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family over the pool, under the configured route names.
func New(d family.Deps) (*Routes, error) {
	return With(Parts{Pool: d.Pool, Names: d.Config.Names, Now: d.Now})
}
