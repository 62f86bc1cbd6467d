package settle

import (
	"context"
	"math/big"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// payTx serves one paid call on the current channel and returns the transaction it made (a
// deposit's; empty for a voucher).
func (e *batchEnv) payTx(t *testing.T, req *x402.BatchRequest) string {
	t.Helper()
	r, err := e.f.BatchReserve(context.Background(), req)
	if err != nil || !r.IsValid {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	res, err := e.f.BatchComplete(context.Background(), req.Completion(r.ID, price))
	if err != nil || !res.Success {
		t.Fatalf("complete: %+v %v", res, err)
	}
	return res.Transaction
}

// gasOf sums what the chain's receipts say the transactions cost.
func gasOf(t *testing.T, e *batchEnv, txs ...string) ledger.GasFigures {
	t.Helper()
	g := ledger.GasFigures{Transactions: len(txs)}
	wei := new(big.Int)
	for _, tx := range txs {
		r, err := e.ch.Client().TransactionReceipt(context.Background(), common.HexToHash(tx))
		if err != nil {
			t.Fatalf("receipt %s: %v", tx, err)
		}
		g.Gas += r.GasUsed
		wei.Add(wei, new(big.Int).Mul(new(big.Int).SetUint64(r.GasUsed), r.EffectiveGasPrice))
	}
	g.Wei = wei.String()
	return g
}

// TestChannelsReportAfterRealActivity: one exact payment and two channels (5 paid calls,
// a claim, a sweep, one more call, a payer's withdrawal) on the embedded chain; the report
// settle serves (GET /channels through its client), the operator's snapshot and `appliance
// status`'s text give the exact figures, gas taken from the chain's receipts; they survive a
// restart.
func TestChannelsReportAfterRealActivity(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()

	// exact: one payment settled synchronously.
	ereq := (&env{ch: e.ch, payTo: e.payTo}).request(t, e.ch.Payer, nil)
	res, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *ereq, Route: "chain.gas", Key: "k1"})
	if err != nil || !res.IsValid {
		t.Fatalf("exact reserve: %+v %v", res, err)
	}
	settled, err := e.f.Complete(ctx, res.ID, x402.ModeSync)
	if err != nil || !settled.Success {
		t.Fatalf("exact complete: %+v %v", settled, err)
	}

	e.useSalt(31)
	a, aID := e.cfg, strings.ToLower(e.id.Hex())
	depA := e.payTx(t, e.deposit(t, 50*price, price, 1))
	e.payTx(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	e.payTx(t, e.request(t, x402.BatchVoucher, 3*price, e.ch.Payer))
	e.useSalt(32)
	bID := strings.ToLower(e.id.Hex())
	depB := e.payTx(t, e.deposit(t, 20*price, price, 2))
	rep, err := e.f.ClaimOnce(ctx, ClaimPolicy{})
	if err != nil || rep.Claimed.Uint64() != 4*price {
		t.Fatalf("claim: %+v %v", rep, err)
	}
	e.cfg, e.id = a, batch.ChannelID(devchain.ChainID, &a)
	e.payTx(t, e.request(t, x402.BatchVoucher, 4*price, e.ch.Payer))

	// The payer of channel A starts a withdrawal; a round below the minimum mirrors it.
	sc := usdc.NewX402BatchSettlement()
	tx, err := bind.Transact(sc.Instance(e.ch.Client(), batch.SettlementAddress), bind.NewKeyedTransactor(e.ch.Payer, big.NewInt(devchain.ChainID)),
		sc.PackInitiateWithdraw(boundConfig(&a), big.NewInt(40*price)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(ctx, e.ch.Client(), tx.Hash()); err != nil {
		t.Fatal(err)
	}
	if r, err := e.f.ClaimOnce(ctx, ClaimPolicy{MinClaimable: 100 * price, WithdrawMargin: time.Minute}); err != nil || r.ClaimTx != "" {
		t.Fatalf("the round claimed: %+v %v", r, err)
	}
	on, err := e.f.ReadChannel(ctx, common.HexToHash(aID))
	if err != nil || on.WithdrawRequestedAt == 0 {
		t.Fatalf("withdrawal not on chain: %+v %v", on, err)
	}
	finalize := time.Unix(int64(on.WithdrawRequestedAt)+batch.MinWithdrawDelay, 0).UTC()

	exactGas := gasOf(t, e, settled.Transaction)
	batchGas := map[string]ledger.GasFigures{
		ledger.SpendDeposit: gasOf(t, e, depA, depB), ledger.SpendClaim: gasOf(t, e, rep.ClaimTx),
		ledger.SpendSweep: gasOf(t, e, rep.SweepTx), ledger.SpendRefund: {Wei: "0"},
	}
	allGas := exactGas.Gas + batchGas[ledger.SpendDeposit].Gas + batchGas[ledger.SpendClaim].Gas + batchGas[ledger.SpendSweep].Gas
	wantTotals := ledger.ChannelTotals{Channels: 2, Calls: 5, Balance: 70 * price, Charged: 5 * price, Claimed: 4 * price, Unclaimed: price, PendingWithdrawals: 1}

	check := func(t *testing.T, got ledger.ChannelsReport, rounds int) {
		t.Helper()
		byID := map[string]ledger.ChannelView{}
		for _, c := range got.Channels {
			byID[c.ID] = c
		}
		ca, cb := byID[aID], byID[bID]
		checks := []struct {
			name      string
			got, want any
		}{
			{"enabled", got.Enabled, true},
			{"totals", got.Totals, wantTotals},
			{"A figures", [7]uint64{ca.Balance, ca.Remaining, ca.Charged, ca.Claimed, ca.Unclaimed, ca.Calls, uint64(ca.WithdrawFinalizeAt.Unix())},
				[7]uint64{50 * price, 46 * price, 4 * price, 3 * price, price, 4, uint64(finalize.Unix())}},
			{"A payer", ca.Payer, e.ch.PayerAddress().Hex()},
			{"B figures", [6]uint64{cb.Balance, cb.Remaining, cb.Charged, cb.Claimed, cb.Unclaimed, cb.Calls}, [6]uint64{20 * price, 19 * price, price, price, 0, 1}},
			{"B has no withdrawal", cb.WithdrawFinalizeAt.IsZero(), true},
			{"exact gas", got.Gas.Exact, exactGas},
			{"exact calls", got.Gas.ExactCalls, 1},
			{"batch gas by kind", got.Gas.Batch, batchGas},
			{"batch calls", got.Gas.BatchCalls, uint64(5)},
			{"exact per call", got.Gas.ExactPerCall.Gas, exactGas.Gas},
			{"batch per call", got.Gas.BatchPerCall.Gas, (allGas - exactGas.Gas) / 5},
			{"per call", got.Gas.PerCall.Gas, allGas / 6},
			{"claimer rounds", got.Claimer.Rounds, rounds},
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
			}
		}
	}

	srv := httptest.NewServer(e.f.Handler())
	defer srv.Close()
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check(t, got, 2)
	if got.Claimer.LastClaimTx != rep.ClaimTx {
		t.Errorf("claimer's last claim %q, want %q", got.Claimer.LastClaimTx, rep.ClaimTx)
	}

	// The operator's snapshot and text, read from the same daemon.
	snap := operator.Build(ctx, operator.Sources{Ledger: c, Now: time.Now})
	if snap.Channels.Error != "" || snap.Channels.Totals != wantTotals || snap.Settlement.GasPerCall.PerCall.Gas != allGas/6 {
		t.Fatalf("snapshot: %+v gas %+v", snap.Channels, snap.Settlement.GasPerCall)
	}
	var out strings.Builder
	if err := operator.WriteText(&out, snap); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"2 channels · 5 paid calls · balance 0.700000 · charged 0.050000 · claimed 0.040000 · unclaimed 0.010000 USDC · 1 withdrawal pending",
		aID + " " + e.ch.PayerAddress().Hex() + " 0.500000 0.460000 0.040000 0.030000 0.010000 4 " + finalize.Format("2006-01-02 15:04:05"),
		"over 6 calls · exact " + big.NewInt(int64(exactGas.Gas)).String() + " gas over 1 · batch-settlement " + big.NewInt(int64((allGas-exactGas.Gas)/5)).String() + " gas over 5",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out.String()), " "), want) {
			t.Errorf("text does not say %q:\n%s", want, out.String())
		}
	}

	// After a restart the figures are the same (the claimer's rounds start again).
	e.restart(t, func(*Options) {})
	check(t, e.f.ChannelsReport(), 0)
}
