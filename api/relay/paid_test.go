package relay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/relay"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/internal/fleet/box"
	"github.com/peage/appliance/internal/testenv"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/pay"
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
			dev, err := settle.StartDev(ctx, t.TempDir(), nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := dev.Close(); err != nil {
					t.Error(err)
				}
			})
			fc, err := client.New(dev.Addr())
			if err != nil {
				t.Fatal(err)
			}
			cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName,
				TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 120}
			g := startGatewayWith(t, apitest.Options{Gate: paywall.New(cfg, paywall.DefaultPolicy(), fc, paywall.GateOptions{}), Pay: cfg})
			held := newHeld()
			boxes := map[string]*box.Box{}
			for _, name := range tc.boxes {
				cat := boxCatalogBinding(t, "fr.tva", held.handler(name), nil)
				boxes[name] = g.startBox(name, cat)
			}
			g.waitServing(relay.RouteName("fr.tva"), len(tc.boxes))
			key, err := settle.LoadKey(dev.PayerKey)
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan *pay.Result, 1)
			go func() {
				res, err := (&pay.Client{Key: key}).Do(ctx, pay.Request{URL: g.api.BaseURL + tvaPath, Params: map[string]string{"siren": "542065479"}})
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

// TestPaidProxySaleOnABox pays for a proxy package with real USDC on the embedded chain
// through the gateway's real gate and settle daemon: the package is sold on the box exiting in
// the country asked, the ledger credits that box, and the key opens a tunnel through the
// gateway's proxy port to the box's proxyd.
func TestPaidProxySaleOnABox(t *testing.T) {
	testenv.NeedsChain(t)
	ctx := context.Background()
	dev, err := settle.StartDev(ctx, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := dev.Close(); err != nil {
			t.Error(err)
		}
	})
	fc, err := client.New(dev.Addr())
	if err != nil {
		t.Fatal(err)
	}
	cfg := paywall.Config{Network: dev.Network, Asset: dev.Asset, PayTo: dev.PayTo, TokenName: dev.TokenName,
		TokenVersion: dev.TokenVersion, MaxTimeoutSeconds: 120}
	f := startProxyFleetWith(t, apitest.Options{Gate: paywall.New(cfg, paywall.DefaultPolicy(), fc, paywall.GateOptions{}), Pay: cfg})
	target, _ := echoTarget(t)
	f.startBox("de-1", fleet.Exit{Country: "DE"}, target)
	f.startBox("fr-1", fleet.Exit{Country: "FR"}, target)
	key, err := settle.LoadKey(dev.PayerKey)
	if err != nil {
		t.Fatal(err)
	}
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
