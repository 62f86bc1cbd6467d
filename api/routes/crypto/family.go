package crypto

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family over the pool; a verdict's requestKey survives restarts in the
// journaled store.
func New(d family.Deps) (*Routes, error) {
	p := Parts{Pool: d.Pool, Now: d.Now}
	if d.Store != nil {
		p.Results = d.Store
	}
	return With(p)
}
