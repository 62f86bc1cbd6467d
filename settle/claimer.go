package settle

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// ClaimPolicy says when the claimer turns the vouchers it holds into on-chain claims.
type ClaimPolicy struct {
	// Interval between looks at the channels; 0 disables the background claimer (ClaimOnce
	// still works).
	Interval time.Duration
	// MinClaimable: claim only once the unclaimed total over all channels reaches this (atomic
	// units), so a claim's gas is spread over many calls.
	MinClaimable uint64
	// MinChannelClaimable: a channel joins a round only with at least this unclaimed (or its
	// withdrawal due): each channel adds its own share of the claim's gas, which a channel
	// carrying a few calls would not cover.
	MinChannelClaimable uint64
	// WithdrawMargin: a channel whose payer has started a timed withdrawal is claimed whatever
	// MinClaimable once its withdrawal can finalize within this margin (its vouchers become
	// worthless then); 0 claims it at the first look after the withdrawal is seen.
	WithdrawMargin time.Duration
}

// withdrawalDue reports whether c's pending withdrawal can finalize within the margin.
func (p ClaimPolicy) withdrawalDue(c *ledger.Channel, now time.Time) bool {
	if c.WithdrawRequestedAt == 0 {
		return false
	}
	if p.WithdrawMargin == 0 {
		return true
	}
	finalizeAt := time.Unix(int64(c.WithdrawRequestedAt)+int64(c.Config.WithdrawDelay), 0)
	return !now.Add(p.WithdrawMargin).Before(finalizeAt)
}

// ClaimReport is what one claim round did.
type ClaimReport struct {
	Channels int // channels claimed
	// InFlight counts the channels left out because a claim of theirs is still in flight (a
	// round's own, or a refund's): a second one would be a no-op on chain that still burns
	// gas and an account nonce of the hot key.
	InFlight int
	Claimed  *big.Int // value newly claimed
	ClaimTx  string
	ClaimGas uint64
	Swept    *big.Int // value transferred to payTo by the sweep
	SweepTx  string
	SweepGas uint64
}

// ClaimOnce settles the batch transactions a killed process left in flight, refreshes the
// mirrored chain state of every channel holding unclaimed charges (and of a channel with
// nothing to claim whose payer started or ended a withdrawal), claims all of them in one
// claimWithSignature (each at its charged cumulative amount, which its latest voucher covers), and sweeps everything claimed to payTo in one transfer. The claim
// transaction is journaled on each channel before it is broadcast; a claim is cumulative, so
// one repeated after a crash is a no-op on chain and nothing is claimed twice.
//
// Rounds run one at a time (the background claimer, `/dev/claim`, the recovery at start): two
// would send the same claim and sweep twice, and mirror the chain out of order.
func (f *Facilitator) ClaimOnce(ctx context.Context, p ClaimPolicy) (rep ClaimReport, err error) {
	f.claimer.round.Lock()
	defer f.claimer.round.Unlock()
	defer func() { f.claimer.done(f.o.Now(), rep, err) }()
	return f.claimOnce(ctx, p)
}

func (f *Facilitator) claimOnce(ctx context.Context, p ClaimPolicy) (ClaimReport, error) {
	rep := ClaimReport{Claimed: new(big.Int), Swept: new(big.Int)}
	if !f.BatchEnabled() {
		return rep, errors.New("claim: batch-settlement is not enabled")
	}
	if _, err := f.reconcileTxs(ctx); err != nil {
		return rep, err
	}
	var rows []ClaimRow
	var ids []string
	var unclaimed uint64
	urgent := false
	for _, c := range f.channels.List() {
		if c.Charged <= c.TotalClaimed && c.ClaimTx == "" && c.PendingTx == "" {
			// Nothing to claim; the operator's view still shows a payer's withdrawal.
			if err := f.watchWithdrawal(ctx, c); err != nil {
				return rep, err
			}
			continue
		}
		c, err := f.refresh(ctx, c)
		if err != nil {
			return rep, err
		}
		if c.Charged <= c.TotalClaimed || c.Signature == "" {
			continue
		}
		if f.claimInFlight(&c) {
			rep.InFlight++
			continue
		}
		cfg, invalid := batch.ParseConfig(&c.Config, x402.ReasonBatchClaimPayload)
		if invalid != nil {
			f.log.Warn("channel with an unreadable config is not claimed", keyPayment, c.ID, keyErr, invalid)
			continue
		}
		claim := min(c.Charged, c.SignedMax, c.Balance)
		if claim <= c.TotalClaimed {
			continue
		}
		due := p.withdrawalDue(&c, f.o.Now())
		if claim-c.TotalClaimed < p.MinChannelClaimable && !due {
			continue
		}
		sig, err := batch.ParseBytes(c.Signature)
		if err != nil {
			continue
		}
		rows = append(rows, ClaimRow{Config: *cfg, Max: new(big.Int).SetUint64(c.SignedMax), Signature: sig, Claim: new(big.Int).SetUint64(claim)})
		ids = append(ids, c.ID)
		unclaimed += claim - c.TotalClaimed
		urgent = urgent || due
	}
	if rep.InFlight > 0 {
		f.log.Info("channels left out of the claim round: their claim is still in flight", keyCount, rep.InFlight)
	}
	if len(rows) > 0 && (urgent || unclaimed >= p.MinClaimable) {
		record := func(tx *types.Transaction) error {
			for _, id := range ids {
				if _, err := f.channels.Update(id, func(c *ledger.Channel) error { c.ClaimTx = tx.Hash().Hex(); return nil }); err != nil {
					return err
				}
			}
			return nil
		}
		r, err := f.claimRecorded(ctx, rows, record)
		if err != nil {
			return rep, fmt.Errorf("claim: %w", err)
		}
		if r.Status != types.ReceiptStatusSuccessful {
			return rep, fmt.Errorf("claim: transaction %s reverted", r.TxHash.Hex())
		}
		share := r.GasUsed / uint64(len(rows))
		for i, id := range ids {
			// The view's reads of these channels predate the claim: the next voucher reads
			// the chain, rather than carry a stale totalClaimed into the channel's record.
			f.view.forget(common.HexToHash(id))
			claimed := rows[i].Claim.Uint64()
			if _, err := f.channels.Update(id, func(c *ledger.Channel) error {
				if claimed > c.TotalClaimed {
					c.TotalClaimed = claimed
				}
				c.ClaimTx, c.ClaimGas, c.SyncedAt = "", c.ClaimGas+share, f.o.Now()
				return nil
			}); err != nil {
				return rep, err
			}
		}
		rep.Channels, rep.Claimed, rep.ClaimTx, rep.ClaimGas = len(rows), new(big.Int).SetUint64(unclaimed), r.TxHash.Hex(), r.GasUsed
		f.log.Info("claimed channels", keyCount, len(rows), keyTx, r.TxHash.Hex())
	}
	swept, r, err := f.Sweep(ctx)
	if err != nil {
		return rep, fmt.Errorf("sweep: %w", err)
	}
	rep.Swept = swept
	if r != nil {
		if r.Status != types.ReceiptStatusSuccessful {
			return rep, fmt.Errorf("sweep: transaction %s reverted", r.TxHash.Hex())
		}
		rep.SweepTx, rep.SweepGas = r.TxHash.Hex(), r.GasUsed
	}
	return rep, nil
}

// claimInFlight reports whether a claim covering c is still in flight once refresh looked at
// it: a claim round's (ClaimTx), or a refund's own claim (PendingTx, journaled as a claim). The
// chain's totalClaimed does not show it yet, so the channel would look claimable again.
func (f *Facilitator) claimInFlight(c *ledger.Channel) bool {
	if c.ClaimTx != "" {
		return true
	}
	sp, ok := f.spends.Get(c.PendingTx)
	return ok && sp.Kind == ledger.SpendClaim
}

// refresh mirrors a channel's on-chain state into the store (and clears a claim, deposit or
// refund in flight that the chain has settled one way or the other: the figures read are the
// truth).
func (f *Facilitator) refresh(ctx context.Context, c ledger.Channel) (ledger.Channel, error) {
	// The receipts are asked before Update: a chain round trip must not hold the channel
	// store's lock, which every batch-settlement request takes. And before the channel is
	// read: a transaction mined between a read and its receipt would otherwise be cleared
	// with figures from before it.
	claimDone := f.settled(ctx, c.ClaimTx, ledger.SpendClaim)
	pendingDone := f.settled(ctx, c.PendingTx, "")
	on, err := f.ReadChannel(ctx, common.HexToHash(c.ID))
	if err != nil {
		return c, err
	}
	return f.channels.Update(c.ID, func(cur *ledger.Channel) error {
		if claimDone && cur.ClaimTx == c.ClaimTx {
			cur.ClaimTx = ""
		}
		if pendingDone && cur.PendingTx == c.PendingTx {
			cur.PendingTx = ""
		}
		cur.Balance, cur.TotalClaimed, cur.RefundNonce, cur.WithdrawRequestedAt = on.Balance.Uint64(), on.TotalClaimed.Uint64(), on.RefundNonce.Uint64(), on.WithdrawRequestedAt
		cur.SyncedAt = f.o.Now()
		return nil
	})
}

// watchWithdrawal refreshes a channel with nothing to claim whose payer could have started or
// finished a timed withdrawal (escrow left unclaimed, or one pending), so the operator's view
// shows it. One read of its pending withdrawal when nothing changed; the whole channel is read
// again only when that changed.
func (f *Facilitator) watchWithdrawal(ctx context.Context, c ledger.Channel) error {
	if c.Balance <= c.TotalClaimed && c.WithdrawRequestedAt == 0 {
		return nil
	}
	out, err := f.o.Backend.CallContract(ctx, callMsg(batch.SettlementAddress, settlementABI.PackPendingWithdrawals(common.HexToHash(c.ID))), nil)
	if err != nil {
		return fmt.Errorf("read pending withdrawal: %w", err)
	}
	pw, err := settlementABI.UnpackPendingWithdrawals(out)
	if err != nil {
		return fmt.Errorf("read pending withdrawal: %w", err)
	}
	if pw.InitiatedAt.Uint64() == c.WithdrawRequestedAt {
		return nil
	}
	_, err = f.refresh(ctx, c)
	return err
}

// settled reports whether a transaction in flight is over: mined (its gas then journaled
// under its kind, once per hash; kind, when not empty, for one the batchtx journal lacks, as
// a claim journaled by an older version) or dropped from the batchtx journal.
func (f *Facilitator) settled(ctx context.Context, tx, kind string) bool {
	if tx == "" {
		return false
	}
	sp, journaled := f.spends.Get(tx)
	if journaled {
		kind = sp.Kind
	}
	if r, err := f.o.Backend.TransactionReceipt(ctx, common.HexToHash(tx)); err == nil && r != nil {
		if kind != "" {
			f.recordSpend(kind, r)
		}
		return true
	}
	return journaled && sp.Status == ledger.TxDropped
}

// claimerState is what the claimer did last, for the operator.
type claimerState struct {
	round sync.Mutex // held by a claim round
	mu    sync.Mutex
	s     ledger.ClaimerView
}

func (c *claimerState) done(at time.Time, rep ClaimReport, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.s.Rounds++
	c.s.LastRound = at
	c.s.LastError = ""
	if err != nil {
		c.s.LastError = err.Error()
	}
	if rep.ClaimTx != "" {
		c.s.LastClaimTx = rep.ClaimTx
	}
}

func (c *claimerState) get() ledger.ClaimerView {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// recover settles what a killed process left in flight, at start: the batch transactions
// journaled without a receipt (one the chain does not know is sent again), and the channels
// whose claim, deposit or refund they were (their mirrored state then read from the chain). It
// reports whether any of them is still in flight.
func (f *Facilitator) recover(ctx context.Context) (inFlight bool, err error) {
	f.claimer.round.Lock()
	defer f.claimer.round.Unlock()
	pending, err := f.reconcileTxs(ctx)
	if err != nil {
		return true, err
	}
	for _, c := range f.channels.List() {
		if c.ClaimTx == "" && c.PendingTx == "" {
			continue
		}
		if c, err = f.refresh(ctx, c); err != nil {
			return true, err
		}
		inFlight = inFlight || c.ClaimTx != "" || c.PendingTx != ""
	}
	return inFlight || len(pending) > 0, nil
}

// claimLoop recovers what a previous process left in flight, then runs ClaimOnce every policy
// interval until ctx ends. While the recovery leaves something in flight it looks again, from
// the sender's receipt poll interval and backing off up to the claim interval: a transaction
// sent again at start is mined blocks later, and its channel must not stay unmirrored (a
// refund unseen by the operator's view) until the next round, which may be hours away.
func (f *Facilitator) claimLoop(ctx context.Context, p ClaimPolicy) {
	inFlight, err := f.recover(ctx)
	if err != nil {
		f.log.Warn("batch-settlement recovery at start failed; it is tried again", keyErr, err)
	}
	again := f.sender.PollInterval()
	t := time.NewTicker(p.Interval)
	defer t.Stop()
	for {
		var recheck <-chan time.Time
		if inFlight {
			recheck = time.After(again)
		}
		select {
		case <-ctx.Done():
			return
		case <-recheck:
			if inFlight, err = f.recover(ctx); err != nil && ctx.Err() == nil {
				f.log.Warn("batch-settlement recovery failed; it is tried again", keyErr, err)
			}
			again = min(2*again, p.Interval)
			continue
		case <-t.C:
		}
		// A claim is logged where it is made (claimOnce), for every caller.
		if _, err := f.ClaimOnce(ctx, p); err != nil {
			f.log.Warn("claim round failed", keyErr, err)
		}
	}
}

// ClaimerState is the claimer's policy and what it did last.
func (f *Facilitator) ClaimerState() ledger.ClaimerView {
	v := f.claimer.get()
	if f.BatchEnabled() {
		v.IntervalSeconds = int(f.o.Claim.Interval / time.Second)
	}
	v.MinClaimable, v.WithdrawMarginSeconds = f.o.Claim.MinClaimable, int(f.o.Claim.WithdrawMargin/time.Second)
	return v
}
