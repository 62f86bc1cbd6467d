package settle

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/ethereum/go-ethereum/ethclient"

	"github.com/peage/appliance/appliance/journal"
	"github.com/peage/appliance/settle/chain"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// childEnv names the environment of the crash test's child process.
const childEnv = "PEAGE_SETTLE_CRASH_CHILD"

type childSpec struct {
	RPC     string              `json:"rpc"`
	HotKey  string              `json:"hot_key"`
	USDC    string              `json:"usdc"`
	PayTo   string              `json:"pay_to"`
	Ledger  string              `json:"ledger"`
	Request x402.ReserveRequest `json:"request"`
}

// TestCrashBetweenBroadcastAndReceipt runs a settlement in a child process, kills it with
// SIGKILL right after the transaction is broadcast, and restarts the facilitator on the same
// ledger: the payment ends settled exactly once, whether the block was mined before the restart
// or after it.
func TestCrashBetweenBroadcastAndReceipt(t *testing.T) {
	if spec := os.Getenv(childEnv); spec != "" {
		crashChild(spec)
		return
	}
	for _, mineBeforeRestart := range []bool{true, false} {
		t.Run(fmt.Sprintf("mined before restart=%v", mineBeforeRestart), func(t *testing.T) {
			crashAndRecover(t, mineBeforeRestart)
		})
	}
}

func crashAndRecover(t *testing.T, mineBeforeRestart bool) {
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
	spec := childSpec{RPC: ch.RPCURL, HotKey: hex.EncodeToString(crypto.FromECDSA(ch.Hot)), USDC: ch.USDC.Hex(), PayTo: e.payTo.Hex(),
		Ledger: e.dir, Request: x402.ReserveRequest{FacilitatorRequest: *req, Route: "chain.gas", Key: "k"}}
	b, _ := json.Marshal(spec)
	specFile := filepath.Join(t.TempDir(), "spec.json")
	if err := os.WriteFile(specFile, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashBetweenBroadcastAndReceipt$")
	cmd.Env = append(os.Environ(), childEnv+"="+specFile)
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
		if h, ok := strings.CutPrefix(sc.Text(), "BROADCAST "); ok {
			txHash = h
			break
		}
	}
	if txHash == "" {
		_ = cmd.Process.Kill()
		t.Fatal("child ended without broadcasting")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
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
	b, err := os.ReadFile(specFile)
	if err != nil {
		panic(err)
	}
	var spec childSpec
	if err := json.Unmarshal(b, &spec); err != nil {
		panic(err)
	}
	ctx := context.Background()
	rpc, err := ethclient.DialContext(ctx, spec.RPC)
	if err != nil {
		panic(err)
	}
	key, err := crypto.HexToECDSA(spec.HotKey)
	if err != nil {
		panic(err)
	}
	f, err := New(ctx, Options{Network: devchain.Network, Asset: common.HexToAddress(spec.USDC), TokenName: devchain.TokenName,
		TokenVersion: devchain.TokenVersion, PayTo: common.HexToAddress(spec.PayTo), Backend: rpc, HotKey: key,
		LedgerDir: spec.Ledger, LedgerSync: journal.SyncAlways, ExposureCap: price,
		Sender:      chain.SenderOptions{PollInterval: 10 * time.Millisecond, ReceiptTimeout: time.Hour, ReplaceAfter: time.Hour},
		OnBroadcast: func(_ string, tx common.Hash) { fmt.Printf("BROADCAST %s\n", tx.Hex()) },
	})
	if err != nil {
		panic(err)
	}
	res, err := f.Reserve(ctx, &spec.Request)
	if err != nil || !res.IsValid {
		panic(fmt.Sprintf("reserve: %+v %v", res, err))
	}
	_, _ = f.Complete(ctx, res.ID, x402.ModeSync)
	select {} // the parent kills us
}
