package settle

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/ethereum/go-ethereum/common"

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
