package settle

import (
	"encoding/json"
	"errors"

	"github.com/peage/appliance/settle/ledger"
)

// KeepReceipt stores with a delivered payment the signed extensions of its answer (the
// offer-receipt receipt and the delivery statement), so that they can be fetched again.
func (f *Facilitator) KeepReceipt(id string, receipt json.RawMessage) error {
	if len(receipt) == 0 || !json.Valid(receipt) {
		return errors.New("receipt is not JSON")
	}
	_, err := f.ledger.Update(id, func(r *ledger.Record) error {
		r.Receipt = receipt
		return nil
	})
	return err
}
