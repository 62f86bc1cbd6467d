package settle

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

const price = 10_000 // 0.01 USDC

type env struct {
	ch    *devchain.Chain
	f     *Facilitator
	payTo common.Address
	dir   string
}

func newEnv(t *testing.T, mine bool) *env {
	t.Helper()
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{ManualMine: !mine})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	k, _ := crypto.GenerateKey()
	e := &env{ch: ch, payTo: crypto.PubkeyToAddress(k.PublicKey), dir: t.TempDir()}
	e.f = e.open(t)
	t.Cleanup(func() { _ = e.f.Close() })
	return e
}

func (e *env) options() Options {
	return Options{Network: devchain.Network, Asset: e.ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: e.payTo, Backend: e.ch.Client(), HotKey: e.ch.Hot, LedgerDir: e.dir, LedgerSync: journal.SyncNever,
		ExposureCap: 3 * price, Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: time.Minute}}
}

func (e *env) open(t *testing.T) *Facilitator {
	t.Helper()
	f, err := New(context.Background(), e.options())
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func (e *env) requirements() x402.PaymentRequirements {
	return x402.PaymentRequirements{Scheme: "exact", Network: devchain.Network, Amount: strconv.Itoa(price), Asset: e.ch.USDC.Hex(),
		PayTo: e.payTo.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: devchain.TokenName, Version: devchain.TokenVersion}}
}

func (e *env) request(t *testing.T, key *ecdsa.PrivateKey, edit func(r *x402.PaymentRequirements)) *x402.FacilitatorRequest {
	t.Helper()
	r := e.requirements()
	signed := r
	if edit != nil {
		edit(&signed)
	}
	p, err := exact.NewPayload(key, 2, &signed, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return &x402.FacilitatorRequest{X402Version: 2, PaymentPayload: *p, PaymentRequirements: x402.FacilitatorRequirements{PaymentRequirements: r}}
}

func (e *env) balance(t *testing.T, a common.Address) int64 {
	t.Helper()
	b, err := e.ch.Balance(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return b.Int64()
}

func TestSettleMovesExactlyThePrice(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	payer := e.ch.PayerAddress()
	before := e.balance(t, payer)
	req := e.request(t, e.ch.Payer, nil)
	ident := x402.HashIdentifier("pay_facilitator-test-000001")
	reserve := func(key, ident string) (x402.ReserveResponse, error) {
		return e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "chain.gas", Key: key,
			IdentifierHash: ident, PayloadHash: x402.HashPayload(&req.PaymentPayload)})
	}
	res, err := reserve("k1", ident)
	if err != nil || !res.IsValid {
		t.Fatalf("reserve: %+v %v", res, err)
	}
	s, err := e.f.Complete(ctx, res.ID, x402.ModeSync)
	if err != nil || !s.Success || s.Transaction == "" {
		t.Fatalf("complete: %+v %v", s, err)
	}
	if got := before - e.balance(t, payer); got != price {
		t.Fatalf("payer paid %d, want %d", got, price)
	}
	if got := e.balance(t, e.payTo); got != price {
		t.Fatalf("payTo got %d, want %d", got, price)
	}
	rec, _ := e.f.Ledger().Get(res.ID)
	if rec.Status != ledger.Settled || rec.Tx != s.Transaction || rec.Amount != price || rec.Route != "chain.gas" {
		t.Fatalf("ledger disagrees: %+v", rec)
	}
	rcpt, err := e.ch.Client().TransactionReceipt(ctx, common.HexToHash(s.Transaction))
	if err != nil || rcpt.Status != 1 {
		t.Fatalf("receipt of %s: %v", s.Transaction, err)
	}
	rev := e.f.Revenue()
	if len(rev) != 1 || rev[0].Amount != price || rev[0].Calls != 1 || rev[0].Route != "chain.gas" {
		t.Fatalf("revenue %+v", rev)
	}
	// The gas the hot key spent is the receipt's, for the operator's dashboard.
	gas := new(big.Int).Mul(new(big.Int).SetUint64(rcpt.GasUsed), rcpt.EffectiveGasPrice)
	if st := e.f.Stats(); rec.GasWei != gas.String() || gas.Sign() <= 0 || st.GasWei != gas.String() || st.ByStatus[ledger.Settled].Payments != 1 {
		t.Fatalf("gas %s recorded %q, stats %+v", gas, rec.GasWei, st)
	}
	// The same payment, identifier and request replays its receipt; the identifier with another
	// request is a conflict; the payment without its identifier is a reused nonce, for any request.
	again, err := reserve("k1", ident)
	if err != nil || again.Replay == nil || again.Replay.Transaction != s.Transaction {
		t.Fatalf("replay: %+v %v", again, err)
	}
	if other, err := reserve("k2", ident); err != nil || other.Replay != nil || !other.Conflict {
		t.Fatalf("identifier for another request: %+v %v", other, err)
	}
	for _, key := range []string{"k1", "k2"} {
		other, err := reserve(key, "")
		if err != nil || other.IsValid || other.Replay != nil || other.InvalidReason != x402.ReasonNonceUsed {
			t.Fatalf("the payment without identifier for %s: %+v %v", key, other, err)
		}
	}
	if got := e.balance(t, e.payTo); got != price {
		t.Fatalf("payTo got %d after replays, want %d", got, price)
	}
}

func TestStandardSettleIsIdempotent(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	req := e.request(t, e.ch.Payer, nil)
	v, err := e.f.Verify(ctx, req)
	if err != nil || !v.IsValid || v.Payer != e.ch.PayerAddress().Hex() {
		t.Fatalf("verify: %+v %v", v, err)
	}
	first, err := e.f.Settle(ctx, req)
	if err != nil || !first.Success {
		t.Fatalf("settle: %+v %v", first, err)
	}
	second, err := e.f.Settle(ctx, req)
	if err != nil || !second.Success || second.Transaction != first.Transaction {
		t.Fatalf("repeat settle: %+v %v", second, err)
	}
	if got := e.balance(t, e.payTo); got != price {
		t.Fatalf("payTo got %d, want %d", got, price)
	}
	v, err = e.f.Verify(ctx, req)
	if err != nil || v.IsValid || v.InvalidReason != x402.ReasonNonceUsed {
		t.Fatalf("verify after settle: %+v %v", v, err)
	}
}

func TestVerifyRefusesBadPayments(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	other, _ := crypto.GenerateKey()
	poor, _ := crypto.GenerateKey()
	now := time.Now()
	resign := func(t *testing.T, req *x402.FacilitatorRequest, edit func(a *exact.Authorization), key *ecdsa.PrivateKey) {
		a, _, err := exact.Parse(&req.PaymentPayload.Payload)
		if err != nil {
			t.Fatal(err)
		}
		edit(a)
		d := exact.Domain{Name: devchain.TokenName, Version: devchain.TokenVersion, ChainID: devchain.ChainID, Contract: e.ch.USDC}
		sig, err := exact.Sign(key, d, a)
		if err != nil {
			t.Fatal(err)
		}
		req.PaymentPayload.Payload.Authorization = exact.WireAuthorization(a)
		req.PaymentPayload.Payload.Signature = "0x" + common.Bytes2Hex(sig)
	}
	cases := []struct {
		name   string
		req    func(t *testing.T) *x402.FacilitatorRequest
		reason string
	}{
		{"wrong network", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, e.ch.Payer, func(r *x402.PaymentRequirements) { r.Network = "eip155:8453" })
		}, x402.ReasonInvalidNetwork},
		{"wrong scheme", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			r.PaymentPayload.Accepted.Scheme = "upto"
			return r
		}, x402.ReasonInvalidScheme},
		{"wrong asset", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, e.ch.Payer, func(r *x402.PaymentRequirements) { r.Asset = common.Address{1}.Hex() })
		}, x402.ReasonInvalidRequirements},
		{"wrong payTo", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, e.ch.Payer, func(r *x402.PaymentRequirements) { r.PayTo = common.Address{2}.Hex() })
		}, x402.ReasonRecipientMismatch},
		{"underpayment", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, e.ch.Payer, func(r *x402.PaymentRequirements) { r.Amount = strconv.Itoa(price - 1) })
		}, x402.ReasonValueMismatch},
		{"overpayment", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, e.ch.Payer, func(r *x402.PaymentRequirements) { r.Amount = strconv.Itoa(price + 1) })
		}, x402.ReasonValueMismatch},
		{"value differs from accepted", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			resign(t, r, func(a *exact.Authorization) { a.Value = big.NewInt(price - 1) }, e.ch.Payer)
			return r
		}, x402.ReasonValueMismatch},
		{"expired", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			resign(t, r, func(a *exact.Authorization) { a.ValidBefore = big.NewInt(now.Add(-time.Minute).Unix()) }, e.ch.Payer)
			return r
		}, x402.ReasonValidBefore},
		{"not yet valid", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			resign(t, r, func(a *exact.Authorization) { a.ValidAfter = big.NewInt(now.Add(time.Hour).Unix()) }, e.ch.Payer)
			return r
		}, x402.ReasonValidAfter},
		{"signed by another key", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			resign(t, r, func(*exact.Authorization) {}, other)
			return r
		}, x402.ReasonSignature},
		{"insufficient balance", func(t *testing.T) *x402.FacilitatorRequest {
			return e.request(t, poor, nil)
		}, x402.ReasonInsufficientFunds},
		{"bad nonce", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			r.PaymentPayload.Payload.Authorization.Nonce = "0x1234"
			return r
		}, x402.ReasonInvalidPayload},
		{"version 3", func(t *testing.T) *x402.FacilitatorRequest {
			r := e.request(t, e.ch.Payer, nil)
			r.PaymentPayload.X402Version = 3
			return r
		}, x402.ReasonInvalidVersion},
	}
	before := e.balance(t, e.ch.PayerAddress())
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := c.req(t)
			v, err := e.f.Verify(ctx, req)
			if err != nil {
				t.Fatal(err)
			}
			if v.IsValid || v.InvalidReason != c.reason {
				t.Fatalf("verify = %+v, want reason %s", v, c.reason)
			}
			s, err := e.f.Settle(ctx, req)
			if err != nil || s.Success || s.ErrorReason != c.reason {
				t.Fatalf("settle = %+v %v, want reason %s", s, err, c.reason)
			}
		})
	}
	if after := e.balance(t, e.ch.PayerAddress()); after != before || e.balance(t, e.payTo) != 0 {
		t.Fatalf("bad payments moved money: payer %d → %d, payTo %d", before, after, e.balance(t, e.payTo))
	}
}

func TestConcurrentReuseHoldsOneReservation(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	req := e.request(t, e.ch.Payer, nil)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ids []string
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: "key" + strconv.Itoa(i)})
			if err != nil {
				t.Error(err)
				return
			}
			if res.IsValid {
				mu.Lock()
				ids = append(ids, res.ID)
				mu.Unlock()
			} else if res.InvalidReason != x402.ReasonNonceUsed {
				t.Errorf("reason %q", res.InvalidReason)
			}
		}()
	}
	wg.Wait()
	if len(ids) != 1 {
		t.Fatalf("%d reservations of one nonce, want 1", len(ids))
	}
}

func TestReleaseChargesNothingAndFreesTheNonce(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	req := e.request(t, e.ch.Payer, nil)
	res, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: "k"})
	if err != nil || !res.IsValid {
		t.Fatal(res, err)
	}
	if err := e.f.Release(ctx, res.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.f.Complete(ctx, res.ID, x402.ModeSync); err == nil {
		t.Fatal("completed a released payment")
	}
	if got := e.balance(t, e.payTo); got != 0 {
		t.Fatalf("released payment moved %d", got)
	}
	again, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: "k"})
	if err != nil || !again.IsValid {
		t.Fatalf("the released authorization should be usable again: %+v %v", again, err)
	}
}

func TestOptimisticQueueSettlesAndCapsExposure(t *testing.T) {
	e := newEnv(t, false) // manual mining: nothing settles until the test mines
	ctx := context.Background()
	var ids []string
	for i := range 4 {
		req := e.request(t, e.ch.Payer, nil)
		res, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: strconv.Itoa(i)})
		if err != nil || !res.IsValid {
			t.Fatal(res, err)
		}
		ids = append(ids, res.ID)
	}
	for _, id := range ids[:3] {
		s, err := e.f.Complete(ctx, id, x402.ModeOptimistic)
		if err != nil || !s.Success || s.Transaction != "" {
			t.Fatalf("optimistic complete: %+v %v", s, err)
		}
	}
	// The fourth is over the cap (3 × price owed): it settles synchronously, which needs a block.
	done := make(chan x402.SettlementResponse)
	go func() {
		s, _ := e.f.Complete(ctx, ids[3], x402.ModeOptimistic)
		done <- s
	}()
	// Blocks are sealed only once all four transactions are in the pool: the fourth's is there
	// once its completion has chosen how to settle. Sealing earlier would let the queue settle
	// the first three, and the fourth, no longer over the cap, rightly go optimistic.
	var s x402.SettlementResponse
	for loop := true; loop; {
		select {
		case s = <-done:
			loop = false
		case <-time.After(10 * time.Millisecond):
			if n, err := e.ch.Client().PendingTransactionCount(ctx); err == nil && n >= 4 {
				e.ch.Commit()
			}
		}
	}
	if !s.Success || s.Transaction == "" {
		t.Fatalf("capped completion did not settle synchronously: %+v", s)
	}
	for {
		e.ch.Commit()
		if len(e.f.Ledger().List(ledger.Settled)) == 4 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := e.balance(t, e.payTo); got != 4*price {
		t.Fatalf("payTo got %d, want %d", got, 4*price)
	}
}

// TestSettlementsInFlightAtOnce: optimistic calls completed faster than blocks come all have
// their settlements broadcast before the first is mined, the queue's default bound far above
// the 8 that held a box to 8 exact calls a second on the embedded chain (a block a second)
// and 3 to 4 on Base; one block then settles them all.
func TestSettlementsInFlightAtOnce(t *testing.T) {
	e := newEnv(t, false) // manual mining: nothing is mined until the test seals a block
	ctx := context.Background()
	const n = 24
	if err := e.f.Close(); err != nil {
		t.Fatal(err)
	}
	o := e.options()
	o.ExposureCap = n * price
	f, err := New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	e.f = f
	for i := range n {
		req := e.request(t, e.ch.Payer, nil)
		res, err := f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: strconv.Itoa(i)})
		if err != nil || !res.IsValid {
			t.Fatal(res, err)
		}
		s, err := f.Complete(ctx, res.ID, x402.ModeOptimistic)
		if err != nil || !s.Success || s.Transaction != "" {
			t.Fatalf("optimistic complete %d: %+v %v", i, s, err)
		}
	}
	untilTrue(t, "the queue did not broadcast every owed settlement before a block", func() bool {
		return len(f.Ledger().List(ledger.Broadcast)) == n
	})
	if pending, err := e.ch.Client().PendingTransactionCount(ctx); err != nil || pending != n {
		t.Fatalf("%d transactions in the pool (%v), want the %d settlements", pending, err, n)
	}
	e.ch.Commit()
	untilTrue(t, "the block did not settle them", func() bool { return len(f.Ledger().List(ledger.Settled)) == n })
	if got := e.balance(t, e.payTo); got != n*price {
		t.Fatalf("payTo got %d, want %d", got, n*price)
	}
}

func TestSmartWalletPaysThroughERC1271(t *testing.T) {
	e := newEnv(t, true)
	ctx := context.Background()
	owner, _ := crypto.GenerateKey()
	wallet, err := e.ch.DeployWallet(ctx, crypto.PubkeyToAddress(owner.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.ch.Mint(ctx, wallet, price); err != nil {
		t.Fatal(err)
	}
	req := e.request(t, owner, nil)
	a, _, err := exact.Parse(&req.PaymentPayload.Payload)
	if err != nil {
		t.Fatal(err)
	}
	a.From = wallet // the wallet pays; its owner's key signs
	d := exact.Domain{Name: devchain.TokenName, Version: devchain.TokenVersion, ChainID: devchain.ChainID, Contract: e.ch.USDC}
	sig, err := exact.Sign(owner, d, a)
	if err != nil {
		t.Fatal(err)
	}
	req.PaymentPayload.Payload.Authorization = exact.WireAuthorization(a)
	req.PaymentPayload.Payload.Signature = "0x" + common.Bytes2Hex(sig)
	s, err := e.f.Settle(ctx, req)
	if err != nil || !s.Success || s.Payer != wallet.Hex() {
		t.Fatalf("settle from wallet: %+v %v", s, err)
	}
	if e.balance(t, wallet) != 0 || e.balance(t, e.payTo) != price {
		t.Fatalf("wallet %d payTo %d", e.balance(t, wallet), e.balance(t, e.payTo))
	}
	// Asked to complete optimistically, a wallet payment is settled before the answer: only
	// the chain can say whether the wallet will honour a signature it approved to eth_call.
	if err := e.ch.Mint(ctx, wallet, price); err != nil {
		t.Fatal(err)
	}
	a.Nonce = common.Hash{6}
	sig, _ = exact.Sign(owner, d, a)
	req.PaymentPayload.Payload.Authorization = exact.WireAuthorization(a)
	req.PaymentPayload.Payload.Signature = "0x" + common.Bytes2Hex(sig)
	res, err := e.f.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *req, Route: "r", Key: "wallet"})
	if err != nil || !res.IsValid {
		t.Fatalf("reserve from wallet: %+v %v", res, err)
	}
	if s, err := e.f.Complete(ctx, res.ID, x402.ModeOptimistic); err != nil || !s.Success || s.Transaction == "" {
		t.Fatalf("optimistic completion of a wallet payment: %+v %v", s, err)
	}
	// A signature by someone else than the owner is refused by the wallet.
	stranger, _ := crypto.GenerateKey()
	if err := e.ch.Mint(ctx, wallet, price); err != nil {
		t.Fatal(err)
	}
	a.Nonce = common.Hash{7}
	sig, _ = exact.Sign(stranger, d, a)
	req.PaymentPayload.Payload.Authorization = exact.WireAuthorization(a)
	req.PaymentPayload.Payload.Signature = "0x" + common.Bytes2Hex(sig)
	v, err := e.f.Verify(ctx, req)
	if err != nil || v.IsValid || v.InvalidReason != x402.ReasonSignature {
		t.Fatalf("stranger's signature: %+v %v", v, err)
	}
}
