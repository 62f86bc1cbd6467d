// Command x402 benchmarks payments, side by side in one run:
//
//  1. verifications per second on one core: our exact verifier against the reference verifier
//     (@x402/evm's facilitator verify under Node) on the same signed payloads, chain reads
//     answered from memory on both sides;
//  2. latency (p50, p99) of a call to the same route free, paid with optimistic settlement,
//     paid with synchronous settlement and paid through a remote standard facilitator (the
//     official @x402/core one with @x402/evm's exact scheme under Node, settle/npm/facilitator.mjs,
//     which always settles before delivery), through the real server and gate on the embedded
//     chain; and paid optimistically with signed receipts (EIP-712, JWS), whose p50 less the
//     optimistic one's is what signing adds to a paid call;
//  3. receipts signed per second on one core (the extension's receipt and the delivery
//     statement, as each paid call signs them).
//
// It needs node and settle/npm (ops/setup.d/x402.sh). Run from the repository root.
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/receipt"
	"github.com/peage/appliance/ops/benchutil"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

func main() {
	seconds := flag.Float64("seconds", 3, "duration of each verification run")
	calls := flag.Int("calls", 400, "calls per latency series")
	flag.Parse()
	err := benchutil.Requires("node", "settle/npm/node_modules")
	if err == nil {
		err = run(*seconds, *calls)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench x402:", err)
		os.Exit(1)
	}
}

type memChain struct{}

func (memChain) AuthorizationState(context.Context, common.Address, common.Address, common.Hash) (bool, error) {
	return false, nil
}
func (memChain) BalanceOf(context.Context, common.Address, common.Address) (*big.Int, error) {
	return big.NewInt(1e15), nil
}
func (memChain) IsValidSignature(context.Context, common.Address, common.Hash, []byte) (bool, error) {
	return false, nil
}

type benchCase struct {
	Payload      x402.PaymentPayload      `json:"payload"`
	Requirements x402.PaymentRequirements `json:"requirements"`
}

func run(seconds float64, calls int) error {
	runtime.GOMAXPROCS(1) // per core: both sides run one thread of verification
	ours, ref, err := verifyThroughput(seconds)
	var signed map[string]float64
	if err == nil {
		signed, err = signingThroughput(seconds)
	}
	runtime.GOMAXPROCS(runtime.NumCPU())
	if err != nil {
		return err
	}
	lat, err := latencies(calls)
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "x402 verification (one core)\tops/s\tratio vs reference\t")
	fmt.Fprintf(w, "reference @x402/evm verify (node)\t%.0f\t1.0x\t\n", ref)
	fmt.Fprintf(w, "settle/exact Verifier\t%.0f\t%.1fx\t(target >= 20x)\n", ours, ours/ref)
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "paid call latency (embedded chain)\tp50\tp99\tp50 - free p50\ttarget (issue 33)\t")
	free := lat[0]
	byName := map[string]series{}
	for _, l := range lat {
		verdict := ""
		if t, ok := latencyTargets[l.name]; ok {
			verdict = fmt.Sprintf("<= %s: ", ms(t)) + map[bool]string{true: "holds", false: "FAILS"}[l.p50-free.p50 <= t]
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t\n", l.name, ms(l.p50), ms(l.p99), ms(l.p50-free.p50), verdict)
		byName[l.name] = l
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "what signed receipts add (interleaved with the same calls without)\tp50\tp99\t\t")
	for _, m := range []string{receiptsMode, receiptsJWSMode} {
		with, without := byName[modeNames[m]], byName[modeNames[m]+", without"]
		fmt.Fprintf(w, "%s\t%s\t%s\t(target p50 < 0.10 ms)\t\n", modeNames[m], ms(with.p50-without.p50), ms(with.p99-without.p99))
	}
	fmt.Fprintln(w, "\t\t\t")
	fmt.Fprintln(w, "receipts signed (one core)\tper second\tper receipt\t\t")
	for _, f := range []string{receipt.FormatEIP712, receipt.FormatJWS} {
		fmt.Fprintf(w, "receipt + delivery statement, %s\t%.0f\t%.1f µs\t\t\n", f, signed[f], 1e6/signed[f])
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Println("synchronous waits for its block (~1 s on the embedded chain, ~2 s on Base); the remote facilitator always settles synchronously, one HTTP hop more")
	return nil
}

// latencyTargets are issue 33's bounds on a paid call's p50 over the free call's.
var latencyTargets = map[string]time.Duration{"paid, optimistic": 1500 * time.Microsecond, "paid, batch voucher": 500 * time.Microsecond}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func verifyThroughput(seconds float64) (ours, ref float64, err error) {
	now := time.Now()
	reqs := x402.PaymentRequirements{Scheme: "exact", Network: "eip155:8453", Amount: "10000",
		Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
		MaxTimeoutSeconds: 300, Extra: &x402.Extra{Name: "USD Coin", Version: "2"}}
	cases := make([]benchCase, 256)
	for i := range cases {
		key, err := crypto.GenerateKey()
		if err != nil {
			return 0, 0, err
		}
		p, err := exact.NewPayload(key, 2, &reqs, &x402.ResourceInfo{URL: "https://example/v1/x"}, now)
		if err != nil {
			return 0, 0, err
		}
		cases[i] = benchCase{Payload: *p, Requirements: reqs}
	}
	file := filepath.Join(os.TempDir(), "peage-x402-bench.json")
	b, _ := json.Marshal(cases)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		return 0, 0, err
	}
	defer os.Remove(file)

	// Ours: the same JSON in, as a facilitator receives it.
	v := &exact.Verifier{Reader: memChain{}, ValidBeforeMargin: 6 * time.Second, Skew: 5 * time.Second}
	fr := &x402.FacilitatorRequirements{PaymentRequirements: reqs}
	raw := make([][]byte, len(cases))
	for i := range cases {
		raw[i], _ = json.Marshal(cases[i].Payload)
	}
	ctx := context.Background()
	n, start := 0, time.Now()
	for time.Since(start).Seconds() < seconds {
		var p x402.PaymentPayload
		if err := json.Unmarshal(raw[n%len(raw)], &p); err != nil {
			return 0, 0, err
		}
		if _, bad, err := v.Verify(ctx, &p, fr); err != nil || bad != nil {
			return 0, 0, fmt.Errorf("our verifier refused a valid payload: %v %v", bad, err)
		}
		n++
	}
	ours = float64(n) / time.Since(start).Seconds()

	out, err := exec.Command("node", filepath.Join("settle", "npm", "bench-verify.mjs"), file, strconv.FormatFloat(seconds, 'f', 1, 64)).Output()
	if err != nil {
		return 0, 0, fmt.Errorf("reference verifier (node settle/npm/bench-verify.mjs): %w", err)
	}
	var res struct {
		Ops     float64 `json:"ops"`
		Seconds float64 `json:"seconds"`
		Valid   float64 `json:"valid"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return 0, 0, err
	}
	if res.Valid != res.Ops {
		return 0, 0, fmt.Errorf("reference verifier refused %v of %v valid payloads", res.Ops-res.Valid, res.Ops)
	}
	return ours, res.Ops / res.Seconds, nil
}

type series struct {
	name     string
	p50, p99 time.Duration
}

// latencies serves one route three ways (free, paid optimistic, paid synchronous) from the
// real server, gate and facilitator on the embedded chain, and times calls with pre-signed
// payments so signing is not counted.
func latencies(calls int) ([]series, error) {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "peage-x402-bench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dev, err := settle.StartDev(ctx, dir, nil)
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	fc, err := client.New(dev.Addr())
	if err != nil {
		return nil, err
	}
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 300}
	handler := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	const price = 1_000
	var out []series
	remote, stopRemote, err := startRemoteFacilitator(dev)
	if err != nil {
		return nil, err
	}
	defer stopRemote()
	for _, mode := range []string{"free", x402.ModeOptimistic, x402.ModeSync, remoteMode, batchMode} {
		e := catalog.Entry{Method: "GET", Path: "/v1/bench/route", Summary: "bench", Kind: catalog.Paid, Price: price, Timeout: benchTimeout, Handler: handler}
		if mode == "free" {
			e.Kind, e.Price = catalog.Free, 0
		}
		cat, err := catalog.New([]catalog.Entry{e})
		if err != nil {
			return nil, err
		}
		policy := paywall.Policy{Settlement: mode, OptimisticMaxPrice: price}
		var f paywall.Facilitator = fc
		switch mode {
		case batchMode:
			cfg.ReceiverAuthorizer, cfg.WithdrawDelaySeconds = dev.ReceiverAuthorizer, 86_400
			policy.Settlement = x402.ModeOptimistic
		case remoteMode:
			f, policy.Settlement = &client.Standard{C: remote}, x402.ModeSync
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		base := "http://" + ln.Addr().String()
		gate := paywall.New(cfg, policy, f, paywall.GateOptions{})
		scfg := server.DefaultConfig()
		scfg.Addr, scfg.BaseURL = ln.Addr().String(), base
		scfg.FreePerMinute = 0 // the free baseline is one client calling in a loop; it measures the paywall, not the free-call limit
		srv := server.New(scfg, cat, server.Options{Gate: gate, Pay: cfg})
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(sctx, ln) }()
		n := calls
		if mode == x402.ModeSync || mode == remoteMode {
			// Each synchronous call waits for its block, and the embedded chain seals at most
			// about one per second once a burst has used its lead: fewer calls say as much.
			n = max(20, calls/10)
		}
		s, err := timeCalls(dev, cfg, base, mode, price, n)
		stop()
		if serr := <-done; serr != nil && !errors.Is(serr, net.ErrClosed) && err == nil {
			err = serr
		}
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	cfg.ReceiverAuthorizer = ""
	for _, mode := range []string{receiptsMode, receiptsJWSMode} {
		plain, signed, err := pairedReceipts(ctx, dev, fc, cfg, mode, price, calls)
		if err != nil {
			return nil, err
		}
		out = append(out, plain, signed)
	}
	return out, nil
}

// pairedReceipts times optimistic paid calls to two servers at once, one without receipt keys
// and one with, alternating call by call so that both see the same load: the difference of
// their percentiles is what signing adds.
func pairedReceipts(ctx context.Context, dev *settle.Dev, fc *client.Client, cfg paywall.Config, mode string, price uint64, calls int) (plain, signed series, err error) {
	handler := func(context.Context, *catalog.Request) (any, error) { return map[string]any{"ok": true}, nil }
	type side struct {
		base    string
		headers []string
		d       []time.Duration
	}
	var sides [2]side
	for i := range sides {
		cat, err := catalog.New([]catalog.Entry{{Method: "GET", Path: "/v1/bench/route", Summary: "bench", Kind: catalog.Paid, Price: price, Timeout: benchTimeout, Handler: handler}})
		if err != nil {
			return plain, signed, err
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return plain, signed, err
		}
		base := "http://" + ln.Addr().String()
		var keys *receipt.Keyring
		if i == 1 {
			if keys, err = benchKeys(base); err != nil {
				return plain, signed, err
			}
		}
		gate := paywall.New(cfg, paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price}, fc, paywall.GateOptions{Receipts: keys})
		scfg := server.DefaultConfig()
		scfg.Addr, scfg.BaseURL, scfg.FreePerMinute = ln.Addr().String(), base, 0
		srv := server.New(scfg, cat, server.Options{Gate: gate, Pay: cfg, Receipts: keys})
		sctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(sctx, ln) }()
		defer func() { stop(); <-done }()
		sides[i].base = base
	}
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		return plain, signed, err
	}
	reqs := cfg.Requirements(&catalog.Entry{Price: price, Timeout: benchTimeout})
	n := calls + calls/10
	for i := range sides {
		for range n {
			p, err := exact.NewPayload(key, 2, &reqs, &x402.ResourceInfo{URL: sides[i].base + "/v1/bench/route"}, time.Now())
			if err != nil {
				return plain, signed, err
			}
			h, err := x402.Encode(p)
			if err != nil {
				return plain, signed, err
			}
			sides[i].headers = append(sides[i].headers, h)
		}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	for c := range n {
		for i := range sides {
			req, _ := http.NewRequest("GET", sides[i].base+"/v1/bench/route", nil)
			req.Header.Set(x402.HeaderPaymentSignature, sides[i].headers[c])
			if mode == receiptsJWSMode {
				req.Header.Set(paywall.HeaderOfferFormat, "jws")
			}
			start := time.Now()
			resp, err := hc.Do(req)
			if err != nil {
				return plain, signed, err
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			el := time.Since(start)
			if resp.StatusCode != 200 || (i == 1) != strings.Contains(decodedResponse(resp.Header), `"offer-receipt"`) {
				return plain, signed, fmt.Errorf("%s call %d to server %d: %d, receipt %q", mode, c, i, resp.StatusCode, decodedResponse(resp.Header))
			}
			if c >= calls/10 {
				sides[i].d = append(sides[i].d, el)
			}
		}
	}
	pct := func(name string, d []time.Duration) series {
		slices.Sort(d)
		return series{name: name, p50: d[len(d)/2], p99: d[len(d)*99/100]}
	}
	return pct(modeNames[mode]+", without", sides[0].d), pct(modeNames[mode], sides[1].d), nil
}

// benchTimeout is the bench route's deadline; the offered authorization lifetime derives from it.
const benchTimeout = 10 * time.Second

func timeCalls(dev *settle.Dev, cfg paywall.Config, base, mode string, price uint64, calls int) (series, error) {
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		return series{}, err
	}
	reqs := cfg.Requirements(&catalog.Entry{Price: price, Timeout: benchTimeout})
	headers := make([]string, calls+calls/10)
	if mode == batchMode {
		if err := signVouchers(headers, key, cfg, base, price); err != nil {
			return series{}, err
		}
	}
	for i := range headers {
		if mode == "free" || mode == batchMode {
			continue
		}
		p, err := exact.NewPayload(key, 2, &reqs, &x402.ResourceInfo{URL: base + "/v1/bench/route"}, time.Now())
		if err != nil {
			return series{}, err
		}
		if headers[i], err = x402.Encode(p); err != nil {
			return series{}, err
		}
	}
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	var d []time.Duration
	for i, h := range headers {
		req, _ := http.NewRequest("GET", base+"/v1/bench/route", nil)
		if h != "" {
			req.Header.Set(x402.HeaderPaymentSignature, h)
		}
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			return series{}, err
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		el := time.Since(start)
		if resp.StatusCode != 200 {
			reason := ""
			if pr, err := x402.DecodeRequired(resp.Header.Get(x402.HeaderPaymentRequired)); err == nil {
				reason = pr.Error
			}
			return series{}, fmt.Errorf("%s call %d answered %d %s", mode, i, resp.StatusCode, reason)
		}
		if i >= calls/10 { // the first tenth warms connections and caches
			d = append(d, el)
		}
	}
	slices.Sort(d)
	return series{name: modeNames[mode], p50: d[len(d)/2], p99: d[len(d)*99/100]}, nil
}

var modeNames = map[string]string{"free": "same route, free", x402.ModeOptimistic: "paid, optimistic", x402.ModeSync: "paid, synchronous",
	batchMode: "paid, batch voucher", remoteMode: "paid, remote facilitator (official TS)",
	receiptsMode: "paid, optimistic, signed receipt (EIP-712)", receiptsJWSMode: "paid, optimistic, signed receipt (JWS)"}

// receiptsMode and receiptsJWSMode pay as optimistic does, with receipt keys (pairedReceipts):
// each answer carries a signed receipt and delivery statement in that format.
const (
	receiptsMode    = "receipts"
	receiptsJWSMode = "receipts-jws"
)

func benchKeys(base string) (*receipt.Keyring, error) {
	text, err := receipt.NewKeyText()
	if err != nil {
		return nil, err
	}
	return receipt.ParseKeyring(text, base, time.Now())
}

func decodedResponse(h http.Header) string {
	b, _ := base64.StdEncoding.DecodeString(h.Get(x402.HeaderPaymentResponse))
	return string(b)
}

// signingThroughput counts, on one core, the receipts and delivery statements signed per
// second, as a paid call signs them (a 1 KB body hashed with each).
func signingThroughput(seconds float64) (map[string]float64, error) {
	keys, err := benchKeys("https://bench.example")
	if err != nil {
		return nil, err
	}
	body := bytes.Repeat([]byte("x"), 1024)
	out := map[string]float64{}
	for _, f := range []string{receipt.FormatEIP712, receipt.FormatJWS} {
		n, start := 0, time.Now()
		for time.Since(start).Seconds() < seconds {
			r, err := keys.Receipt(f, receipt.ReceiptPayload{Network: "eip155:8453", ResourceURL: "https://bench.example/v1/x",
				Payer: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", IssuedAt: time.Now().Unix(), Transaction: ""})
			if err != nil {
				return nil, err
			}
			if _, err := keys.Statement(r, receipt.Statement{ResourceURL: "https://bench.example/v1/x", Network: "eip155:8453",
				Scheme: "exact", Amount: "1000", Payer: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Nonce: "0x01", Settlement: receipt.Pending,
				IssuedAt: time.Now().Unix(), Request: receipt.StatementRequest{Method: "GET", Path: "/v1/x", ParamsSHA256: receipt.SHA256Hex([]byte("x?"))},
				Response: receipt.StatementResponse{Status: 200, ContentType: "application/json", Length: len(body), SHA256: receipt.SHA256Hex(body)}}); err != nil {
				return nil, err
			}
			n++
		}
		out[f] = float64(n) / time.Since(start).Seconds()
	}
	return out, nil
}

// remoteMode pays with exact through the official TypeScript facilitator as a remote standard
// facilitator (client.Standard): verify before the work, settle (and wait for the receipt)
// before delivery.
const remoteMode = "remote"

// startRemoteFacilitator runs settle/npm/facilitator.mjs on loopback against the embedded
// chain, signing with the dev payer's key (funded with ether for gas).
func startRemoteFacilitator(dev *settle.Dev) (*client.Client, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, nil, err
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	key, err := os.ReadFile(dev.PayerKey)
	if err != nil {
		return nil, nil, err
	}
	cmd := exec.Command("node", filepath.Join("settle", "npm", "facilitator.mjs"), strconv.Itoa(addr.Port), dev.RPCURL,
		strconv.FormatUint(dev.ChainID, 10), string(bytes.TrimSpace(key)))
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("node settle/npm/facilitator.mjs: %w", err)
	}
	stop := func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.HasPrefix(line, "listening") {
		stop()
		return nil, nil, fmt.Errorf("facilitator.mjs did not start: %q %v", line, err)
	}
	c, err := client.New("http://" + addr.String())
	if err != nil {
		stop()
		return nil, nil, err
	}
	return c, stop, nil
}

// batchMode pays with batch-settlement: one deposit (its transaction falls in the warm-up
// tenth), then one cumulative voucher per call, checked by one signature recovery.
const batchMode = "batch"

// signVouchers fills headers with a deposit for all the calls, then the vouchers that follow it.
func signVouchers(headers []string, key *ecdsa.PrivateKey, cfg paywall.Config, base string, price uint64) error {
	ch, err := batchpay.Open(key, cfg.BatchRequirements(&catalog.Entry{Price: price, Timeout: benchTimeout}), common.Hash{31: 1})
	if err != nil {
		return err
	}
	for i := range headers {
		var r *x402.BatchRequest
		if i == 0 {
			r, err = ch.Deposit(uint64(len(headers))*price, price, 1)
		} else {
			r, err = ch.Voucher(uint64(i+1) * price)
		}
		if err != nil {
			return err
		}
		r.PaymentPayload.Resource = &x402.ResourceInfo{URL: base + "/v1/bench/route"}
		if headers[i], err = x402.Encode(r.PaymentPayload); err != nil {
			return err
		}
	}
	return nil
}
