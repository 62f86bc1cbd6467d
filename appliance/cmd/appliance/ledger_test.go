package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/x402"
)

// TestLedgerShowsChannels: a facilitator on the embedded chain serves 3 paid calls on one
// channel and 1 on another, claims and sweeps, then one more call; `appliance ledger -dir`
// on its stopped ledger prints each channel's figures, the totals and the gas per paid call
// (the deposits', claim's and sweep's gas, from the receipts, over 5 calls), and the calls
// and charges of the fleet boxes that served them.
func TestLedgerShowsChannels(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	k, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	dir := t.TempDir()
	const price = 5000
	payTo := crypto.PubkeyToAddress(k.PublicKey)
	f, err := settle.New(ctx, settle.Options{Network: devchain.Network, Asset: ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: payTo, Backend: ch.Client(), HotKey: ch.Hot, LedgerDir: dir, LedgerSync: journal.SyncAlways, ExposureCap: price, ReceiverAuthorizer: auth,
		Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: time.Minute}})
	if err != nil {
		t.Fatal(err)
	}
	req := x402.BatchRequirements{Scheme: x402.SchemeBatchSettlement, Network: devchain.Network, Amount: fmt.Sprint(price), Asset: ch.USDC.Hex(),
		PayTo: payTo.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.BatchExtra{ReceiverAuthorizer: crypto.PubkeyToAddress(auth.PublicKey).Hex(),
			WithdrawDelay: batch.MinWithdrawDelay, Name: devchain.TokenName, Version: devchain.TokenVersion}}
	var gas uint64
	served := []string{"box-1", "box-2", "box-1", "box-1", ""} // the last by the gateway itself
	pay := func(r *x402.BatchRequest) {
		t.Helper()
		res, err := f.BatchReserve(ctx, r)
		if err != nil || !res.IsValid {
			t.Fatalf("reserve: %+v %v", res, err)
		}
		c := r.Completion(res.ID, price)
		c.Box, served = served[0], served[1:]
		done, err := f.BatchComplete(ctx, c)
		if err != nil || !done.Success {
			t.Fatalf("complete: %+v %v", done, err)
		}
		if done.Transaction != "" {
			gas += receiptGas(t, ch, done.Transaction)
		}
	}
	a, _ := batchpay.Open(ch.Payer, req, common.Hash{31: 1})
	b, _ := batchpay.Open(ch.Payer, req, common.Hash{31: 2})
	for _, r := range []func() (*x402.BatchRequest, error){
		func() (*x402.BatchRequest, error) { return a.Deposit(100*price, price, 1) },
		func() (*x402.BatchRequest, error) { return a.Voucher(2 * price) },
		func() (*x402.BatchRequest, error) { return a.Voucher(3 * price) },
		func() (*x402.BatchRequest, error) { return b.Deposit(10*price, price, 2) },
	} {
		req, err := r()
		if err != nil {
			t.Fatal(err)
		}
		pay(req)
	}
	rep, err := f.ClaimOnce(ctx, settle.ClaimPolicy{})
	if err != nil || rep.Claimed.Uint64() != 4*price {
		t.Fatalf("claim: %+v %v", rep, err)
	}
	gas += receiptGas(t, ch, rep.ClaimTx) + receiptGas(t, ch, rep.SweepTx)
	last, _ := a.Voucher(4 * price)
	pay(last)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	var out strings.Builder
	if err := ledgerTo(ctx, &out, []string{"-dir", dir}); err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(out.String()), " ")
	payer := ch.PayerAddress().Hex()
	for _, want := range []string{
		"channels 2 channels · 5 paid calls · balance 0.550000 · charged 0.025000 · claimed 0.020000 · unclaimed 0.005000 USDC · 0 withdrawals pending",
		strings.ToLower(a.ID.Hex()) + " " + payer + " 0.500000 0.480000 0.020000 0.015000 0.005000 4 none",
		strings.ToLower(b.ID.Hex()) + " " + payer + " 0.050000 0.045000 0.005000 0.005000 0.000000 1 none",
		fmt.Sprintf("batch-settlement %d gas over 5", gas/5),
		"box (exact settled and vouchers charged) calls USDC box-1 3 0.015000 box-2 1 0.005000 ",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("appliance ledger does not say %q:\n%s", want, out.String())
		}
	}
}

func receiptGas(t *testing.T, ch *devchain.Chain, tx string) uint64 {
	t.Helper()
	r, err := ch.Client().TransactionReceipt(context.Background(), common.HexToHash(tx))
	if err != nil {
		t.Fatal(err)
	}
	return r.GasUsed
}
