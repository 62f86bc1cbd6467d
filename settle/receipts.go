package settle

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
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

// KeepVoucherReceipt records a delivered batch-settlement voucher with its answer's signed
// extensions, so that /free/receipt finds it by payer and "channelId:maxClaimableAmount" as
// it finds an exact payment by payer and nonce. Only a voucher this facilitator committed on
// a channel of that payer is recorded.
func (f *Facilitator) KeepVoucherReceipt(req *x402.KeepVoucherReceiptRequest) error {
	if len(req.Receipt) == 0 || !json.Valid(req.Receipt) {
		return errors.New("receipt is not JSON")
	}
	channel, maxText, ok := strings.Cut(req.Nonce, ":")
	max, err := strconv.ParseUint(maxText, 10, 64)
	if !ok || err != nil {
		return fmt.Errorf("voucher %q is not channelId:maxClaimableAmount", req.Nonce)
	}
	amount, err := strconv.ParseUint(req.Amount, 10, 64)
	if err != nil {
		return fmt.Errorf("voucher amount %q: %w", req.Amount, err)
	}
	c, found := f.channels.Get(strings.ToLower(channel))
	if !found || !strings.EqualFold(c.Config.Payer, req.Payer) || c.SignedMax < max {
		return fmt.Errorf("voucher %s of %s: %w", req.Nonce, req.Payer, ledger.ErrUnknown)
	}
	return f.ledger.KeepVoucher(ledger.Record{Payer: req.Payer, Nonce: strings.ToLower(req.Nonce), Route: req.Route,
		Network: req.Network, Amount: amount, Tx: req.Transaction, Receipt: req.Receipt})
}
