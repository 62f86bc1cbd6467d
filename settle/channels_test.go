package settle

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

type batchEnv struct {
	*env
	opts Options
	auth *ecdsa.PrivateKey
	cfg  batch.ChannelConfig
	id   common.Hash
}

func newBatchEnv(t *testing.T) *batchEnv { return newBatchEnvOn(t, devchain.Options{}) }

func newBatchEnvOn(t *testing.T, co devchain.Options) *batchEnv {
	t.Helper()
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, co)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	k, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	e := &batchEnv{env: &env{ch: ch, payTo: crypto.PubkeyToAddress(k.PublicKey), dir: t.TempDir()}, auth: auth}
	o := Options{Network: devchain.Network, Asset: ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: e.payTo, Backend: ch.Client(), HotKey: ch.Hot, LedgerDir: e.dir, LedgerSync: journal.SyncNever,
		ExposureCap: 3 * price, ReceiverAuthorizer: auth, Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: time.Minute}}
	e.opts = o
	if e.f, err = New(ctx, o); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.f.Close() })
	e.cfg = batch.ChannelConfig{Payer: ch.PayerAddress(), PayerAuthorizer: ch.PayerAddress(), Receiver: e.payTo,
		ReceiverAuthorizer: crypto.PubkeyToAddress(auth.PublicKey), Token: ch.USDC, WithdrawDelay: batch.MinWithdrawDelay, Salt: common.Hash{31: 9}}
	e.id = batch.ChannelID(devchain.ChainID, &e.cfg)
	return e
}

func (e *batchEnv) requirements() x402.BatchRequirements {
	return x402.BatchRequirements{Scheme: x402.SchemeBatchSettlement, Network: devchain.Network, Amount: strconv.Itoa(price),
		Asset: e.ch.USDC.Hex(), PayTo: e.payTo.Hex(), MaxTimeoutSeconds: 3600,
		Extra: &x402.BatchExtra{ReceiverAuthorizer: e.cfg.ReceiverAuthorizer.Hex(), WithdrawDelay: batch.MinWithdrawDelay, Name: devchain.TokenName, Version: devchain.TokenVersion}}
}

// request builds a payload of type typ whose voucher is for max, signed by signer.
func (e *batchEnv) request(t *testing.T, typ string, max uint64, signer *ecdsa.PrivateKey) *x402.BatchRequest {
	t.Helper()
	sig, err := batch.SignVoucher(signer, devchain.ChainID, e.id, new(big.Int).SetUint64(max))
	if err != nil {
		t.Fatal(err)
	}
	wire := e.cfg.Wire()
	r := e.requirements()
	return &x402.BatchRequest{X402Version: 2, PaymentRequirements: r, PaymentPayload: x402.BatchPaymentPayload{X402Version: 2, Accepted: &r,
		Payload: x402.BatchPayload{Type: typ, ChannelConfig: &wire,
			Voucher: &x402.SignedVoucher{ChannelID: e.id.Hex(), MaxClaimableAmount: strconv.FormatUint(max, 10), Signature: hexBytes(sig)}}}}
}

func (e *batchEnv) deposit(t *testing.T, amount, max uint64, salt int64) *x402.BatchRequest {
	t.Helper()
	req := e.request(t, x402.BatchDeposit, max, e.ch.Payer)
	auth := batch.ReceiveAuthorization{From: e.cfg.Payer, To: batch.ERC3009CollectorAddress, Value: new(big.Int).SetUint64(amount),
		ValidAfter: big.NewInt(0), ValidBefore: big.NewInt(time.Now().Add(time.Hour).Unix()), Nonce: batch.DepositNonce(e.id, big.NewInt(salt))}
	sig, err := batch.SignReceive(e.ch.Payer, e.f.domain(), &auth)
	if err != nil {
		t.Fatal(err)
	}
	req.PaymentPayload.Payload.Deposit = &x402.Deposit{Amount: strconv.FormatUint(amount, 10), Authorization: x402.DepositAuthorization{
		ERC3009: &x402.ERC3009Deposit{ValidAfter: "0", ValidBefore: auth.ValidBefore.String(), Salt: hexBytes(common.BigToHash(big.NewInt(salt)).Bytes()), Signature: hexBytes(sig)}}}
	return req
}

func hexBytes(b []byte) string { return "0x" + common.Bytes2Hex(b) }

// post sends req to the facilitator's HTTP API (so the scheme dispatch is exercised) and
// decodes the answer into out.
func post(t *testing.T, h http.Handler, path string, req any, out any) {
	t.Helper()
	b, _ := json.Marshal(req)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", path, bytes.NewReader(b)))
	if w.Code != 200 {
		t.Fatalf("%s: %d %s", path, w.Code, w.Body)
	}
	if err := json.Unmarshal(w.Body.Bytes(), out); err != nil {
		t.Fatal(err)
	}
}

// TestBatchDepositVoucherClaimSweepRefund runs a channel's life through the facilitator: the
// deposit is verified and executed, vouchers verify against the chain, one claim and one sweep
// pay payTo exactly what was claimed, and a cooperative refund returns the rest.
func TestBatchDepositVoucherClaimSweepRefund(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()
	h := e.f.Handler()
	payer := e.ch.PayerAddress()
	start := e.balance(t, payer)

	sup := e.f.Supported()
	if k := sup.Kinds[len(sup.Kinds)-1]; k.Scheme != x402.SchemeBatchSettlement || k.Extra["receiverAuthorizer"] != e.cfg.ReceiverAuthorizer.Hex() {
		t.Fatalf("/supported does not list batch-settlement with its authorizer: %+v", sup.Kinds)
	}

	var v x402.BatchVerifyResponse
	post(t, h, "/verify", e.deposit(t, 100*price, price, 1), &v)
	if !v.IsValid || v.Extra == nil || v.Extra.Balance != "0" || v.Payer != payer.Hex() {
		t.Fatalf("deposit verify: %+v", v)
	}
	var s x402.BatchSettleResponse
	post(t, h, "/settle", e.deposit(t, 100*price, price, 1), &s)
	if !s.Success || s.Transaction == "" || s.Amount != strconv.Itoa(100*price) || s.Extra == nil || s.Extra.ChannelState.Balance != strconv.Itoa(100*price) {
		t.Fatalf("deposit settle: %+v", s)
	}
	if got := e.balance(t, payer); got != start-100*price {
		t.Fatalf("payer holds %d after the deposit, want %d", got, start-100*price)
	}
	// The same deposit authorization again is refused before any transaction.
	post(t, h, "/settle", e.deposit(t, 100*price, price, 1), &s)
	if s.Success || s.ErrorReason != x402.ReasonBatchDepositPayload {
		t.Fatalf("replayed deposit: %+v", s)
	}

	stranger, _ := crypto.GenerateKey()
	for _, tc := range []struct {
		name   string
		req    *x402.BatchRequest
		reason string
	}{
		{"voucher", e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer), ""},
		{"signed by another key", e.request(t, x402.BatchVoucher, 2*price, stranger), x402.ReasonBatchVoucherSignature},
		{"above the balance", e.request(t, x402.BatchVoucher, 100*price+1, e.ch.Payer), x402.ReasonBatchExceedsBalance},
		{"unknown type", e.request(t, "topup", price, e.ch.Payer), x402.ReasonBatchPayloadType},
		{"another receiver", func() *x402.BatchRequest {
			r := e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)
			r.PaymentPayload.Payload.ChannelConfig.Receiver = e.cfg.Payer.Hex()
			return r
		}(), x402.ReasonBatchReceiverMismatch},
		{"config not matching the id", func() *x402.BatchRequest {
			r := e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)
			r.PaymentPayload.Payload.ChannelConfig.Salt = common.Hash{31: 10}.Hex()
			return r
		}(), x402.ReasonBatchChannelIDMismatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var v x402.BatchVerifyResponse
			post(t, h, "/verify", tc.req, &v)
			if v.IsValid != (tc.reason == "") || v.InvalidReason != tc.reason {
				t.Fatalf("got %+v, want reason %q", v, tc.reason)
			}
		})
	}

	// One claim of the latest voucher, one sweep: payTo gets exactly the claimed sum.
	latest := e.request(t, x402.BatchVoucher, 7*price, e.ch.Payer)
	sig := common.FromHex(latest.PaymentPayload.Payload.Voucher.Signature)
	r, err := e.f.Claim(ctx, []ClaimRow{{Config: e.cfg, Max: big.NewInt(7 * price), Signature: sig, Claim: big.NewInt(7 * price)}})
	if err != nil || r.Status != 1 {
		t.Fatalf("claim: %v %+v", err, r)
	}
	post(t, h, "/settle", &x402.BatchRequest{X402Version: 2, PaymentRequirements: e.requirements(),
		PaymentPayload: x402.BatchPaymentPayload{X402Version: 2, Payload: x402.BatchPayload{Type: x402.BatchSettle}}}, &s)
	if !s.Success || s.Amount != strconv.Itoa(7*price) || s.Transaction == "" {
		t.Fatalf("sweep: %+v", s)
	}
	if got := e.balance(t, e.payTo); got != 7*price {
		t.Fatalf("payTo holds %d, want %d", got, 7*price)
	}
	// A voucher at or below what is claimed is refused (replay of an old voucher).
	post(t, h, "/verify", e.request(t, x402.BatchVoucher, 7*price, e.ch.Payer), &v)
	if v.IsValid || v.InvalidReason != x402.ReasonBatchCumulativeBelow {
		t.Fatalf("voucher at the claimed total: %+v", v)
	}

	// A cooperative refund with a zero-charge voucher at 9 × price: the 2 × price charged
	// beyond the claim are claimed first, the rest goes back to the payer.
	post(t, h, "/settle", e.request(t, x402.BatchRefund, 9*price, e.ch.Payer), &s)
	if !s.Success || s.Amount != strconv.Itoa(91*price) || s.Extra.ChannelState.Balance != strconv.Itoa(9*price) ||
		s.Extra.ChannelState.TotalClaimed != strconv.Itoa(9*price) || s.Extra.ChannelState.RefundNonce != "1" {
		t.Fatalf("refund: %+v %+v", s, s.Extra)
	}
	if got := e.balance(t, payer); got != start-9*price {
		t.Fatalf("payer holds %d after the refund, want %d", got, start-9*price)
	}
}

// TestBatchSessionsCommitOnlyAfterSuccess: the server side of a channel. A deposit and then
// vouchers are held per channel, committed only on success (a release changes nothing and the
// same voucher can be sent again), a voucher below or above the expected cumulative amount gets
// the corrective mismatch with the last voucher the server holds, the state is exact across a
// restart, and a refund returns the unclaimed rest.
func TestBatchSessionsCommitOnlyAfterSuccess(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()
	var held *x402.BatchRequest // the request last held
	reserve := func(req *x402.BatchRequest) x402.BatchReserveResponse {
		t.Helper()
		res, err := e.f.BatchReserve(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsValid {
			held = req
		}
		return res
	}
	complete := func(id string, charged uint64) x402.BatchSettleResponse {
		t.Helper()
		res, err := e.f.BatchComplete(ctx, held.Completion(id, charged))
		if err != nil || !res.Success {
			t.Fatalf("complete: %+v %v", res, err)
		}
		return res
	}

	dep := reserve(e.deposit(t, 100*price, price, 1))
	if !dep.IsValid || dep.ID != strings.ToLower(e.id.Hex()) {
		t.Fatalf("deposit reserve: %+v", dep)
	}
	if busy := reserve(e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)); busy.InvalidReason != x402.ReasonBatchChannelBusy {
		t.Fatalf("second request on a held channel: %+v", busy)
	}
	res := complete(dep.ID, price)
	if res.Transaction == "" || res.Amount != strconv.Itoa(100*price) || res.Extra.ChargedAmount != strconv.Itoa(price) ||
		res.Extra.ChannelState.ChargedCumulativeAmount != strconv.Itoa(price) || res.Extra.ChannelState.Balance != strconv.Itoa(100*price) {
		t.Fatalf("deposit response: %+v %+v", res, res.Extra.ChannelState)
	}

	// The work fails: nothing changes and the same voucher is accepted on retry.
	v2 := e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer)
	if r := reserve(v2); !r.IsValid {
		t.Fatalf("voucher reserve: %+v", r)
	}
	if err := e.f.BatchRelease(ctx, dep.ID); err != nil {
		t.Fatal(err)
	}
	if c, _ := e.f.Channels().Get(dep.ID); c.Charged != price || c.SignedMax != price {
		t.Fatalf("a released request changed the channel: %+v", c)
	}
	if r := reserve(v2); !r.IsValid {
		t.Fatalf("retried voucher: %+v", r)
	}
	res = complete(dep.ID, price)
	if res.Transaction != "" || res.Amount != "" || res.Extra.ChargedAmount != strconv.Itoa(price) || res.Extra.ChannelState.ChargedCumulativeAmount != strconv.Itoa(2*price) {
		t.Fatalf("voucher response: %+v %+v", res, res.Extra.ChannelState)
	}

	// Below (a replay of the last voucher) and above: the corrective mismatch, carrying the
	// server's charged amount and the last voucher the payer signed.
	for _, max := range []uint64{2 * price, 4 * price} {
		r := reserve(e.request(t, x402.BatchVoucher, max, e.ch.Payer))
		if r.IsValid || r.InvalidReason != x402.ReasonBatchCumulativeMismatch || r.Corrective == nil ||
			r.Corrective.ChannelState.ChargedCumulativeAmount != strconv.Itoa(2*price) ||
			r.Corrective.VoucherState == nil || r.Corrective.VoucherState.SignedMaxClaimable != strconv.Itoa(2*price) ||
			r.Corrective.VoucherState.Signature != v2.PaymentPayload.Payload.Voucher.Signature {
			t.Fatalf("voucher for %d: %+v %+v", max, r, r.Corrective)
		}
	}

	// Restart: the channel comes back exactly.
	if err := e.f.Close(); err != nil {
		t.Fatal(err)
	}
	f, err := New(ctx, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.f = f
	if c, ok := e.f.Channels().Get(dep.ID); !ok || c.Charged != 2*price || c.Calls != 2 || c.Balance != 100*price {
		t.Fatalf("after restart: %+v", c)
	}
	if r := reserve(e.request(t, x402.BatchVoucher, 3*price, e.ch.Payer)); !r.IsValid {
		t.Fatalf("voucher after restart: %+v", r)
	}
	complete(dep.ID, price)

	// A refund with the zero-charge voucher: the 3 calls are claimed, the rest goes back.
	if r := reserve(e.request(t, x402.BatchRefund, 3*price, e.ch.Payer)); !r.IsValid {
		t.Fatalf("refund reserve: %+v", r)
	}
	res = complete(dep.ID, 0)
	if res.Amount != strconv.Itoa(97*price) || res.Extra.ChargedAmount != "" || res.Extra.ChannelState.TotalClaimed != strconv.Itoa(3*price) {
		t.Fatalf("refund response: %+v %+v", res, res.Extra.ChannelState)
	}
	if _, _, err := e.f.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if got := e.balance(t, e.payTo); got != 3*price {
		t.Fatalf("payTo holds %d, want %d", got, 3*price)
	}
}

func (e *batchEnv) useSalt(n byte) {
	e.cfg.Salt = common.Hash{31: n}
	e.id = batch.ChannelID(devchain.ChainID, &e.cfg)
}

// pay serves one paid call on the current channel: reserve then complete at the price.
func (e *batchEnv) pay(t *testing.T, req *x402.BatchRequest) {
	t.Helper()
	r, err := e.f.BatchReserve(context.Background(), req)
	if err != nil || !r.IsValid {
		t.Fatalf("reserve: %+v %v", r, err)
	}
	if res, err := e.f.BatchComplete(context.Background(), req.Completion(r.ID, price)); err != nil || !res.Success {
		t.Fatalf("complete: %+v %v", res, err)
	}
}

// TestClaimerOneClaimForManyChannels: below the policy's minimum nothing is claimed; a payer's
// timed withdrawal makes the claim urgent; then every channel's charges are claimed in one
// transaction and swept in one transfer, payTo receiving exactly the sum; a second round has
// nothing to do.
func TestClaimerOneClaimForManyChannels(t *testing.T) {
	e := newBatchEnv(t)
	ctx := context.Background()
	e.useSalt(9)
	first := e.cfg
	e.pay(t, e.deposit(t, 50*price, price, 1))
	e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	e.useSalt(11)
	second := e.cfg
	e.pay(t, e.deposit(t, 50*price, price, 2))

	policy := ClaimPolicy{MinClaimable: 100 * price}
	rep, err := e.f.ClaimOnce(ctx, policy)
	if err != nil || rep.Channels != 0 || rep.Swept.Sign() != 0 {
		t.Fatalf("below the minimum: %+v %v", rep, err)
	}

	// The payer of the second channel starts a timed withdrawal of its unclaimed escrow.
	sc := usdc.NewX402BatchSettlement()
	opts := bind.NewKeyedTransactor(e.ch.Payer, big.NewInt(devchain.ChainID))
	tx, err := bind.Transact(sc.Instance(e.ch.Client(), batch.SettlementAddress), opts, sc.PackInitiateWithdraw(boundConfig(&second), big.NewInt(50*price)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bind.WaitMined(ctx, e.ch.Client(), tx.Hash()); err != nil {
		t.Fatal(err)
	}

	rep, err = e.f.ClaimOnce(ctx, policy)
	if err != nil || rep.Channels != 2 || rep.Claimed.Uint64() != 3*price || rep.Swept.Uint64() != 3*price || rep.ClaimGas == 0 || rep.SweepGas == 0 {
		t.Fatalf("urgent claim: %+v %v", rep, err)
	}
	if got := e.balance(t, e.payTo); got != 3*price {
		t.Fatalf("payTo holds %d, want %d", got, 3*price)
	}
	for _, cfg := range []batch.ChannelConfig{first, second} {
		c, _ := e.f.Channels().Get(batch.ChannelID(devchain.ChainID, &cfg).Hex())
		if c.TotalClaimed != c.Charged || c.ClaimTx != "" || c.ClaimGas == 0 || c.Unclaimed() != 0 {
			t.Fatalf("channel after the claim: %+v", c)
		}
	}
	rep, err = e.f.ClaimOnce(ctx, ClaimPolicy{})
	if err != nil || rep.Channels != 0 || rep.Swept.Sign() != 0 {
		t.Fatalf("second round: %+v %v", rep, err)
	}
}

// barrierBackend holds each read of the settlement contract, while armed, until want of them
// are in flight: reads made one after the other never get an answer.
type barrierBackend struct {
	chain.Backend
	armed atomic.Bool
	want  int
	asked chan struct{}
	all   chan struct{}
}

func (b *barrierBackend) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if b.armed.Load() && call.To != nil && *call.To == batch.SettlementAddress {
		b.asked <- struct{}{}
		select {
		case <-b.all:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.Backend.CallContract(ctx, call, block)
}

// TestReadChannelAsksAtOnce: a voucher's reservation reads the channel's balance and claimed
// total, its pending withdrawal and its refund nonce together, so on a remote RPC it waits for
// one round trip to the node, not three.
func TestReadChannelAsksAtOnce(t *testing.T) {
	e := newBatchEnv(t)
	b := &barrierBackend{Backend: e.ch.Client(), want: 3, asked: make(chan struct{}, 3), all: make(chan struct{})}
	o := e.opts
	o.Backend, o.LedgerDir = b, t.TempDir()
	f, err := New(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	go func() {
		for range b.want {
			<-b.asked
		}
		close(b.all)
	}()
	b.armed.Store(true)
	// Only reads made one after the other get here: the first one's wait ends with the
	// context instead of hanging the test.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	on, err := f.ReadChannel(ctx, e.id)
	if err != nil || on.Balance.Sign() != 0 || on.RefundNonce.Sign() != 0 {
		t.Fatalf("channel read with its three reads asked at once: %+v %v", on, err)
	}
}
