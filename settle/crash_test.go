package settle

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// childEnv names the environment of the crash test's child process.
const childEnv = "PEAGE_SETTLE_CRASH_CHILD"

// childChain is what a crash test's child needs to run a facilitator on the parent's chain
// and ledger directory.
type childChain struct {
	RPC    string `json:"rpc"`
	HotKey string `json:"hot_key"`
	USDC   string `json:"usdc"`
	PayTo  string `json:"pay_to"`
	Ledger string `json:"ledger"`
	// StopAtReceipt (a ledger.Spend* kind): the child stops for good once it journaled the
	// receipt of a batch transaction of that kind, before anything else is written.
	StopAtReceipt string `json:"stop_at_receipt,omitempty"`
	// StopBeforeSend: the child stops for good at its first broadcast, once the transaction is
	// journaled and before the node gets it (printing "SENDING <hash>"), as a process killed
	// between the two leaves it.
	StopBeforeSend bool `json:"stop_before_send,omitempty"`
	// StopBeforeReplacement: the child stops for good at its first replacement of a
	// transaction (another transaction at an account nonce it sent already), once it is
	// journaled and before the node gets it (printing "SENDING <hash>").
	StopBeforeReplacement bool `json:"stop_before_replacement,omitempty"`
	// ReplaceAfter is the child's Sender.ReplaceAfter [an hour: never].
	ReplaceAfter time.Duration `json:"replace_after,omitempty"`
	// Claim is the child's claimer policy (zero: no claimer, nor its recovery at start).
	Claim ClaimPolicy `json:"claim,omitzero"`
}

// unsent is a backend whose broadcast never reaches the node: it announces the transaction
// and stops the process there.
type unsent struct{ chain.Backend }

func (unsent) SendTransaction(_ context.Context, tx *types.Transaction) error {
	fmt.Printf("SENDING %s\n", tx.Hash().Hex())
	select {} // the parent kills us
}

// unreplaced is a backend whose broadcast of a replacement (a transaction at an account nonce
// this process sent another one at) never reaches the node: it announces the replacement and
// stops the process there.
type unreplaced struct {
	chain.Backend
	mu   sync.Mutex
	sent map[uint64]common.Hash
}

func (u *unreplaced) SendTransaction(ctx context.Context, tx *types.Transaction) error {
	u.mu.Lock()
	first, seen := u.sent[tx.Nonce()]
	if !seen {
		u.sent[tx.Nonce()] = tx.Hash()
	}
	u.mu.Unlock()
	if seen && first != tx.Hash() {
		fmt.Printf("SENDING %s\n", tx.Hash().Hex())
		select {} // the parent kills us
	}
	return u.Backend.SendTransaction(ctx, tx)
}

type childSpec struct {
	childChain
	Request x402.ReserveRequest `json:"request"`
}

// facilitator starts the child's facilitator (auth nil: no batch-settlement), which prints
// "BROADCAST <hash>" after each broadcast and "RECEIPT <kind> <hash>" after each batch
// transaction's receipt, and never gives up waiting for a receipt (nor re-prices a transaction
// unless ReplaceAfter is set).
func (c *childChain) facilitator(ctx context.Context, auth *ecdsa.PrivateKey) *Facilitator {
	client, err := ethclient.DialContext(ctx, c.RPC)
	if err != nil {
		panic(err)
	}
	var rpc chain.Backend = client
	if c.StopBeforeSend {
		rpc = unsent{rpc}
	}
	if c.StopBeforeReplacement {
		rpc = &unreplaced{Backend: rpc, sent: map[uint64]common.Hash{}}
	}
	replaceAfter := c.ReplaceAfter
	if replaceAfter == 0 {
		replaceAfter = time.Hour
	}
	hot, err := crypto.HexToECDSA(c.HotKey)
	if err != nil {
		panic(err)
	}
	f, err := New(ctx, Options{Network: devchain.Network, Asset: common.HexToAddress(c.USDC), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, PayTo: common.HexToAddress(c.PayTo), Backend: rpc, HotKey: hot,
		LedgerDir: c.Ledger, LedgerSync: journal.SyncAlways, ExposureCap: price, ReceiverAuthorizer: auth,
		Claim:       c.Claim,
		Sender:      chain.SenderOptions{PollInterval: 10 * time.Millisecond, ReceiptTimeout: time.Hour, ReplaceAfter: replaceAfter},
		OnBroadcast: func(_ string, tx common.Hash) { fmt.Printf("BROADCAST %s\n", tx.Hex()) },
		OnReceipt: func(kind string, tx common.Hash) {
			fmt.Printf("RECEIPT %s %s\n", kind, tx.Hex())
			if kind == c.StopAtReceipt {
				select {} // the parent kills us
			}
		},
	})
	if err != nil {
		panic(err)
	}
	return f
}

func readChildSpec(specFile string, v any) {
	b, err := os.ReadFile(specFile)
	if err != nil {
		panic(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
}

// killAt runs the test named test in a child process given spec through the environment
// variable envName, SIGKILLs it at the first line of its output that starts with prefix
// ("BROADCAST ": once it announced a broadcast), and returns the rest of that line (the
// transaction's hash).
func killAt(t *testing.T, test, envName string, spec any, prefix string) string {
	t.Helper()
	b, _ := json.Marshal(spec)
	specFile := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$")
	cmd.Env = append(os.Environ(), envName+"="+specFile)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var txHash string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if h, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			txHash = h
			break
		}
	}
	if txHash == "" {
		_ = cmd.Process.Kill()
		t.Fatalf("child ended without printing %q", prefix)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	return txHash
}

// TestCrashBetweenBroadcastAndReceipt runs a settlement in a child process, kills it with
// SIGKILL right after the transaction is broadcast (or between its journal record and its
// send: the node never got it), and restarts the facilitator on the same ledger: the payment
// ends settled exactly once, whether the block was mined before the restart or after it.
func TestCrashBetweenBroadcastAndReceipt(t *testing.T) {
	if spec := os.Getenv(childEnv); spec != "" {
		crashChild(spec)
		return
	}
	for _, mineBeforeRestart := range []bool{true, false} {
		t.Run(fmt.Sprintf("mined before restart=%v", mineBeforeRestart), func(t *testing.T) {
			crashAndRecover(t, mineBeforeRestart, false)
		})
	}
	t.Run("journaled, before its send", func(t *testing.T) { crashAndRecover(t, false, true) })
}

func crashAndRecover(t *testing.T, mineBeforeRestart, unsent bool) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{ManualMine: true, HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	k, _ := crypto.GenerateKey()
	e := &env{ch: ch, payTo: crypto.PubkeyToAddress(k.PublicKey), dir: t.TempDir()}
	before := e.balance(t, ch.PayerAddress())
	req := e.request(t, ch.Payer, nil)
	spec := childSpec{childChain: childChain{RPC: ch.RPCURL, HotKey: hex.EncodeToString(crypto.FromECDSA(ch.Hot)), USDC: ch.USDC.Hex(), PayTo: e.payTo.Hex(),
		Ledger: e.dir, StopBeforeSend: unsent}, Request: x402.ReserveRequest{FacilitatorRequest: *req, Route: "chain.gas", Key: "k"}}
	kill := "BROADCAST "
	if unsent {
		kill = "SENDING "
	}
	txHash := killAt(t, "TestCrashBetweenBroadcastAndReceipt", childEnv, spec, kill)
	if mineBeforeRestart {
		ch.Commit()
	}
	f, err := New(ctx, e.options())
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		recs := f.Ledger().List()
		if len(recs) != 1 {
			t.Fatalf("ledger holds %d records after restart, want 1", len(recs))
		}
		if recs[0].Status == ledger.Settled {
			if recs[0].Tx != txHash && !mineBeforeRestart {
				// Without the block, the restart re-broadcast the very same signed transaction.
				t.Fatalf("settled by %s, want the broadcast %s", recs[0].Tx, txHash)
			}
			break
		}
		if recs[0].Status != ledger.Broadcast {
			t.Fatalf("payment is %s after restart", recs[0].Status)
		}
		ch.Commit()
		time.Sleep(5 * time.Millisecond)
	}
	if got := before - e.balance(t, ch.PayerAddress()); got != price {
		t.Fatalf("payer paid %d, want %d", got, price)
	}
	if got := e.balance(t, e.payTo); got != price {
		t.Fatalf("payTo received %d, want %d", got, price)
	}
	if rev := f.Revenue(); len(rev) != 1 || rev[0].Amount != price {
		t.Fatalf("revenue %+v", rev)
	}
}

// crashChild reserves and settles one payment, announces the broadcast and then waits for a
// receipt that never comes (nobody mines) until it is killed.
func crashChild(specFile string) {
	var spec childSpec
	readChildSpec(specFile, &spec)
	ctx := context.Background()
	f := spec.facilitator(ctx, nil)
	res, err := f.Reserve(ctx, &spec.Request)
	if err != nil || !res.IsValid {
		panic(fmt.Sprintf("reserve: %+v %v", res, err))
	}
	_, _ = f.Complete(ctx, res.ID, x402.ModeSync)
	select {} // the parent kills us
}

// claimChildEnv names the environment of the claim crash test's child process.
const claimChildEnv = "PEAGE_SETTLE_CLAIM_CRASH_CHILD"

type claimChildSpec struct {
	childChain
	AuthKey string `json:"auth_key"`
}

// TestCrashBetweenClaimBroadcastAndReceipt: the claimer runs in a child process that is killed
// with SIGKILL right after its claim transaction is broadcast (or between its journal record
// and its send: the node never got it, and the restart sends it again); the facilitator
// restarted on the same channel journal ends with every channel claimed once (no round sends
// a second claim while the first is in flight) and payTo paid exactly the charges, whether the
// claim was mined before the restart or after.
func TestCrashBetweenClaimBroadcastAndReceipt(t *testing.T) {
	if spec := os.Getenv(claimChildEnv); spec != "" {
		claimCrashChild(spec)
		return
	}
	for _, mineBeforeRestart := range []bool{true, false} {
		t.Run(fmt.Sprintf("mined before restart=%v", mineBeforeRestart), func(t *testing.T) {
			claimCrashAndRecover(t, mineBeforeRestart, false)
		})
	}
	t.Run("journaled, before its send", func(t *testing.T) { claimCrashAndRecover(t, false, true) })
}

// mining seals blocks until the returned stop is called (the chain mines by hand here).
func mining(ch *devchain.Chain) (stop func()) {
	done, quit := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-quit:
				return
			case <-time.After(5 * time.Millisecond):
				ch.Commit()
			}
		}
	}()
	return func() { close(quit); <-done }
}

// chargedThenClosed is a manually mined batch world whose channel was opened with a deposit
// and charged a voucher, its daemon closed: where the claim crash tests start a child.
func chargedThenClosed(t *testing.T) *batchEnv {
	t.Helper()
	e := newBatchEnvOn(t, devchain.Options{ManualMine: true, HTTP: true})
	stop := mining(e.ch)
	e.pay(t, e.deposit(t, 50*price, price, 1))
	e.pay(t, e.request(t, x402.BatchVoucher, 2*price, e.ch.Payer))
	stop()
	if err := e.f.Close(); err != nil {
		t.Fatal(err)
	}
	return e
}

func claimCrashAndRecover(t *testing.T, mineBeforeRestart, unsent bool) {
	ctx := context.Background()
	e := chargedThenClosed(t)

	spec := claimChildSpec{childChain: childChain{RPC: e.ch.RPCURL, HotKey: hex.EncodeToString(crypto.FromECDSA(e.ch.Hot)),
		USDC: e.ch.USDC.Hex(), PayTo: e.payTo.Hex(), Ledger: e.dir, StopBeforeSend: unsent}, AuthKey: hex.EncodeToString(crypto.FromECDSA(e.auth))}
	kill := "BROADCAST "
	if unsent {
		kill = "SENDING "
	}
	sent := killAt(t, "TestCrashBetweenClaimBroadcastAndReceipt", claimChildEnv, spec, kill)
	if mineBeforeRestart {
		e.ch.Commit()
	}

	f, err := New(ctx, e.opts)
	if err != nil {
		t.Fatal(err)
	}
	e.f = f
	defer mining(e.ch)()
	if c, _ := f.Channels().Get(e.id.Hex()); c.ClaimTx == "" {
		t.Fatal("the claim in flight was not journaled before its broadcast")
	}
	// Rounds leave the channel out while its claim is in flight (sent again at the first),
	// then mirror it and sweep.
	untilTrue(t, "the claim in flight was never mirrored and swept", func() bool {
		if _, err := f.ClaimOnce(ctx, ClaimPolicy{}); err != nil {
			t.Fatal(err)
		}
		c, _ := f.Channels().Get(e.id.Hex())
		return c.ClaimTx == "" && e.balance(t, e.payTo) == 2*price
	})
	if g := f.spends.ByKind()[ledger.SpendClaim]; g.Transactions != 1 {
		t.Fatalf("claims in the ledger: %+v, want the one", g)
	}
	c, _ := f.Channels().Get(e.id.Hex())
	if c.TotalClaimed != 2*price || c.Charged != 2*price || c.ClaimTx != "" {
		t.Fatalf("channel after recovery: %+v", c)
	}
	rep, err := f.ClaimOnce(ctx, ClaimPolicy{})
	if err != nil || rep.Channels != 0 || rep.Swept.Sign() != 0 {
		t.Fatalf("a claim round after recovery did something: %+v %v", rep, err)
	}
	if sp, _ := f.spends.Get(sent); sp.Status != ledger.TxMined || sp.Kind != ledger.SpendClaim {
		t.Fatalf("the claim journaled before the crash, %s: %+v", sent, sp)
	}
}

// claimCrashChild runs one claim round, announces the claim's broadcast, and waits for a receipt
// that never comes (nobody mines) until it is killed.
func claimCrashChild(specFile string) {
	var spec claimChildSpec
	readChildSpec(specFile, &spec)
	auth, err := crypto.HexToECDSA(spec.AuthKey)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	f := spec.facilitator(ctx, auth)
	_, _ = f.ClaimOnce(ctx, ClaimPolicy{})
	select {} // the parent kills us
}
