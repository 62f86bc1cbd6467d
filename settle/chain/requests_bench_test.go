package chain_test

import (
	"context"
	"math/big"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/rpc"

	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
)

// requestCounter counts an endpoint's requests by JSON-RPC method.
type requestCounter struct {
	chain.Backend
	mu sync.Mutex
	by map[string]int
}

func (c *requestCounter) count(method string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.by[method]++
}

func (c *requestCounter) SuggestGasTipCap(ctx context.Context) (*big.Int, error) {
	c.count("eth_maxPriorityFeePerGas")
	return c.Backend.SuggestGasTipCap(ctx)
}

func (c *requestCounter) HeaderByNumber(ctx context.Context, n *big.Int) (*types.Header, error) {
	c.count("eth_getBlockByNumber")
	return c.Backend.HeaderByNumber(ctx, n)
}

func (c *requestCounter) PendingNonceAt(ctx context.Context, a common.Address) (uint64, error) {
	c.count("eth_getTransactionCount")
	return c.Backend.PendingNonceAt(ctx, a)
}

func (c *requestCounter) EstimateGas(ctx context.Context, m ethereum.CallMsg) (uint64, error) {
	c.count("eth_estimateGas")
	return c.Backend.EstimateGas(ctx, m)
}

func (c *requestCounter) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	c.count("eth_sendRawTransaction")
	return c.Backend.SendTransaction(ctx, tx)
}

func (c *requestCounter) TransactionReceipt(ctx context.Context, h common.Hash) (*types.Receipt, error) {
	c.count("eth_getTransactionReceipt")
	return c.Backend.TransactionReceipt(ctx, h)
}

func (c *requestCounter) BlockReceipts(ctx context.Context, at rpc.BlockNumberOrHash) ([]*types.Receipt, error) {
	c.count("eth_getBlockReceipts")
	return c.Backend.(interface {
		BlockReceipts(context.Context, rpc.BlockNumberOrHash) ([]*types.Receipt, error)
	}).BlockReceipts(ctx, at)
}

// BenchmarkRequestsPerSettlement counts what settlements ask the endpoint, by method, as the
// settlement queue runs them: up to 64 at once, each estimated, sent and awaited, on a chain
// that seals a block every 4 poll intervals (Base's 2 s blocks at the default 500 ms poll,
// scaled down). It reports requests per settlement; run it with -benchtime=1x.
func BenchmarkRequestsPerSettlement(b *testing.B) {
	const settlements, inFlight = 256, 64
	const poll = 25 * time.Millisecond
	ctx := context.Background()
	for range b.N {
		b.StopTimer()
		ch, err := devchain.Start(ctx, devchain.Options{ManualMine: true})
		if err != nil {
			b.Fatal(err)
		}
		if err := ch.Mint(ctx, ch.HotAddress(), 1_000_000); err != nil {
			b.Fatal(err)
		}
		node := &requestCounter{Backend: ch.Client(), by: map[string]int{}}
		s, err := chain.NewSender(ctx, node, ch.Hot, chain.SenderOptions{PollInterval: poll})
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		sealed := make(chan struct{})
		go func() { // the chain's blocks
			defer close(sealed)
			tick := time.NewTicker(4 * poll)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					ch.Commit()
				}
			}
		}()
		b.StartTimer()
		slots := make(chan struct{}, inFlight)
		var wg sync.WaitGroup
		for range settlements {
			slots <- struct{}{}
			wg.Add(1)
			go func() {
				defer func() { <-slots; wg.Done() }()
				c := transferCall(b, ch, 10)
				gas, err := s.Estimate(ctx, c)
				if err != nil {
					b.Error(err)
					return
				}
				tx, err := s.Send(ctx, c, gas, func(*types.Transaction) error { return nil })
				if err != nil {
					b.Error(err)
					return
				}
				if r, err := s.Wait(ctx, tx, func(*types.Transaction) error { return nil }); err != nil || r.Status != types.ReceiptStatusSuccessful {
					b.Errorf("receipt %+v: %v", r, err)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		close(stop)
		<-sealed
		ch.Close()
		node.mu.Lock()
		methods := make([]string, 0, len(node.by))
		total := 0
		for m, n := range node.by {
			methods = append(methods, m)
			total += n
		}
		sort.Strings(methods)
		for _, m := range methods {
			b.ReportMetric(float64(node.by[m])/settlements, m+"/settlement")
		}
		b.ReportMetric(float64(total)/settlements, "requests/settlement")
		b.Logf("%d settlements, %d in flight, a block every %v: %v, %d requests", settlements, inFlight, 4*poll, node.by, total)
		node.mu.Unlock()
	}
}
