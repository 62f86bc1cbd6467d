package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/peage/appliance/appliance/config"
)

// A payout address that is present but not an address is a configuration error: the api and
// settle commands stop naming payment.pay_to. (An empty or zero one is first-boot setup not
// done yet: the daemons start and answer 503, see TestBoxNotSetUp.)
func TestDaemonsRefuseAWrongPayTo(t *testing.T) {
	for _, name := range []string{"api", "settle"} {
		i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
		if i < 0 {
			t.Fatalf("no %s command", name)
		}
		for _, payTo := range []string{"nope", "0x12345"} {
			dir := t.TempDir()
			path := filepath.Join(dir, "appliance.toml")
			conf := "state_dir = \"" + dir + "\"\n[payment]\npay_to = \"" + payTo + "\"\n[settle]\nrpc_url = \"http://127.0.0.1:1\"\n"
			if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			err := commands[i].run(context.Background(), []string{"--config", path})
			if err == nil || !strings.Contains(err.Error(), "payment.pay_to") {
				t.Fatalf("%s with pay_to %q: %v, want an error naming payment.pay_to", name, payTo, err)
			}
		}
	}
}

// TestSetupMissing: what the API lists as first-boot setup not done.
func TestSetupMissing(t *testing.T) {
	const addr = "0x1111111111111111111111111111111111111111"
	cases := []struct {
		name                  string
		payTo, rpc, remoteFac string
		want                  []string // substrings, one per missing item
	}{
		{"fresh box", "", "", "", []string{"payment.pay_to", "settle.rpc_url"}},
		{"zero payout", "0x0000000000000000000000000000000000000000", "http://rpc", "", []string{"payment.pay_to"}},
		{"no endpoint", addr, "", "", []string{"settle.rpc_url"}},
		{"remote facilitator still needs the endpoint (the settle daemon reads the chain)", addr, "", "https://facilitator.example", []string{"settle.rpc_url"}},
		{"set up", addr, "http://rpc", "", nil},
	}
	for _, c := range cases {
		cfg := config.Default()
		cfg.Payment.PayTo, cfg.Settle.RPCURL, cfg.Settlement.Facilitator = c.payTo, c.rpc, c.remoteFac
		got := setupMissing(cfg)
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %d items naming %v", c.name, got, len(c.want), c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(got[i], w) {
				t.Errorf("%s: item %d is %q, want it to name %s", c.name, i, got[i], w)
			}
		}
	}
}
