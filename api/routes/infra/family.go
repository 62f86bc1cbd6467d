package infra

import (
	"github.com/peage/appliance/api/family"
)

// New builds the family on the journaled store; without one its routes stay unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Store == nil {
		return nil, nil
	}
	return With(d.Store, d.Now), nil
}
