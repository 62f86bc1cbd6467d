package payments

import (
	"github.com/peage/appliance/api/family"
)

// New builds /free/payment over the settle daemon's ledger; without it the route stays unbound.
func New(d family.Deps) (*Routes, error) {
	if d.Ledger == nil {
		return nil, nil
	}
	return With(d.Ledger), nil
}
