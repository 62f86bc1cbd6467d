package settle_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/chain"
	settleclient "github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// gateChildEnv names the environment of the gate crash test's child process (the settle
// daemon that is killed).
const gateChildEnv = "PEAGE_SETTLE_GATE_CRASH_CHILD"

type gateDaemon struct {
	RPC, HotKey, USDC, PayTo, AuthKey, Ledger, Socket string
}

// open starts a batch-settlement facilitator on d's chain and ledger, serving on d's socket.
func (d *gateDaemon) open(ctx context.Context, b chain.Backend) (*settle.Facilitator, func() error, error) {
	hot, err := crypto.HexToECDSA(d.HotKey)
	if err != nil {
		return nil, nil, err
	}
	auth, err := crypto.HexToECDSA(d.AuthKey)
	if err != nil {
		return nil, nil, err
	}
	f, err := settle.New(ctx, settle.Options{Network: devchain.Network, Asset: common.HexToAddress(d.USDC), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, PayTo: common.HexToAddress(d.PayTo), Backend: b, HotKey: hot, LedgerDir: d.Ledger,
		LedgerSync: journal.SyncAlways, ExposureCap: 10 * price, ReceiverAuthorizer: auth,
		Sender: chain.SenderOptions{PollInterval: 5 * time.Millisecond, ReceiptTimeout: 20 * time.Second}})
	if err != nil {
		return nil, nil, err
	}
	l, err := settle.ListenUnix(d.Socket)
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- settle.Serve(sctx, f.Handler(), obs.Discard(), l) }()
	return f, func() error { cancel(); <-served; return f.Close() }, nil
}

func gateCrashChild(specFile string) {
	var d gateDaemon
	b, err := os.ReadFile(specFile)
	if err == nil {
		err = json.Unmarshal(b, &d)
	}
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	rpc, err := ethclient.DialContext(ctx, d.RPC)
	if err != nil {
		panic(err)
	}
	if _, _, err := d.open(ctx, rpc); err != nil {
		panic(err)
	}
	fmt.Println("READY")
	select {} // the parent kills us
}

// unixClient is an HTTP client whose every connection goes to the socket at path.
func unixClient(path string) *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", path)
	}}}
}

// startGateChild starts the embedded chain and, in a child process running test, the settle
// daemon on it (gateCrashChild), serving on d.Socket; dir holds its ledger and socket.
func startGateChild(t *testing.T, test string) (ch *devchain.Chain, d gateDaemon, dir string, child *exec.Cmd) {
	t.Helper()
	ch, err := devchain.Start(context.Background(), devchain.Options{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })
	payToKey, _ := crypto.GenerateKey()
	auth, _ := crypto.GenerateKey()
	payTo := crypto.PubkeyToAddress(payToKey.PublicKey)
	dir = t.TempDir()
	d = gateDaemon{RPC: ch.RPCURL, HotKey: hex.EncodeToString(crypto.FromECDSA(ch.Hot)), USDC: ch.USDC.Hex(), PayTo: payTo.Hex(),
		AuthKey: hex.EncodeToString(crypto.FromECDSA(auth)), Ledger: filepath.Join(dir, "ledger"), Socket: filepath.Join(dir, "settle.sock")}
	specFile := filepath.Join(dir, "spec.json")
	b, _ := json.Marshal(d)
	if err := os.WriteFile(specFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	child = exec.Command(os.Args[0], "-test.run=^"+test+"$")
	child.Env = append(os.Environ(), gateChildEnv+"="+specFile)
	child.Stderr = os.Stderr
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = child.Process.Kill(); _ = child.Wait() })
	if sc := bufio.NewScanner(out); !sc.Scan() || sc.Text() != "READY" {
		t.Fatal("the settle child did not start")
	}
	return ch, d, dir, child
}

// TestSettleKilledBetweenBatchCompleteAndItsAnswer: the settle daemon (a child process)
// commits a paid call's deposit and charge, answers /batch/complete, and is killed with SIGKILL
// before the answer reaches the gate (a relay between them drops it). The daemon is restarted
// on the same journals; the gate asks again with the same completion, gets the same answer and
// delivers: the channel is charged exactly once, the deposit made once, and the payer goes on.
// serveRelay serves relay, the test's stand-in between the gate and the settle child, on a
// Unix socket in dir, and returns the gate's client of it.
func serveRelay(t *testing.T, ctx context.Context, dir string, relay http.Handler) *settleclient.Client {
	t.Helper()
	relaySock := filepath.Join(dir, "relay.sock")
	l, err := net.Listen("unix", relaySock)
	if err != nil {
		t.Fatal(err)
	}
	rctx, stopRelay := context.WithCancel(ctx)
	relayDone := make(chan error, 1)
	go func() { relayDone <- settle.Serve(rctx, relay, obs.Discard(), l) }()
	t.Cleanup(func() { stopRelay(); <-relayDone })
	fc, err := settleclient.New("unix:" + relaySock)
	if err != nil {
		t.Fatal(err)
	}
	return fc
}

func TestSettleKilledBetweenBatchCompleteAndItsAnswer(t *testing.T) {
	testenv.NeedsChain(t)
	if spec := os.Getenv(gateChildEnv); spec != "" {
		gateCrashChild(spec)
		return
	}
	ctx := context.Background()
	ch, d, dir, child := startGateChild(t, "TestSettleKilledBetweenBatchCompleteAndItsAnswer")
	auth, _ := crypto.HexToECDSA(d.AuthKey)
	payTo := common.HexToAddress(d.PayTo)

	// The relay between the gate and the daemon: it passes everything, except that the first
	// /batch/complete's answer, once the daemon gave it, is dropped, the daemon killed and a
	// new one started on the same journals and socket.
	var mu sync.Mutex
	var restarted *settle.Facilitator
	completes := 0
	upstream := unixClient(d.Socket)
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://settle"+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := upstream.Do(req)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		mu.Lock()
		if r.URL.Path == "/batch/complete" {
			completes++
			if completes == 1 {
				if err := child.Process.Signal(syscall.SIGKILL); err != nil {
					t.Error(err)
				}
				_ = child.Wait()
				upstream.CloseIdleConnections()
				f, stop, err := d.open(context.Background(), ch.Client())
				if err != nil {
					t.Error(err)
				} else {
					restarted = f
					t.Cleanup(func() { _ = stop() })
				}
				mu.Unlock()
				panic(http.ErrAbortHandler) // the answer is lost
			}
		}
		mu.Unlock()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	})
	fc := serveRelay(t, ctx, dir, relay)
	cfg := paywall.Config{Network: devchain.Network, Asset: ch.USDC.Hex(), PayTo: payTo.Hex(), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, MaxTimeoutSeconds: 60, ReceiverAuthorizer: crypto.PubkeyToAddress(auth.PublicKey).Hex(),
		WithdrawDelaySeconds: batch.MinWithdrawDelay, MinDeposit: 50 * price}
	policy := paywall.DefaultPolicy()
	policy.SettleTimeoutSeconds = 30
	cat := testCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.New(cfg, policy, fc, paywall.GateOptions{}), Pay: cfg})
	w := &world{base: h.BaseURL, cfg: cfg, key: ch.Payer, cat: cat}
	entry, _, err := cat.Lookup("GET", "/v1/test/echo")
	if err != nil {
		t.Fatal(err)
	}
	payer, err := batchpay.Open(ch.Payer, cfg.BatchRequirements(entry), common.Hash{31: 7})
	if err != nil {
		t.Fatal(err)
	}
	call := func(req *x402.BatchRequest) answer {
		t.Helper()
		hdr, err := x402.Encode(req.PaymentPayload)
		if err != nil {
			t.Fatal(err)
		}
		return w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: hdr})
	}
	start, _ := ch.Balance(ctx, ch.PayerAddress())

	dep, err := payer.Deposit(50*price, price, 1)
	if err != nil {
		t.Fatal(err)
	}
	a := call(dep)
	mu.Lock()
	f, asked := restarted, completes
	mu.Unlock()
	if f == nil || asked != 2 {
		t.Fatalf("the daemon was not killed and restarted between two completions (%d asked)", asked)
	}
	if a.status != 200 || !strings.Contains(a.body, `"q":"x"`) {
		t.Fatalf("the call whose answer was lost: %d %s", a.status, a.body)
	}
	var receipt x402.BatchSettleResponse
	raw, _ := base64.StdEncoding.DecodeString(a.header.Get(x402.HeaderPaymentResponse))
	if json.Unmarshal(raw, &receipt) != nil || !receipt.Success || receipt.Transaction == "" || receipt.Extra == nil ||
		receipt.Extra.ChargedAmount != strconv.Itoa(price) || receipt.Extra.ChannelState.ChargedCumulativeAmount != strconv.Itoa(price) {
		t.Fatalf("receipt of the retried completion: %s", raw)
	}
	c, ok := f.Channels().Get(payer.ID.Hex())
	if !ok || c.Charged != price || c.Calls != 1 || c.Balance != 50*price {
		t.Fatalf("channel after the lost answer: %+v", c)
	}
	if g := f.ChannelsReport().Gas.Batch[ledger.SpendDeposit]; g.Transactions != 1 {
		t.Fatalf("deposits in the ledger: %+v", g)
	}
	if now, _ := ch.Balance(ctx, ch.PayerAddress()); new(big.Int).Sub(start, now).Int64() != 50*price {
		t.Fatalf("the payer paid %s, want one deposit", new(big.Int).Sub(start, now))
	}

	// The payer goes on from the answer it got.
	next, err := payer.Voucher(2 * price)
	if err != nil {
		t.Fatal(err)
	}
	if a := call(next); a.status != 200 {
		t.Fatalf("the next call: %d %s", a.status, a.body)
	}
	if _, err := f.ClaimOnce(ctx, settle.ClaimPolicy{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ch.Balance(ctx, payTo); got.Int64() != 2*price {
		t.Fatalf("payTo received %s, want %d", got, 2*price)
	}
}

// TestSettleKilledBetweenReserveAndComplete: the settle daemon (a child process) answers an
// exact payment's /reserve, which no longer waits for an fsync, and is killed with SIGKILL
// while the paid work runs. Restarted on the same journals, it still finds the reservation
// (handed to the OS before the answer, it survives the kill) and releases it as an
// interrupted call: the gate's completion is refused, nothing is delivered or charged, and
// the payer's very same authorization pays for the call afterwards.
func TestSettleKilledBetweenReserveAndComplete(t *testing.T) {
	testenv.NeedsChain(t)
	if spec := os.Getenv(gateChildEnv); spec != "" {
		gateCrashChild(spec)
		return
	}
	ctx := context.Background()
	ch, d, dir, child := startGateChild(t, "TestSettleKilledBetweenReserveAndComplete")
	payTo := common.HexToAddress(d.PayTo)

	// The relay between the gate and the daemon: before the first /complete reaches the
	// daemon, the daemon is killed and a new one started on the same journals and socket.
	var mu sync.Mutex
	var restarted *settle.Facilitator
	upstream := unixClient(d.Socket)
	relay := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		if r.URL.Path == "/complete" && restarted == nil {
			if err := child.Process.Signal(syscall.SIGKILL); err != nil {
				t.Error(err)
			}
			_ = child.Wait()
			upstream.CloseIdleConnections()
			f, stop, err := d.open(context.Background(), ch.Client())
			if err != nil {
				t.Error(err)
			} else {
				restarted = f
				t.Cleanup(func() { _ = stop() })
			}
		}
		mu.Unlock()
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, "http://settle"+r.URL.RequestURI(), bytes.NewReader(body))
		req.Header = r.Header.Clone()
		resp, err := upstream.Do(req)
		if err != nil {
			panic(http.ErrAbortHandler)
		}
		answer, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(answer)
	})
	fc := serveRelay(t, ctx, dir, relay)
	cfg := paywall.Config{Network: devchain.Network, Asset: ch.USDC.Hex(), PayTo: payTo.Hex(), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, MaxTimeoutSeconds: 60}
	policy := paywall.Policy{Settlement: x402.ModeOptimistic, OptimisticMaxPrice: price, SettleTimeoutSeconds: 30}
	cat := testCatalog(t)
	h := apitest.Start(t, cat, apitest.Options{Gate: paywall.New(cfg, policy, fc, paywall.GateOptions{}), Pay: cfg})
	w := &world{base: h.BaseURL, cfg: cfg, key: ch.Payer, cat: cat}
	hdr := w.header(t, ch.Payer, "/v1/test/echo", price, nil, nil)
	start, _ := ch.Balance(ctx, ch.PayerAddress())

	a := w.get(t, "/v1/test/echo", map[string]string{"q": "x"}, map[string]string{x402.HeaderPaymentSignature: hdr})
	mu.Lock()
	f := restarted
	mu.Unlock()
	if f == nil {
		t.Fatal("the daemon was not killed between the reservation and the completion")
	}
	if a.status == 200 || strings.Contains(a.body, `"q":"x"`) {
		t.Fatalf("the call whose daemon died during the work was delivered: %d %s", a.status, a.body)
	}
	recs := f.Ledger().List()
	if len(recs) != 1 || recs[0].Status != ledger.Released || recs[0].Route != "test.echo" {
		t.Fatalf("ledger after the restart: %+v", recs)
	}

	// The same authorization pays for the call now, once.
	a = w.get(t, "/v1/test/echo", map[string]string{"q": "y"}, map[string]string{x402.HeaderPaymentSignature: hdr})
	if a.status != 200 || !strings.Contains(a.body, `"q":"y"`) || a.receipt == nil || !a.receipt.Success {
		t.Fatalf("the call paid again with the released authorization: %d %s", a.status, a.body)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if r, _ := f.Ledger().Get(recs[0].ID); r.Status == ledger.Settled {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the payment did not settle")
		}
	}
	if now, _ := ch.Balance(ctx, ch.PayerAddress()); new(big.Int).Sub(start, now).Int64() != price {
		t.Fatalf("the payer paid %s, want one call", new(big.Int).Sub(start, now))
	}
	if got, _ := ch.Balance(ctx, payTo); got.Int64() != price {
		t.Fatalf("payTo received %s, want %d", got, price)
	}
}
