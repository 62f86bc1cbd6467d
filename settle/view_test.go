package settle_test

import (
	"context"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"

	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// countingBackend counts the facilitator's reads of the settlement contract.
type countingBackend struct {
	chain.Backend
	reads atomic.Int64
}

func (b *countingBackend) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if call.To != nil && *call.To == batch.SettlementAddress {
		b.reads.Add(1)
	}
	return b.Backend.CallContract(ctx, call, block)
}

// viewWorld is a heldWorld whose channel view is polled only when the test says so, and whose
// facilitator's reads of the settlement contract are counted.
type viewWorld struct {
	*heldWorld
	b *countingBackend
}

func newViewWorld(t *testing.T) *viewWorld {
	vw := &viewWorld{}
	vw.heldWorld = newHeldWorldWith(t, func(b chain.Backend) chain.Backend {
		vw.b = &countingBackend{Backend: b}
		return vw.b
	}, func(o *settle.Options) { o.ViewPoll = -1 })
	return vw
}

func (vw *viewWorld) sync(t *testing.T) {
	t.Helper()
	if err := vw.f.SyncView(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// call pays path with req and returns the answer and how many reads of the settlement
// contract the facilitator made for it.
func (vw *viewWorld) call(t *testing.T, req *x402.BatchRequest) (answer, int64) {
	t.Helper()
	before := vw.b.reads.Load()
	a := vw.batchCall(t, "/v1/test/echo", req)
	return a, vw.b.reads.Load() - before
}

// payerTransact sends one call of the settlement contract from the dev chain's payer.
func (vw *viewWorld) payerTransact(t *testing.T, data []byte) {
	t.Helper()
	vw.transact(t, vw.ch.Payer, usdc.NewX402BatchSettlement().Instance(vw.ch.Client(), batch.SettlementAddress), data, "payer's transaction")
}

// TestVoucherFromTheView (issue 33, item 3): once the channel view has processed the
// contract's logs, a voucher is reserved with no read of the chain (before, each read the
// channel three times); a view that has not polled for longer than its lag bound is not
// trusted, and the voucher reads the chain as before.
func TestVoucherFromTheView(t *testing.T) {
	vw := newViewWorld(t)
	pc := vw.channel(t, vw.ch.Payer, "/v1/test/echo", 9)
	vw.sync(t)
	if a, _ := vw.call(t, payload(t)(pc.Deposit(50*price, price, 1))); a.status != 200 {
		t.Fatalf("deposit call: %d %s", a.status, a.body)
	}
	vw.sync(t) // sees the deposit: the channel's entry is dropped
	steps := []struct {
		name  string
		max   uint64
		reads int64
		lag   time.Duration // the clock moves this far first (not the chain's)
		sync  bool          // then the view polls
	}{
		{"first voucher after the deposit's event", 2 * price, 3, 0, false},
		{"next voucher, from the view", 3 * price, 0, 0, false},
		{"and the next", 4 * price, 0, 0, false},
		{"view older than its lag bound", 5 * price, 3, settle.DefaultViewLag + time.Second, false},
		{"view polled, from the view again", 6 * price, 0, 0, true},
		// No block for a withdrawal delay: a withdrawal started right after the view's head
		// could finalize before this call's claim.
		{"head block older than the delay allows", 7 * price, 3, time.Duration(batch.MinWithdrawDelay) * time.Second, true},
	}
	for _, s := range steps {
		vw.advance(t, s.lag, false)
		if s.sync {
			vw.sync(t)
		}
		a, reads := vw.call(t, payload(t)(pc.Voucher(s.max)))
		if a.status != 200 || reads != s.reads {
			t.Errorf("%s: %d %s, %d reads of the channel, want 200 and %d", s.name, a.status, a.body, reads, s.reads)
		}
	}
	if c, _ := vw.f.Channels().Get(pc.ID.Hex()); c.Charged != 7*price || c.Calls != 7 {
		t.Fatalf("channel: charged %d in %d calls, want 7 calls", c.Charged, c.Calls)
	}
}

// TestViewAppliesAWithdrawal (issue 33, items 3 and 4): a withdrawal the payer starts on chain
// is seen through the contract's logs: the channel is read again, and once the withdrawal can
// finalize before a call's claim lands, the view alone refuses the voucher above what the
// withdrawal leaves (402 cumulative_exceeds_balance, nothing charged), as a read would.
func TestViewAppliesAWithdrawal(t *testing.T) {
	vw := newViewWorld(t)
	pc := vw.channel(t, vw.ch.Payer, "/v1/test/echo", 10)
	vw.sync(t)
	if a, _ := vw.call(t, payload(t)(pc.Deposit(50*price, price, 1))); a.status != 200 {
		t.Fatalf("deposit call: %d %s", a.status, a.body)
	}
	vw.sync(t)
	if a, _ := vw.call(t, payload(t)(pc.Voucher(2*price))); a.status != 200 {
		t.Fatalf("voucher: %d %s", a.status, a.body)
	}
	vw.payerTransact(t, usdc.NewX402BatchSettlement().PackInitiateWithdraw(boundConfig(&pc.Config), big.NewInt(48*price)))
	vw.sync(t)
	if a, reads := vw.call(t, payload(t)(pc.Voucher(3*price))); a.status != 200 || reads != 3 {
		t.Fatalf("voucher after the withdrawal's event, far from its finalizing: %d %s, %d reads, want 200 and 3", a.status, a.body, reads)
	}
	vw.advance(t, time.Duration(batch.MinWithdrawDelay+1)*time.Second, true)
	vw.sync(t) // a new block, no event: the entry with the pending withdrawal stays
	a, reads := vw.call(t, payload(t)(pc.Voucher(4*price)))
	if a.status != 402 || a.reason != x402.ReasonBatchExceedsBalance || reads != 0 {
		t.Errorf("voucher once the withdrawal can finalize: %d %q %s, %d reads, want 402 from the view", a.status, a.reason, a.body, reads)
	}
	if c, _ := vw.f.Channels().Get(pc.ID.Hex()); c.Charged != 3*price || c.Calls != 3 {
		t.Fatalf("channel: charged %d in %d calls, want 3 calls", c.Charged, c.Calls)
	}
}

// TestDepositSeenLateIsReadAgain (issue 33, item 3): a deposit made on chain by the payer
// (not through this server) that the view has not seen yet only makes the view poorer: the
// voucher above the balance it knows is checked against a fresh read and served.
func TestDepositSeenLateIsReadAgain(t *testing.T) {
	vw := newViewWorld(t)
	pc := vw.channel(t, vw.ch.Payer, "/v1/test/echo", 11)
	vw.sync(t)
	if a, _ := vw.call(t, payload(t)(pc.Deposit(5*price, price, 1))); a.status != 200 {
		t.Fatalf("deposit call: %d %s", a.status, a.body)
	}
	vw.sync(t)
	for max := uint64(2); max <= 5; max++ {
		if a, _ := vw.call(t, payload(t)(pc.Voucher(max*price))); a.status != 200 {
			t.Fatalf("voucher %d: %d %s", max, a.status, a.body)
		}
	}
	topUp(t, vw, pc, 20*price)
	a, reads := vw.call(t, payload(t)(pc.Voucher(6*price)))
	if a.status != 200 || reads != 3 {
		t.Fatalf("voucher above the balance the view knows: %d %q %s, %d reads, want 200 after one read", a.status, a.reason, a.body, reads)
	}
	if a, reads := vw.call(t, payload(t)(pc.Voucher(26*price))); a.status != 402 || a.reason != x402.ReasonBatchExceedsBalance || reads != 3 {
		t.Fatalf("voucher above the balance on chain: %d %q %s, %d reads, want 402 after one read", a.status, a.reason, a.body, reads)
	}
}

// topUp deposits amount into pc's channel from the payer's own account, through the contract's
// ERC-3009 collector, as a payer's wallet would outside this server.
func topUp(t *testing.T, vw *viewWorld, pc *batchpay.Channel, amount uint64) {
	t.Helper()
	req, err := pc.Deposit(amount, 0, 2)
	if err != nil {
		t.Fatal(err)
	}
	d, invalid := batch.ParseDeposit(req.PaymentPayload.Payload.Deposit, &pc.Config, pc.ID)
	if invalid != nil {
		t.Fatal(invalid)
	}
	vw.payerTransact(t, usdc.NewX402BatchSettlement().PackDeposit(boundConfig(&pc.Config), new(big.Int).SetUint64(amount), batch.ERC3009CollectorAddress, d.CollectorData()))
}

// TestViewStartsOverOnAReorg (issue 33, item 3): when the block the view last processed is
// replaced (a reorg), which logs went away is not known: every entry is dropped and the next
// voucher reads its channel again.
func TestViewStartsOverOnAReorg(t *testing.T) {
	vw := newViewWorld(t)
	ctx := context.Background()
	pc := vw.channel(t, vw.ch.Payer, "/v1/test/echo", 12)
	vw.sync(t)
	if a, _ := vw.call(t, payload(t)(pc.Deposit(50*price, price, 1))); a.status != 200 {
		t.Fatalf("deposit call: %d %s", a.status, a.body)
	}
	vw.ch.Commit() // an empty block, the one the reorg replaces
	vw.sync(t)
	if a, reads := vw.call(t, payload(t)(pc.Voucher(2*price))); a.status != 200 || reads != 3 {
		t.Fatalf("voucher after the deposit's event: %d %s, %d reads", a.status, a.body, reads)
	}
	if a, reads := vw.call(t, payload(t)(pc.Voucher(3*price))); a.status != 200 || reads != 0 {
		t.Fatalf("voucher from the view: %d %s, %d reads", a.status, a.body, reads)
	}
	head, err := vw.ch.Client().HeaderByNumber(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := vw.ch.Fork(head.ParentHash); err != nil {
		t.Fatal(err)
	}
	// Another block at the same height (a second later), and one after it.
	if err := vw.ch.AdjustTime(time.Second); err != nil {
		t.Fatal(err)
	}
	vw.ch.Commit()
	if replaced, err := vw.ch.Client().HeaderByNumber(ctx, head.Number); err != nil || replaced.Hash() == head.Hash() {
		t.Fatalf("block %s was not replaced: %v", head.Number, err)
	}
	vw.advance(t, time.Second, false)
	vw.sync(t)
	if a, reads := vw.call(t, payload(t)(pc.Voucher(4*price))); a.status != 200 || reads != 3 {
		t.Fatalf("voucher after the reorg: %d %s, %d reads of the channel, want 200 after 3", a.status, a.body, reads)
	}
}
