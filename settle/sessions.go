package settle

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/core/types"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// The resource server's side of batch-settlement, kept here beside the journaled channel store
// so the API stays free of chain code: BatchReserve holds the channel for one request (requests
// are serialized per channel) after checking the voucher's cumulative amount against the
// channel's charged total and verifying it; BatchComplete commits the charge only after the
// work succeeded (executing a deposit first); BatchRelease frees the channel unchanged.

// session is one held request, attached to its channel in the channel store (Hold, Take).
type session struct {
	req     *x402.BatchRequest
	call    *batchCall
	channel ledger.Channel
	price   uint64
	max     uint64
	hold    string // x402.BatchReserveResponse.Hold
}

func reserveInvalid(reason, detail, payer string) x402.BatchReserveResponse {
	return x402.BatchReserveResponse{BatchVerifyResponse: x402.BatchVerifyResponse{InvalidReason: reason, InvalidMessage: detail, Payer: payer}}
}

// BatchReserve verifies a deposit, voucher or refund payload for one request and holds its
// channel. The voucher must be for exactly the charged cumulative amount plus the price (a
// refund's zero-charge voucher: exactly the charged amount); otherwise the answer is the
// corrective mismatch with the channel snapshot and the last voucher the server holds.
func (f *Facilitator) BatchReserve(ctx context.Context, req *x402.BatchRequest) (x402.BatchReserveResponse, error) {
	p := &req.PaymentPayload.Payload
	payer := p.Payer()
	if p.Voucher == nil {
		return reserveInvalid(x402.ReasonBatchVoucherPayload, "voucher is missing", payer), nil
	}
	idHash, err := batch.ParseHash(p.Voucher.ChannelID)
	if err != nil {
		return reserveInvalid(x402.ReasonBatchVoucherPayload, err.Error(), payer), nil
	}
	maxU, err := strconv.ParseUint(p.Voucher.MaxClaimableAmount, 10, 64)
	if err != nil {
		return reserveInvalid(x402.ReasonBatchVoucherPayload, "maxClaimableAmount is not an amount this server accepts", payer), nil
	}
	price, err := strconv.ParseUint(req.PaymentRequirements.Amount, 10, 64)
	if err != nil {
		return reserveInvalid(x402.ReasonInvalidRequirements, "amount is not an amount", payer), nil
	}
	id := strings.ToLower(idHash.Hex())
	ch, found, err := f.channels.Begin(id)
	if errors.Is(err, ledger.ErrBusy) {
		return reserveInvalid(x402.ReasonBatchChannelBusy, "another request of this channel is in progress; retry shortly", payer), nil
	}
	if err != nil {
		return x402.BatchReserveResponse{}, err
	}
	held := false
	defer func() {
		if !held {
			f.channels.Abort(id)
		}
	}()
	work := time.Duration(max(req.WorkSeconds, 0)) * time.Second
	c, invalid, err := f.checkBatch(ctx, req, work)
	if err != nil {
		return x402.BatchReserveResponse{}, err
	}
	if !found {
		// No local record (a new channel, or state lost): the chain's claimed total is the
		// baseline; unclaimed vouchers lost with the state are forfeited.
		ch = ledger.Channel{ID: id}
		if c != nil {
			ch.Charged, ch.TotalClaimed = c.onchain.TotalClaimed.Uint64(), c.onchain.TotalClaimed.Uint64()
		}
	}
	expected := ch.Charged + price
	if p.Type == x402.BatchRefund {
		expected = ch.Charged
	}
	if maxU != expected && (invalid == nil || invalid.Reason == x402.ReasonBatchCumulativeBelow) {
		res := reserveInvalid(x402.ReasonBatchCumulativeMismatch, fmt.Sprintf("voucher is for %d, this channel expects %d", maxU, expected), payer)
		extra := &x402.BatchExtra{}
		if c != nil {
			ch.Balance, ch.TotalClaimed = c.onchain.Balance.Uint64(), c.onchain.TotalClaimed.Uint64()
			ch.WithdrawRequestedAt, ch.RefundNonce = c.onchain.WithdrawRequestedAt, c.onchain.RefundNonce.Uint64()
		}
		st := ch.State()
		extra.ChannelState = &st
		if found && ch.Signature != "" {
			extra.VoucherState = &x402.VoucherState{SignedMaxClaimable: strconv.FormatUint(ch.SignedMax, 10), Signature: ch.Signature}
		}
		res.Corrective = extra
		return res, nil
	}
	if invalid != nil {
		return reserveInvalid(invalid.Reason, invalid.Detail, payer), nil
	}
	if p.Type != x402.BatchRefund {
		if invalid := f.withdrawalRace(c, work); invalid != nil {
			f.log.Info("voucher refused: a pending withdrawal could finalize before its claim", keyPayment, id, keyReason, invalid.Detail)
			return reserveInvalid(invalid.Reason, invalid.Detail, payer), nil
		}
	}
	if c.deposit != nil {
		bal, err := f.reader.BalanceOf(ctx, f.o.Asset, c.cfg.Payer)
		if err != nil {
			return x402.BatchReserveResponse{}, err
		}
		if !bal.IsUint64() {
			bal = new(big.Int).SetUint64(math.MaxUint64)
		}
		// The deposit moves the payer's USDC only at completion: until then it is counted
		// against the same balance as the exact payments this box will settle for the payer.
		if err := f.ledger.HoldDeposit(id, c.cfg.Payer.Hex(), c.deposit.Amount.Uint64(), bal.Uint64()); err != nil {
			if errors.Is(err, ledger.ErrInsufficient) {
				return reserveInvalid(x402.ReasonBatchInsufficientBalance, fmt.Sprintf("payer holds %s, which payments still to be settled for it already take", bal), payer), nil
			}
			return x402.BatchReserveResponse{}, err
		}
	}
	hold, err := newHold()
	if err != nil {
		f.ledger.DropDeposit(id)
		return x402.BatchReserveResponse{}, err
	}
	held = true
	f.channels.Hold(id, &session{req: req, call: c, channel: ch, price: price, max: maxU, hold: hold}, f.o.Now().Add(work+f.o.SettleMargin))
	return x402.BatchReserveResponse{BatchVerifyResponse: x402.BatchVerifyResponse{IsValid: true, Payer: c.cfg.Payer.Hex(), Extra: c.onchain.State(c.id)},
		ID: id, Hold: hold}, nil
}

func newHold() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// claimMargin is how long before a pending withdrawal can finalize a charge must be committed
// for the claimer to land its claim in time: a round may come one interval later, and its
// claim may wait a receipt timeout; a configured withdrawal margin above that is the claimer's
// own urgency and counts too.
func (f *Facilitator) claimMargin() time.Duration {
	return max(f.o.Claim.WithdrawMargin, f.o.Claim.Interval+f.sender.ReceiptTimeout())
}

// withdrawalRace refuses a voucher (or a deposit's) whose charge could not be claimed before
// the channel's pending withdrawal finalizes: finalizeWithdraw takes the unclaimed escrow, up
// to the withdrawal's amount, so once the withdrawal can finalize before the call's work
// (work) and the claim (claimMargin) are over, only vouchers within what the withdrawal leaves
// (balance, plus the deposit, minus the withdrawal) are accepted. The answer is the scheme's
// cumulative_exceeds_balance: the balance that counts is that one; a deposit raises it.
func (f *Facilitator) withdrawalRace(c *batchCall, work time.Duration) *batch.Invalid {
	on := c.onchain
	if on.WithdrawRequestedAt == 0 || on.WithdrawAmount == nil {
		return nil
	}
	finalizeAt := time.Unix(int64(on.WithdrawRequestedAt+c.cfg.WithdrawDelay), 0)
	if finalizeAt.Sub(f.o.Now()) >= work+f.claimMargin() {
		return nil // the claimer claims this call's charge before the withdrawal can finalize
	}
	left := new(big.Int).Set(on.Balance)
	if c.deposit != nil {
		left.Add(left, c.deposit.Amount)
	}
	left.Sub(left, on.WithdrawAmount)
	if c.voucher.MaxClaimableAmount.Cmp(left) <= 0 {
		return nil
	}
	return bad(x402.ReasonBatchExceedsBalance, "a withdrawal of %s from this channel can finalize at %s, before this call's charge could be claimed: vouchers above %s (the balance it leaves) are refused until it is finalized or a deposit covers them",
		on.WithdrawAmount, finalizeAt.UTC().Format(time.RFC3339), left)
}

// BatchRelease frees a held channel unchanged: the work failed, nothing is charged, and the
// client may send the same voucher again.
func (f *Facilitator) BatchRelease(_ context.Context, id string) error {
	id = strings.ToLower(id)
	if s, _ := f.channels.Take(id).(*session); s == nil {
		return fmt.Errorf("%w: no request holds channel %s", ErrState, id)
	}
	f.ledger.DropDeposit(id)
	f.channels.Abort(id)
	return nil
}

// holdExpired is told of a channel's hold dropped at the end of its lease: the resource server
// never completed nor released the request (it died during the work), which is a failed call.
func (f *Facilitator) holdExpired(id string, v any) {
	f.ledger.DropDeposit(id)
	f.log.Warn("batch-settlement hold expired: the request was neither completed nor released; nothing charged", keyPayment, id)
}

// errCompleting: a completion of the channel is under way; a retried completion asks again.
var errCompleting = errors.New("a completion of this channel is under way; retry shortly")

// BatchComplete commits a held request after its work succeeded: a deposit is executed on
// chain first (if it fails, nothing is committed and the result must not be delivered); the
// charge is added to the channel and journaled, with the answer, before the answer. A refund is
// executed and its channel record updated. The request names its voucher: only the held
// request paid with it is committed, and a completion retried after its answer was lost (the
// channel's last completion has that voucher) gets the same answer and charges nothing more.
func (f *Facilitator) BatchComplete(ctx context.Context, req *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error) {
	id := strings.ToLower(req.ID)
	if req.Signature == "" || req.MaxClaimableAmount == "" {
		return x402.BatchSettleResponse{}, fmt.Errorf("%w: a completion names its request's voucher (maxClaimableAmount, signature)", ErrState)
	}
	v, completing := f.channels.TakeIf(id, func(v any) bool {
		s, ok := v.(*session)
		return ok && s.req.PaymentPayload.Payload.Voucher.MaxClaimableAmount == req.MaxClaimableAmount &&
			strings.EqualFold(s.req.PaymentPayload.Payload.Voucher.Signature, req.Signature) && (req.Hold == "" || req.Hold == s.hold)
	})
	s, _ := v.(*session)
	if s == nil {
		if c, ok := f.channels.Get(id); ok && c.Last.Answers(req.MaxClaimableAmount, req.Signature, req.Hold) {
			return c.Last.Result, nil
		}
		if completing {
			return x402.BatchSettleResponse{}, errCompleting
		}
		return x402.BatchSettleResponse{}, fmt.Errorf("%w: no request paid with this voucher holds channel %s", ErrState, id)
	}
	committed := false
	defer func() {
		// Executed or not, the deposit is no longer pending: the chain's balance tells.
		f.ledger.DropDeposit(id)
		if !committed {
			f.channels.Abort(id)
		}
	}()
	p := &s.req.PaymentPayload.Payload
	if p.Type != x402.BatchRefund && req.Charged > s.price {
		return x402.BatchSettleResponse{ErrorReason: x402.ReasonBatchChargeExceedsSigned, Network: f.o.Network}, nil
	}
	res := x402.BatchSettleResponse{Success: true, Payer: s.call.cfg.Payer.Hex(), Network: f.o.Network}
	on := s.call.onchain
	switch p.Type {
	case x402.BatchDeposit, x402.BatchRefund:
		// The facilitator's own settle path (deposit transaction, or claim + refund). The
		// channel is journaled with each transaction before its broadcast, so a restart that
		// loses this request still knows the channel and mirrors it from the chain.
		markPending := func(tx *types.Transaction) error {
			fresh := s.channel
			fresh.Config = *p.ChannelConfig
			_, err := f.channels.UpdateOrAdd(id, fresh, func(c *ledger.Channel) error { c.PendingTx = tx.Hash().Hex(); return nil })
			return err
		}
		out, err := f.batchSettle(ctx, s.req, &on, markPending)
		if err != nil {
			return x402.BatchSettleResponse{}, err
		}
		if !out.Success {
			return out, nil
		}
		res.Transaction, res.Amount, res.Asset = out.Transaction, out.Amount, out.Asset
	}
	ch := s.channel
	ch.Config = *p.ChannelConfig
	ch.Balance, ch.TotalClaimed, ch.RefundNonce, ch.WithdrawRequestedAt = on.Balance.Uint64(), on.TotalClaimed.Uint64(), on.RefundNonce.Uint64(), on.WithdrawRequestedAt
	ch.SyncedAt = f.o.Now()
	if p.Type != x402.BatchRefund {
		ch.Charged += req.Charged
		ch.SignedMax, ch.Signature = s.max, p.Voucher.Signature
		ch.Calls++
		ch.ServedBy(req.Box, req.Charged)
		ch.LastRequest = f.o.Now()
		res.Extra = &x402.BatchResponseExtra{ChargedAmount: strconv.FormatUint(req.Charged, 10)}
	} else {
		res.Extra = &x402.BatchResponseExtra{}
	}
	st := ch.State()
	res.Extra.ChannelState = &st
	ch.Last = &ledger.Completion{MaxClaimable: req.MaxClaimableAmount, Signature: req.Signature, Hold: s.hold, Result: res}
	if err := f.channels.Commit(ch); err != nil {
		return x402.BatchSettleResponse{}, err
	}
	committed = true
	return res, nil
}
