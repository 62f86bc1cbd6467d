package settle

import (
	"context"
	"errors"
	"net"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// Remote is a standard x402 v2 facilitator (/verify, /settle), such as a hosted one;
// settle/client.Client is one.
type Remote interface {
	Verify(ctx context.Context, req *x402.FacilitatorRequest) (x402.VerifyResponse, error)
	Settle(ctx context.Context, req *x402.FacilitatorRequest) (x402.SettlementResponse, error)
}

// driveRemote settles a queued payment through the remote facilitator, keeping the ledger as
// the embedded settlement does. A request the facilitator never received (it could not be
// dialled) leaves the payment queued: a synchronous call then releases it, nothing owed. A
// request sent without an answer has an unknown outcome: it is never sent again (a second
// /settle could charge a result that was not delivered); the chain decides (reconcileRemote).
func (f *Facilitator) driveRemote(ctx context.Context, rec ledger.Record) (ledger.Record, error) {
	if rec.Status == ledger.Broadcast {
		if r, done, err := f.findReceipt(ctx, rec); done || err != nil {
			return r, err
		}
		return f.reconcileRemote(ctx, rec)
	}
	if _, bad := f.verifier.Check(&rec.Request.PaymentPayload, &rec.Request.PaymentRequirements); bad != nil && bad.Reason != x402.ReasonValidBefore {
		return f.fail(rec.ID, bad.Reason)
	}
	// Durable before the request leaves: after a crash, the queue asks the chain, not the
	// facilitator again.
	rec, err := f.ledger.Update(rec.ID, func(r *ledger.Record) error {
		r.Status, r.Remote = ledger.Broadcast, true
		return nil
	})
	if err != nil {
		return rec, err
	}
	res, err := f.o.Remote.Settle(ctx, &rec.Request)
	if err == nil && remotePending(&res) {
		// A broadcast whose receipt the facilitator has not seen: ask once more with the same
		// request, as the official resource servers do (settleWithPendingRetry).
		res, err = f.o.Remote.Settle(ctx, &rec.Request)
	}
	switch {
	case err != nil && notSent(err):
		back, uerr := f.ledger.Update(rec.ID, func(r *ledger.Record) error {
			r.Status, r.Remote = ledger.Queued, false
			return nil
		})
		return back, errors.Join(err, uerr)
	case err != nil:
		return rec, err
	case res.Success:
		return f.ledger.Update(rec.ID, func(r *ledger.Record) error {
			r.Status, r.Tx, r.Reason = ledger.Settled, res.Transaction, ""
			if res.Transaction != "" {
				r.TxHashes = append(r.TxHashes, res.Transaction)
			}
			return nil
		})
	case remotePending(&res):
		return f.ledger.Update(rec.ID, func(r *ledger.Record) error {
			r.TxHashes = append(r.TxHashes, res.Transaction)
			return nil
		})
	default:
		// A refusal of a payment verified here: unless its nonce is spent after all (an earlier
		// attempt of the facilitator's went through), it was not charged.
		used, err := f.reader.AuthorizationState(ctx, f.o.Asset, common.HexToAddress(rec.Payer), common.HexToHash(rec.Nonce))
		if err != nil {
			return rec, err
		}
		if used {
			return f.reconcileRemote(ctx, rec)
		}
		reason := res.ErrorReason
		if reason == "" {
			reason = x402.ReasonTransactionState
		}
		return f.fail(rec.ID, reason)
	}
}

// reconcileRemote decides a payment handed to the remote facilitator whose outcome is unknown:
// its nonce spent on chain, it was settled (by that facilitator: the authorization pays only
// payTo); still unspent once the authorization has expired, it never can be, and nothing is
// owed. Until then it stays broadcast.
func (f *Facilitator) reconcileRemote(ctx context.Context, rec ledger.Record) (ledger.Record, error) {
	used, err := f.reader.AuthorizationState(ctx, f.o.Asset, common.HexToAddress(rec.Payer), common.HexToHash(rec.Nonce))
	if err != nil {
		return rec, err
	}
	switch {
	case used:
		return f.ledger.Update(rec.ID, func(r *ledger.Record) error {
			r.Status, r.Reason = ledger.Settled, ""
			if n := len(r.TxHashes); n > 0 {
				r.Tx = r.TxHashes[n-1]
			}
			return nil
		})
	case f.o.Now().After(time.Unix(rec.ValidBefore, 0).Add(f.o.SettleMargin)):
		return f.fail(rec.ID, x402.ReasonValidBefore)
	}
	return rec, errRemoteUnknown
}

var errRemoteUnknown = errors.New("the remote facilitator's settlement outcome is not known yet")

// notSent reports an error that proves the request never reached the facilitator.
func notSent(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func remotePending(r *x402.SettlementResponse) bool {
	return r != nil && !r.Success && r.ErrorReason == x402.ReasonSettlementPending && r.Transaction != ""
}
