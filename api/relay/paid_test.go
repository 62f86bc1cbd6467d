package relay_test

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/ethereum/go-ethereum/common"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/api/server"
	"github.com/peage/appliance/internal/cache"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/batch"
	"github.com/peage/appliance/settle/batchpay"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
	"github.com/peage/appliance/settle/settletest"
	"github.com/peage/appliance/settle/x402"
)

// TestPaidCallWhenItsBoxDies pays with real USDC on the embedded chain through the gateway's
// real gate and settle daemon while the box holding the call dies: with a second box the call
// is retried there, settled once and recorded with the survivor; alone, it answers 502 and the
// payment is released, nothing moved.
func TestPaidCallWhenItsBoxDies(t *testing.T) {
	testenv.NeedsChain(t)
	for _, tc := range []struct {
		name  string
		boxes []string
	}{
		{"retried on the other box, settled once", []string{"a", "b"}},
		{"alone: 502, released", []string{"a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			g, fc, buyer := startPaidGateway(t, nil)
			held := newHeld()
			boxes := map[string]*box.Box{}
			for _, name := range tc.boxes {
				cat := boxCatalogBinding(t, "fr.tva", held.handler(name), nil)
				boxes[name] = g.startBox(name, cat)
			}
			g.waitServing(relay.RouteName("fr.tva"), len(tc.boxes))
			done := make(chan *pay.Result, 1)
			go func() {
				res, err := buyer.Do(ctx, pay.Request{URL: g.api.BaseURL + tvaPath, Params: map[string]string{"siren": "542065479"}})
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			victim := <-held.started
			for _, name := range tc.boxes {
				if name != victim {
					close(held.gate(name))
				}
			}
			boxes[victim].Server().Shutdown() // the box dies holding the paid call
			res := <-done
			if res == nil {
				t.FailNow()
			}
			pays, err := fc.Payments(ctx, 5)
			if err != nil || len(pays) != 1 {
				t.Fatalf("payments: %v %+v", err, pays)
			}
			p := pays[0]
			if len(tc.boxes) == 1 {
				if res.Status != http.StatusBadGateway || res.Receipt != nil || p.Status != ledger.Released || p.Box != "" {
					t.Fatalf("alone: %d %s, receipt %+v, payment %s on %q; want 502, released", res.Status, res.Body, res.Receipt, p.Status, p.Box)
				}
				return
			}
			survivor := res.Header.Get(relay.HeaderBox)
			if res.Status != http.StatusOK || res.Receipt == nil || !res.Receipt.Success || survivor == victim || survivor == "" {
				t.Fatalf("after %s died: %d %s from %q, receipt %+v", victim, res.Status, res.Body, survivor, res.Receipt)
			}
			if p.Box != survivor || p.Status == ledger.Released || p.Status == ledger.Failed {
				t.Fatalf("payment %s on %q; want it owed or settled on %s", p.Status, p.Box, survivor)
			}
		})
	}
}

// startPaidGateway serves a gateway whose gate is the real x402 gate of a settle daemon on the
// embedded chain, with cache as its result cache (nil: none), and returns the settle daemon's
// client and a buyer holding test USDC.
func startPaidGateway(t *testing.T, cache server.Cache) (*gateway, *client.Client, *pay.Client) {
	g, fc, key, _ := startPaidGatewayOffering(t, cache)
	return g, fc, &pay.Client{Key: key}
}

// startPaidGatewayOffering is startPaidGateway offering batch-settlement too: it returns the
// buyer's key and the gateway's payment settings.
func startPaidGatewayOffering(t *testing.T, cache server.Cache) (*gateway, *client.Client, *ecdsa.PrivateKey, paywall.Config) {
	t.Helper()
	dev, fc, cfg, key := startDevSettle(t)
	cfg.ReceiverAuthorizer, cfg.WithdrawDelaySeconds, cfg.MinDeposit = dev.ReceiverAuthorizer, batch.MinWithdrawDelay, 10*price
	g := startGatewayWith(t, apitest.Options{Gate: paywall.New(cfg, paywall.DefaultPolicy(), fc, paywall.GateOptions{}), Pay: cfg, Cache: cache})
	return g, fc, key, cfg
}

// startDevSettle runs a settle daemon on the embedded chain for the test's length, and returns
// it, its client, the exact payment settings paying into it and a buyer's key holding test USDC.
func startDevSettle(t *testing.T) (*settle.Dev, *client.Client, paywall.Config, *ecdsa.PrivateKey) {
	t.Helper()
	dev, fc := settletest.StartDev(t)
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName,
		TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 120}
	return dev, fc, cfg, key
}

// price is the price of the routes these tests pay for (fr.tva and fr.geocode).
const price = 5_000

// TestVoucherCompletionRecordsTheBox pays calls relayed to boxes with batch-settlement (a
// deposit, then vouchers, on one channel): each completion names the box that served it, as
// exact's do, so the channel report counts calls and charges per box.
func TestVoucherCompletionRecordsTheBox(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	g, fc, key, cfg := startPaidGatewayOffering(t, nil)
	for _, name := range []string{"a", "b"} {
		g.startBox(name, boxCatalog(t))
	}
	g.waitServing(relay.RouteName("fr.tva"), 2)
	payer, err := batchpay.Open(key, cfg.BatchRequirements(g.cat.Entry("fr.tva")), common.Hash{31: 3})
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]uint64{}
	for i := uint64(1); i <= 4; i++ {
		req, err := payer.Voucher(i * price)
		if i == 1 {
			req, err = payer.Deposit(10*price, price, 1)
		}
		if err != nil {
			t.Fatal(err)
		}
		status, hdr, body := g.paidGet(tvaPath, url.Values{"siren": {"542065479"}}, req.PaymentPayload)
		if status != http.StatusOK || hdr.Get(x402.HeaderPaymentResponse) == "" || hdr.Get(relay.HeaderBox) == "" {
			t.Fatalf("call %d: %d %s naming box %q", i, status, body, hdr.Get(relay.HeaderBox))
		}
		served[hdr.Get(relay.HeaderBox)]++
	}
	rep, err := fc.Channels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.ByBox) != len(served) {
		t.Fatalf("the channels count %+v by box; the answers named %v", rep.ByBox, served)
	}
	for box, n := range served {
		if got := rep.ByBox[box]; got.Calls != n || got.Charged != n*price {
			t.Fatalf("the channels count %+v by box; the answers named %v", rep.ByBox, served)
		}
	}
}

// TestLedgerCreditsTheBoxNotTheCache pays twice for the same call through a gateway with a
// result cache: the ledger records the first payment with the box that served it and the
// second, answered from the gateway's cache, with no box, so that box is not credited for
// work it did not do.
func TestLedgerCreditsTheBoxNotTheCache(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	c, err := cache.New(cache.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	g, fc, buyer := startPaidGateway(t, syncCache{c})
	runs := &counting{runs: map[string]int{}}
	for _, name := range []string{"a", "b"} {
		g.startBox(name, boxCatalogBinding(t, "fr.geocode", runs.handler(name), nil))
	}
	g.waitServing(relay.RouteName("fr.geocode"), 2)
	var named []string
	for range 2 {
		res, err := buyer.Do(ctx, pay.Request{URL: g.api.BaseURL + "/v1/fr/geocode", Params: map[string]string{"q": "8 bd du port amiens"}})
		if err != nil || res.Status != http.StatusOK || res.Receipt == nil || !res.Receipt.Success {
			t.Fatalf("paid call: %v %+v", err, res)
		}
		named = append(named, res.Header.Get(relay.HeaderBox))
	}
	if named[0] == "" || named[1] != "" || runs.total() != 1 {
		t.Fatalf("answers name boxes %q, boxes ran %d calls; want the first named, the cache hit not", named, runs.total())
	}
	pays, err := fc.Payments(ctx, 5)
	if err != nil || len(pays) != 2 {
		t.Fatalf("payments: %v %+v", err, pays)
	}
	boxes := map[string]int{}
	for _, p := range pays {
		boxes[p.Box]++
	}
	if boxes[named[0]] != 1 || boxes[""] != 1 {
		t.Fatalf("the ledger's boxes %v; want one payment on %s and one on none (the gateway's cache)", boxes, named[0])
	}
}

// TestPaidProxySaleOnABox pays for a proxy package with real USDC on the embedded chain
// through the gateway's real gate and settle daemon: the package is sold on the box exiting in
// the country asked, the ledger credits that box, and the key opens a tunnel through the
// gateway's proxy port to the box's proxyd.
func TestPaidProxySaleOnABox(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	_, fc, cfg, key := startDevSettle(t)
	f := startProxyFleetWith(t, apitest.Options{Gate: paywall.New(cfg, paywall.DefaultPolicy(), fc, paywall.GateOptions{}), Pay: cfg})
	target, _ := echoTarget(t)
	f.startBox("de-1", fleet.Exit{Country: "DE"}, target)
	f.startBox("fr-1", fleet.Exit{Country: "FR"}, target)
	res, err := (&pay.Client{Key: key}).Do(ctx, pay.Request{URL: f.api.BaseURL + "/v1/proxy/1gb", Params: map[string]string{"country": "FR"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != http.StatusOK || res.Header.Get(relay.HeaderBox) != "fr-1" {
		t.Fatalf("paid sale: %d %s from %q; want a package from fr-1", res.Status, res.Body, res.Header.Get(relay.HeaderBox))
	}
	pays, err := fc.Payments(ctx, 5)
	if err != nil || len(pays) != 1 || pays[0].Box != "fr-1" || pays[0].Status == ledger.Released || pays[0].Status == ledger.Failed {
		t.Fatalf("payments: %v %+v; want one, owed or settled, on fr-1", err, pays)
	}
	var sale struct{ Key string }
	if err := json.Unmarshal(res.Body, &sale); err != nil {
		t.Fatal(err)
	}
	code, c := connect(t, f.hop, sale.Key, target)
	if code != http.StatusOK {
		t.Fatalf("CONNECT with the paid key: %d", code)
	}
	_ = c.Close()
}
