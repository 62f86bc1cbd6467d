// Command batch benchmarks x402's batch-settlement scheme against exact, in one run on the
// embedded chain (real transactions on Circle's USDC, FiatToken v2.2, gas from their receipts):
//
//  1. gas per paid call for 1, 100 and 10,000 calls over 1, 10 and 100 channels: each channel's
//     deposit, every voucher signed and checked by the facilitator (reserve, then complete,
//     journaled), one claim of all channels, one sweep to payTo; against exact, one
//     transferWithAuthorization settled per call;
//  2. what that costs all-in as a share of a MICRO call's price under a Base-like fee model
//     (fees.go: L2 execution gas at 0.01 gwei plus each transaction's Fjord L1 data fee, every
//     constant a flag stated in the output), against the targets (under 1% all-in for
//     channels of 200 calls or more, claims and sweeps under 0.2%), and, where one fails, the
//     minimum deposit and claim value that would hold it;
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
	"math"
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
	m := feeModel{baseFeeScalar: 2269, blobBaseFeeScalar: 1_055_762}
	flag.Float64Var(&m.ethUSD, "eth-usd", 3000, "ETH price in USD")
	flag.Uint64Var(&m.l2GasPriceWei, "l2-gas-price-wei", 10_000_000, "Base's L2 execution gas price (wei; 0.01 gwei)")
	flag.Uint64Var(&m.l1BaseFeeWei, "l1-base-fee-wei", 1_000_000_000, "Ethereum's base fee (wei) for the L1 data fee")
	flag.Uint64Var(&m.l1BlobBaseFeeWei, "l1-blob-base-fee-wei", 1, "Ethereum's blob base fee (wei) for the L1 data fee")
	flag.Uint64Var(&m.baseFeeScalar, "base-fee-scalar", m.baseFeeScalar, "Base's SystemConfig baseFeeScalar")
	flag.Uint64Var(&m.blobBaseFeeScalar, "blob-base-fee-scalar", m.blobBaseFeeScalar, "Base's SystemConfig blobBaseFeeScalar")
	latencyCalls := flag.Int("latency-calls", 500, "calls per latency series")
	maxCalls := flag.Int("max-calls", 10_000, "largest call count measured")
	flag.Parse()
	if err := run(m, *latencyCalls, *maxCalls); err != nil {
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
	fees  feeModel
}

func start(ctx context.Context, dir string, sync journal.Sync, price uint64, fees feeModel) (*bench, error) {
	ch, err := devchain.Start(ctx, devchain.Options{})
	if err != nil {
		return nil, err
	}
	k, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	b := &bench{ch: ch, payTo: crypto.PubkeyToAddress(k.PublicKey), auth: crypto.PubkeyToAddress(auth.PublicKey), price: price, fees: fees}
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

type batchFigures struct {
	calls, channels        int
	deposits, claim, sweep cost
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
	if fig.deposits, err = b.costOf(ctx, depositTxs...); err != nil {
		return fig, err
	}
	if fig.claim, err = b.costOf(ctx, rep.ClaimTx); err != nil {
		return fig, err
	}
	fig.sweep, err = b.costOf(ctx, rep.SweepTx)
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
// time so blocks carry many) and returns what they cost.
func (b *bench) runExact(ctx context.Context, calls int) (cost, time.Duration, error) {
	t0 := time.Now()
	txs := make([]string, calls)
	errs := make(chan error, calls)
	sem := make(chan struct{}, 500)
	var wg sync.WaitGroup
	for i := range calls {
		req, err := b.exactRequest(time.Now())
		if err != nil {
			return cost{}, 0, err
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
		return cost{}, 0, err
	}
	el := time.Since(t0)
	c, err := b.costOf(ctx, txs...)
	return c, el, err
}

// The targets, in hundredths of a percent of the price.
const (
	targetAllIn      = 1.0 // % of a MICRO call, deposits included, channels of targetCalls or more
	targetClaimSweep = 0.2 // % of a MICRO call, claims and sweeps, at any channel count
	targetCalls      = 200
)

func run(m feeModel, latencyCalls, maxCalls int) error {
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
	b, err := start(ctx, filepath.Join(dir, "gas"), journal.SyncNever, price, m)
	if err != nil {
		return err
	}
	defer b.close()

	fmt.Printf("batch-settlement against exact on the embedded chain (go-ethereum simulated backend at Osaka rules, the project's x402BatchSettlement and Circle's USDC, FiatToken v2.2 behind its proxy)\n")
	fmt.Printf("MICRO price %d atomic units (%s USDC), the catalog's most common MICRO price\n%s\n\n", price, usdcText(price), m.describe())

	// (calls, channels): one channel, 10, 50 (of 200 calls each, the target's size) and 100.
	runs := []runShape{{1, 1}, {100, 1}, {targetCalls, 1}, {100, 10}, {maxCalls, 10}, {maxCalls, maxCalls / targetCalls}, {maxCalls, 100}}
	exact := map[int]cost{}
	for _, r := range runs {
		if _, ok := exact[r.calls]; ok {
			continue
		}
		c, el, err := b.runExact(ctx, r.calls)
		if err != nil {
			return err
		}
		exact[r.calls] = c
		fmt.Fprintf(os.Stderr, "exact %d calls: %d gas in %s\n", r.calls, c.gas, el.Round(time.Millisecond))
	}
	pct := func(wei float64, calls int) float64 { return m.microUSD(wei) / float64(calls) / float64(price) * 100 }
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "calls\tchannels\tcalls/channel\tdeposit gas/channel\tclaim gas\tsweep gas\tbatch gas/call\tbatch L1 µUSD/call\tbatch all-in µUSD/call\tshare of price\tclaim+sweep share\texact gas/call\texact all-in µUSD/call\texact share\t")
	var verdicts []verdict
	for _, r := range runs {
		fig, err := b.runBatch(ctx, r.calls, r.channels)
		if err != nil {
			return err
		}
		if fig.claimChannels != r.channels {
			return fmt.Errorf("the claim covered %d channels, want %d", fig.claimChannels, r.channels)
		}
		fmt.Fprintf(os.Stderr, "batch %d calls over %d channels: %s\n", r.calls, r.channels, fig.elapsed.Round(time.Millisecond))
		total := fig.deposits.add(fig.claim).add(fig.sweep)
		round := fig.claim.add(fig.sweep)
		ex := exact[r.calls]
		v := verdict{r: r, allIn: pct(total.wei(m), r.calls), claimSweep: pct(round.wei(m), r.calls),
			depositWei: fig.deposits.wei(m) / float64(r.channels), roundWei: round.wei(m)}
		verdicts = append(verdicts, v)
		fmt.Fprintf(w, "%d\t%d\t%d\t%d\t%d\t%d\t%.0f\t%.2f\t%.2f\t%.3f%%\t%.3f%%\t%.0f\t%.2f\t%.3f%%\t\n", r.calls, r.channels, r.calls/r.channels,
			fig.deposits.gas/uint64(r.channels), fig.claim.gas, fig.sweep.gas, float64(total.gas)/float64(r.calls),
			m.microUSD(float64(total.l1Wei))/float64(r.calls), m.microUSD(total.wei(m))/float64(r.calls), v.allIn, v.claimSweep,
			float64(ex.gas)/float64(r.calls), m.microUSD(ex.wei(m))/float64(r.calls), pct(ex.wei(m), r.calls))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Println("\nbatch counts every channel's deposit (the facilitator sends it and pays its gas: the payer's deposit is gasless) and one claim and one sweep for the run; claim+sweep leaves deposits out, as for a channel that lives on.")
	targets(m, price, verdicts)
	return latency(ctx, filepath.Join(dir, "latency"), price, latencyCalls)
}

type runShape struct{ calls, channels int }

// verdict is one run's shares of the price and the costs that set them.
type verdict struct {
	r                    runShape
	allIn, claimSweep    float64 // % of the price
	depositWei, roundWei float64 // one channel's deposit; one claim round (claim + sweep)
}

// targets holds each run against the targets and, where one fails, says what would
// hold it. A claim round costs a fixed part (the claim's own, the sweep) and a part per channel
// claimed, fitted from the runs' claims: it stays under the target at any channel count when
// the round carries enough value (settle.claim_min_value) and each channel in it enough calls.
// A deposit is paid once per channel: with claims at their target, the rest of the 1% carries
// it over enough calls (payment.min_deposit).
func targets(m feeModel, price uint64, vs []verdict) {
	fmt.Printf("\ntargets: all-in under %.1f%% for channels of %d calls or more; claim+sweep under %.1f%% at any channel count\n", targetAllIn, targetCalls, targetClaimSweep)
	var worstDeposit float64
	one, most := vs[0], vs[0] // the claim rounds of the fewest and the most channels
	for _, v := range vs {
		worstDeposit = max(worstDeposit, v.depositWei)
		if v.r.channels < one.r.channels {
			one = v
		}
		if v.r.channels > most.r.channels {
			most = v
		}
		if v.r.calls/v.r.channels >= targetCalls {
			fmt.Printf("  %d calls over %d channels: all-in %.3f%% %s\n", v.r.calls, v.r.channels, v.allIn, pass(v.allIn < targetAllIn))
		}
		fmt.Printf("  %d calls over %d channels, one claim round: claim+sweep %.3f%% %s\n", v.r.calls, v.r.channels, v.claimSweep, pass(v.claimSweep < targetClaimSweep))
	}
	perChannel := (most.roundWei - one.roundWei) / float64(most.r.channels-one.r.channels)
	fixed := one.roundWei - perChannel*float64(one.r.channels)
	budget := func(share float64) float64 { return share / 100 * float64(price) } // µUSD per call
	roundCalls := math.Ceil(m.microUSD(fixed+perChannel) / budget(targetClaimSweep))
	channelCalls := math.Ceil(m.microUSD(perChannel) / budget(targetClaimSweep))
	depositCalls := math.Ceil(m.microUSD(worstDeposit) / (budget(targetAllIn) - budget(targetClaimSweep)))
	fmt.Printf("what holds them at any channel count (a claim round costs %.0f µUSD plus %.0f µUSD per channel, fitted from the rounds of %d and %d channels):\n",
		m.microUSD(fixed), m.microUSD(perChannel), one.r.channels, most.r.channels)
	fmt.Printf("  claims: a round carries at least %.0f calls' worth, settle.claim_min_value >= %d atomic units, and each channel claimed at least %.0f calls' worth (%d atomic units)\n",
		roundCalls, uint64(roundCalls)*price, channelCalls, uint64(channelCalls)*price)
	fmt.Printf("  deposits: a channel carries at least %.0f calls, payment.min_deposit >= %d atomic units (with claims as above)\n", depositCalls, uint64(depositCalls)*price)
}

func pass(ok bool) string {
	if ok {
		return "holds"
	}
	return "FAILS"
}

// latency measures the facilitator's side of a paid call over its Unix socket: a voucher's
// reserve+complete against exact's verify and exact's reserve+complete (optimistic), with the
// ledgers fsynced as in production.
func latency(ctx context.Context, dir string, price uint64, n int) error {
	b, err := start(ctx, dir, journal.SyncAlways, price, feeModel{})
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

func usdcText(a uint64) string { return fmt.Sprintf("%d.%06d", a/1_000_000, a%1_000_000) }
