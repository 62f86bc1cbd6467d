package chain_test

import (
	"context"
	"fmt"
	"math/big"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/usdc"
)

func transferCall(t testing.TB, ch *devchain.Chain, amount int64) chain.Call {
	t.Helper()
	to, _ := crypto.GenerateKey()
	return chain.Call{To: ch.USDC, Data: usdc.NewTestUSDC().PackTransfer(crypto.PubkeyToAddress(to.PublicKey), big.NewInt(amount))}
}

// fundedChain starts an embedded chain whose hot key holds minted USDC to send.
func fundedChain(t *testing.T, o devchain.Options) *devchain.Chain {
	t.Helper()
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ch.Close() })
	if err := ch.Mint(ctx, crypto.PubkeyToAddress(ch.Hot.PublicKey), 1_000_000); err != nil {
		t.Fatal(err)
	}
	return ch
}

// TestConcurrentSendsNeverCollide sends from one key from many goroutines: every transaction
// gets its own account nonce and every one is mined.
func TestConcurrentSendsNeverCollide(t *testing.T) {
	ctx := context.Background()
	ch := fundedChain(t, devchain.Options{Hot: nil})
	s, err := chain.NewSender(ctx, ch.Client(), ch.Hot, chain.SenderOptions{PollInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const n = 16
	var wg sync.WaitGroup
	nonces := make(chan uint64, n)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := transferCall(t, ch, 10)
			gas, err := s.Estimate(ctx, c)
			if err != nil {
				t.Error(err)
				return
			}
			tx, err := s.Send(ctx, c, gas, func(*types.Transaction) error { return nil })
			if err != nil {
				t.Error(err)
				return
			}
			r, err := s.Wait(ctx, tx, func(*types.Transaction) error { return nil })
			if err != nil || r.Status != types.ReceiptStatusSuccessful {
				t.Errorf("receipt: %v", err)
				return
			}
			nonces <- tx.Nonce()
		}()
	}
	wg.Wait()
	close(nonces)
	seen := map[uint64]bool{}
	for n := range nonces {
		if seen[n] {
			t.Fatalf("account nonce %d used twice", n)
		}
		seen[n] = true
	}
	if len(seen) != n {
		t.Fatalf("%d transactions mined, want %d", len(seen), n)
	}
}

// TestStuckTransactionIsReplaced holds a transaction unmined until the sender has re-priced
// it, then mines: the replacement (same account nonce, higher fees) is what lands.
func TestStuckTransactionIsReplaced(t *testing.T) {
	ctx := context.Background()
	ch := fundedChain(t, devchain.Options{ManualMine: true})
	s, err := chain.NewSender(ctx, ch.Client(), ch.Hot, chain.SenderOptions{PollInterval: 2 * time.Millisecond, ReplaceAfter: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := transferCall(t, ch, 10)
	gas, err := s.Estimate(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var signed []*types.Transaction
	replaced := make(chan struct{})
	record := func(tx *types.Transaction) error {
		mu.Lock()
		defer mu.Unlock()
		signed = append(signed, tx)
		if len(signed) == 3 { // the first replacement was broadcast before the second was signed
			close(replaced)
		}
		return nil
	}
	tx, err := s.Send(ctx, c, gas, record)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-replaced
		ch.Commit()
	}()
	r, err := s.Wait(ctx, tx, record)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if r.TxHash == signed[0].Hash() {
		t.Fatal("the original, not a replacement, was mined")
	}
	var found bool
	for _, tx := range signed[1:] {
		if tx.Hash() == r.TxHash {
			found = true
			if tx.Nonce() != signed[0].Nonce() || tx.GasTipCap().Cmp(signed[0].GasTipCap()) <= 0 {
				t.Fatalf("replacement nonce %d tip %s vs original %d %s", tx.Nonce(), tx.GasTipCap(), signed[0].Nonce(), signed[0].GasTipCap())
			}
		}
	}
	if !found || r.Status != types.ReceiptStatusSuccessful {
		t.Fatalf("mined %s is none of the replacements", r.TxHash.Hex())
	}
}

// laggingHead is a node that answers receipts before its latest block includes them, as geth
// does for a moment and a load-balanced endpoint may for longer: its head stays lag blocks
// behind until released.
type laggingHead struct {
	chain.Backend
	mu       sync.Mutex
	released bool
	asked    int
}

func (b *laggingHead) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	h, err := b.Backend.HeaderByNumber(ctx, n)
	b.mu.Lock()
	defer b.mu.Unlock()
	if err != nil || n != nil || b.released {
		return h, err
	}
	b.asked++
	lagged := types.CopyHeader(h)
	lagged.Number = new(big.Int).Sub(h.Number, big.NewInt(1))
	return lagged, nil
}

// TestWaitReturnsOnceLatestIncludesTheReceipt: a receipt whose block the node's latest has not
// reached is waited on, so a read that follows Wait sees the transaction.
func TestWaitReturnsOnceLatestIncludesTheReceipt(t *testing.T) {
	ctx := context.Background()
	ch := fundedChain(t, devchain.Options{})
	node := &laggingHead{Backend: ch.Client()}
	s, err := chain.NewSender(ctx, node, ch.Hot, chain.SenderOptions{PollInterval: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := transferCall(t, ch, 10)
	gas, err := s.Estimate(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Send(ctx, c, gas, func(*types.Transaction) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan *types.Receipt, 1)
	go func() {
		r, err := s.Wait(ctx, tx, func(*types.Transaction) error { return nil })
		if err != nil {
			t.Error(err)
		}
		done <- r
	}()
	for {
		node.mu.Lock()
		asked := node.asked
		node.mu.Unlock()
		if asked >= 3 {
			break
		}
		select {
		case r := <-done:
			t.Fatalf("Wait returned receipt of block %v while the node's latest was behind it", r.BlockNumber)
		case <-time.After(time.Millisecond):
		}
	}
	node.mu.Lock()
	node.released = true
	node.mu.Unlock()
	select {
	case r := <-done:
		if r == nil || r.Status != types.ReceiptStatusSuccessful {
			t.Fatalf("receipt %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not return once the node's latest included the receipt")
	}
}

// countingNode counts a node's answers to the receipt waits: receipt lookups, and reads of the
// head, each of which it holds until the test lets it through (once gated), so the test
// decides when the head is read and sees every read that is waiting.
type countingNode struct {
	chain.Backend
	gated    atomic.Bool
	receipts atomic.Int64
	heads    atomic.Int64
	asked    chan struct{} // a head read waits here to be let through
}

func (b *countingNode) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	if n == nil && b.gated.Load() {
		b.heads.Add(1)
		select {
		case b.asked <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return b.Backend.HeaderByNumber(ctx, n)
}

func (b *countingNode) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	b.receipts.Add(1)
	return b.Backend.TransactionReceipt(ctx, h)
}

// sendTransfer sends a USDC transfer from the hot key, its gas estimated, recording nothing.
func sendTransfer(t *testing.T, s *chain.Sender, ch *devchain.Chain) *types.Transaction {
	t.Helper()
	ctx := context.Background()
	c := transferCall(t, ch, 10)
	gas, err := s.Estimate(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := s.Send(ctx, c, gas, func(*types.Transaction) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// awaitAll waits for each of txs at once; the channel closes once every wait has returned
// its transaction's successful receipt (or failed the test).
func awaitAll(t *testing.T, s *chain.Sender, txs []*types.Transaction) <-chan struct{} {
	var wg sync.WaitGroup
	for _, tx := range txs {
		wg.Go(func() {
			r, err := s.Wait(context.Background(), tx, func(*types.Transaction) error { return nil })
			if err != nil || r.Status != types.ReceiptStatusSuccessful || r.TxHash != tx.Hash() {
				t.Errorf("receipt %+v: %v", r, err)
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	return done
}

// lookups waits until the node has answered want receipt lookups, failing as soon as it has
// answered more.
func (b *countingNode) lookups(t *testing.T, want int64) {
	t.Helper()
	for end := time.Now().Add(10 * time.Second); b.receipts.Load() != want; time.Sleep(time.Millisecond) {
		if got := b.receipts.Load(); got > want || time.Now().After(end) {
			t.Fatalf("%d receipt lookups, want %d", got, want)
		}
	}
}

// letRead lets one held read of the head through.
func (b *countingNode) letRead(t *testing.T) {
	t.Helper()
	select {
	case <-b.asked:
	case <-time.After(10 * time.Second):
		t.Fatalf("no read of the head while transactions are awaited (%d receipt lookups so far)", b.receipts.Load())
	}
}

// readsUntil lets every read of the head through until done closes.
func (b *countingNode) readsUntil(t *testing.T, done <-chan struct{}) {
	t.Helper()
	for {
		select {
		case <-done:
			return
		case <-b.asked:
		case <-time.After(10 * time.Second):
			t.Fatal("the waits did not return once their block was the head")
		}
	}
}

// TestWaitsShareOneHeadRead: many transactions awaited at once cost one read of the head per
// poll, not one per transaction, and a transaction's receipt is asked for again only when the
// head has moved: at its start, once the first read tells the head, and then not while the
// chain mines nothing; after the block that mines them all, once more each.
func TestWaitsShareOneHeadRead(t *testing.T) {
	ch := fundedChain(t, devchain.Options{ManualMine: true})
	node := &countingNode{Backend: ch.Client(), asked: make(chan struct{})}
	s, err := chain.NewSender(context.Background(), node, ch.Hot, chain.SenderOptions{PollInterval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const n, rounds = 16, 5
	txs := make([]*types.Transaction, n)
	for i := range txs {
		txs[i] = sendTransfer(t, s, ch)
	}
	node.gated.Store(true)
	done := awaitAll(t, s, txs)
	node.lookups(t, n) // each wait asks at its start, the first read of the head held
	node.letRead(t)    // the head is known: each asks again, as its block may be that one
	node.lookups(t, 2*n)
	for range rounds {
		node.letRead(t)
	}
	// The head has not moved since: no wait asked again, and the head was read once a round,
	// the next read at most waiting.
	if got := node.receipts.Load(); got != 2*n {
		t.Fatalf("%d receipt lookups for %d transactions on a head that did not move", got, n)
	}
	if got := node.heads.Load(); got > rounds+2 {
		t.Fatalf("%d reads of the head in %d rounds for %d waits", got, rounds+1, n)
	}
	ch.Commit() // one block mines all of them
	node.readsUntil(t, done)
	if got := node.receipts.Load(); got != 3*n {
		t.Fatalf("%d receipt lookups, want %d: once more each after the head moved", got, 3*n)
	}
}

// tipCounting counts the reads a send prices its fees with, over a countingNode.
type tipCounting struct {
	*countingNode
	tips       atomic.Int64
	headerRead atomic.Int64 // latest headers read while the gate is open
}

func (b *tipCounting) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	b.tips.Add(1)
	return b.countingNode.SuggestGasTipCap(ctx)
}

func (b *tipCounting) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	if n == nil && !b.gated.Load() {
		b.headerRead.Add(1)
	}
	return b.countingNode.HeaderByNumber(ctx, n)
}

// TestSendsAtOneHeadReadTheTipOnce: sends at one head read the tip and the latest header once
// between them, not once each; after a block, read by the head watch, the next send reads the
// tip once more and takes the base fee from the watch's header.
func TestSendsAtOneHeadReadTheTipOnce(t *testing.T) {
	ctx := context.Background()
	ch := fundedChain(t, devchain.Options{ManualMine: true})
	node := &tipCounting{countingNode: &countingNode{Backend: ch.Client(), asked: make(chan struct{})}}
	// An interval the test does not reach: what was read stays fresh, and the watch reads the
	// head when a wait joins or asks.
	s, err := chain.NewSender(ctx, node, ch.Hot, chain.SenderOptions{PollInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	reads := func(when string, tips, headers int64) {
		t.Helper()
		if gotT, gotH := node.tips.Load(), node.headerRead.Load(); gotT != tips || gotH != headers {
			t.Fatalf("%s: %d tips and %d latest headers read by the sends, want %d and %d", when, gotT, gotH, tips, headers)
		}
	}
	first := sendTransfer(t, s, ch)
	reads("a send with nothing fresh", 1, 1)
	const m = 8
	for range m {
		sendTransfer(t, s, ch)
	}
	reads(fmt.Sprintf("%d more sends at that head", m), 1, 1)

	ch.Commit()
	node.gated.Store(true) // the watch's reads are the test's to let through, and not counted
	node.readsUntil(t, awaitAll(t, s, []*types.Transaction{first}))
	node.gated.Store(false)
	sendTransfer(t, s, ch)
	reads("a send after the watch read a new head", 2, 1)
}

// blockCounting is a countingNode that also serves eth_getBlockReceipts, counting the
// requests, or refuses it as an endpoint without the method does.
type blockCounting struct {
	*countingNode
	refuse bool
	blocks atomic.Int64
}

func (b *blockCounting) BlockReceipts(ctx context.Context, at rpc.BlockNumberOrHash) ([]*types.Receipt, error) {
	b.blocks.Add(1)
	if b.refuse {
		// An endpoint that serves no such method, answering over JSON-RPC.
		return ethclient.NewClient(rpc.DialInProc(rpc.NewServer())).BlockReceipts(ctx, at)
	}
	return b.countingNode.Backend.(chain.BlockReceiptsReader).BlockReceipts(ctx, at)
}

// TestBlockReceiptsServeAllWaits: once the head is known, the receipts of n transactions
// mined in one block cost one eth_getBlockReceipts for that block and no lookup of their own;
// blocks the head rose over between two reads are all read, up to a bound past which each
// wait looks up its own again; an endpoint that refuses the method leaves each wait to look
// its receipts up, and is asked once.
func TestBlockReceiptsServeAllWaits(t *testing.T) {
	const n = 16
	for _, tc := range []struct {
		name      string
		refuse    bool
		newBlocks int   // blocks mined between two reads of the head, the first mining all
		blocks    int64 // block receipt requests wanted
		lookups   int64 // receipt lookups wanted
	}{
		{name: "one block", newBlocks: 1, blocks: 1, lookups: 2 * n},
		{name: "blocks skipped between reads", newBlocks: 3, blocks: 3, lookups: 2 * n},
		{name: "past the bound", newBlocks: 9, blocks: 0, lookups: 3 * n},
		{name: "method refused", refuse: true, newBlocks: 1, blocks: 1, lookups: 3 * n},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			ch := fundedChain(t, devchain.Options{ManualMine: true})
			node := &blockCounting{countingNode: &countingNode{Backend: ch.Client(), asked: make(chan struct{})}, refuse: tc.refuse}
			s, err := chain.NewSender(ctx, node, ch.Hot, chain.SenderOptions{PollInterval: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			txs := make([]*types.Transaction, n)
			for i := range txs {
				txs[i] = sendTransfer(t, s, ch)
			}
			node.gated.Store(true)
			done := awaitAll(t, s, txs)
			node.lookups(t, n) // each wait's first look
			node.letRead(t)    // the first read of the head: no block before it was read, each looks again
			node.lookups(t, 2*n)
			for range tc.newBlocks {
				ch.Commit()
			}
			node.readsUntil(t, done)
			if got := node.receipts.Load(); got != tc.lookups {
				t.Errorf("%d receipt lookups for %d transactions, want %d", got, n, tc.lookups)
			}
			if tc.refuse { // a later rise of the head does not ask again
				node.gated.Store(false)
				tx := sendTransfer(t, s, ch)
				go ch.Commit()
				if r, err := s.Wait(ctx, tx, func(*types.Transaction) error { return nil }); err != nil || r.Status != types.ReceiptStatusSuccessful {
					t.Fatalf("receipt %+v: %v", r, err)
				}
			}
			if got := node.blocks.Load(); got != tc.blocks {
				t.Errorf("%d block receipt requests for %d new blocks, want %d", got, tc.newBlocks, tc.blocks)
			}
		})
	}
}
