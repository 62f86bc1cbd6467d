package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "peage.toml")
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	cases := []struct {
		name, file string
		env        []string
		wantErr    string // substring naming the key; "" = valid
		check      func(Config) bool
	}{
		{name: "defaults", check: func(c Config) bool { return c.API.Addr == "127.0.0.1:8402" && c.Admin.Addr == "127.0.0.1:8403" }},
		{name: "file value", file: "[api]\naddr = \"0.0.0.0:9000\"\nread_timeout = \"5s\"\n",
			check: func(c Config) bool { return c.API.Addr == "0.0.0.0:9000" && c.API.ReadTimeout.Seconds() == 5 }},
		{name: "env beats file", file: "[api]\naddr = \"0.0.0.0:9000\"\n", env: []string{"PEAGE_API_ADDR=127.0.0.1:9100"},
			check: func(c Config) bool { return c.API.Addr == "127.0.0.1:9100" }},
		{name: "env list", env: []string{"PEAGE_EGRESS_ALLOW=127.0.0.1:1, 127.0.0.1:2"},
			check: func(c Config) bool { return len(c.Egress.Allow) == 2 }},
		{name: "unknown key", file: "[api]\nadr = \"x\"\n", wantErr: "unknown key api.adr"},
		{name: "bad address", file: "[api]\naddr = \"nowhere\"\n", wantErr: "config key api.addr"},
		{name: "bad pay_to", file: "[payment]\npay_to = \"alice\"\n", wantErr: "config key payment.pay_to"},
		{name: "batch-settlement offered", file: "[payment]\nreceiver_authorizer = \"0x000000000000000000000000000000000000bEEF\"\nwithdraw_delay_seconds = 900\n",
			check: func(c Config) bool {
				return c.Payment.BatchOffered() && c.Payment.WithdrawDelaySeconds == 900 && c.Payment.MinDeposit == 1_000_000
			}},
		{name: "exact only by default", check: func(c Config) bool { return !c.Payment.BatchOffered() }},
		{name: "zero receiver authorizer", file: "[payment]\nreceiver_authorizer = \"0x0000000000000000000000000000000000000000\"\n", wantErr: "config key payment.receiver_authorizer"},
		{name: "batch-settlement through a remote facilitator", file: "[payment]\nreceiver_authorizer = \"0x000000000000000000000000000000000000bEEF\"\n[settlement]\nfacilitator = \"https://f.example\"\n",
			wantErr: "config key payment.receiver_authorizer"},
		{name: "withdraw delay under 15 minutes", env: []string{"PEAGE_PAYMENT_WITHDRAW_DELAY_SECONDS=899"}, wantErr: "config key payment.withdraw_delay_seconds"},
		{name: "zero minimum deposit", env: []string{"PEAGE_PAYMENT_MIN_DEPOSIT=0"}, wantErr: "config key payment.min_deposit"},
		{name: "bad log level", env: []string{"PEAGE_LOG_LEVEL=loud"}, wantErr: "config key log.level"},
		{name: "unknown env", env: []string{"PEAGE_API_NOPE=1"}, wantErr: "PEAGE_API_NOPE names no config key"},
		{name: "bad env type", env: []string{"PEAGE_API_MAX_BODY_BYTES=big"}, wantErr: "api.max_body_bytes"},
		{name: "dns resolver", env: []string{"PEAGE_DNS_RESOLVER=9.9.9.9", "PEAGE_DNS_TIMEOUT=1s"},
			check: func(c Config) bool { return c.DNS.Resolver == "9.9.9.9" && c.DNS.Timeout.Seconds() == 1 }},
		{name: "bad dns resolver", file: "[dns]\nresolver = \"https://dns.example/\"\n", wantErr: "config key dns.resolver"},
		{name: "bad dns timeout", file: "[dns]\ntimeout = \"0s\"\n", wantErr: "config key dns.timeout"},
		{name: "bad segment", file: "[routes]\nmarketplace = \"A/B\"\n", wantErr: "config key routes.marketplace"},
		{name: "free-call limits by default", check: func(c Config) bool {
			return c.API.FreePerMinute > 0 && c.API.FreeBurst > 0 && c.API.ClientIPv6Prefix == 64 && len(c.API.TrustedProxies) == 0 &&
				c.Browser.FreeShare > 0 && c.Browser.FreeShare < 1
		}},
		{name: "trusted proxies", file: "[api]\ntrusted_proxies = [\"10.0.0.1\", \"2001:db8::/32\"]\nclient_ipv6_prefix = 56\n",
			check: func(c Config) bool { return len(c.API.TrustedProxies) == 2 && c.API.ClientIPv6Prefix == 56 }},
		{name: "trusted proxies from env", env: []string{"PEAGE_API_TRUSTED_PROXIES=10.0.0.1, 10.0.0.2"},
			check: func(c Config) bool { return len(c.API.TrustedProxies) == 2 }},
		{name: "bad trusted proxy", file: "[api]\ntrusted_proxies = [\"proxy.lan\"]\n", wantErr: "config key api.trusted_proxies"},
		{name: "bad ipv6 prefix", env: []string{"PEAGE_API_CLIENT_IPV6_PREFIX=129"}, wantErr: "config key api.client_ipv6_prefix"},
		{name: "trust_proxy is gone", file: "[api]\ntrust_proxy = true\n", wantErr: "unknown key api.trust_proxy"},
		{name: "bad free burst", env: []string{"PEAGE_API_FREE_BURST=0"}, wantErr: "config key api.free_burst"},
		{name: "mcp allowed origins", file: "[api]\nmcp_allowed_origins = [\"https://app.example\", \"*\"]\n",
			check: func(c Config) bool { return len(c.API.MCPAllowedOrigins) == 2 }},
		{name: "bad mcp allowed origin", file: "[api]\nmcp_allowed_origins = [\"app.example/path\"]\n", wantErr: "config key api.mcp_allowed_origins"},
		{name: "bad free share", file: "[browserfarm]\nfree_share = 1.5\n", wantErr: "config key browserfarm.free_share"},
		{name: "bad claim interval", file: "[settle]\nclaim_interval_seconds = 0\n", wantErr: "config key settle.claim_interval_seconds"},
		{name: "claim margin shorter than a look and a receipt wait", file: "[settle]\nclaim_interval_seconds = 600\nclaim_withdraw_margin_seconds = 600\n", wantErr: "config key settle.claim_withdraw_margin_seconds"},
		{name: "claim policy from file", file: "[settle]\nclaim_interval_seconds = 30\nclaim_min_value = 5000\nclaim_min_channel_value = 700\nclaim_withdraw_margin_seconds = 200\n",
			check: func(c Config) bool {
				p, err := c.Settle.ClaimPolicy()
				return err == nil && p.Interval == 30*time.Second && p.MinClaimable == 5000 && p.MinChannelClaimable == 700 && p.WithdrawMargin == 200*time.Second
			}},
		// 8 in flight settled 8 exact calls a second on the embedded chain and 3 on Base.
		{name: "settlements in flight by default", check: func(c Config) bool { return c.Settle.SettlementsInFlight == 64 }},
		{name: "settlements in flight from env", env: []string{"PEAGE_SETTLE_SETTLEMENTS_IN_FLIGHT=256"},
			check: func(c Config) bool { return c.Settle.SettlementsInFlight == 256 }},
		{name: "no settlement in flight", file: "[settle]\nsettlements_in_flight = 0\n", wantErr: "config key settle.settlements_in_flight"},
		{name: "settlements in flight past a pool's share", file: "[settle]\nsettlements_in_flight = 1025\n", wantErr: "config key settle.settlements_in_flight"},
		// 2.5 USDC of inboxes hold 3.05 GiB of bodies: the default must be above that.
		{name: "inbox budget above what 2.5 USDC buys", check: func(c Config) bool { return c.Inbox.BudgetBytes >= 8<<30 }},
		{name: "inbox budget from env", env: []string{"PEAGE_INBOX_BUDGET_BYTES=2147483648"},
			check: func(c Config) bool { return c.Inbox.BudgetBytes == 2<<30 }},
		{name: "inbox budget too small", file: "[inbox]\nbudget_bytes = 1000\n", wantErr: "config key inbox.budget_bytes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = write(t, c.file)
			}
			cfg, err := Load(path, c.env)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want one naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !c.check(cfg) {
				t.Fatalf("unexpected config %+v", cfg)
			}
		})
	}
}

// TestDocumentRoundTrips: the reference printed by `appliance config` is itself a valid file.
func TestDocumentRoundTrips(t *testing.T) {
	doc, err := Document(Default())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"[api]", "base_url", "[payment]", "pay_to", "[routes]", "[egress]"} {
		if !strings.Contains(doc, key) {
			t.Errorf("document lacks %s", key)
		}
	}
	if _, err := Load(write(t, doc), nil); err != nil {
		t.Fatalf("the documented config does not load: %v", err)
	}
}
