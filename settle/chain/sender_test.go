package chain_test

import (
	"context"
	"math/big"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/usdc"
)

func transferCall(t *testing.T, ch *devchain.Chain, amount int64) chain.Call {
	t.Helper()
	to, _ := crypto.GenerateKey()
	return chain.Call{To: ch.USDC, Data: usdc.NewTestUSDC().PackTransfer(crypto.PubkeyToAddress(to.PublicKey), big.NewInt(amount))}
}

// TestConcurrentSendsNeverCollide sends from one key from many goroutines: every transaction
// gets its own account nonce and every one is mined.
func TestConcurrentSendsNeverCollide(t *testing.T) {
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{Hot: nil})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	// The deployer holds minted tokens it can transfer; use it as the sending key.
	if err := ch.Mint(ctx, crypto.PubkeyToAddress(ch.Hot.PublicKey), 1_000_000); err != nil {
		t.Fatal(err)
	}
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
	ch, err := devchain.Start(ctx, devchain.Options{ManualMine: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	if err := ch.Mint(ctx, crypto.PubkeyToAddress(ch.Hot.PublicKey), 1_000_000); err != nil {
		t.Fatal(err)
	}
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
