package paywall

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/settle/x402"
)

// The server side of x402's batch-settlement scheme (coinbase/x402
// specs/schemes/batch-settlement/scheme_batch_settlement_evm.md): the payer's channel is held in
// the settle daemon for the length of one request, the voucher must be for exactly the channel's
// charged cumulative amount plus the price (else the corrective 402), the work runs, and the
// charge is committed only when it succeeded; a failure releases the channel unchanged. A
// refund payload is a payment operation, not a paid request: the route's work is not run.

// BatchFacilitator is what the gate needs for batch-settlement (settle/client.Client has it).
type BatchFacilitator interface {
	BatchReserve(ctx context.Context, req *x402.BatchRequest) (x402.BatchReserveResponse, error)
	BatchRelease(ctx context.Context, id string) error
	// BatchComplete is idempotent: the same request again answers the same result.
	BatchComplete(ctx context.Context, req *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error)
}

// correction is the payment error of a cumulative-amount mismatch: the 402 it turns into
// carries the channel's state in the batch-settlement requirement's extra, from which the
// official client resynchronises (after checking the last voucher is its own signature).
type correction struct {
	reason string
	extra  *x402.BatchExtra
}

func (c *correction) Error() string { return c.reason }

func corrective(extra *x402.BatchExtra) error {
	return &apierr.Error{Code: apierr.CodePayment, Message: x402.ReasonBatchCumulativeMismatch,
		Cause: &correction{reason: x402.ReasonBatchCumulativeMismatch, extra: extra}}
}

// batchRefused is a batch-settlement refusal: the challenge's error is the bare reason code,
// which the official client compares as is.
func batchRefused(reason string) *apierr.Error {
	return &apierr.Error{Code: apierr.CodePayment, Message: reason}
}

// busyWait bounds how long a request waits for another request of its channel to finish.
const busyWait = 5 * time.Second

// chargeBatch is Charge for a batch-settlement payment.
func (g *X402) chargeBatch(ctx context.Context, call *Call, p *x402.BatchPaymentPayload, work func(context.Context) (any, error)) (any, map[string]string, error) {
	e := call.Entry
	bf, ok := g.f.(BatchFacilitator)
	if !g.cfg.BatchOffered() || !ok {
		return nil, nil, batchRefused(x402.ReasonBatchScheme)
	}
	offered := g.cfg.BatchRequirements(e)
	if reason := x402.MatchBatch(p.Accepted, &offered); reason != "" {
		return nil, nil, batchRefused(reason)
	}
	if p.Resource != nil && p.Resource.URL != "" && p.Resource.URL != call.ResourceURL {
		return nil, nil, batchRefused(x402.ReasonOtherResource)
	}
	pl := &p.Payload
	switch pl.Type {
	case x402.BatchDeposit:
		if reason := g.depositLongEnough(pl, e); reason != "" {
			return nil, nil, batchRefused(reason)
		}
	case x402.BatchVoucher, x402.BatchRefund:
	default:
		return nil, nil, batchRefused(x402.ReasonBatchPayloadType)
	}
	// The settle daemon reads the payload and the offer; the rest of what the client sent
	// (accepted, matched against the offer above, the resource and the extensions) stays here,
	// which saves encoding and decoding it on every call's way to the daemon.
	sent := x402.BatchPaymentPayload{X402Version: p.X402Version, Payload: p.Payload}
	req := &x402.BatchRequest{X402Version: 2, PaymentPayload: sent, PaymentRequirements: offered, WorkSeconds: int64(e.Timeout / time.Second)}
	res, err := g.reserveBatch(ctx, bf, req)
	if err != nil {
		return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: "payment verification is unavailable right now; nothing was charged", Cause: err}
	}
	switch {
	case res.Corrective != nil:
		return nil, nil, corrective(res.Corrective)
	case !res.IsValid:
		g.log.Info("batch-settlement payment refused", keyRoute, e.ID, keyReason, res.InvalidReason, obs.KeyDetail, res.InvalidMessage)
		return nil, nil, batchRefused(res.InvalidReason)
	}
	call.Request.Payer = res.Payer
	if pl.Type == x402.BatchRefund {
		return g.refundBatch(ctx, bf, req, res.ID, res.Hold)
	}
	out, werr := work(ctx)
	if werr != nil || !succeeded(out) {
		// The channel is released unchanged: the client may send the same voucher again.
		g.revoke(ctx, out, res.ID)
		if err := bf.BatchRelease(context.WithoutCancel(ctx), res.ID); err != nil {
			g.log.Warn("batch release failed", keyPayment, res.ID, keyErr, err)
		}
		return out, nil, werr
	}
	var nonce string
	if v := pl.Voucher; v != nil {
		// A voucher is named by its channel and the cumulative amount it signs.
		nonce = v.ChannelID + ":" + v.MaxClaimableAmount
	}
	// A voucher's receipt names no transaction (the charge is off chain until the channel is
	// claimed): it is signed while the facilitator commits the charge, as an optimistic one is.
	ahead := paid{scheme: x402.SchemeBatchSettlement, network: offered.Network, amount: offered.Amount, payer: res.Payer, nonce: nonce}
	delivered := paidCallReport(e, out, nil)
	var early <-chan signedReceipt
	if g.receipts != nil && pl.Type == x402.BatchVoucher {
		early = g.signAhead(call, ahead, delivered)
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(g.policy.SettleTimeoutSeconds)*time.Second)
	defer cancel()
	completion := req.Completion(res.ID, e.Price)
	completion.Hold, completion.Box = res.Hold, servedBy(out)
	receipt, err := g.batchCompleteRetrying(cctx, bf, completion)
	switch {
	case err != nil:
		// Unknown whether the charge was committed: nothing is delivered. A charge that was
		// committed shows in the next corrective 402, from which the client resynchronises.
		g.revoke(cctx, out, res.ID)
		g.log.Error("batch complete failed; result not delivered", keyPayment, res.ID, keyErr, err)
		return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: x402.ReasonSettlementPending +
			": the charge could not be confirmed, so the result was not delivered", Cause: err}
	case !receipt.Success:
		// A deposit that failed on chain: no escrow, so no result.
		g.revoke(cctx, out, res.ID)
		g.log.Info("batch-settlement completion failed", keyPayment, res.ID, keyReason, receipt.ErrorReason)
		return nil, nil, batchRefused(receipt.ErrorReason)
	}
	out = delivered
	final := ahead
	if receipt.Payer != "" {
		final.payer = receipt.Payer
	}
	final.transaction = receipt.Transaction
	receipt.Extensions, err = g.settledExtensions(call, early, ahead, final, out)
	if err != nil {
		return nil, nil, err
	}
	if k, ok := bf.(VoucherReceiptKeeper); ok {
		g.keepVoucherReceipt(ctx, k, x402.KeepVoucherReceiptRequest{Payer: final.payer, Nonce: nonce, Route: call.Entry.ID,
			Network: offered.Network, Amount: offered.Amount, Transaction: receipt.Transaction}, receipt.Extensions)
	}
	hdr, err := receiptHeader(receipt, false)
	if err != nil {
		return nil, nil, err
	}
	addFreeFirstCallHeader(e, hdr)
	return out, hdr, nil
}

// reserveBatch holds the channel, waiting (at most busyWait) while another request of the same
// channel runs: requests of one channel are served one at a time, in the settle daemon's order.
func (g *X402) reserveBatch(ctx context.Context, bf BatchFacilitator, req *x402.BatchRequest) (x402.BatchReserveResponse, error) {
	deadline := g.now().Add(busyWait)
	for wait := 5 * time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		res, err := bf.BatchReserve(ctx, req)
		if err != nil || res.InvalidReason != x402.ReasonBatchChannelBusy || g.now().After(deadline) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(wait):
		}
	}
}

// batchCompleteRetrying asks for a completion until it gets an answer or ctx ends: an answer
// lost on the way (a transport error, a settle daemon restarting, a completion still under
// way) is asked again with the same request, which the settle daemon answers with the same
// result without charging twice; a verdict (4xx) ends it.
func (g *X402) batchCompleteRetrying(ctx context.Context, bf BatchFacilitator, req *x402.BatchCompleteRequest) (x402.BatchSettleResponse, error) {
	return askUntilAnswered(ctx, func() (x402.BatchSettleResponse, error) { return bf.BatchComplete(ctx, req) },
		func(err error) {
			g.log.Warn("batch complete answer lost; asking again", keyPayment, req.ID, keyErr, err)
		})
}

// refundBatch executes a held cooperative refund (the settle daemon claims what the channel was
// charged, then refunds the rest or the amount asked) and answers its receipt.
func (g *X402) refundBatch(ctx context.Context, bf BatchFacilitator, req *x402.BatchRequest, id, hold string) (any, map[string]string, error) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(g.policy.SettleTimeoutSeconds)*time.Second)
	defer cancel()
	completion := req.Completion(id, 0)
	completion.Hold = hold
	receipt, err := g.batchCompleteRetrying(cctx, bf, completion)
	if err != nil {
		return nil, nil, &apierr.Error{Code: apierr.CodeUnavailable, Message: x402.ReasonSettlementPending +
			": the refund's outcome could not be confirmed; the channel's state on chain tells", Cause: err}
	}
	hdr, err := receiptHeader(receipt, false)
	if err != nil {
		return nil, nil, err
	}
	if !receipt.Success {
		// The official client reads the failed receipt of a 402 refund answer.
		return nil, hdr, batchRefused(receipt.ErrorReason)
	}
	body, err := json.Marshal(map[string]string{"message": "refund executed", "channelId": id, "amount": receipt.Amount, "transaction": receipt.Transaction})
	if err != nil {
		return nil, nil, err
	}
	return &catalog.Raw{Status: 200, ContentType: "application/json", Body: body}, hdr, nil
}

// depositLongEnough refuses a deposit authorization that could expire before the deposit is
// executed, which happens after the work: it must outlive the route's deadline plus the
// settlement margin. (The payload is not verified yet; a forged value fails the signature check.)
func (g *X402) depositLongEnough(pl *x402.BatchPayload, e *catalog.Entry) string {
	if pl.Deposit == nil || pl.Deposit.Authorization.ERC3009 == nil {
		return ""
	}
	vb, err := strconv.ParseInt(pl.Deposit.Authorization.ERC3009.ValidBefore, 10, 64)
	if err != nil {
		return ""
	}
	if vb < g.now().Add(e.Timeout+g.margin()).Unix() {
		return x402.ReasonBatchValidBefore
	}
	return ""
}
