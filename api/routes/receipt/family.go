package receipt

import (
	"github.com/peage/appliance/api/family"
)

// New serves the receipts the box's keys sign; without the keys the routes stay unbound. Kept
// receipts are read from the ledger when it is the settle daemon's (a remote facilitator's
// box keeps none: /free/receipt answers 503).
func New(d family.Deps) (*Routes, error) {
	if d.Receipts == nil {
		return nil, nil
	}
	kept, _ := d.Ledger.(Payments)
	return With(d.Receipts, kept, d.Now), nil
}
