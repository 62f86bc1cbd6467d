package operator

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/appliance/operator/operatortest"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/farmtest"
	"github.com/peage/appliance/internal/testenv"
)

// TestDashboardInChromium loads the dashboard in real Chromium, served under a prefix (its
// links are relative, so it also works behind a path on a reverse proxy), and checks its script
// drew the seeded snapshot: a bar per day with the day's revenue, heights in proportion, the
// routes' revenue and calls, the gas by day, the headline figures, a gateway's boxes with
// their earnings.
func TestDashboardInChromium(t *testing.T) {
	testenv.NeedsBrowser(t)
	src := Sources{Ledger: localLedger{l: seedLedger(t, seededPayments), ch: seedChannels(t), spends: seededSpends}, Free: seedFree(t, []time.Time{day(21, 1)}),
		Metrics: seededMetrics(true), Proxy: proxyFigures{stats: &proxyFiguresStats, status: &proxyFiguresStatus}, Boxes: func() []BoxState { return fleetStates },
		Now: func() time.Time { return now }, Days: 7, Version: "1.2.3", Started: now.Add(-time.Hour),
		Health: func() Health {
			return Health{Status: "ok", Components: map[string]string{"state": "ok"}, Routes: 3, Available: 3}
		}}
	mux := http.NewServeMux()
	Register(mux, func(ctx context.Context) Snapshot { return Build(ctx, src) })
	env, err := farmtest.StartPages(1, 4, map[string]http.Handler{"/operator/": http.StripPrefix("/operator", mux)})
	if err != nil {
		t.Fatal(err)
	}
	defer env.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := env.Farm.Do(ctx, browserfarm.Task{URL: env.URL("/operator/")})
	if err != nil {
		t.Fatal(err)
	}
	// Everything it loaded came from the box: a request elsewhere would be listed as blocked
	// (the farm's policy allows only the test site).
	if len(res.Blocked) != 0 || res.Header["content-security-policy"] != pageCSP {
		t.Fatalf("blocked requests %+v, CSP %q", res.Blocked, res.Header["content-security-policy"])
	}
	page, err := operatortest.Read(res.HTML)
	if err != nil {
		t.Fatal(err)
	}
	if page.Loaded != "2026-11-22T18:30:00Z" {
		t.Fatalf("the page drew no snapshot (data-loaded %q); its text: %s", page.Loaded, res.Text)
	}
	type bar struct{ label, value string }
	bars := func(id, class string) []bar {
		var out []bar
		for _, b := range page.Charts[id] {
			if b.Class == class {
				out = append(out, bar{b.Label, b.Value})
			}
		}
		return out
	}
	cases := []struct {
		chart, class string
		want         []bar
	}{
		{"chart-revenue-day", "bar", []bar{{"2026-11-16", "0"}, {"2026-11-17", "0"}, {"2026-11-18", "0"}, {"2026-11-19", "0"},
			{"2026-11-20", "6000"}, {"2026-11-21", "3500000"}, {"2026-11-22", "5000"}}},
		{"chart-revenue-route", "bar", []bar{{"proxy.1gb", "3500000"}, {"fr.tva", "15000"}, {"chain.gas", "1000"}}},
		{"chart-calls", "seg ok", []bar{{"fr.tva", "3"}, {"chain.gas", "2"}}},
		{"chart-calls", "seg asked", []bar{{"fr.tva", "4"}}},
		{"chart-calls", "seg refused", []bar{{"fr.tva", "1"}, {"chain.gas", "1"}, {"unknown", "2"}}},
		{"chart-calls", "seg failed", []bar{{"web.screenshot", "5"}, {"chain.gas", "1"}}},
		{"chart-revenue-box", "seg vouchers", []bar{{"line-1", "150000"}, {"line-9", "10000"}}},
		{"chart-gas-day", "bar", []bar{{"2026-11-16", "0"}, {"2026-11-17", "0"}, {"2026-11-18", "0"}, {"2026-11-19", "0"},
			{"2026-11-20", "168000000000000"}, {"2026-11-21", "90000000000000"}, {"2026-11-22", "18446774073709551616"}}},
	}
	for _, c := range cases {
		t.Run(c.chart+"/"+c.class, func(t *testing.T) {
			got := bars(c.chart, c.class)
			if len(got) != len(c.want) {
				t.Fatalf("%d bars %v, want %v", len(got), got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Errorf("bar %d: %v, want %v", i, got[i], c.want[i])
				}
			}
		})
	}
	// Heights follow the figures: the tallest day is the 3.5 USDC one, and 6000 against
	// 3,500,000 is a bar 583 times shorter.
	days := page.Charts["chart-revenue-day"]
	top, small := days[5].Height, days[4].Height
	if top <= 0 || small <= 0 || days[0].Height != 0 {
		t.Fatalf("heights %+v", days)
	}
	if ratio := top / small; ratio < 500 || ratio > 700 {
		t.Errorf("the 3.5 USDC day is %.0f times the 0.006 USDC day, want about 583", ratio)
	}
	for _, want := range [][2]string{{"0.005000", "USDC today"}, {"3.516000", "USDC all time, 5 paid calls"}, {"live", "exit FR AS3215"}} {
		found := false
		for _, tile := range page.Tiles {
			found = found || tile == want
		}
		if !found {
			t.Errorf("no tile %q in %q", want, page.Tiles)
		}
	}
	for _, want := range []string{"2 up of 2", "3 active of 4", "203.0.113.7 · FR · AS3215 · Orange", "1 (0.005000 USDC)", "18.447032073709552616 ETH",
		"unclaimed0.060000 USDC", "2 (1 withdrawals pending)",
		"4 boxes, 1 live · the gateway itself served 5 paid calls for 3.516000 USDC", "line-2okFR AS32151/81s ago200.000000",
		"line-1goneFR0/83m ago1300.150000", "line-3not connected-0/0never000.000000", "line-9not enrolled-0/0never020.010000", "0xpayer11.0000000.2000000.1500000.05000040", "batch 8333 over 42"} {
		if !strings.Contains(page.Text, want) {
			t.Errorf("the cards do not say %q:\n%s", want, page.Text)
		}
	}
	if n := strconv.Itoa(len(page.Charts)); n != "5" {
		t.Errorf("%s charts, want 5: %v", n, page.Charts)
	}
}
