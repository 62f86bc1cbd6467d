package fr

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family over the pool; the company reports share upstream answers through
// the result cache.
func New(d family.Deps) (*Routes, error) {
	p := Parts{Pool: d.Pool, Upstreams: d.Upstreams, Now: d.Now}
	if d.Cache != nil {
		p.Cache = d.Cache
	}
	return With(p)
}
