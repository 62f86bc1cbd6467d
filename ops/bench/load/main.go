// Command load drives one route at full speed three ways in one run — free, paid with exact
// (optimistic settlement) and paid with batch-settlement vouchers over many channels — through
// the real server and gate, with the facilitator behind its Unix socket on the embedded chain
// (the split deployment's path), its ledgers fsynced as in production. Payments are signed
// before the clock starts, so the figures are the appliance's, not the client's. The modes
// take turns in rounds, and exact's optimistic settlements (mined by the embedded chain, which
// on a real network is the node's work) finish between rounds, untimed, so that neither a
// change of the machine's load nor one mode's leftovers weigh on another mode's figures.
//
// It prints calls per second against the free calls' (the targets: vouchers at least
// half, exact at least a fifth), p50 and p99 under that load, the facilitator journals' fsyncs
// per call, and the process's CPU time per call (callers included): on a machine shared with
// other work the rates move from run to run, the CPU a call costs much less. Run from the
// repository root: go run ./ops/bench/load
package main

import (
	"context"
	"crypto/ecdsa"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"runtime/trace"
	"slices"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

func main() {
	workers := flag.Int("workers", 16, "concurrent callers (each voucher caller has its own channel)")
	calls := flag.Int("calls", 150, "timed calls per caller")
	blockProfile := flag.String("blockprofile", "", "write where goroutines waited (runtime block profile, all modes) to this file, for go tool pprof")
	rounds := flag.Int("rounds", 5, "rounds of timed calls; the modes take turns in each")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed calls (all modes: -modes picks them) to this file")
	mutexProfile := flag.String("mutexprofile", "", "write where goroutines waited for locks (runtime mutex profile, all modes) to this file")
	only := flag.String("modes", "", "comma-separated modes to run after the free baseline (exact, voucher); empty: both")
	traceFile := flag.String("trace", "", "write an execution trace of the timed calls to this file, for go tool trace: at one caller a call's wall time is wake-ups and round trips, which a CPU profile does not show")
	flag.Parse()
	if *mutexProfile != "" {
		runtime.SetMutexProfileFraction(1)
	}
	if *blockProfile != "" {
		runtime.SetBlockProfileRate(1)
	}
	modes, err := pickModes(*only)
	if err == nil {
		err = run(modes, *workers, *calls, *rounds, *cpuProfile, *traceFile)
	}
	if err == nil && *blockProfile != "" {
		err = writeProfile("block", *blockProfile)
	}
	if err == nil && *mutexProfile != "" {
		err = writeProfile("mutex", *mutexProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench load:", err)
		os.Exit(1)
	}
}

const (
	price    = 1_000 // atomic units: a MICRO call
	route    = "/v1/bench/route"
	timeout  = 10 * time.Second
	modeFree = "free"
	modeExct = "exact optimistic"
	modeVchr = "batch voucher"
)

// pickModes reads -modes: the free baseline always comes first.
func pickModes(list string) ([]string, error) {
	if list == "" {
		return []string{modeFree, modeExct, modeVchr}, nil
	}
	out := []string{modeFree}
	for m := range strings.SplitSeq(list, ",") {
		switch strings.TrimSpace(m) {
		case "exact":
			out = append(out, modeExct)
		case "voucher":
			out = append(out, modeVchr)
		default:
			return nil, fmt.Errorf("-modes: unknown mode %q (exact, voucher)", m)
		}
	}
	return out, nil
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func run(modes []string, workers, calls, rounds int, cpuProfile, traceFile string) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "peage-bench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	dev, err := settle.StartDev(ctx, dir, nil)
	if err != nil {
		return err
	}
	defer dev.Close()
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		return err
	}
	fc, err := client.New(dev.Addr())
	if err != nil {
		return err
	}
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion,
		MaxTimeoutSeconds: 300, ReceiverAuthorizer: dev.ReceiverAuthorizer, WithdrawDelaySeconds: 86_400}
	rounds = max(1, min(rounds, calls))
	fmt.Printf("load: %d concurrent callers × %d timed calls per mode on one route (price %d atomic units), in %d rounds taking the modes in turn, server → gate → settle over its Unix socket, embedded chain, ledgers fsynced\n\n",
		workers, calls, price, rounds)
	benches := make([]*bench, len(modes))
	for i, mode := range modes {
		b, err := prepare(ctx, dev, fc, cfg, key, mode, workers, calls)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		defer b.close()
		benches[i] = b
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			return err
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	if traceFile != "" {
		f, err := os.Create(traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			return err
		}
		defer func() { trace.Stop(); _ = f.Close() }()
	}
	// The modes take turns, so that a machine whose load changes during the run (shared cores)
	// weighs on each alike.
	for r := range rounds {
		for _, b := range benches {
			n := calls/rounds + map[bool]int{true: 1}[r < calls%rounds]
			if err := b.round(dev, n); err != nil {
				return fmt.Errorf("%s: %w", b.mode, err)
			}
			// Exact's optimistic settlements are mined by the embedded chain after the calls
			// are answered: they finish before the next round, whose CPU they would take (on
			// a real network the node mines them, not this box).
			t0 := time.Now()
			if err := drain(ctx, dev); err != nil {
				return err
			}
			b.settling += time.Since(t0)
		}
	}
	recovery, err := recoveryCPU(key, 2_000)
	if err != nil {
		return err
	}
	free, freeCPU := benches[0].rate(), benches[0].cpuPerCall()
	// On cores that are the limit the rates' ratio is the CPUs' ratio, and a paid call does a
	// free call's work, reads its payment header and recovers at least one signature besides:
	// its ratio cannot pass free/(free+decoding+recovery), whatever the rest costs.
	decoding := map[string]time.Duration{}
	for _, b := range benches[1:] {
		if decoding[b.mode], err = decodingCPU(b.sample, 2_000); err != nil {
			return err
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "mode\tcalls\tcalls/s\t÷ free\ttarget\tceiling\tp50\tp99\tfsyncs/call\tCPU/call\tsettled calls/s\t")
	target := map[string]float64{modeVchr: 0.5, modeExct: 0.2}
	for _, b := range benches {
		rate := b.rate()
		verdict, ceiling := "", ""
		if t, ok := target[b.mode]; ok {
			verdict = fmt.Sprintf("≥ %.1f: ", t) + map[bool]string{true: "holds", false: "FAILS"}[rate/free >= t]
			ceiling = fmt.Sprintf("%.2f", float64(freeCPU)/float64(freeCPU+decoding[b.mode]+recovery))
		}
		slices.Sort(b.lat)
		n := len(b.lat)
		fmt.Fprintf(w, "%s\t%d\t%.0f\t%.2f\t%s\t%s\t%s\t%s\t%.2f\t%s\t%.0f\t\n", b.mode, n, rate, rate/free, verdict, ceiling, ms(b.lat[n/2]), ms(b.lat[n*99/100]),
			float64(b.fsyncs)/float64(n), us(b.cpuPerCall()), float64(n)/(b.elapsed+b.settling).Seconds())
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("\nceiling: the most a paid mode's ÷ free can be on cores that are the limit: a free call's CPU (%s) over that\n"+
		"plus what every paid call must do besides: decode its payment header (%s) and recover one signature (%s, %s);\n"+
		"the rest of the payment (settle's round trips, its checks, the ledger's record and fsync) counted as free.\n"+
		"settled calls/s: the calls over the time to answer them and then to mine what they left owed (exact's\n"+
		"optimistic settlements; the embedded chain seals a block a second once it is ahead, as Base every 2 s):\n"+
		"the rate a mode sustains, since optimistic delivery stops at the exposure cap when settlements lag\n",
		us(freeCPU), strings.Join(slices.Collect(func(yield func(string) bool) {
			for _, b := range benches[1:] {
				if !yield(b.mode + " " + us(decoding[b.mode])) {
					return
				}
			}
		}), ", "), us(recovery), recoveryImpl())
	return nil
}

// decodingCPU is the process's CPU time to read the payment header h as the server does
// (x402.DecodePaymentHeaderOrBatch), over n readings in turn.
func decodingCPU(h string, n int) (time.Duration, error) {
	c0 := cpuTime()
	for range n {
		if p, batch, err := x402.DecodePaymentHeaderOrBatch(x402.HeaderPaymentSignature, h); err != nil || (p == nil && batch == nil) {
			return 0, fmt.Errorf("decoding %.40s…: %v", h, err)
		}
	}
	return (cpuTime() - c0) / time.Duration(n), nil
}

// recoveryCPU is the process's CPU time for one signature recovery as settle makes it for every
// paid call (batch.Recover: a voucher's, an exact authorization's), over n in turn.
func recoveryCPU(key *ecdsa.PrivateKey, n int) (time.Duration, error) {
	digests := make([]common.Hash, n)
	sigs := make([][]byte, n)
	for i := range n {
		digests[i] = crypto.Keccak256Hash(binary.BigEndian.AppendUint64(nil, uint64(i)))
		sig, err := crypto.Sign(digests[i][:], key)
		if err != nil {
			return 0, err
		}
		sig[64] += 27
		sigs[i] = sig
	}
	want := crypto.PubkeyToAddress(key.PublicKey)
	c0 := cpuTime()
	for i := range n {
		if signer, ok := batch.Recover(digests[i], sigs[i]); !ok || signer != want {
			return 0, fmt.Errorf("recovery %d: signer %s, not %s", i, signer, want)
		}
	}
	return (cpuTime() - c0) / time.Duration(n), nil
}

// recoveryImpl names the secp256k1 go-ethereum recovers with in this build.
func recoveryImpl() string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "CGO_ENABLED" && s.Value == "1" {
				return "libsecp256k1 through cgo"
			}
		}
	}
	return "pure Go: decred secp256k1"
}

// drain waits until the facilitator owes no settlement (exact's optimistic queue is empty).
// It asks the ledger's running sum: its Stats, which reads every record, took 40% of a default
// run's CPU from the chain mining the backlog.
func drain(ctx context.Context, dev *settle.Dev) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for dev.Facilitator.OwedTotal() != 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("settlements still owed: %w", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// bench is one mode's server and callers, with what its timed rounds measured so far.
type bench struct {
	mode    string
	base    string
	hc      *http.Client
	headers [][]string // each caller's signed payments not yet sent
	sample  string     // one of them, to time its decoding
	close   func()

	elapsed time.Duration
	lat     []time.Duration
	fsyncs  uint64
	cpu     time.Duration // the process's CPU time (user and system, callers included)
	// settling is the time the chain took after the rounds to mine the settlements they left
	// owed: the rate a mode sustains counts it.
	settling time.Duration
}

func (b *bench) rate() float64 { return float64(len(b.lat)) / b.elapsed.Seconds() }

func (b *bench) cpuPerCall() time.Duration { return b.cpu / time.Duration(len(b.lat)) }

// prepare serves the route in mode from a server of its own, signs every caller's payments,
// and makes the untimed calls: a voucher caller's deposit (a payer opens a channel once), then
// one warm-up call per caller (connections, caches).
func prepare(ctx context.Context, dev *settle.Dev, fc *client.Client, cfg paywall.Config, key *ecdsa.PrivateKey, mode string, workers, calls int) (*bench, error) {
	handler := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	e := catalog.Entry{Method: "GET", Path: route, Summary: "bench", Kind: catalog.Paid, Price: price, Timeout: timeout, Handler: handler}
	if mode == modeFree {
		e.Kind, e.Price = catalog.Free, 0
	}
	cat, err := catalog.New([]catalog.Entry{e})
	if err != nil {
		return nil, err
	}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price}, fc, paywall.GateOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	base := "http://" + ln.Addr().String()
	scfg := server.DefaultConfig()
	scfg.Addr, scfg.BaseURL = ln.Addr().String(), base
	scfg.FreePerMinute = 0 // the free calls are the baseline, not the free-call limit
	srv := server.New(scfg, cat, server.Options{Gate: gate, Pay: cfg})
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	b := &bench{mode: mode, base: base, hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}, close: func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintln(os.Stderr, "serve:", err)
		}
	}}
	fail := func(err error) (*bench, error) { b.close(); return nil, err }
	b.headers = make([][]string, workers)
	for w := range b.headers {
		if b.headers[w], err = sign(mode, key, cfg, base, w, calls); err != nil {
			return fail(err)
		}
	}
	b.sample = b.headers[0][len(b.headers[0])-1]
	untimed := func(what string) error {
		errs := make(chan error, workers)
		for w := range b.headers {
			go func() { _, err := call(b.hc, base, b.headers[w][0]); errs <- err }()
		}
		for range b.headers {
			if err := <-errs; err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
		}
		for w := range b.headers {
			b.headers[w] = b.headers[w][1:]
		}
		return nil
	}
	if mode == modeVchr {
		if err := untimed("deposit"); err != nil {
			return fail(err)
		}
	}
	if err := untimed("warm-up"); err != nil {
		return fail(err)
	}
	return b, drain(ctx, dev)
}

// round makes n timed calls from each caller at once.
func (b *bench) round(dev *settle.Dev, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(b.headers))
	lat := make([][]time.Duration, len(b.headers))
	f0 := dev.Facilitator.LedgerFsyncs()
	c0, t0 := cpuTime(), time.Now()
	for w := range b.headers {
		wg.Go(func() {
			for _, h := range b.headers[w][:n] {
				d, err := call(b.hc, b.base, h)
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], d)
			}
		})
	}
	wg.Wait()
	b.elapsed += time.Since(t0)
	b.cpu += cpuTime() - c0
	b.fsyncs += dev.Facilitator.LedgerFsyncs() - f0
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	for w := range b.headers {
		b.headers[w] = b.headers[w][n:]
	}
	b.lat = append(b.lat, slices.Concat(lat...)...)
	return nil
}

// sign makes caller w's payment headers: calls+1 (the warm-up), after a deposit for vouchers.
func sign(mode string, key *ecdsa.PrivateKey, cfg paywall.Config, base string, w, calls int) ([]string, error) {
	n := calls + 1
	out := make([]string, 0, n+1)
	res := &x402.ResourceInfo{URL: base + route}
	switch mode {
	case modeFree:
		for range n {
			out = append(out, "")
		}
	case modeExct:
		reqs := cfg.Requirements(&catalog.Entry{Price: price, Timeout: timeout})
		for range n {
			p, err := exact.NewPayload(key, 2, &reqs, res, time.Now())
			if err != nil {
				return nil, err
			}
			h, err := x402.Encode(p)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	case modeVchr:
		ch, err := batchpay.Open(key, cfg.BatchRequirements(&catalog.Entry{Price: price, Timeout: timeout}), common.BigToHash(big.NewInt(int64(w+1))))
		if err != nil {
			return nil, err
		}
		for i := range n + 1 {
			var r *x402.BatchRequest
			if i == 0 {
				r, err = ch.Deposit(uint64(n+1)*price, price, int64(w+1))
			} else {
				r, err = ch.Voucher(uint64(i+1) * price)
			}
			if err != nil {
				return nil, err
			}
			r.PaymentPayload.Resource = res
			h, err := x402.Encode(r.PaymentPayload)
			if err != nil {
				return nil, err
			}
			out = append(out, h)
		}
	}
	return out, nil
}

// call makes one call with the payment header h ("" for none) and times it.
func call(hc *http.Client, base, h string) (time.Duration, error) {
	req, err := http.NewRequest("GET", base+route, nil)
	if err != nil {
		return 0, err
	}
	if h != "" {
		req.Header.Set(x402.HeaderPaymentSignature, h)
	}
	t0 := time.Now()
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	d := time.Since(t0)
	if resp.StatusCode != http.StatusOK {
		reason := ""
		if pr, err := x402.DecodeRequired(resp.Header.Get(x402.HeaderPaymentRequired)); err == nil {
			reason = pr.Error
		}
		return d, fmt.Errorf("answered %d %s", resp.StatusCode, reason)
	}
	return d, nil
}

func writeProfile(name, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup(name).WriteTo(f, 0); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func us(d time.Duration) string { return fmt.Sprintf("%.0f µs", float64(d.Nanoseconds())/1e3) }
