package main

import (
	"context"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/appliance/operator/operatortest"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/pay"
)

// TestOperatorViewOfPaidCalls makes real paid calls through `appliance dev`, then reads them
// back the three ways an operator does: the snapshot JSON, `appliance status`, and the
// dashboard drawn by real Chromium (the box's own browser farm).
func TestOperatorViewOfPaidCalls(t *testing.T) {
	var admin atomic.Pointer[url.URL]
	front := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(admin.Load()) }})
	defer front.Close()
	d := startDev(t, "--allow-egress", front.Listener.Addr().String())
	admin.Store(&url.URL{Scheme: "http", Host: d.admin})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	key, err := settle.LoadKey(filepath.Join(d.state, "dev-payer.key"))
	if err != nil {
		t.Fatal(err)
	}
	buyer := &pay.Client{Key: key}
	for _, siren := range []string{"542065479", "552032534", "732829320"} {
		res, err := buyer.Do(ctx, pay.Request{URL: "http://" + d.api + "/v1/fr/tva", Params: map[string]string{"siren": siren}})
		if err != nil || res.Status != 200 || res.Receipt == nil || !res.Receipt.Success {
			t.Fatalf("paid call for %s: %v %+v", siren, err, res)
		}
	}
	if code, _ := get(t, "http://"+d.api+"/v1/fr/tva?siren=12"); code != 400 {
		t.Fatalf("bad siren answered %d", code)
	}
	var snap operator.Snapshot
	for { // the optimistic queue settles shortly after the answers
		if snap, err = operator.Fetch(ctx, http.DefaultClient, "http://"+d.admin); err != nil {
			t.Fatal(err)
		}
		if snap.Settlement.Settled.Payments == 3 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the payments did not settle: %+v", snap.Settlement)
		}
		time.Sleep(50 * time.Millisecond)
	}
	today := snap.Revenue.ByDay[len(snap.Revenue.ByDay)-1]
	gasToday := snap.Settlement.GasByDay[len(snap.Settlement.GasByDay)-1]
	var tva operator.RouteCalls
	for _, rc := range snap.Routes.By {
		if rc.Route == "fr.tva" {
			tva = rc
		}
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"revenue today", today.Amount, uint64(15000)},
		{"paid calls today", today.Calls, 3},
		{"revenue by route", snap.Revenue.ByRoute, []operator.RouteRevenue{{Route: "fr.tva", Amount: 15000, Calls: 3}}},
		{"fr.tva calls", tva, operator.RouteCalls{Route: "fr.tva", Calls: 7, OK: 3, PaymentAsked: 3, Refused: 1}},
		{"settlement queue", snap.Settlement.Queued.Payments + snap.Settlement.Broadcast.Payments, 0},
		{"transactions mined today", gasToday.Transactions, 3},
		{"exit live", snap.Exit.Live, true},
		{"proxy readable", snap.Proxy.Error, ""},
		{"health", snap.Health.Status, "ok"},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if wei, ok := new(big.Int).SetString(gasToday.Wei, 10); !ok || wei.Sign() <= 0 || gasToday.Wei != snap.Settlement.GasWei {
		t.Errorf("gas spent today %q of %q in all: want the three settlements' gas, above zero", gasToday.Wei, snap.Settlement.GasWei)
	}

	var out strings.Builder
	if err := statusTo(ctx, &out, []string{"-addr", d.admin}); err != nil {
		t.Fatalf("appliance status: %v\n%s", err, out.String())
	}
	for _, want := range []string{"health ok", "fr.tva 0.015000 USDC (3 calls)", "fr.tva 7: 3 ok, 3 402, 1 4xx, 0 5xx", "3 transactions mined", "live · 127.0.0.1"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("appliance status does not say %q:\n%s", want, out.String())
		}
	}

	// The box's own browser farm draws its dashboard: a paid /v1/render of the operator page,
	// reached through a reverse proxy as an operator might put in front of it (the page's
	// links are relative). The render's own payment is still running while the page reads the
	// figures, so the charts show the three calls above.
	rendered, err := buyer.Do(ctx, pay.Request{Method: "POST", URL: "http://" + d.api + "/v1/render", Params: map[string]string{"url": front.URL + "/"}})
	if err != nil || rendered.Status != 200 {
		t.Fatalf("rendering the dashboard: %v %+v", err, rendered)
	}
	var res struct{ HTML string }
	if err := json.Unmarshal(rendered.Body, &res); err != nil {
		t.Fatal(err)
	}
	page, err := operatortest.Read(res.HTML)
	if err != nil || page.Loaded == "" {
		t.Fatalf("the dashboard drew no snapshot (%v): %s", err, res.HTML)
	}
	days := page.Charts["chart-revenue-day"]
	if len(days) != len(snap.Revenue.ByDay) {
		t.Fatalf("%d day bars, want %d", len(days), len(snap.Revenue.ByDay))
	}
	if last := days[len(days)-1]; last.Label != today.Day || last.Value != "15000" || last.Height <= 0 || days[0].Height != 0 {
		t.Errorf("revenue bars: today %+v, first %+v", last, days[0])
	}
	if routes := page.Charts["chart-revenue-route"]; len(routes) != 1 || routes[0].Label != "fr.tva" || routes[0].Value != "15000" || routes[0].Width <= 0 {
		t.Errorf("revenue by route bars %+v", routes)
	}
	gas := page.Charts["chart-gas-day"]
	if len(gas) == 0 || gas[len(gas)-1].Value != gasToday.Wei || gas[len(gas)-1].Height <= 0 {
		t.Errorf("gas bars end with %+v, want today's %s wei", gas[len(gas)-1:], gasToday.Wei)
	}
}
