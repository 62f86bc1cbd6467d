package settle_test

import (
	"context"
	"crypto/ecdsa"
	"log/slog"
	"math/big"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	receiptroutes "github.com/peage/appliance/api/routes/receipt"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/chain"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// heldWorld is the real server (apitest harness, x402 gate, settle client over a Unix socket)
// in front of an in-process facilitator whose clock the test moves (ahead), on the embedded
// chain. Its /v1/test/hang route holds its call until the test lets it go, as an API stuck in
// (or dead during) the work.
type heldWorld struct {
	*world
	ch    *devchain.Chain
	f     *settle.Facilitator
	payTo common.Address
	ahead atomic.Int64 // the facilitator's clock ahead of the wall clock
	hang  *hangRoute
}

// transact sends data to the contract c from key and waits for it to be mined, as the payer's
// wallet would outside this server; what names the transaction in a failure.
func (hw *heldWorld) transact(t *testing.T, key *ecdsa.PrivateKey, c *bind.BoundContract, data []byte, what string) {
	t.Helper()
	tx, err := bind.Transact(c, bind.NewKeyedTransactor(key, big.NewInt(devchain.ChainID)), data)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := bind.WaitMined(context.Background(), hw.ch.Client(), tx.Hash()); err != nil || r.Status != 1 {
		t.Fatalf("%s: %v %+v", what, err, r)
	}
}

// hangRoute is a paid route whose call waits for release (the route's deadline is 30 s).
type hangRoute struct {
	entered chan struct{}
	release chan struct{}
}

func (h *hangRoute) entry() catalog.Entry {
	return catalog.Entry{Method: "GET", Path: "/v1/test/hang", Summary: "held", Kind: catalog.Paid, Price: price, Timeout: 30 * time.Second,
		Handler: func(ctx context.Context, _ *catalog.Request) (any, error) {
			h.entered <- struct{}{}
			select {
			case <-h.release:
				return map[string]any{"held": "done"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}}
}

const settleMargin = 30 * time.Second

func newHeldWorld(t *testing.T) *heldWorld { return newHeldWorldOn(t, nil) }

// newHeldWorldOn is newHeldWorld whose facilitator reaches the chain through wrap(backend)
// (when wrap is not nil).
func newHeldWorldOn(t *testing.T, wrap func(chain.Backend) chain.Backend) *heldWorld {
	return newHeldWorldWith(t, wrap, nil)
}

// newHeldWorldWith is newHeldWorldOn whose facilitator's options are changed by opts (when not
// nil) before it starts.
func newHeldWorldWith(t *testing.T, wrap func(chain.Backend) chain.Backend, opts func(*settle.Options)) *heldWorld {
	t.Helper()
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	payToKey, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	hw := &heldWorld{ch: ch, payTo: crypto.PubkeyToAddress(payToKey.PublicKey), hang: &hangRoute{entered: make(chan struct{}, 4), release: make(chan struct{})}}
	dir := t.TempDir()
	var backend chain.Backend = ch.Client()
	if wrap != nil {
		backend = wrap(backend)
	}
	o := settle.Options{Network: devchain.Network, Asset: ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: hw.payTo, Backend: backend, HotKey: ch.Hot, LedgerDir: filepath.Join(dir, "ledger"), LedgerSync: journal.SyncNever,
		ExposureCap: 10 * price, ReceiverAuthorizer: auth, SettleMargin: settleMargin,
		Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: 20 * time.Second},
		Now:    func() time.Time { return time.Now().Add(time.Duration(hw.ahead.Load())) }}
	if opts != nil {
		opts(&o)
	}
	hw.f, err = settle.New(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(dir, "settle.sock")
	l, err := settle.ListenUnix(sock)
	if err != nil {
		t.Fatal(err)
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- settle.Serve(sctx, hw.f.Handler(), slog.New(slog.DiscardHandler), l) }()
	t.Cleanup(func() { cancel(); <-served; _ = hw.f.Close() })
	fc, err := settleclient.New("unix:" + sock)
	if err != nil {
		t.Fatal(err)
	}
	// Authorizations valid 10 minutes: the facilitator's clock is moved minutes ahead.
	cfg := paywall.Config{Network: devchain.Network, Asset: ch.USDC.Hex(), PayTo: hw.payTo.Hex(), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, MaxTimeoutSeconds: 600, ReceiverAuthorizer: crypto.PubkeyToAddress(auth.PublicKey).Hex(),
		WithdrawDelaySeconds: batch.MinWithdrawDelay, MinDeposit: 5 * price}
	policy := paywall.DefaultPolicy()
	policy.SettleTimeoutSeconds = 20
	def, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	cat := testCatalog(t, hw.hang.entry(), *def.ByPath("/free/receipt"), *def.ByPath("/free/receipt/verify"))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	keys := testReceiptKeys(t, "http://"+ln.Addr().String())
	if err := receiptroutes.With(keys, fc, nil).Bind(cat); err != nil {
		t.Fatal(err)
	}
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.New(cfg, policy, fc, paywall.GateOptions{Receipts: keys}), Pay: cfg, Receipts: keys, Listener: ln})
	hw.world = &world{base: h.BaseURL, cfg: cfg, key: ch.Payer, cat: cat, receipts: keys}
	return hw
}

// advance moves the facilitator's clock by d (and the chain's too, when chainToo).
func (hw *heldWorld) advance(t *testing.T, d time.Duration, chainToo bool) {
	t.Helper()
	hw.ahead.Add(int64(d))
	if chainToo {
		if err := hw.ch.AdjustTime(d); err != nil {
			t.Fatal(err)
		}
	}
}

// channel opens the batch-settlement channel of key for path's requirements.
func (hw *heldWorld) channel(t *testing.T, key *ecdsa.PrivateKey, path string, salt byte) *batchpay.Channel {
	t.Helper()
	entry, _, err := hw.cat.Lookup("GET", path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := batchpay.Open(key, hw.cfg.BatchRequirements(entry), common.Hash{31: salt})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// payload is the payload a batchpay call built (the test fails if it could not).
func payload(t *testing.T) func(*x402.BatchRequest, error) *x402.BatchRequest {
	return func(req *x402.BatchRequest, err error) *x402.BatchRequest {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return req
	}
}

// batchCall calls path paying with req.
func (hw *heldWorld) batchCall(t *testing.T, path string, req *x402.BatchRequest) answer {
	t.Helper()
	hdr, err := x402.Encode(req.PaymentPayload)
	if err != nil {
		t.Fatal(err)
	}
	return hw.get(t, path, map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: hdr})
}

// inBackground runs call in a goroutine; its answer comes on the channel.
func inBackground(call func() answer) <-chan answer {
	out := make(chan answer, 1)
	go func() { out <- call() }()
	return out
}

// fundedKey is a fresh payer holding amount of the dev chain's USDC (and no ether: it only signs).
func (hw *heldWorld) fundedKey(t *testing.T, amount uint64) *ecdsa.PrivateKey {
	t.Helper()
	k, _ := crypto.GenerateKey()
	if err := hw.ch.Mint(context.Background(), crypto.PubkeyToAddress(k.PublicKey), amount); err != nil {
		t.Fatal(err)
	}
	return k
}

func (hw *heldWorld) onchainClaimed(t *testing.T, id common.Hash) uint64 {
	t.Helper()
	on, err := hw.f.ReadChannel(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return on.TotalClaimed.Uint64()
}

// TestVoucherRefusedWhenWithdrawalCanFinalizeFirst (issue 34, item 4): a payer starts a timed
// withdrawal of all its unclaimed escrow, waits out the delay, then sends a voucher, meaning
// to finalize right after the call is answered. The voucher is refused (402
// cumulative_exceeds_balance, the route not run, nothing charged), while one sent when the
// withdrawal was still far from finalizing was served; after the payer finalizes, every
// charge answered is claimed: claimed == charged.
func TestVoucherRefusedWhenWithdrawalCanFinalizeFirst(t *testing.T) {
	hw := newHeldWorld(t)
	ctx := context.Background()
	pc := hw.channel(t, hw.ch.Payer, "/v1/test/echo", 7)
	for i, req := range []*x402.BatchRequest{
		payload(t)(pc.Deposit(50*price, price, 1)), payload(t)(pc.Voucher(2 * price)), payload(t)(pc.Voucher(3 * price)),
	} {
		if a := hw.batchCall(t, "/v1/test/echo", req); a.status != 200 {
			t.Fatalf("call %d: %d %s", i+1, a.status, a.body)
		}
	}

	// The payer starts a timed withdrawal of everything unclaimed (50 × price: nothing is
	// claimed yet).
	sc := usdc.NewX402BatchSettlement()
	settlement := sc.Instance(hw.ch.Client(), batch.SettlementAddress)
	hw.transact(t, hw.ch.Payer, settlement, sc.PackInitiateWithdraw(boundConfig(&pc.Config), big.NewInt(50*price)), "initiateWithdraw")
	// Fifteen minutes from finalizing: the claimer has the time to claim this call's charge.
	if a := hw.batchCall(t, "/v1/test/echo", payload(t)(pc.Voucher(4*price))); a.status != 200 {
		t.Fatalf("voucher while the withdrawal is far from finalizing: %d %s", a.status, a.body)
	}
	// The claimer's urgent round claims what was answered so far.
	if rep, err := hw.f.ClaimOnce(ctx, settle.ClaimPolicy{}); err != nil || rep.Claimed.Uint64() != 4*price {
		t.Fatalf("claim round: %+v %v", rep, err)
	}

	// The delay is over: the withdrawal can finalize at any moment.
	hw.advance(t, time.Duration(batch.MinWithdrawDelay+1)*time.Second, true)
	a := hw.batchCall(t, "/v1/test/echo", payload(t)(pc.Voucher(5*price)))

	// The payer finalizes; the next claim round finds every answered call claimed.
	hw.transact(t, hw.ch.Payer, settlement, sc.PackFinalizeWithdraw(boundConfig(&pc.Config)), "finalizeWithdraw")
	if _, err := hw.f.ClaimOnce(ctx, settle.ClaimPolicy{}); err != nil {
		t.Fatal(err)
	}
	c, _ := hw.f.Channels().Get(pc.ID.Hex())
	if a.status != 402 || a.reason != x402.ReasonBatchExceedsBalance || strings.Contains(a.body, `"q":"x"`) || a.header.Get(x402.HeaderPaymentResponse) != "" {
		t.Errorf("voucher when the withdrawal can finalize: %d %q %s", a.status, a.reason, a.body)
	}
	if claimed := hw.onchainClaimed(t, pc.ID); claimed != c.Charged || c.Charged != 4*price || c.Calls != 4 {
		t.Fatalf("charged %d in %d calls, claimed %d on chain: want 4 calls, all claimed", c.Charged, c.Calls, claimed)
	}
	if got, _ := hw.ch.Balance(ctx, hw.payTo); got.Uint64() != 4*price {
		t.Fatalf("payTo received %s, want %d", got, 4*price)
	}
}

// boundConfig is a channel config as the contract binding takes it.
func boundConfig(c *batch.ChannelConfig) usdc.X402BatchSettlementChannelConfig {
	return usdc.X402BatchSettlementChannelConfig{Payer: c.Payer, PayerAuthorizer: c.PayerAuthorizer, Receiver: c.Receiver,
		ReceiverAuthorizer: c.ReceiverAuthorizer, Token: c.Token, WithdrawDelay: new(big.Int).SetUint64(c.WithdrawDelay), Salt: c.Salt}
}

// TestBatchHoldExpiresAfterItsLease (issue 34, item 7): a call's channel hold that the API
// never completes nor releases (its call stuck, or the API dead) ends with its lease, the
// route's deadline plus the settlement margin: the channel then serves the next voucher (before,
// it answered channel_busy until settle restarted). The stuck call, if it ever completes, is
// refused by settle (its hold is gone, though its voucher is the one the next call completed
// with) and the gate does not deliver it: one call charged, one delivered.
func TestBatchHoldExpiresAfterItsLease(t *testing.T) {
	hw := newHeldWorld(t)
	pc := hw.channel(t, hw.ch.Payer, "/v1/test/echo", 8)
	if a := hw.batchCall(t, "/v1/test/echo", payload(t)(pc.Deposit(50*price, price, 1))); a.status != 200 {
		t.Fatalf("deposit call: %d %s", a.status, a.body)
	}
	v2 := payload(t)(pc.Voucher(2 * price))
	stuck := inBackground(func() answer { return hw.batchCall(t, "/v1/test/hang", v2) })
	<-hw.hang.entered

	hw.advance(t, 30*time.Second+settleMargin+time.Second, false)
	if a := hw.batchCall(t, "/v1/test/echo", v2); a.status != 200 {
		t.Fatalf("the next voucher once the stuck call's lease ran out: %d %q %s", a.status, a.reason, a.body)
	}
	close(hw.hang.release)
	a := <-stuck
	if a.status == 200 || strings.Contains(a.body, `"held"`) || a.header.Get(x402.HeaderPaymentResponse) != "" {
		t.Fatalf("the call whose hold expired was delivered: %d %s", a.status, a.body)
	}
	if c, _ := hw.f.Channels().Get(pc.ID.Hex()); c.Charged != 2*price || c.Calls != 2 {
		t.Fatalf("channel: charged %d in %d calls, want 2 calls", c.Charged, c.Calls)
	}
	// The channel is free again.
	if a := hw.batchCall(t, "/v1/test/echo", payload(t)(pc.Voucher(3*price))); a.status != 200 {
		t.Fatalf("the call after: %d %q %s", a.status, a.reason, a.body)
	}
}

// TestExactReservationExpiresAfterItsLease (issue 34, suspected: confirmed): an exact payment
// reserved for a call that never ends counted against the payer's balance until settle
// restarted. With the lease (the route's deadline plus the settlement margin), once it has run
// out the payer's next payment is accepted; the stuck call, completed after, is refused and
// not delivered, and only the delivered call is settled.
func TestExactReservationExpiresAfterItsLease(t *testing.T) {
	hw := newHeldWorld(t)
	ctx := context.Background()
	key := hw.fundedKey(t, price+price/2) // covers one call, not two
	payer := crypto.PubkeyToAddress(key.PublicKey)
	stuck := inBackground(func() answer {
		return hw.get(t, "/v1/test/hang", nil, map[string]string{x402.HeaderPaymentSignature: hw.header(t, key, "/v1/test/hang", price, nil, nil)})
	})
	<-hw.hang.entered
	next := hw.header(t, key, "/v1/test/echo", price, nil, nil)
	if a := hw.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: next}); a.status != 402 || !reasonIs(a.reason, x402.ReasonInsufficientFunds) {
		t.Fatalf("a second call while the first holds the balance: %d %q", a.status, a.reason)
	}
	hw.advance(t, 30*time.Second+settleMargin+time.Second, false)
	if a := hw.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: next}); a.status != 200 {
		t.Fatalf("the next call once the stuck reservation's lease ran out: %d %q %s", a.status, a.reason, a.body)
	}
	close(hw.hang.release)
	a := <-stuck
	if a.status == 200 || strings.Contains(a.body, `"held"`) || a.receipt != nil && a.receipt.Success {
		t.Fatalf("the call whose reservation expired was delivered: %d %s", a.status, a.body)
	}
	var settled, open int
	for _, r := range hw.f.Ledger().List() {
		switch {
		case r.Status == "released":
		case strings.Contains(r.Route, "echo"):
			settled++
		default:
			open++
			t.Errorf("payment left %s on route %s", r.Status, r.Route)
		}
	}
	if settled != 1 || open != 0 {
		t.Fatalf("ledger: %d echo payments, %d others not released", settled, open)
	}
	untilPaid(t, func() bool { got, _ := hw.ch.Balance(ctx, hw.payTo); return got.Uint64() == price })
	if got, _ := hw.ch.Balance(ctx, payer); got.Uint64() != price/2 {
		t.Fatalf("payer holds %s, want %d", got, price/2)
	}
}

// untilPaid waits for the settlement queue (a minute at most).
func untilPaid(t *testing.T, paid func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !paid(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("not settled within a minute")
		}
	}
}

// slowTransfers holds the settlement of exact payments (the estimate of a call to the token)
// until release is closed, as a settlement queue busy or an RPC slow at that moment would.
type slowTransfers struct {
	chain.Backend
	token   common.Address
	release chan struct{}
}

func (s *slowTransfers) EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error) {
	if call.To != nil && *call.To == s.token {
		<-s.release
	}
	return s.Backend.EstimateGas(ctx, call)
}

// TestPendingDepositCountsAgainstExactBalance (issue 34, suspected: confirmed): a payer whose
// USDC a held batch deposit will move (the deposit runs when its call completes) passed the
// exact balance check with the same USDC and was delivered optimistically; when the deposit
// ran before the exact transfer was sent, the transfer failed: a call delivered, not collected.
// The pending deposit now counts against the balance: the exact call is refused before its
// work; the deposit's call completes.
func TestPendingDepositCountsAgainstExactBalance(t *testing.T) {
	slow := &slowTransfers{release: make(chan struct{})}
	hw := newHeldWorldOn(t, func(b chain.Backend) chain.Backend { slow.Backend = b; return slow })
	slow.token = hw.ch.USDC
	ctx := context.Background()
	key := hw.fundedKey(t, 5*price+price/2) // the deposit, and half a call
	payer := crypto.PubkeyToAddress(key.PublicKey)
	pc := hw.channel(t, key, "/v1/test/hang", 9)
	dep := inBackground(func() answer { return hw.batchCall(t, "/v1/test/hang", payload(t)(pc.Deposit(5*price, price, 1))) })
	<-hw.hang.entered

	exact := hw.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: hw.header(t, key, "/v1/test/echo", price, nil, nil)})
	close(hw.hang.release)
	if a := <-dep; a.status != 200 {
		t.Fatalf("the deposit's call: %d %q %s", a.status, a.reason, a.body)
	}
	close(slow.release)
	// Whatever the queue does with a payment it accepted, it has done it within the minute.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if len(hw.f.Ledger().List("queued", "broadcast")) == 0 {
			break
		}
	}
	var failed []string
	for _, r := range hw.f.Ledger().List("failed") {
		failed = append(failed, r.Reason)
	}
	if exact.status != 402 || !reasonIs(exact.reason, x402.ReasonInsufficientFunds) || len(failed) != 0 {
		t.Fatalf("exact call against USDC a pending deposit takes: %d %q %s; payments failed after delivery: %v", exact.status, exact.reason, exact.body, failed)
	}
	if got, _ := hw.ch.Balance(ctx, payer); got.Uint64() != price/2 {
		t.Fatalf("payer holds %s, want %d", got, price/2)
	}
}
