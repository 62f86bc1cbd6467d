// Command batch benchmarks x402's batch-settlement scheme against exact, in one run on the
// embedded chain (real transactions, gas from their receipts):
//
//  1. gas per paid call for 1, 100 and 10,000 calls over 1, 10 and 100 channels: each channel's
//     deposit, every voucher signed and checked by the facilitator (reserve, then complete,
//     journaled), one claim of all channels, one sweep to payTo; against exact, one
//     transferWithAuthorization settled per call;
//  2. what that gas costs as a share of a MICRO call's price at 0.01 gwei and 1 gwei
//     (-eth-usd is the ETH price, stated in the output);
//  3. latency p50/p99 on settle's socket of a voucher call's round trip (/batch/reserve then
//     /batch/complete) against exact's /verify and exact's /reserve then /complete (optimistic).
//     The API's gate offers batch-settlement too (api/paywall/batchgate.go); this series times
//     the facilitator's side of a paid call alone, not the end-to-end figure through the API.
//
// Run from the repository root: go run ./ops/bench/batch
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

func main() {
	ethUSD := flag.Float64("eth-usd", 3000, "ETH price in USD for the cost shares")
	latencyCalls := flag.Int("latency-calls", 500, "calls per latency series")
	maxCalls := flag.Int("max-calls", 10_000, "largest call count measured (1, 100 and this)")
	flag.Parse()
	if err := run(*ethUSD, *latencyCalls, *maxCalls); err != nil {
		fmt.Fprintln(os.Stderr, "bench batch:", err)
		os.Exit(1)
	}
}

// microPrice is the catalog's most common MICRO price (the tier of the cheapest paid calls).
func microPrice() (uint64, error) {
	count := map[uint64]int{}
	for _, e := range catalog.Table(catalog.DefaultNames()) {
		if e.Price > 0 && catalog.TierOf(e.Price) == catalog.TierMicro {
			count[e.Price]++
		}
	}
	var best uint64
	for p, n := range count {
		if best == 0 || n > count[best] || (n == count[best] && p < best) {
			best = p
		}
	}
	if best == 0 {
		return 0, errors.New("the catalog has no MICRO route")
	}
	return best, nil
}

type bench struct {
	ch    *devchain.Chain
	f     *settle.Facilitator
	payTo common.Address
	auth  common.Address
	price uint64
	salt  int64
}

func start(ctx context.Context, dir string, sync journal.Sync, price uint64) (*bench, error) {
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		return nil, err
	}
	k, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	b := &bench{ch: ch, payTo: crypto.PubkeyToAddress(k.PublicKey), auth: crypto.PubkeyToAddress(auth.PublicKey), price: price}
	b.f, err = settle.New(ctx, settle.Options{Network: devchain.Network, Asset: ch.USDC, TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: b.payTo, Backend: ch.Client(), HotKey: ch.Hot, LedgerDir: dir, LedgerSync: sync, ExposureCap: 1 << 40, TotalExposureCap: 1 << 41,
		ReceiverAuthorizer: auth,
		Sender:             chain.SenderOptions{PollInterval: time.Millisecond, ReceiptTimeout: time.Minute, ReplaceAfter: time.Minute}})
	if err != nil {
		_ = ch.Close()
		return nil, err
	}
	return b, nil
}

func (b *bench) close() { _ = b.f.Close(); _ = b.ch.Close() }

func (b *bench) batchRequirements() x402.BatchRequirements {
	return x402.BatchRequirements{Scheme: x402.SchemeBatchSettlement, Network: devchain.Network, Amount: strconv.FormatUint(b.price, 10),
		Asset: b.ch.USDC.Hex(), PayTo: b.payTo.Hex(), MaxTimeoutSeconds: 60,
		Extra: &x402.BatchExtra{ReceiverAuthorizer: b.auth.Hex(), WithdrawDelay: batch.MinWithdrawDelay, Name: devchain.TokenName, Version: devchain.TokenVersion}}
}

func (b *bench) exactRequest(now time.Time) (*x402.FacilitatorRequest, error) {
	r := x402.PaymentRequirements{Scheme: "exact", Network: devchain.Network, Amount: strconv.FormatUint(b.price, 10), Asset: b.ch.USDC.Hex(),
		PayTo: b.payTo.Hex(), MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: devchain.TokenName, Version: devchain.TokenVersion}}
	p, err := exact.NewPayload(b.ch.Payer, 2, &r, nil, now)
	if err != nil {
		return nil, err
	}
	return &x402.FacilitatorRequest{X402Version: 2, PaymentPayload: *p, PaymentRequirements: x402.FacilitatorRequirements{PaymentRequirements: r}}, nil
}

// gasOf sums the receipts' gas of txs.
func (b *bench) gasOf(ctx context.Context, txs ...string) (uint64, error) {
	var g uint64
	for _, tx := range txs {
		r, err := b.ch.Client().TransactionReceipt(ctx, common.HexToHash(tx))
		if err != nil {
			return 0, fmt.Errorf("receipt %s: %w", tx, err)
		}
		g += r.GasUsed
	}
	return g, nil
}

type batchFigures struct {
	calls, channels        int
	deposits, claim, sweep uint64 // gas
	claimChannels          int
	elapsed                time.Duration
}

// runBatch serves calls over channels (round robin). Each channel's first call carries its
// deposit; those are made concurrently (distinct channels), so the embedded chain, which
// mines about one block a second to keep its clock near the wall's, packs them in few blocks.
// Then one claim and one sweep.
func (b *bench) runBatch(ctx context.Context, calls, channels int) (batchFigures, error) {
	fig := batchFigures{calls: calls, channels: channels}
	t0 := time.Now()
	per := (calls + channels - 1) / channels
	chans := make([]*batchpay.Channel, channels)
	depositTxs := make([]string, channels)
	errs := make(chan error, channels)
	var wg sync.WaitGroup
	for c := range channels {
		b.salt++
		ch, err := batchpay.Open(b.ch.Payer, b.batchRequirements(), common.BigToHash(big.NewInt(b.salt)))
		if err != nil {
			return fig, err
		}
		chans[c] = ch
		req, err := ch.Deposit(uint64(per)*b.price, b.price, b.salt)
		if err != nil {
			return fig, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tx, err := b.call(ctx, req)
			depositTxs[c] = tx
			if err != nil {
				errs <- fmt.Errorf("deposit of channel %d: %w", c, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return fig, err
	}
	charged := make([]uint64, channels)
	for c := range charged {
		charged[c] = b.price
	}
	for i := channels; i < calls; i++ {
		c := i % channels
		req, err := chans[c].Voucher(charged[c] + b.price)
		if err != nil {
			return fig, err
		}
		if _, err := b.call(ctx, req); err != nil {
			return fig, fmt.Errorf("call %d: %w", i, err)
		}
		charged[c] += b.price
	}
	rep, err := b.f.ClaimOnce(ctx, settle.ClaimPolicy{})
	if err != nil {
		return fig, err
	}
	if rep.Claimed.Uint64() != uint64(calls)*b.price || rep.Swept.Uint64() != uint64(calls)*b.price {
		return fig, fmt.Errorf("claimed %s swept %s, want %d", rep.Claimed, rep.Swept, uint64(calls)*b.price)
	}
	fig.elapsed = time.Since(t0)
	fig.claimChannels = rep.Channels
	if fig.deposits, err = b.gasOf(ctx, depositTxs...); err != nil {
		return fig, err
	}
	if fig.claim, err = b.gasOf(ctx, rep.ClaimTx); err != nil {
		return fig, err
	}
	fig.sweep, err = b.gasOf(ctx, rep.SweepTx)
	return fig, err
}

// call serves one paid call through the facilitator in process (reserve, complete at the
// price) and returns the transaction it made (a deposit's).
func (b *bench) call(ctx context.Context, req *x402.BatchRequest) (string, error) {
	r, err := b.f.BatchReserve(ctx, req)
	if err != nil {
		return "", err
	}
	if !r.IsValid {
		return "", fmt.Errorf("reserve refused: %s %s", r.InvalidReason, r.InvalidMessage)
	}
	res, err := b.f.BatchComplete(ctx, req.Completion(r.ID, b.price))
	if err != nil {
		return "", err
	}
	if !res.Success {
		return "", fmt.Errorf("complete refused: %s", res.ErrorReason)
	}
	return res.Transaction, nil
}

// runExact settles calls exact payments (one transferWithAuthorization each, up to 500 at a
// time so blocks carry many) and returns their total gas from the receipts.
func (b *bench) runExact(ctx context.Context, calls int) (uint64, time.Duration, error) {
	t0 := time.Now()
	txs := make([]string, calls)
	errs := make(chan error, calls)
	sem := make(chan struct{}, 500)
	var wg sync.WaitGroup
	for i := range calls {
		req, err := b.exactRequest(time.Now())
		if err != nil {
			return 0, 0, err
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			s, err := b.f.Settle(ctx, req)
			if err != nil || !s.Success {
				errs <- fmt.Errorf("exact %d: %+v %v", i, s, err)
				return
			}
			txs[i] = s.Transaction
		}()
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, err
	}
	el := time.Since(t0)
	g, err := b.gasOf(ctx, txs...)
	return g, el, err
}

func run(ethUSD float64, latencyCalls, maxCalls int) error {
	ctx := context.Background()
	price, err := microPrice()
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "peage-bench-batch-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b, err := start(ctx, filepath.Join(dir, "gas"), journal.SyncNever, price)
	if err != nil {
		return err
	}
	defer b.close()

	fmt.Printf("batch-settlement against exact on the embedded chain (go-ethereum simulated backend, the project's x402BatchSettlement and test USDC)\n")
	fmt.Printf("MICRO price %d atomic units (%s USDC), the catalog's most common MICRO price; ETH at %.0f USD (-eth-usd)\n\n", price, usdcText(price), ethUSD)

	counts := []int{1, 100, maxCalls}
	exactGas := map[int]uint64{}
	for _, n := range slices.Compact(counts) {
		g, el, err := b.runExact(ctx, n)
		if err != nil {
			return err
		}
		exactGas[n] = g
		fmt.Fprintf(os.Stderr, "exact %d calls: %d gas in %s\n", n, g, el.Round(time.Millisecond))
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "calls\tchannels\tdeposits gas\tclaim gas\tsweep gas\tbatch gas/call\tclaim+sweep gas/call\texact gas/call\tbatch ÷ exact\tbatch µUSD/call @0.01 gwei\t@1 gwei\tshare of price @0.01 gwei\t@1 gwei\texact share @0.01 gwei\t@1 gwei\t")
	for _, n := range slices.Compact(counts) {
		for _, c := range []int{1, 10, 100} {
			if c > n {
				continue
			}
			fig, err := b.runBatch(ctx, n, c)
			if err != nil {
				return err
			}
			if fig.claimChannels != c {
				return fmt.Errorf("the claim covered %d channels, want %d", fig.claimChannels, c)
			}
			fmt.Fprintf(os.Stderr, "batch %d calls over %d channels: %s\n", n, c, fig.elapsed.Round(time.Millisecond))
			total := fig.deposits + fig.claim + fig.sweep
			per := float64(total) / float64(n)
			perClaim := float64(fig.claim+fig.sweep) / float64(n)
			ex := float64(exactGas[n]) / float64(n)
			fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%.0f\t%.0f\t%.0f\t%.4f\t%s\t%s\t%s\t%s\t%s\t%s\t\n", n, c, fig.deposits, fig.claim, fig.sweep, per, perClaim, ex, per/ex,
				microUSD(per, 0.01, ethUSD), microUSD(per, 1, ethUSD), share(per, 0.01, ethUSD, price), share(per, 1, ethUSD, price),
				share(ex, 0.01, ethUSD, price), share(ex, 1, ethUSD, price))
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Println("\nbatch gas/call counts every channel's deposit (the facilitator pays it: the payer's deposit is gasless); claim+sweep gas/call leaves deposits out, as for a channel that lives on.")

	return latency(ctx, filepath.Join(dir, "latency"), price, latencyCalls)
}

// latency measures the facilitator's side of a paid call over its Unix socket: a voucher's
// reserve+complete against exact's verify and exact's reserve+complete (optimistic), with the
// ledgers fsynced as in production.
func latency(ctx context.Context, dir string, price uint64, n int) error {
	b, err := start(ctx, dir, journal.SyncAlways, price)
	if err != nil {
		return err
	}
	defer b.close()
	sock := filepath.Join(dir, "settle.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- settle.Serve(sctx, b.f.Handler(), slog.New(slog.DiscardHandler), l) }()
	defer func() { cancel(); <-served }()
	c, err := client.New("unix:" + sock)
	if err != nil {
		return err
	}
	ch, err := batchpay.Open(b.ch.Payer, b.batchRequirements(), common.Hash{31: 1})
	if err != nil {
		return err
	}
	// The channel is opened first (its deposit is a transaction, not a voucher call).
	dep, err := ch.Deposit(uint64(n+1)*price, price, 1)
	if err != nil {
		return err
	}
	if err := through(ctx, c, dep, price); err != nil {
		return err
	}
	charged := price
	voucher := make([]time.Duration, 0, n)
	verify := make([]time.Duration, 0, n)
	optimistic := make([]time.Duration, 0, n)
	for i := range n {
		req, err := ch.Voucher(charged + price)
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := through(ctx, c, req, price); err != nil {
			return err
		}
		voucher = append(voucher, time.Since(t0))
		charged += price

		ex, err := b.exactRequest(time.Now())
		if err != nil {
			return err
		}
		t0 = time.Now()
		v, err := c.Verify(ctx, ex)
		if err != nil || !v.IsValid {
			return fmt.Errorf("verify: %+v %v", v, err)
		}
		verify = append(verify, time.Since(t0))

		t0 = time.Now()
		r, err := c.Reserve(ctx, &x402.ReserveRequest{FacilitatorRequest: *ex, Route: "bench", Key: "k" + strconv.Itoa(i)})
		if err != nil || !r.IsValid {
			return fmt.Errorf("reserve: %+v %v", r, err)
		}
		s, err := c.Complete(ctx, r.ID, x402.ModeOptimistic)
		if err != nil || !s.Success {
			return fmt.Errorf("complete: %+v %v", s, err)
		}
		optimistic = append(optimistic, time.Since(t0))
	}
	fmt.Printf("\nlatency on settle's socket, %d calls each (ledgers fsynced; the facilitator's side of a paid call alone, without the API's gate)\n", n)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "series\tp50\tp99\tp50 ÷ exact verify\t")
	base := pct(verify, 50)
	for _, s := range []struct {
		name string
		d    []time.Duration
	}{{"exact /verify", verify}, {"exact /reserve + /complete optimistic", optimistic}, {"voucher /batch/reserve + /batch/complete", voucher}} {
		fmt.Fprintf(w, "%s\t%s\t%s\t%.2f\t\n", s.name, ms(pct(s.d, 50)), ms(pct(s.d, 99)), float64(pct(s.d, 50))/float64(base))
	}
	return w.Flush()
}

func through(ctx context.Context, c *client.Client, req *x402.BatchRequest, price uint64) error {
	r, err := c.BatchReserve(ctx, req)
	if err != nil || !r.IsValid {
		return fmt.Errorf("batch reserve: %+v %v", r, err)
	}
	res, err := c.BatchComplete(ctx, req.Completion(r.ID, price))
	if err != nil || !res.Success {
		return fmt.Errorf("batch complete: %+v %v", res, err)
	}
	return nil
}

func pct(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }

// microUSD is the cost of gas at gwei per gas unit, in millionths of a dollar.
func microUSD(gas, gwei, ethUSD float64) string {
	return fmt.Sprintf("%.2f", gas*gwei*1e-9*ethUSD*1e6)
}

// share is that cost against a price in atomic USDC units (1 unit = 1 µUSD).
func share(gas, gwei, ethUSD float64, price uint64) string {
	return fmt.Sprintf("%.3f%%", gas*gwei*1e-9*ethUSD*1e6/float64(price)*100)
}

func usdcText(a uint64) string { return fmt.Sprintf("%d.%06d", a/1_000_000, a%1_000_000) }
