package web_test

import (
	"context"
	"crypto/ecdsa"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// forwardedFor makes every request of a client come from addr, as written by the trusted
// proxy in front of the appliance: the client identity of api/clientid.
type forwardedFor struct{ addr string }

func (f forwardedFor) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Forwarded-For", f.addr)
	return http.DefaultTransport.RoundTrip(r)
}

// payer is a wallet on the embedded chain calling from one client address.
func payer(t *testing.T, dev *settle.Dev, key *ecdsa.PrivateKey, addr string, funds uint64) *pay.Client {
	t.Helper()
	if funds > 0 {
		if err := dev.Chain.Mint(context.Background(), crypto.PubkeyToAddress(key.PublicKey), funds); err != nil {
			t.Fatal(err)
		}
	}
	return &pay.Client{Key: key, HTTP: &http.Client{Transport: forwardedFor{addr}, Timeout: 2 * time.Minute}}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	t.Helper()
	k, err := crypto.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestStalledFarmServesOthers is the attack of issue 34 item 3 through the real server, real
// payments on the embedded chain and real Chromium: fifteen paid /v1/extract calls on pages
// that never settle (a script that spins, a document that never ends), from wallets holding
// 0.08 USDC, while another payer from another client asks for an article. The farm has two
// browsers and the default queue. The victim's call is served and charged; the attackers'
// stalled calls hold at most their caller's share of the farm, and none is charged.
func TestStalledFarmServesOthers(t *testing.T) {
	dev, fc := settletest.StartDev(t)
	payCfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName, TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 120}
	gate := paywall.New(payCfg, paywall.Policy{Settlement: x402.ModeSync}, fc, paywall.GateOptions{})
	const attackers, attackFunds = 15, 80_000 // 0.08 USDC: fifteen 0.005 calls reserved at once

	cases := []struct {
		name string
		// attacker gives the wallet and the client address of attacker call i.
		attacker func(i int) (*pay.Client, string)
	}{
		{"fifteen_wallets_one_client", func() func(int) (*pay.Client, string) {
			clients := make([]*pay.Client, attackers)
			for i := range clients {
				clients[i] = payer(t, dev, newKey(t), "203.0.113.66", attackFunds)
			}
			return func(i int) (*pay.Client, string) { return clients[i], "203.0.113.66" }
		}()},
		{"one_wallet_fifteen_clients", func() func(int) (*pay.Client, string) {
			key := newKey(t)
			_ = payer(t, dev, key, "", attackFunds)
			return func(i int) (*pay.Client, string) {
				addr := fmt.Sprintf("203.0.113.%d", 100+i)
				return payer(t, dev, key, addr, 0), addr
			}
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			farm, err := farmtest.StartTuned(2, 0, func(cfg *browserfarm.Config) { cfg.JobTimeout = 15 * time.Second })
			if err != nil {
				t.Fatal(err)
			}
			cat, err := catalog.Default(catalog.DefaultNames())
			if err != nil {
				t.Fatal(err)
			}
			if err := web.With(farm.Farm, farm.Policy).Bind(cat); err != nil {
				t.Fatal(err)
			}
			h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate, Pay: payCfg, Configure: func(sc *server.Config) {
				sc.TrustedProxies = []string{"127.0.0.1"}
			}})
			// Cleanups run last first: the farm stops (stalled calls answer 503) before the server.
			t.Cleanup(farm.Close)

			for deadline := time.Now().Add(60 * time.Second); !farm.Farm.Idle(); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the farm's browsers did not all come up: %+v", farm.Farm.Stats())
				}
			}
			var wg sync.WaitGroup
			statuses := make([]int, attackers)
			for i := range attackers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					pc, _ := c.attacker(i)
					stall := []string{"/hang", "/spin"}[i%2]
					res, err := pc.Do(context.Background(), pay.Request{Method: "POST", URL: h.BaseURL + "/v1/extract",
						Params: map[string]string{"url": farm.URL(fmt.Sprintf("%s?attacker=%d", stall, i))}})
					if err == nil {
						statuses[i] = res.Status
						if res.Receipt != nil && res.Receipt.Success {
							t.Errorf("attacker %d was charged for a stalled page", i)
						}
					}
				}()
			}
			// Every attacker's call has reached the farm: holding a browser, waiting, or refused.
			for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				s := farm.Farm.Stats()
				if s.JobsRunning+s.QueueDepth+int(s.Rejected) >= attackers {
					t.Logf("attack in place: %d running, %d waiting, %d refused", s.JobsRunning, s.QueueDepth, s.Rejected)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("the attackers' calls did not all reach the farm: %+v", s)
				}
			}

			victim := payer(t, dev, newKey(t), "198.51.100.9", 1_000_000)
			start := time.Now()
			res, err := victim.Do(context.Background(), pay.Request{Method: "POST", URL: h.BaseURL + "/v1/extract",
				Params: map[string]string{"url": farm.URL("/article")}})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("victim answered %d in %s; farm %+v", res.Status, time.Since(start).Round(time.Millisecond), farm.Farm.Stats())
			if res.Status != 200 || !strings.Contains(string(res.Body), "markdown") {
				t.Fatalf("the victim's paid call was not served: %d %s", res.Status, res.Body)
			}
			if res.Receipt == nil || !res.Receipt.Success {
				t.Errorf("the victim's call was served without a settled payment: %+v", res.Receipt)
			}
			farm.Close()
			wg.Wait()
			t.Logf("attackers answered %v", statuses)
		})
	}
}
