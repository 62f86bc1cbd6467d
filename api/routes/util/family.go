package util

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family over the egress policy; without one its routes stay unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Egress == nil {
		return nil, nil
	}
	return With(d.Egress), nil
}
