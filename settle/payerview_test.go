package settle_test

import (
	"context"
	"crypto/ecdsa"
	"math/big"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/usdc"
	"github.com/peage/appliance/settle/x402"
)

// tokenBackend counts the facilitator's reads of the token (eth_call) and of the chain's head,
// holds the settlement queue's transactions at their estimation until released (so that no
// settlement moves the payer's balance or reads the head while a test counts), and holds one
// read of the head when asked.
type tokenBackend struct {
	chain.Backend
	token    common.Address
	reads    atomic.Int64
	heads    atomic.Int64
	release  chan struct{}
	holdHead atomic.Pointer[chan struct{}] // the next read of the head waits for it to close
	heldHead chan struct{}                 // told when a read of the head is held
}

func (b *tokenBackend) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	if n == nil {
		b.heads.Add(1)
		if hold := b.holdHead.Swap(nil); hold != nil {
			b.heldHead <- struct{}{}
			select {
			case <-*hold:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return b.Backend.HeaderByNumber(ctx, n)
}

func (b *tokenBackend) CallContract(ctx context.Context, call ethereum.CallMsg, block *big.Int) ([]byte, error) {
	if call.To != nil && *call.To == b.token {
		b.reads.Add(1)
	}
	return b.Backend.CallContract(ctx, call, block)
}

func (b *tokenBackend) EstimateGas(ctx context.Context, call ethereum.CallMsg) (uint64, error) {
	select {
	case <-b.release:
	case <-ctx.Done():
		return 0, ctx.Err()
	}
	return b.Backend.EstimateGas(ctx, call)
}

// payerViewWorld is a heldWorld whose payer view is polled only when the test says so, whose
// reads of the token are counted, and whose settlements wait.
type payerViewWorld struct {
	*heldWorld
	b *tokenBackend
}

func newPayerViewWorld(t *testing.T) *payerViewWorld {
	pw := &payerViewWorld{}
	release := make(chan struct{})
	pw.heldWorld = newHeldWorldWith(t, func(b chain.Backend) chain.Backend {
		pw.b = &tokenBackend{Backend: b, release: release, heldHead: make(chan struct{}, 1)}
		return pw.b
	}, func(o *settle.Options) {
		o.ViewPoll = -1
		pw.b.token = o.Asset
	})
	return pw
}

func (pw *payerViewWorld) sync(t *testing.T) {
	t.Helper()
	if err := pw.f.SyncPayerView(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pay makes one exact call of /v1/test/echo paid by key and returns its answer and the
// facilitator's reads of the token for it.
func (pw *payerViewWorld) pay(t *testing.T, key *ecdsa.PrivateKey) (answer, int64) {
	t.Helper()
	h := pw.header(t, key, "/v1/test/echo", price, nil, nil)
	before := pw.b.reads.Load()
	a := pw.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: h})
	return a, pw.b.reads.Load() - before
}

// transferOut sends amount of the payer's USDC to a fresh address, as the payer's wallet would
// outside this server.
func (pw *payerViewWorld) transferOut(t *testing.T, key *ecdsa.PrivateKey, amount uint64) {
	t.Helper()
	to, _ := crypto.GenerateKey()
	tok := usdc.NewTestUSDC()
	pw.transact(t, key, tok.Instance(pw.ch.Client(), pw.ch.USDC),
		tok.PackTransfer(crypto.PubkeyToAddress(to.PublicKey), new(big.Int).SetUint64(amount)), "payer's transfer")
}

// TestExactCallFromThePayerView (issue 33, item 3): with the payer view polled, an exact call
// reads the token once (the nonce's state, at the view's head) where it read it four times
// (nonce and balance when reserved, both again when completed): the balance comes from the
// view and the completion asks the chain for its head block only. A Transfer from the payer
// made outside this server is seen by the completion (the balance read again), and the view is
// not trusted, the token read as before, when it has not polled within its lag bound or when
// the block it processed was replaced (a reorg).
func TestExactCallFromThePayerView(t *testing.T) {
	pw := newPayerViewWorld(t)
	ctx := context.Background()
	steps := []struct {
		name   string
		before func(t *testing.T)
		reads  int64
	}{
		{"view never polled: every read, as before", nil, 4},
		{"view polled: the nonce and the balance read at its head, none at completion", func(t *testing.T) { pw.sync(t) }, 2},
		{"the payer's next call: its nonce only", nil, 1},
		{"a transfer from the payer the view has not seen: its balance read again at completion",
			func(t *testing.T) { pw.transferOut(t, pw.ch.Payer, price) }, 2},
		{"from the view again", nil, 1},
		{"view older than its lag bound: every read", func(t *testing.T) { pw.advance(t, settle.DefaultViewLag+time.Second, false) }, 4},
		{"the completion's poll made the view fresh again", nil, 1},
		{"the block the view processed replaced: the completion reads the chain", func(t *testing.T) {
			pw.ch.Commit() // an empty block, the one the reorg replaces
			pw.sync(t)
			head, err := pw.ch.Client().HeaderByNumber(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := pw.ch.Fork(head.ParentHash); err != nil {
				t.Fatal(err)
			}
			if err := pw.ch.AdjustTime(time.Second); err != nil {
				t.Fatal(err)
			}
			pw.ch.Commit()
			if replaced, err := pw.ch.Client().HeaderByNumber(ctx, head.Number); err != nil || replaced.Hash() == head.Hash() {
				t.Fatalf("block %s was not replaced: %v", head.Number, err)
			}
		}, 3},
		{"after the reorg the view starts over: the balance read once more", nil, 2},
		{"from the view again", nil, 1},
	}
	for i, s := range steps {
		if s.before != nil {
			s.before(t)
		}
		a, reads := pw.pay(t, pw.ch.Payer)
		if a.status != 200 || reads != s.reads {
			t.Errorf("call %d, %s: %d %s, %d reads of the token, want 200 and %d", i+1, s.name, a.status, a.body, reads, s.reads)
		}
	}
	if owed := pw.f.Ledger().List(ledger.Queued); len(owed) != len(steps) {
		t.Fatalf("%d payments owed after %d calls served", len(owed), len(steps))
	}
}

// TestPayerViewShortBalanceIsReadAgain (issue 33, item 3): the view does not follow Transfers
// to a payer, so a balance it finds short of what the payer owes is read at the latest block
// before the call is refused: a payer whose balance is spent is refused after that read (402
// insufficient_funds, nothing reserved), and once funded on chain (a mint the view does not
// see) is served.
func TestPayerViewShortBalanceIsReadAgain(t *testing.T) {
	pw := newPayerViewWorld(t)
	payer := pw.fundedKey(t, price)
	pw.sync(t)
	if a, reads := pw.pay(t, payer); a.status != 200 || reads != 2 {
		t.Fatalf("first call: %d %s, %d reads, want 200 after 2", a.status, a.body, reads)
	}
	a, reads := pw.pay(t, payer)
	if a.status != 402 || !reasonIs(a.reason, x402.ReasonInsufficientFunds) || reads != 2 {
		t.Fatalf("call beyond the balance: %d %q %s, %d reads, want 402 insufficient_funds after the nonce and a fresh balance", a.status, a.reason, a.body, reads)
	}
	if err := pw.ch.Mint(context.Background(), crypto.PubkeyToAddress(payer.PublicKey), 5*price); err != nil {
		t.Fatal(err)
	}
	// Reserved on a fresh read; completed on another at the view's head, the mint's block.
	if a, reads := pw.pay(t, payer); a.status != 200 || reads != 3 {
		t.Fatalf("call after the mint: %d %q %s, %d reads, want 200 after 3", a.status, a.reason, a.body, reads)
	}
	if owed := pw.f.Ledger().Exposure(crypto.PubkeyToAddress(payer.PublicKey).Hex()); owed != 2*price {
		t.Fatalf("payer owes %d, want %d", owed, 2*price)
	}
}

// TestCompletionsShareAHeadRound (issue 33, items 3 and 4): completions that arrive while a
// read of the chain's head is under way wait for the next one together, which starts after they
// arrived: four concurrent exact calls read the head twice, not four times, and are served.
func TestCompletionsShareAHeadRound(t *testing.T) {
	pw := newPayerViewWorld(t)
	pw.sync(t)
	if a, _ := pw.pay(t, pw.ch.Payer); a.status != 200 {
		t.Fatalf("first call: %d %s", a.status, a.body)
	}
	hdrs := make([]string, 4)
	for i := range hdrs {
		hdrs[i] = pw.header(t, pw.ch.Payer, "/v1/test/echo", price, nil, nil)
	}
	var answered atomic.Int32
	call := func(h string) func() answer {
		return func() answer {
			defer answered.Add(1)
			return pw.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: h})
		}
	}
	hold := make(chan struct{})
	pw.b.holdHead.Store(&hold)
	before := pw.b.heads.Load()
	answers := []<-chan answer{inBackground(call(hdrs[0]))}
	<-pw.b.heldHead // the first completion's round reads the head
	for _, h := range hdrs[1:] {
		answers = append(answers, inBackground(call(h)))
	}
	// Until the three wait for the next round (or one is answered without it: the test fails).
	for pw.f.NextHeadRoundWaiting() < len(hdrs)-1 && answered.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(hold)
	for i, c := range answers {
		if a := <-c; a.status != 200 {
			t.Errorf("call %d: %d %s", i+1, a.status, a.body)
		}
	}
	if n := pw.b.heads.Load() - before; n != 2 {
		t.Fatalf("%d reads of the head for %d completions, want 2", n, len(hdrs))
	}
}
