package settle

import (
	"context"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/params"

	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// depositChildEnv names the environment of the deposit crash test's child process.
const depositChildEnv = "PEAGE_SETTLE_DEPOSIT_CRASH_CHILD"

type batchChildSpec struct {
	childChain
	AuthKey string             `json:"auth_key"`
	Request *x402.BatchRequest `json:"request,omitempty"`
}

func (e *batchEnv) childSpec(stopAt string) batchChildSpec {
	return batchChildSpec{childChain: childChain{RPC: e.ch.RPCURL, HotKey: hex.EncodeToString(crypto.FromECDSA(e.ch.Hot)),
		USDC: e.ch.USDC.Hex(), PayTo: e.payTo.Hex(), Ledger: e.dir, StopAtReceipt: stopAt}, AuthKey: hex.EncodeToString(crypto.FromECDSA(e.auth))}
}

func (s *batchChildSpec) start(specFile string) (*Facilitator, context.Context) {
	readChildSpec(specFile, s)
	auth, err := crypto.HexToECDSA(s.AuthKey)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	return s.facilitator(ctx, auth), ctx
}

// untilTrue polls cond (up to 30 s) and fails the test with what when it never holds.
func untilTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// A liveness bound, not a speed one. The failure once seen past 30 s under the whole suite
	// was no slowness: the restart looked once at a refund still in the pool and never again
	// (claimLoop now looks until it is mined); loaded runs take a few seconds.
	for deadline := time.Now().Add(90 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// TestCrashDuringDeposit: a paid call's deposit runs in a child process killed with SIGKILL
// after the deposit's receiveWithAuthorization is broadcast (mined before or after the
// restart), between its journal record and its send (the node never got it: the restart
// sends those bytes again and mirrors the channel once they are mined, with no claim round),
// or after its receipt and before the channel's charge is journaled. The facilitator
// restarted on the same journals knows the channel, mirrors its balance from the chain,
// counts the deposit's transaction once and charged nothing for the undelivered call; the same
// deposit cannot be used again, and the payer continues with a voucher.
func TestCrashDuringDeposit(t *testing.T) {
	if spec := os.Getenv(depositChildEnv); spec != "" {
		depositCrashChild(spec)
		return
	}
	for _, tc := range []struct {
		name              string
		killAt            string // the child's line to kill it at
		mineBeforeRestart bool
		round             bool // claim rounds run once mining resumes (else the restart's recovery alone)
	}{
		{"after broadcast, mined before restart", "BROADCAST ", true, false},
		{"after broadcast, mined after restart", "BROADCAST ", false, true},
		{"journaled, before its send", "SENDING ", false, false},
		{"after the receipt, before the commit", "RECEIPT deposit ", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newBatchEnvOn(t, devchain.Options{ManualMine: true, HTTP: true})
			if err := e.f.Close(); err != nil {
				t.Fatal(err)
			}
			payer := e.ch.PayerAddress()
			start := e.balance(t, payer)
			const deposit = 50 * price
			dep := e.deposit(t, deposit, price, 1)
			spec := e.childSpec(ledger.SpendDeposit)
			spec.Request = dep
			spec.StopBeforeSend = tc.killAt == "SENDING "
			stop := func() {}
			if tc.killAt == "RECEIPT deposit " {
				stop = mining(e.ch) // the child sees its receipt
			}
			sent := killAt(t, "TestCrashDuringDeposit", depositChildEnv, spec, tc.killAt)
			stop()
			if tc.mineBeforeRestart {
				e.ch.Commit()
			}
			restarted := time.Now()

			// Restarted with a claimer (an hour's interval: no round runs), whose start
			// recovers what the killed process left in flight.
			e.restart(t, func(o *Options) { o.Claim = ClaimPolicy{Interval: time.Hour} })
			t.Cleanup(func() { _ = e.f.Close() })
			if !tc.mineBeforeRestart {
				// Still pending when the restart looks: the channel is known, its deposit in
				// flight, nothing mirrored yet; then the block comes and the recovery (or a
				// claimer round) settles it.
				untilTrue(t, "the deposit in flight was not journaled before its broadcast", func() bool {
					c, ok := e.f.Channels().Get(e.id.Hex())
					return ok && c.PendingTx != "" && c.SyncedAt.After(restarted)
				})
				defer mining(e.ch)()
			}
			untilTrue(t, "the deposit was not recovered", func() bool {
				if tc.round {
					if _, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
						t.Fatal(err)
					}
				}
				c, ok := e.f.Channels().Get(e.id.Hex())
				return ok && c.PendingTx == "" && c.Balance == deposit
			})
			on, err := e.f.ReadChannel(ctx, e.id)
			if err != nil {
				t.Fatal(err)
			}
			c, _ := e.f.Channels().Get(e.id.Hex())
			if on.Balance.Uint64() != deposit || c.Balance != on.Balance.Uint64() || c.Charged != 0 || c.Calls != 0 ||
				!strings.EqualFold(c.Config.Payer, payer.Hex()) {
				t.Fatalf("channel after recovery %+v, chain balance %s", c, on.Balance)
			}
			if got := start - e.balance(t, payer); got != deposit {
				t.Fatalf("the payer paid %d, want the deposit %d once", got, deposit)
			}
			if g := e.f.spends.ByKind()[ledger.SpendDeposit]; g.Transactions != 1 || g.Gas == 0 {
				t.Fatalf("deposit transactions in the ledger: %+v", g)
			}
			if fl := e.f.spends.InFlight(); len(fl) != 0 {
				t.Fatalf("still in flight after recovery: %+v", fl)
			}
			if sp, _ := e.f.spends.Get(sent); spec.StopBeforeSend && sp.Status != ledger.TxMined {
				t.Fatalf("the deposit journaled before the crash, %s, was not the one mined: %+v", sent, sp)
			}
			rep := e.f.ChannelsReport()
			if rep.Totals.Channels != 1 || rep.Totals.Balance != deposit || rep.Totals.Charged != 0 {
				t.Fatalf("operator's view after recovery: %+v", rep.Totals)
			}

			// The same deposit again is refused and moves nothing; the payer goes on with a
			// voucher for the price, and exactly that is claimed.
			if r, err := e.f.BatchReserve(ctx, e.deposit(t, deposit, price, 1)); err != nil || r.IsValid {
				t.Fatalf("the used deposit again: %+v %v", r, err)
			}
			if got := start - e.balance(t, payer); got != deposit {
				t.Fatalf("the payer paid %d after a replayed deposit", got)
			}
			if tc.mineBeforeRestart {
				defer mining(e.ch)()
			}
			e.pay(t, e.request(t, x402.BatchVoucher, price, e.ch.Payer))
			if _, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
				t.Fatal(err)
			}
			if got := e.balance(t, e.payTo); got != price {
				t.Fatalf("payTo received %d, want %d", got, price)
			}
		})
	}
}

// depositCrashChild reserves and completes one deposit request, announcing its broadcast (and
// its receipt, where it stops), until it is killed.
func depositCrashChild(specFile string) {
	var spec batchChildSpec
	f, ctx := spec.start(specFile)
	res, err := f.BatchReserve(ctx, spec.Request)
	if err != nil || !res.IsValid {
		panic(fmt.Sprintf("reserve: %+v %v", res, err))
	}
	_, _ = f.BatchComplete(ctx, spec.Request.Completion(res.ID, price))
	select {} // the parent kills us
}

// sweepChildEnv names the environment of the sweep crash test's child process.
const sweepChildEnv = "PEAGE_SETTLE_SWEEP_CRASH_CHILD"

// TestCrashDuringSweep: a claim round runs in a child process killed with SIGKILL right after
// its sweep is broadcast, or between the sweep's journal record and its send (the node never
// got it); the facilitator restarted on the same journals sends no second sweep while the
// first is pending (one never sent is sent again, byte for byte), payTo receives the claimed
// value once, and the batchtx journal holds one sweep of that amount.
func TestCrashDuringSweep(t *testing.T) {
	if spec := os.Getenv(sweepChildEnv); spec != "" {
		var s batchChildSpec
		f, ctx := s.start(spec)
		_, _ = f.ClaimOnce(ctx, ClaimPolicy{})
		select {} // the parent kills us
	}
	for _, tc := range []struct {
		name              string
		kill              string // the child's line to kill it at
		mineBeforeRestart bool
	}{
		{"mined before restart=true", "BROADCAST ", true},
		{"mined before restart=false", "BROADCAST ", false},
		{"journaled, before its send", "SENDING ", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mineBeforeRestart := tc.mineBeforeRestart
			ctx := context.Background()
			e := newBatchEnvOn(t, devchain.Options{ManualMine: true, HTTP: true})
			stop := mining(e.ch)
			e.pay(t, e.deposit(t, 50*price, price, 1))
			latest := e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)
			e.pay(t, latest)
			// Claimed here, so the child's round has only the sweep to send.
			sig := common.FromHex(latest.PaymentPayload.Payload.Voucher.Signature)
			if r, err := e.f.Claim(ctx, []ClaimRow{{Config: e.cfg, Max: big.NewInt(2 * price), Signature: sig, Claim: big.NewInt(2 * price)}}); err != nil || r.Status != 1 {
				t.Fatalf("claim: %v %+v", err, r)
			}
			stop()
			if err := e.f.Close(); err != nil {
				t.Fatal(err)
			}
			spec := e.childSpec("")
			spec.StopBeforeSend = tc.kill == "SENDING "
			sent := killAt(t, "TestCrashDuringSweep", sweepChildEnv, spec, tc.kill)
			if mineBeforeRestart {
				e.ch.Commit()
			}
			e.restart(t, func(*Options) {})
			t.Cleanup(func() { _ = e.f.Close() })
			if !mineBeforeRestart {
				// Pending: no second sweep is sent.
				rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{})
				if err != nil || rep.SweepTx != "" || rep.Swept.Sign() != 0 {
					t.Fatalf("a round while the sweep is pending: %+v %v", rep, err)
				}
			}
			defer mining(e.ch)()
			untilTrue(t, "the pending sweep was never seen mined", func() bool {
				if _, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
					t.Fatal(err)
				}
				return len(e.f.spends.InFlight()) == 0
			})
			if got := e.balance(t, e.payTo); got != 2*price {
				t.Fatalf("payTo received %d, want %d", got, 2*price)
			}
			var sweeps []ledger.Spend
			for _, sp := range e.f.spends.List() {
				if sp.Kind == ledger.SpendSweep {
					sweeps = append(sweeps, sp)
				}
			}
			if len(sweeps) != 1 || sweeps[0].Tx != strings.ToLower(sent) || sweeps[0].Status != ledger.TxMined || sweeps[0].Amount != strconv.Itoa(2*price) || sweeps[0].Gas == 0 {
				t.Fatalf("sweeps in the ledger: %+v", sweeps)
			}
			if g := e.f.spends.ByKind()[ledger.SpendSweep]; g.Transactions != 1 {
				t.Fatalf("sweep figures: %+v", g)
			}
			rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{})
			if err != nil || rep.Channels != 0 || rep.Swept.Sign() != 0 || rep.SweepTx != "" {
				t.Fatalf("a round after recovery did something: %+v %v", rep, err)
			}
		})
	}
}

// refundChildEnv names the environment of the refund crash test's child process.
const refundChildEnv = "PEAGE_SETTLE_REFUND_CRASH_CHILD"

// TestCrashDuringRefund: a cooperative refund runs in a child process killed with SIGKILL after
// the refund's claim is mined (the refund not sent yet), or after the refund itself is mined
// and before the channel is journaled (on a channel claimed beforehand, so nothing but that
// transaction tells the channel changed), or between a transaction's journal record and its
// send (the node never got it). The facilitator restarted on the same journals sends a
// journaled transaction the chain does not know again, byte for byte (or drops it when
// another transaction took its account nonce meanwhile), and mirrors the channel from the
// chain once its transaction is mined, also when that is only after the restart's first look
// (no claim round runs: the interval is an hour); the payer gets the unspent deposit back
// exactly once (asking again completes or is refused), each transaction counted once; payTo
// gets the charges.
func TestCrashDuringRefund(t *testing.T) {
	if spec := os.Getenv(refundChildEnv); spec != "" {
		var s batchChildSpec
		f, ctx := s.start(spec)
		res, err := f.BatchReserve(ctx, s.Request)
		if err != nil || !res.IsValid {
			panic(fmt.Sprintf("reserve: %+v %v", res, err))
		}
		_, _ = f.BatchComplete(ctx, s.Request.Completion(res.ID, 0))
		select {} // the parent kills us
	}
	for _, tc := range []struct {
		name         string
		claimedFirst bool   // a claim round ran before the refund
		stopAt       string // the receipt the child stops at
		kill         string // the child's line to kill it at ("": that receipt)
		// minedLate: no block from the child's start until the restarted facilitator has
		// looked at the channel once (its transaction then still unknown or pending).
		minedLate bool
		// retaken: before the restart, another transaction of the hot key takes the account
		// nonce of the transaction the child journaled and never sent.
		retaken bool
	}{
		{name: "after the refund's claim is broadcast", stopAt: ledger.SpendClaim, kill: "BROADCAST "},
		{name: "after the refund's claim is mined", stopAt: ledger.SpendClaim},
		{name: "after the refund is broadcast", claimedFirst: true, stopAt: ledger.SpendRefund, kill: "BROADCAST "},
		{name: "after the refund is broadcast, mined after the restart", claimedFirst: true, stopAt: ledger.SpendRefund, kill: "BROADCAST ", minedLate: true},
		{name: "after the refund's claim is journaled, before its send", stopAt: ledger.SpendClaim, kill: "SENDING ", minedLate: true},
		{name: "after the refund is journaled, before its send", claimedFirst: true, stopAt: ledger.SpendRefund, kill: "SENDING ", minedLate: true},
		{name: "after the refund is journaled, its nonce then taken", claimedFirst: true, stopAt: ledger.SpendRefund, kill: "SENDING ", retaken: true},
		{name: "after the refund is mined, before the commit", claimedFirst: true, stopAt: ledger.SpendRefund},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e := newBatchEnvOn(t, devchain.Options{ManualMine: true, HTTP: true})
			stop := mining(e.ch)
			payer := e.ch.PayerAddress()
			start := e.balance(t, payer)
			e.pay(t, e.deposit(t, 50*price, price, 1))
			e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
			if tc.claimedFirst {
				if rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil || rep.Channels != 1 {
					t.Fatalf("claim: %+v %v", rep, err)
				}
			}
			if err := e.f.Close(); err != nil {
				t.Fatal(err)
			}
			refund := e.request(t, x402.BatchRefund, 2*price, e.ch.Payer)
			spec := e.childSpec(tc.stopAt)
			spec.Request = refund
			spec.StopBeforeSend = tc.kill == "SENDING "
			kill := tc.kill
			if kill == "" {
				kill = "RECEIPT " + tc.stopAt + " "
			}
			if tc.minedLate {
				stop()
			}
			sent := killAt(t, "TestCrashDuringRefund", refundChildEnv, spec, kill)
			var taken *types.Transaction
			if tc.retaken {
				taken = takeNextNonce(t, e)
			}
			restarted := time.Now()
			e.restart(t, func(o *Options) { o.Claim = ClaimPolicy{Interval: time.Hour} })
			t.Cleanup(func() { _ = e.f.Close() })
			if tc.minedLate {
				untilTrue(t, "the restart did not look at the channel in flight", func() bool {
					c, _ := e.f.Channels().Get(e.id.Hex())
					return c.PendingTx != "" && c.SyncedAt.After(restarted)
				})
				stop = mining(e.ch)
			}
			defer stop()

			on := func() *Onchain {
				t.Helper()
				o, err := e.f.ReadChannel(ctx, e.id)
				if err != nil {
					t.Fatal(err)
				}
				return o
			}
			untilTrue(t, "the channel was not mirrored from the chain after the restart", func() bool {
				c, _ := e.f.Channels().Get(e.id.Hex())
				o := on()
				return c.PendingTx == "" && c.Balance == o.Balance.Uint64() && c.TotalClaimed == o.TotalClaimed.Uint64() && c.RefundNonce == o.RefundNonce.Uint64()
			})
			// The payer asks again: the refund completes, or is refused when it was made.
			refunded := tc.claimedFirst && !tc.retaken
			r, err := e.f.BatchReserve(ctx, refund)
			if err != nil || !r.IsValid {
				t.Fatalf("refund asked again: %+v %v", r, err)
			}
			res, err := e.f.BatchComplete(ctx, refund.Completion(r.ID, 0))
			if err != nil || res.Success == refunded {
				t.Fatalf("refund asked again: %+v %v", res, err)
			}
			if got := start - e.balance(t, payer); got != 2*price {
				t.Fatalf("the payer paid %d in all, want the 2 calls (%d)", got, 2*price)
			}
			if o := on(); o.Balance.Uint64() != 2*price || o.TotalClaimed.Uint64() != 2*price || o.RefundNonce.Uint64() != 1 {
				t.Fatalf("channel on chain: %+v", o)
			}
			if _, err := e.f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
				t.Fatal(err)
			}
			if got := e.balance(t, e.payTo); got != 2*price {
				t.Fatalf("payTo received %d, want %d", got, 2*price)
			}
			by := e.f.spends.ByKind()
			if by[ledger.SpendClaim].Transactions != 1 || by[ledger.SpendRefund].Transactions != 1 || len(e.f.spends.InFlight()) != 0 {
				t.Fatalf("batch transactions in the ledger: %+v, in flight %+v", by, e.f.spends.InFlight())
			}
			sp, _ := e.f.spends.Get(sent)
			switch {
			case tc.retaken && (sp.Status != ledger.TxDropped || sp.Nonce != taken.Nonce()):
				t.Fatalf("the transaction journaled before the crash, %s, whose nonce %d went elsewhere: %+v", sent, taken.Nonce(), sp)
			case !tc.retaken && spec.StopBeforeSend && (sp.Status != ledger.TxMined || sp.Kind != tc.stopAt):
				// The journaled bytes were sent after the restart, not another transaction.
				t.Fatalf("the transaction journaled before the crash, %s: %+v", sent, sp)
			}
			c, _ := e.f.Channels().Get(e.id.Hex())
			if c.Balance != 2*price || c.Charged != 2*price || c.TotalClaimed != 2*price {
				t.Fatalf("channel at the end: %+v", c)
			}
		})
	}
}

// takeNextNonce sends and mines a transfer of nothing from the hot key at its next account
// nonce, as a restarted daemon's settlement would: a transaction journaled at that nonce and
// never sent can then never be mined.
func takeNextNonce(t *testing.T, e *batchEnv) *types.Transaction {
	t.Helper()
	ctx := context.Background()
	s, err := chain.NewSender(ctx, e.ch.Client(), e.ch.Hot, chain.SenderOptions{PollInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Send(ctx, chain.Call{To: e.payTo}, params.TxGas, func(*types.Transaction) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	defer mining(e.ch)()
	if r, err := s.Wait(ctx, tx, func(*types.Transaction) error { return nil }); err != nil || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("the transaction taking the nonce: %+v %v", r, err)
	}
	return tx
}
