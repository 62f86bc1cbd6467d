package settle

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
	"github.com/peage/appliance/settle/exact"
	"github.com/peage/appliance/settle/x402"
)

// TestRunStandalone runs the daemon as `appliance settle` does: a chain reached over JSON-RPC,
// the hot key from a credentials file, the API on a Unix socket.
func TestRunStandalone(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	ch, err := devchain.Start(ctx, devchain.Options{HTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	dir := t.TempDir()
	creds := filepath.Join(dir, "creds")
	if err := os.MkdirAll(creds, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(creds, "settle-hot-key"), []byte(hex.EncodeToString(crypto.FromECDSA(ch.Hot))), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("CREDENTIALS_DIRECTORY", creds)
	payTo, _ := crypto.GenerateKey()
	cfg := DefaultConfig()
	cfg.RPCURL = ch.RPCURL
	cfg.Payment = Payment{Network: devchain.Network, Asset: ch.USDC.Hex(), TokenName: devchain.TokenName, TokenVersion: devchain.TokenVersion,
		PayTo: crypto.PubkeyToAddress(payTo.PublicKey).Hex()}
	cfg.Socket, cfg.StateDir = filepath.Join(dir, "s.sock"), filepath.Join(dir, "state")
	cfg.ReceiptTimeoutSeconds = 60

	for _, payTo := range []string{"nope", "", "0x0000000000000000000000000000000000000000"} {
		bad := cfg
		bad.Payment.PayTo = payTo
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "payment.pay_to") {
			t.Fatalf("pay_to %q: %v, want an error naming payment.pay_to", payTo, err)
		}
	}
	bad := cfg
	bad.Listen = "0.0.0.0:1"
	if err := bad.Validate(); err == nil {
		t.Fatal("a public settle.listen validated")
	}

	hotAddr := crypto.PubkeyToAddress(ch.Hot.PublicKey).Hex()
	bad = cfg
	bad.Payment.ReceiverAuthorizer = cfg.Payment.PayTo // any address but the hot key's
	if err := Run(ctx, bad, obs.Discard(), nil); err == nil || !strings.Contains(err.Error(), "payment.receiver_authorizer") {
		t.Fatalf("a receiver authorizer that is not the hot key: %v, want an error naming payment.receiver_authorizer", err)
	}
	cfg.Payment.ReceiverAuthorizer = hotAddr

	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- Run(rctx, cfg, obs.Discard(), nil) }()
	c, err := client.New("unix:" + cfg.Socket)
	if err != nil {
		t.Fatal(err)
	}
	for {
		if sup, err := c.Supported(ctx); err == nil {
			if batchAuthorizer(sup) != hotAddr {
				t.Fatalf("/supported %+v: want batch-settlement with receiverAuthorizer %s", sup.Kinds, hotAddr)
			}
			break
		}
		select {
		case err := <-done:
			t.Fatalf("daemon ended: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	r := x402.PaymentRequirements{Scheme: "exact", Network: devchain.Network, Amount: strconv.Itoa(price), Asset: cfg.Payment.Asset,
		PayTo: cfg.Payment.PayTo, MaxTimeoutSeconds: 60, Extra: &x402.Extra{Name: cfg.Payment.TokenName, Version: cfg.Payment.TokenVersion}}
	p, err := exact.NewPayload(ch.Payer, 2, &r, nil, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.Settle(ctx, &x402.FacilitatorRequest{X402Version: 2, PaymentPayload: *p, PaymentRequirements: x402.FacilitatorRequirements{PaymentRequirements: r}})
	if err != nil || !s.Success {
		t.Fatalf("settle over the socket: %+v %v", s, err)
	}
	rev, err := c.Revenue(ctx)
	if err != nil || len(rev) != 1 || rev[0].Amount != price {
		t.Fatalf("revenue %+v %v", rev, err)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("daemon stopped with %v", err)
	}
}

func batchAuthorizer(sup x402.SupportedResponse) string {
	for _, k := range sup.Kinds {
		if k.Scheme == "batch-settlement" {
			a, _ := k.Extra["receiverAuthorizer"].(string)
			return a
		}
	}
	return ""
}
