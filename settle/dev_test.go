package settle

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/devchain"
)

func TestStartDev(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	dir := t.TempDir()
	d, err := StartDev(ctx, dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := d.Close(); err != nil {
			t.Error(err)
		}
	}()
	key, err := LoadKey(d.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	if crypto.PubkeyToAddress(key.PublicKey).Hex() != d.Payer {
		t.Fatal("dev-payer.key is not the demo payer's key")
	}
	if fi, err := os.Stat(d.PayerKey); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi, err)
	}
	bal, err := d.Chain.Balance(ctx, common.HexToAddress(d.Payer))
	if err != nil || bal.Int64() != devchain.PayerFunds {
		t.Fatalf("demo payer holds %v %v", bal, err)
	}
	c, err := client.New(d.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sup, err := c.Supported(ctx)
	if err != nil || len(sup.Kinds) == 0 || sup.Kinds[0].Network != "eip155:1337" || sup.Signers["eip155:*"][0] != d.Facilitator.Signer().Hex() {
		t.Fatalf("supported %+v %v", sup, err)
	}
	if !strings.Contains(d.HowToPay("http://127.0.0.1:8402"), "appliance pay --key "+d.PayerKey) {
		t.Fatal("HowToPay does not say how to pay")
	}
}

func TestFaucet(t *testing.T) {
	testenv.NeedsChain(t)
	ch, err := devchain.Start(context.Background(), devchain.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Close()
	srv := httptest.NewServer(FaucetHandler(ch))
	defer srv.Close()
	who, _ := crypto.GenerateKey()
	addr := crypto.PubkeyToAddress(who.PublicKey).Hex()
	cases := []struct {
		body   string
		status int
	}{
		{`{"address":"` + addr + `","amount":"5000000"}`, 200},
		{`{"address":"` + addr + `","amount":"100000001"}`, 400},
		{`{"address":"` + addr + `","amount":"0"}`, 400},
		{`{"address":"0x12","amount":"1"}`, 400},
		{`not json`, 400},
	}
	for _, c := range cases {
		resp, err := http.Post(srv.URL, "application/json", strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d", c.body, resp.StatusCode, c.status)
		}
	}
	bal, err := ch.Balance(context.Background(), common.HexToAddress(addr))
	if err != nil || bal.Int64() != 5_000_000 {
		t.Fatalf("balance %v %v", bal, err)
	}
}

// TestDevClaimPolicy: dev's claimer looks every DevClaimInterval and claims any unclaimed value
// while the configuration leaves those at the production defaults; what the configuration
// sets is kept, and a bad value is still refused.
func TestDevClaimPolicy(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(c *Config)
		want    ClaimPolicy
		wantErr string
	}{
		{"defaults", func(*Config) {}, ClaimPolicy{Interval: DevClaimInterval, WithdrawMargin: DefaultClaimWithdrawMargin}, ""},
		{"interval and minimum configured", func(c *Config) {
			c.ClaimIntervalSeconds, c.ClaimMinValue = 86400, 5000
			c.ClaimWithdrawMarginSeconds = 86490
		},
			ClaimPolicy{Interval: 24 * time.Hour, MinClaimable: 5000, WithdrawMargin: 86490 * time.Second}, ""},
		{"only the minimum configured", func(c *Config) { c.ClaimMinValue = 20_000 }, ClaimPolicy{Interval: DevClaimInterval, MinClaimable: 20_000, WithdrawMargin: DefaultClaimWithdrawMargin}, ""},
		{"bad margin still refused", func(c *Config) { c.ClaimWithdrawMarginSeconds = 60 }, ClaimPolicy{}, "settle.claim_withdraw_margin_seconds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.edit(&c)
			got, err := DevClaimPolicy(c)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%+v %v, want %+v", got, err, tc.want)
			}
		})
	}
}
