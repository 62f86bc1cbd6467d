package settle

import (
	"context"
	"math/big"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// TestClaimRoundLeavesOutAClaimInFlight: a claim round broadcasts its claim and stops waiting
// for it (its context ends, as a round whose receipt does not come in time); the next round,
// with that claim still in the pool, sends no second claim for the channel (a no-op on chain
// that would still burn gas and a nonce of the hot key) and reports the channel in flight.
// Once the claim is mined a round mirrors it and sweeps: payTo gets the charges, and the
// journal holds the one claim.
func TestClaimRoundLeavesOutAClaimInFlight(t *testing.T) {
	ctx := context.Background()
	e := newBatchEnvOn(t, devchain.Options{ManualMine: true})
	stop := mining(e.ch)
	e.pay(t, e.deposit(t, 50*price, price, 1))
	e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	stop()
	// No block is sealed from here until the end of the second round.
	var giveUp atomic.Pointer[context.CancelFunc]
	e.restart(t, func(o *Options) {
		o.OnBroadcast = func(string, common.Hash) {
			if cancel := giveUp.Load(); cancel != nil {
				(*cancel)()
			}
		}
	})
	t.Cleanup(func() { _ = e.f.Close() })
	roundGivingUp := func() (ClaimReport, error) {
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		giveUp.Store(&cancel)
		defer giveUp.Store(nil)
		return e.f.ClaimOnce(rctx, ClaimPolicy{})
	}
	if rep, err := roundGivingUp(); err == nil {
		t.Fatalf("the first round's claim was mined with no block sealed: %+v", rep)
	}
	first := e.f.spends.InFlight()
	if len(first) != 1 || first[0].Kind != ledger.SpendClaim {
		t.Fatalf("in flight after the first round: %+v", first)
	}
	rep, err := roundGivingUp()
	if err != nil || rep.Channels != 0 || rep.InFlight != 1 || rep.ClaimTx != "" {
		t.Fatalf("a round with the claim in flight: %+v %v", rep, err)
	}
	if fl := e.f.spends.InFlight(); len(fl) != 1 || fl[0].Tx != first[0].Tx {
		t.Fatalf("in flight after the second round: %+v, want the first claim alone", fl)
	}

	defer mining(e.ch)()
	untilTrue(t, "the claim in flight was never mirrored and swept", func() bool {
		if _, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
			t.Fatal(err)
		}
		c, _ := e.f.Channels().Get(e.id.Hex())
		return c.ClaimTx == "" && c.TotalClaimed == 2*price && e.balance(t, e.payTo) == 2*price
	})
	if g := e.f.spends.ByKind()[ledger.SpendClaim]; g.Transactions != 1 {
		t.Fatalf("claims in the ledger: %+v, want the one", g)
	}
	if sp, _ := e.f.spends.Get(first[0].Tx); sp.Status != ledger.TxMined {
		t.Fatalf("the first claim: %+v, want it mined", sp)
	}
}

// repriceChildEnv names the environment of the re-pricing test's child process.
const repriceChildEnv = "PEAGE_SETTLE_REPRICE_CHILD"

// TestInFlightTransactionRepricedAfterRestart: a claim round runs in a child process killed
// right after its claim is broadcast; then full blocks raise the chain's base fee above the
// claim's fee cap, so the claim waits in the pool, and every later transaction of the hot key
// (nonces are sequential) behind it. The facilitator restarted on the same journals sends it
// again and waits on it as on a live send: not mined within ReplaceAfter, it is re-signed at
// its account nonce with a fee above the base fee, the replacement journaled before its
// broadcast, and mined. Or that restart is itself a child killed between the replacement's
// journal record and its send: the next restart sends the journaled replacement. Either way
// the first claim is dropped, the channel mirrored from the chain with no claim round, the
// next round sweeps the charges to payTo, and the journal counts one claim.
func TestInFlightTransactionRepricedAfterRestart(t *testing.T) {
	if spec := os.Getenv(repriceChildEnv); spec != "" {
		var s batchChildSpec
		f, _ := s.start(spec)
		defer f.Close()
		// A liveness bound, as untilTrue's: a restart that never replaces the claim ends here
		// without the line the parent waits for.
		time.Sleep(90 * time.Second)
		return
	}
	for _, tc := range []struct {
		name string
		// killedRestart: the first restart is a child killed before its replacement's send.
		killedRestart bool
	}{
		{"restarted", false},
		{"restart killed between the replacement's record and its send", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := chargedThenClosed(t)
			sent := killAt(t, "TestCrashBetweenClaimBroadcastAndReceipt", claimChildEnv, e.childSpec(""), "BROADCAST ")
			stuck, _, err := e.ch.Client().TransactionByHash(ctx, common.HexToHash(sent))
			if err != nil {
				t.Fatal(err)
			}
			raiseBaseFee(t, e.ch, stuck.GasFeeCap())

			recovery := ClaimPolicy{Interval: time.Hour} // no round: the start's recovery alone
			var replacement string
			if tc.killedRestart {
				spec := e.childSpec("")
				spec.Claim, spec.ReplaceAfter, spec.StopBeforeReplacement = recovery, 20*time.Millisecond, true
				replacement = killAt(t, "TestInFlightTransactionRepricedAfterRestart", repriceChildEnv, spec, "SENDING ")
				// Never re-priced again here: what is mined is what the killed restart journaled.
				e.restart(t, func(o *Options) { o.Claim, o.Sender.ReplaceAfter = recovery, time.Hour })
			} else {
				e.restart(t, func(o *Options) { o.Claim, o.Sender.ReplaceAfter = recovery, 20*time.Millisecond })
			}
			t.Cleanup(func() { _ = e.f.Close() })
			untilTrue(t, "the claim below the base fee was never re-priced", func() bool {
				for _, sp := range e.f.spends.List() {
					if sp.Kind == ledger.SpendClaim && sp.Nonce == stuck.Nonce() && sp.Tx != strings.ToLower(sent) {
						if replacement == "" || strings.EqualFold(sp.Tx, replacement) {
							replacement = sp.Tx
							return true
						}
					}
				}
				return false
			})

			defer mining(e.ch)()
			var minedTx string // the claim's version mined (a later replacement, when the chain was slower than ReplaceAfter)
			untilTrue(t, "no replacement was mined, or the channel not mirrored", func() bool {
				for _, sp := range e.f.spends.List() {
					if sp.Kind == ledger.SpendClaim && sp.Nonce == stuck.Nonce() && sp.Status == ledger.TxMined {
						minedTx = sp.Tx
					}
				}
				c, _ := e.f.Channels().Get(e.id.Hex())
				first, _ := e.f.spends.Get(sent)
				return c.ClaimTx == "" && c.TotalClaimed == 2*price && first.Status == ledger.TxDropped && minedTx != ""
			})
			if tc.killedRestart && !strings.EqualFold(minedTx, replacement) {
				t.Fatalf("mined %s, want the replacement %s the killed restart journaled", minedTx, replacement)
			}
			if rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil || rep.Channels != 0 || rep.SweepTx == "" {
				t.Fatalf("the round after the recovery: %+v %v", rep, err)
			}
			if got := e.balance(t, e.payTo); got != 2*price {
				t.Fatalf("payTo received %d, want %d", got, 2*price)
			}
			// (The sweep itself may leave a replacement in flight, which ReplaceAfter's 20 ms
			// can send before its first version is mined, until the next look drops it.)
			if g := e.f.spends.ByKind()[ledger.SpendClaim]; g.Transactions != 1 {
				t.Fatalf("claims in the ledger: %+v, want the one", g)
			}
			for _, sp := range e.f.spends.InFlight() {
				if sp.Kind == ledger.SpendClaim {
					t.Fatalf("a claim still in flight: %+v", sp)
				}
			}
		})
	}
}

// raiseBaseFee seals full blocks until the chain's base fee is above feeCap (a transaction of
// that fee cap then waits in the pool). The deployer fills each block with contract creations
// whose code is INVALID: each spends all its gas without running anything (its fee cap, 50 gwei,
// within the node's 1 ether a transaction), and tips more than
// the hot key, so the block is full before any transaction of the hot key is considered.
func raiseBaseFee(t *testing.T, ch *devchain.Chain, feeCap *big.Int) {
	t.Helper()
	ctx := context.Background()
	c := ch.Client()
	nonce, err := c.PendingNonceAt(ctx, crypto.PubkeyToAddress(ch.Deployer.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	signer := types.LatestSignerForChainID(big.NewInt(devchain.ChainID))
	for {
		head, err := c.HeaderByNumber(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if head.BaseFee.Cmp(feeCap) > 0 {
			return
		}
		n := (head.GasLimit + params.MaxTxGas - 1) / params.MaxTxGas
		for i := range n {
			gas := head.GasLimit / n
			if i == n-1 {
				gas = head.GasLimit - gas*(n-1)
			}
			tx, err := types.SignNewTx(ch.Deployer, signer, &types.DynamicFeeTx{ChainID: big.NewInt(devchain.ChainID), Nonce: nonce,
				GasTipCap: big.NewInt(params.GWei), GasFeeCap: big.NewInt(50 * params.GWei), Gas: gas, Data: []byte{0xfe}})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.SendTransaction(ctx, tx); err != nil {
				t.Fatal(err)
			}
			nonce++
		}
		// The pool takes them in the background: all of them pending, or the block would
		// have room for the hot key's.
		untilTrue(t, "the pool never had the block's transactions pending", func() bool {
			next, err := c.PendingNonceAt(ctx, crypto.PubkeyToAddress(ch.Deployer.PublicKey))
			return err == nil && next == nonce
		})
		ch.Commit()
		if full, err := c.HeaderByNumber(ctx, nil); err != nil || full.GasUsed != full.GasLimit {
			t.Fatalf("a block meant full: %+v %v", full, err)
		}
	}
}
