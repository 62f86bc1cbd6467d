package batch_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/usdc"
)

// harness drives the project's x402BatchSettlement on the embedded chain, where the genesis put
// it at the canonical address. The hot key relays every receiver-side transaction, as the
// facilitator does.
type harness struct {
	t     *testing.T
	ctx   context.Context
	chain *devchain.Chain
	sc    *bind.BoundContract
	abi   *usdc.X402BatchSettlement
	auth  *ecdsa.PrivateKey // receiver authorizer
	recv  common.Address
	cfg   batch.ChannelConfig
	id    common.Hash
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	auth, _ := crypto.GenerateKey()
	recvKey, _ := crypto.GenerateKey()
	h := &harness{t: t, ctx: ctx, chain: ch, abi: usdc.NewX402BatchSettlement(), auth: auth, recv: crypto.PubkeyToAddress(recvKey.PublicKey)}
	h.sc = h.abi.Instance(ch.Client(), batch.SettlementAddress)
	h.cfg = h.config(common.Hash{31: 1})
	h.id = batch.ChannelID(devchain.ChainID, &h.cfg)
	return h
}

func (h *harness) config(salt common.Hash) batch.ChannelConfig {
	return batch.ChannelConfig{
		Payer: h.chain.PayerAddress(), PayerAuthorizer: h.chain.PayerAddress(), Receiver: h.recv,
		ReceiverAuthorizer: crypto.PubkeyToAddress(h.auth.PublicKey), Token: h.chain.USDC, WithdrawDelay: batch.MinWithdrawDelay, Salt: salt,
	}
}

func bound(c *batch.ChannelConfig) usdc.X402BatchSettlementChannelConfig {
	return usdc.X402BatchSettlementChannelConfig{
		Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver, ReceiverAuthorizer: c.ReceiverAuthorizer,
		Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt,
	}
}

// send submits data from key and waits for the receipt; a revert (seen at gas estimation or in
// the receipt) is returned as an error.
func (h *harness) send(key *ecdsa.PrivateKey, data []byte) (*types.Receipt, error) {
	opts := bind.NewKeyedTransactor(key, big.NewInt(devchain.ChainID))
	opts.Context = h.ctx
	tx, err := bind.Transact(h.sc, opts, data)
	if err != nil {
		return nil, err
	}
	r, err := bind.WaitMined(h.ctx, h.chain.Client(), tx.Hash())
	if err != nil {
		return nil, err
	}
	if r.Status != types.ReceiptStatusSuccessful {
		return r, errReverted
	}
	return r, nil
}

type revertErr struct{}

func (revertErr) Error() string { return "reverted" }

var errReverted error = revertErr{}

func (h *harness) must(key *ecdsa.PrivateKey, data []byte) *types.Receipt {
	h.t.Helper()
	r, err := h.send(key, data)
	if err != nil {
		h.t.Fatal(err)
	}
	return r
}

func (h *harness) channel(id common.Hash) (balance, claimed uint64) {
	h.t.Helper()
	out, err := bind.Call(h.sc, nil, h.abi.PackChannels(id), h.abi.UnpackChannels)
	if err != nil {
		h.t.Fatal(err)
	}
	return out.Balance.Uint64(), out.TotalClaimed.Uint64()
}

func (h *harness) tokenBalance(who common.Address) uint64 {
	h.t.Helper()
	b, err := h.chain.Balance(h.ctx, who)
	if err != nil {
		h.t.Fatal(err)
	}
	return b.Uint64()
}

// deposit escrows amount into cfg's channel through the ERC-3009 collector, signed by the payer.
func (h *harness) deposit(cfg *batch.ChannelConfig, amount uint64, salt int64) (*types.Receipt, error) {
	id := batch.ChannelID(devchain.ChainID, cfg)
	d := &batch.Deposit{Amount: new(big.Int).SetUint64(amount), Salt: big.NewInt(salt)}
	d.Auth = batch.ReceiveAuthorization{
		From: cfg.Payer, To: batch.ERC3009CollectorAddress, Value: d.Amount,
		ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(time.Now().Add(time.Hour).Unix()), Nonce: batch.DepositNonce(id, d.Salt),
	}
	token := exact.Domain{Name: devchain.TokenName, Version: devchain.TokenVersion, ChainID: devchain.ChainID, Contract: h.chain.USDC}
	sig, err := batch.SignReceive(h.chain.Payer, token, &d.Auth)
	if err != nil {
		h.t.Fatal(err)
	}
	d.Signature = sig
	return h.send(h.chain.Hot, h.abi.PackDeposit(bound(cfg), d.Amount, batch.ERC3009CollectorAddress, d.CollectorData()))
}

func (h *harness) claimRow(cfg *batch.ChannelConfig, max, total uint64) (usdc.X402BatchSettlementVoucherClaim, batch.ClaimEntry) {
	id := batch.ChannelID(devchain.ChainID, cfg)
	sig, err := batch.SignVoucher(h.chain.Payer, devchain.ChainID, id, new(big.Int).SetUint64(max))
	if err != nil {
		h.t.Fatal(err)
	}
	row := usdc.X402BatchSettlementVoucherClaim{
		Voucher:      usdc.X402BatchSettlementVoucher{Channel: bound(cfg), MaxClaimableAmount: new(big.Int).SetUint64(max)},
		Signature:    sig,
		TotalClaimed: new(big.Int).SetUint64(total),
	}
	return row, batch.ClaimEntry{ChannelID: id, MaxClaimableAmount: row.Voucher.MaxClaimableAmount, TotalClaimed: row.TotalClaimed}
}

func (h *harness) claim(key *ecdsa.PrivateKey, rows []usdc.X402BatchSettlementVoucherClaim, entries []batch.ClaimEntry) (*types.Receipt, error) {
	sig, err := batch.SignClaimBatch(key, devchain.ChainID, entries)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.send(h.chain.Hot, h.abi.PackClaimWithSignature(rows, sig))
}

// TestDigestsMatchContract checks the Go hashing against the contract's own views.
func TestDigestsMatchContract(t *testing.T) {
	h := newHarness(t)
	id, err := bind.Call(h.sc, nil, h.abi.PackGetChannelId(bound(&h.cfg)), h.abi.UnpackGetChannelId)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(id) != h.id {
		t.Fatalf("channel id: contract %x, Go %s", id, h.id.Hex())
	}
	amount, nonce := big.NewInt(123456789), big.NewInt(7)
	v, err := bind.Call(h.sc, nil, h.abi.PackGetVoucherDigest(h.id, amount), h.abi.UnpackGetVoucherDigest)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(v) != batch.VoucherDigest(devchain.ChainID, h.id, amount) {
		t.Fatal("voucher digest differs from the contract's")
	}
	r, err := bind.Call(h.sc, nil, h.abi.PackGetRefundDigest(h.id, nonce, amount), h.abi.UnpackGetRefundDigest)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(r) != batch.RefundDigest(devchain.ChainID, h.id, nonce, amount) {
		t.Fatal("refund digest differs from the contract's")
	}
	other := h.config(common.Hash{31: 2})
	for _, n := range []int{0, 1, 2} {
		var rows []usdc.X402BatchSettlementVoucherClaim
		var entries []batch.ClaimEntry
		for i := 0; i < n; i++ {
			c := &h.cfg
			if i == 1 {
				c = &other
			}
			row, e := h.claimRow(c, uint64(100*(i+1)), uint64(50*(i+1)))
			rows, entries = append(rows, row), append(entries, e)
		}
		got, err := bind.Call(h.sc, nil, h.abi.PackGetClaimBatchDigest(rows), h.abi.UnpackGetClaimBatchDigest)
		if err != nil {
			t.Fatal(err)
		}
		if common.Hash(got) != batch.ClaimBatchDigest(devchain.ChainID, entries) {
			t.Fatalf("claim batch digest of %d rows differs from the contract's", n)
		}
	}
}

// TestChannelLifecycle runs deposit, a two-channel claimWithSignature, settle, a signed refund
// and a timed withdrawal on the embedded chain, checking balances at every step.
func TestChannelLifecycle(t *testing.T) {
	h := newHarness(t)
	payer := h.chain.PayerAddress()
	start := h.tokenBalance(payer)

	if _, err := h.deposit(&h.cfg, 1_000_000, 1); err != nil {
		t.Fatalf("deposit: %v", err)
	}
	second := h.config(common.Hash{31: 2})
	secondID := batch.ChannelID(devchain.ChainID, &second)
	if _, err := h.deposit(&second, 500_000, 2); err != nil {
		t.Fatalf("deposit into the second channel: %v", err)
	}
	if b, c := h.channel(h.id); b != 1_000_000 || c != 0 {
		t.Fatalf("channel after deposit: balance %d claimed %d", b, c)
	}
	if got := h.tokenBalance(payer); got != start-1_500_000 {
		t.Fatalf("payer balance %d, want %d", got, start-1_500_000)
	}
	if got := h.tokenBalance(batch.SettlementAddress); got != 1_500_000 {
		t.Fatalf("escrow holds %d, want 1500000", got)
	}
	// The same deposit authorization cannot be used twice (the ERC-3009 nonce is spent).
	if _, err := h.deposit(&h.cfg, 1_000_000, 1); err == nil {
		t.Fatal("a replayed deposit authorization was accepted")
	}

	// One claim transaction for both channels' latest vouchers.
	r1, e1 := h.claimRow(&h.cfg, 3000, 3000)
	r2, e2 := h.claimRow(&second, 700, 700)
	if _, err := h.claim(h.auth, []usdc.X402BatchSettlementVoucherClaim{r1, r2}, []batch.ClaimEntry{e1, e2}); err != nil {
		t.Fatalf("claimWithSignature: %v", err)
	}
	if _, c := h.channel(h.id); c != 3000 {
		t.Fatalf("first channel claimed %d, want 3000", c)
	}
	if _, c := h.channel(secondID); c != 700 {
		t.Fatalf("second channel claimed %d, want 700", c)
	}
	// A replayed claim is a no-op; a batch not signed by the receiver authorizer reverts; a
	// claim above the voucher's ceiling reverts.
	if _, err := h.claim(h.auth, []usdc.X402BatchSettlementVoucherClaim{r1}, []batch.ClaimEntry{e1}); err != nil {
		t.Fatalf("replayed claim: %v", err)
	}
	if _, c := h.channel(h.id); c != 3000 {
		t.Fatalf("replayed claim changed totalClaimed to %d", c)
	}
	stranger, _ := crypto.GenerateKey()
	r3, e3 := h.claimRow(&h.cfg, 4000, 4000)
	if _, err := h.claim(stranger, []usdc.X402BatchSettlementVoucherClaim{r3}, []batch.ClaimEntry{e3}); err == nil {
		t.Fatal("a claim batch signed by a stranger was applied")
	}
	r4, e4 := h.claimRow(&h.cfg, 4000, 4001)
	if _, err := h.claim(h.auth, []usdc.X402BatchSettlementVoucherClaim{r4}, []batch.ClaimEntry{e4}); err == nil {
		t.Fatal("a claim above the voucher's ceiling was applied")
	}

	// One sweep pays the receiver both channels' claims.
	h.must(h.chain.Hot, h.abi.PackSettle(h.recv, h.chain.USDC))
	if got := h.tokenBalance(h.recv); got != 3700 {
		t.Fatalf("receiver holds %d after settle, want 3700", got)
	}
	h.must(h.chain.Hot, h.abi.PackSettle(h.recv, h.chain.USDC)) // nothing left: a no-op
	if got := h.tokenBalance(h.recv); got != 3700 {
		t.Fatalf("a second settle paid again: %d", got)
	}

	// A signed refund at the current nonce; the same signature again is refused.
	refundSig, _ := batch.SignRefund(h.auth, devchain.ChainID, h.id, big.NewInt(0), big.NewInt(100_000))
	refund := h.abi.PackRefundWithSignature(bound(&h.cfg), big.NewInt(100_000), big.NewInt(0), refundSig)
	h.must(h.chain.Hot, refund)
	if b, _ := h.channel(h.id); b != 900_000 {
		t.Fatalf("balance after refund %d, want 900000", b)
	}
	if _, err := h.send(h.chain.Hot, refund); err == nil {
		t.Fatal("a refund signature was used twice")
	}
	nonce, err := bind.Call(h.sc, nil, h.abi.PackRefundNonce(h.id), h.abi.UnpackRefundNonce)
	if err != nil || nonce.Uint64() != 1 {
		t.Fatalf("refund nonce %v (%v), want 1", nonce, err)
	}

	// A timed withdrawal: claims still land while it is pending; it cannot finalize early;
	// after the delay it pays out at most the unclaimed escrow.
	h.must(h.chain.Payer, h.abi.PackInitiateWithdraw(bound(&h.cfg), big.NewInt(900_000-3000)))
	r5, e5 := h.claimRow(&h.cfg, 5000, 5000)
	if _, err := h.claim(h.auth, []usdc.X402BatchSettlementVoucherClaim{r5}, []batch.ClaimEntry{e5}); err != nil {
		t.Fatalf("claim during a pending withdrawal: %v", err)
	}
	if _, err := h.send(h.chain.Payer, h.abi.PackFinalizeWithdraw(bound(&h.cfg))); err == nil {
		t.Fatal("a withdrawal finalized before its delay")
	}
	if err := h.chain.AdjustTime(time.Duration(batch.MinWithdrawDelay+1) * time.Second); err != nil {
		t.Fatal(err)
	}
	before := h.tokenBalance(payer)
	h.must(h.chain.Payer, h.abi.PackFinalizeWithdraw(bound(&h.cfg)))
	if b, c := h.channel(h.id); b != 5000 || c != 5000 {
		t.Fatalf("after withdrawal: balance %d claimed %d, want 5000/5000", b, c)
	}
	if got := h.tokenBalance(payer) - before; got != 895_000 {
		t.Fatalf("withdrawal paid %d, want 895000", got)
	}
	h.must(h.chain.Hot, h.abi.PackSettle(h.recv, h.chain.USDC))
	if got := h.tokenBalance(h.recv); got != 5700 {
		t.Fatalf("receiver holds %d, want 5700", got)
	}
}
