// Command load drives one route at full speed three ways in one run — free, paid with exact
// (optimistic settlement) and paid with batch-settlement vouchers over many channels — through
// the real server and gate, with the facilitator behind its Unix socket on the embedded chain
// (the split deployment's path), its ledgers fsynced as in production. Payments are signed
// before the clock starts, so the figures are the appliance's, not the client's.
//
// It prints calls per second against the free calls' (the targets: vouchers at least
// half, exact at least a fifth), p50 and p99 under that load, and the facilitator journals'
// fsyncs per call. Run from the repository root: go run ./ops/bench/load
package main

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

func main() {
	workers := flag.Int("workers", 16, "concurrent callers (each voucher caller has its own channel)")
	calls := flag.Int("calls", 150, "timed calls per caller")
	blockProfile := flag.String("blockprofile", "", "write where goroutines waited (runtime block profile, all modes) to this file, for go tool pprof")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the whole run (all modes) to this file")
	flag.Parse()
	if *blockProfile != "" {
		runtime.SetBlockProfileRate(1)
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench load:", err)
			os.Exit(1)
		}
		defer func() { pprof.StopCPUProfile(); _ = f.Close() }()
	}
	err := run(*workers, *calls)
	if err == nil && *blockProfile != "" {
		err = writeProfile("block", *blockProfile)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench load:", err)
		pprof.StopCPUProfile()
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

type result struct {
	mode     string
	calls    int
	elapsed  time.Duration
	p50, p99 time.Duration
	fsyncs   uint64
}

func run(workers, calls int) error {
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
	fmt.Printf("load: %d concurrent callers × %d timed calls per mode on one route (price %d atomic units), server → gate → settle over its Unix socket, embedded chain, ledgers fsynced\n\n",
		workers, calls, price)
	var out []result
	for _, mode := range []string{modeFree, modeExct, modeVchr} {
		r, err := load(ctx, dev, fc, cfg, key, mode, workers, calls)
		if err != nil {
			return fmt.Errorf("%s: %w", mode, err)
		}
		out = append(out, r)
	}
	free := float64(out[0].calls) / out[0].elapsed.Seconds()
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "mode\tcalls\tcalls/s\t÷ free\ttarget\tp50\tp99\tfsyncs/call\t")
	target := map[string]float64{modeVchr: 0.5, modeExct: 0.2}
	for _, r := range out {
		rate := float64(r.calls) / r.elapsed.Seconds()
		verdict := ""
		if t, ok := target[r.mode]; ok {
			verdict = fmt.Sprintf("≥ %.1f: ", t) + map[bool]string{true: "holds", false: "FAILS"}[rate/free >= t]
		}
		fmt.Fprintf(w, "%s\t%d\t%.0f\t%.2f\t%s\t%s\t%s\t%.2f\t\n", r.mode, r.calls, rate, rate/free, verdict, ms(r.p50), ms(r.p99), float64(r.fsyncs)/float64(r.calls))
	}
	return w.Flush()
}

// load serves the route in mode from a fresh server and drives it from workers callers.
func load(ctx context.Context, dev *settle.Dev, fc *client.Client, cfg paywall.Config, key *ecdsa.PrivateKey, mode string, workers, calls int) (result, error) {
	handler := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	e := catalog.Entry{Method: "GET", Path: route, Summary: "bench", Kind: catalog.Paid, Price: price, Timeout: timeout, Handler: handler}
	if mode == modeFree {
		e.Kind, e.Price = catalog.Free, 0
	}
	cat, err := catalog.New([]catalog.Entry{e})
	if err != nil {
		return result{}, err
	}
	gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price}, fc, paywall.GateOptions{})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return result{}, err
	}
	base := "http://" + ln.Addr().String()
	scfg := server.DefaultConfig()
	scfg.Addr, scfg.BaseURL = ln.Addr().String(), base
	scfg.FreePerMinute = 0 // the free calls are the baseline, not the free-call limit
	srv := server.New(scfg, cat, server.Options{Gate: gate, Pay: cfg})
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() {
		stop()
		if err := <-done; err != nil && !errors.Is(err, net.ErrClosed) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintln(os.Stderr, "serve:", err)
		}
	}()

	// Every caller's payments, signed now: a voucher caller's first is its channel's deposit,
	// sent (untimed) before the clock starts, as a payer opens a channel once.
	headers := make([][]string, workers)
	for w := range headers {
		if headers[w], err = sign(mode, key, cfg, base, w, calls); err != nil {
			return result{}, err
		}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	if mode == modeVchr {
		errs := make(chan error, workers)
		for w := range headers {
			go func() { _, err := call(hc, base, headers[w][0]); errs <- err }()
		}
		for range headers {
			if err := <-errs; err != nil {
				return result{}, fmt.Errorf("deposit: %w", err)
			}
		}
		for w := range headers {
			headers[w] = headers[w][1:]
		}
	}
	// A warm-up call per caller (connections, caches), then the timed calls.
	warm := make([]string, workers)
	for w := range headers {
		warm[w], headers[w] = headers[w][0], headers[w][1:]
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range warm {
		wg.Add(1)
		go func() { defer wg.Done(); _, err := call(hc, base, warm[w]); errs <- err }()
	}
	wg.Wait()
	for range warm {
		if err := <-errs; err != nil {
			return result{}, fmt.Errorf("warm-up: %w", err)
		}
	}
	f0 := dev.Facilitator.LedgerFsyncs()
	lat := make([][]time.Duration, workers)
	t0 := time.Now()
	for w := range headers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, h := range headers[w] {
				d, err := call(hc, base, h)
				if err != nil {
					errs <- err
					return
				}
				lat[w] = append(lat[w], d)
			}
			errs <- nil
		}()
	}
	wg.Wait()
	elapsed := time.Since(t0)
	fsyncs := dev.Facilitator.LedgerFsyncs() - f0
	for range headers {
		if err := <-errs; err != nil {
			return result{}, err
		}
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	return result{mode: mode, calls: len(all), elapsed: elapsed, p50: all[len(all)/2], p99: all[len(all)*99/100], fsyncs: fsyncs}, nil
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
