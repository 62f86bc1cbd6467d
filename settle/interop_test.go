package settle_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// TestReferenceClientPays has the official npm client (@x402/fetch + @x402/evm + viem) pay the
// real server and facilitator on the embedded chain. It fails, not skips, when node or the
// packages are missing: ops/setup.d/x402.sh installs them.
func TestReferenceClientPays(t *testing.T) {
	testenv.NeedsNode(t)
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal("node is not installed; run ops/setup.sh")
	}
	if _, err := os.Stat(filepath.Join("npm", "node_modules", "@x402", "fetch", "package.json")); err != nil {
		t.Fatal("@x402/fetch is not installed in settle/npm; run ops/setup.d/x402.sh")
	}
	for _, mode := range []string{x402.ModeSync, x402.ModeOptimistic} {
		t.Run(mode, func(t *testing.T) {
			w := newWorld(t, paywall.Policy{Settlement: mode, OptimisticMaxPrice: 100_000})
			key, err := os.ReadFile(w.dev.PayerKey)
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(node, filepath.Join("npm", "interop.mjs"), w.base+"/v1/test/echo?q=interop", strings.TrimSpace(string(key)), w.dev.Asset, "100000")
			out, err := cmd.Output()
			if err != nil {
				var stderr []byte
				if ee, ok := err.(*exec.ExitError); ok {
					stderr = ee.Stderr
				}
				t.Fatalf("node client: %v\n%s\n%s", err, out, stderr)
			}
			var got struct {
				Status  int                      `json:"status"`
				Body    string                   `json:"body"`
				Receipt *x402.SettlementResponse `json:"receipt"`
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("client output %s: %v", out, err)
			}
			if got.Status != 200 || got.Receipt == nil || !got.Receipt.Success || !strings.Contains(got.Body, `"q":"interop"`) {
				t.Fatalf("reference client: %+v", got)
			}
			if mode == x402.ModeSync && got.Receipt.Transaction == "" {
				t.Fatal("synchronous receipt without a transaction")
			}
			for len(w.dev.Facilitator.Ledger().List(ledger.Settled)) != 1 {
				time.Sleep(5 * time.Millisecond) // the optimistic queue settles in the background
			}
			if b := w.balance(t, w.dev.PayTo); b != price {
				t.Fatalf("payTo received %d, want %d", b, price)
			}
		})
	}
}
