package operator

import (
	"bytes"
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/internal/goldenfile"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
	proxyclient "github.com/peage/appliance/proxyd/client"
	"github.com/peage/appliance/settle/ledger"
	"github.com/peage/appliance/settle/x402"
)

// now is the seeded box's clock: the snapshot's today is 2026-11-22.
var now = time.Date(2026, 11, 22, 18, 30, 0, 0, time.UTC)

// localLedger serves a ledger opened in the test as the settle client serves the daemon's.
type localLedger struct {
	l      *ledger.Ledger
	err    error
	ch     *ledger.Channels
	spends map[string]ledger.GasFigures
}

func (l localLedger) Revenue(context.Context) ([]ledger.RevenueRow, error) {
	return l.l.Revenue(), l.err
}
func (l localLedger) Stats(context.Context) (ledger.Stats, error) { return l.l.Stats(), l.err }

// Channels is settle's report computed the same way from the seeded channel store (none
// when the test seeded none) and the ledger's exact payments; the batch transactions are seeded.
func (l localLedger) Channels(context.Context) (ledger.ChannelsReport, error) {
	if l.ch == nil {
		return ledger.Report(false, nil, l.l.Stats(), l.spends, ledger.ClaimerView{}), l.err
	}
	return ledger.Report(true, l.ch.List(), l.l.Stats(), l.spends, ledger.ClaimerView{IntervalSeconds: 300, MinClaimable: 1_000_000,
		WithdrawMarginSeconds: 600, Rounds: 4, LastRound: day(22, 18), LastClaimTx: "0x5eed"}), l.err
}

// seedChannels writes two channels through the channel store's own API: one with 40 calls,
// 30 of them claimed and a withdrawal pending, one with 2 calls, none claimed.
func seedChannels(t *testing.T) *ledger.Channels {
	t.Helper()
	s, err := ledger.OpenChannels(ledger.ChannelOptions{Dir: t.TempDir(), Sync: journal.SyncAlways})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for _, c := range []ledger.Channel{
		{ID: "0xc1", Config: x402.ChannelConfig{Payer: "0xpayer1", WithdrawDelay: 900}, Charged: 200_000, SignedMax: 200_000, Balance: 1_000_000,
			TotalClaimed: 150_000, Calls: 40, WithdrawRequestedAt: uint64(day(22, 18).Unix()), SyncedAt: day(22, 18),
			ByBox: map[string]ledger.Served{"line-1": {Calls: 30, Charged: 150_000}, "line-9": {Calls: 2, Charged: 10_000}}},
		{ID: "0xc2", Config: x402.ChannelConfig{Payer: "0xpayer2", WithdrawDelay: 900}, Charged: 10_000, SignedMax: 10_000, Balance: 500_000,
			Calls: 2, SyncedAt: day(22, 17)},
	} {
		if _, _, err := s.Begin(c.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Commit(c); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// seededSpends are the batch transactions of the seeded channels: 2 deposits, 1 claim, 1 sweep.
var seededSpends = map[string]ledger.GasFigures{
	ledger.SpendDeposit: {Transactions: 2, Gas: 180_000, Wei: "1800000000000"}, ledger.SpendClaim: {Transactions: 1, Gas: 110_000, Wei: "1100000000000"},
	ledger.SpendSweep: {Transactions: 1, Gas: 60_000, Wei: "600000000000"}, ledger.SpendRefund: {Wei: "0"},
}

// payment is one seeded ledger record: reserved at at, then moved to status (with its gas).
type payment struct {
	at     time.Time
	route  string
	amount uint64
	status ledger.Status
	gasWei string
	box    string // the fleet box that served it
}

// seedLedger writes the payments through the ledger's own API with its clock at each one's time.
func seedLedger(t *testing.T, pays []payment) *ledger.Ledger {
	t.Helper()
	var clock time.Time
	l, err := ledger.Open(ledger.Options{Dir: t.TempDir(), Sync: journal.SyncAlways, Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	for i, p := range pays {
		clock = p.at
		id := ledger.ID("0xpayer", "0x"+string(rune('a'+i)))
		if _, err := l.Reserve(ledger.Record{ID: id, Payer: "0xpayer", Nonce: "0x" + string(rune('a'+i)), Route: p.route, Box: p.box, Amount: p.amount}, math.MaxUint64); err != nil {
			t.Fatal(err)
		}
		if p.status == ledger.Reserved {
			continue
		}
		if _, err := l.Update(id, func(r *ledger.Record) error { r.Status, r.GasWei = p.status, p.gasWei; return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return l
}

// seedFree records free first calls in a state store, each on its own day.
func seedFree(t *testing.T, days []time.Time) *state.Store {
	t.Helper()
	var clock time.Time
	s, err := state.Open(t.TempDir(), state.Options{Name: "api", Now: func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i, d := range days {
		clock = d
		if ok, _, err := s.UseFreeCall("client"+string(rune('a'+i)), "chain.gas", "chain.gas"); err != nil || !ok {
			t.Fatalf("free call: %v %v", ok, err)
		}
	}
	return s
}

// proxyFigures stands for proxyd's admin socket.
type proxyFigures struct {
	stats  *proxyclient.Stats
	status *proxyclient.Status
	err    error
}

func (p proxyFigures) Stats(context.Context) (*proxyclient.Stats, error)   { return p.stats, p.err }
func (p proxyFigures) Status(context.Context) (*proxyclient.Status, error) { return p.status, p.err }

var (
	proxyFiguresStats = proxyclient.Stats{TunnelsOpen: 2, TunnelsTotal: 17, RefusedAuth: 3, RefusedPort: 1, DialFailed: 1,
		BytesUp: 1_250_000, BytesDown: 98_000_000, Packages: 4, PackagesActive: 3}
	proxyFiguresStatus = proxyclient.Status{Live: true, Reachable: proxyclient.Reachable, CheckedAt: day(22, 18),
		Exit: &proxyclient.Exit{IP: "203.0.113.7", Country: "FR", ASN: "AS3215", Carrier: "Orange"}}
)

func seededMetrics(withFarm bool) *obs.Registry {
	m := &obs.Registry{}
	c := m.Counter(MetricRequests, "API requests by route and status.", "route", "status")
	for _, s := range []struct {
		route, status string
		n             uint64
	}{
		{"fr.tva", "200", 3}, {"fr.tva", "402", 4}, {"fr.tva", "400", 1},
		{"chain.gas", "200", 2}, {"chain.gas", "502", 1}, {"chain.gas", "429", 1},
		{"unknown", "404", 2}, {"web.screenshot", "503", 5},
	} {
		c.Add(s.n, s.route, s.status)
	}
	if withFarm {
		m.GaugeFunc(MetricFarm, "Browser farm.", func() map[string]float64 {
			return map[string]float64{"size": 2, "browsers_up": 2, "jobs_running": 1, "queue_depth": 3, "queue_cap": 16, "free_queued": 1,
				"jobs_done": 40, "jobs_failed": 2, "rejected": 1, "page_crashes": 1, "restarts": 1, "memory_mb": 612}
		}, "stat")
	}
	return m
}

func day(d, h int) time.Time { return time.Date(2026, 11, d, h, 0, 0, 0, time.UTC) }

// seededPayments: settled revenue on three days (one before the window), a queue, a failure.
var seededPayments = []payment{
	{day(2, 10), "fr.tva", 5000, ledger.Settled, "1000", ""},                  // outside a 7-day window
	{day(20, 9), "fr.tva", 5000, ledger.Settled, "84000000000000", ""},        // 2026-11-20
	{day(20, 11), "chain.gas", 1000, ledger.Settled, "84000000000000", ""},    //
	{day(21, 14), "proxy.1gb", 3500000, ledger.Settled, "90000000000000", ""}, // 2026-11-21
	{day(22, 8), "fr.tva", 5000, ledger.Settled, "18446744073709551616", ""},  // today, past uint64
	{day(22, 9), "fr.tva", 5000, ledger.Queued, "", ""},                       // owed
	{day(22, 10), "chain.gas", 1000, ledger.Broadcast, "", ""},                // sent
	{day(22, 11), "chain.gas", 1000, ledger.Failed, "30000000000000", ""},     // reverted: gas spent, no revenue
	{day(22, 12), "web.screenshot", 10000, ledger.Reserved, "", ""},           // work running
}

func TestSnapshot(t *testing.T) {
	liveProxy := proxyFigures{stats: &proxyFiguresStats, status: &proxyFiguresStatus}
	health := func() Health {
		return Health{Status: "ok", Components: map[string]string{"browserfarm": "ok", "state": "ok"}, Routes: 152, Available: 140}
	}
	cases := []struct {
		name string
		src  func(t *testing.T) Sources
	}{
		{"empty", func(t *testing.T) Sources {
			return Sources{Ledger: localLedger{l: seedLedger(t, nil)}, Free: seedFree(t, nil), Metrics: &obs.Registry{}, Health: health}
		}},
		{"seeded", func(t *testing.T) Sources {
			return Sources{Ledger: localLedger{l: seedLedger(t, seededPayments), ch: seedChannels(t), spends: seededSpends}, Free: seedFree(t, []time.Time{day(21, 1), day(22, 2), day(22, 3)}),
				Metrics: seededMetrics(true), Proxy: liveProxy, Health: health}
		}},
		{"remote-facilitator-no-farm-no-proxy", func(t *testing.T) Sources {
			return Sources{NoLedger: "payments are settled by the remote facilitator https://x402.example; its ledger is not on this box",
				Metrics: seededMetrics(false), Health: func() Health {
					return Health{Status: "degraded", Components: map[string]string{"browserfarm": "no browser up", "state": "ok"}, Routes: 152, Available: 120}
				}}
		}},
		{"fleet", func(t *testing.T) Sources {
			return Sources{Ledger: localLedger{l: seedLedger(t, fleetPayments), ch: seedChannels(t), spends: seededSpends}, Metrics: seededMetrics(false),
				Health: health, Boxes: func() []BoxState { return fleetStates }}
		}},
		{"daemons-unreachable", func(t *testing.T) Sources {
			down := errors.New("dial unix /run/peage/settle.sock: connect: no such file or directory")
			return Sources{Ledger: localLedger{l: seedLedger(t, nil), err: down}, Metrics: seededMetrics(true), Health: health,
				Proxy: proxyFigures{err: &proxyclient.Error{Code: proxyclient.CodeUnavailable, Message: "proxyd admin socket: connection refused"}}}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := c.src(t)
			src.Now, src.Days, src.Version, src.Started = func() time.Time { return now }, 7, "1.2.3", now.Add(-26*time.Hour-5*time.Minute)
			s := Build(context.Background(), src)
			apitest.Golden(t, c.name, s, goldenfile.Update())
			var text bytes.Buffer
			if err := WriteText(&text, s); err != nil {
				t.Fatal(err)
			}
			apitest.GoldenFile(t, c.name+".txt", text.Bytes(), goldenfile.Update())
		})
	}
}

// TestSeededFigures states the seeded case's sums, so a golden rewritten by -update cannot
// quietly accept wrong arithmetic.
func TestSeededFigures(t *testing.T) {
	s := Build(context.Background(), Sources{Ledger: localLedger{l: seedLedger(t, seededPayments)}, Free: seedFree(t, []time.Time{day(21, 1), day(22, 2)}),
		Metrics: seededMetrics(true), Now: func() time.Time { return now }, Days: 7})
	r := s.Revenue
	checks := []struct {
		name      string
		got, want any
	}{
		{"total", r.Total, uint64(5000 + 5000 + 1000 + 3500000 + 5000)},
		{"paid calls", r.Calls, 5},
		{"today", r.Today, uint64(5000)},
		{"days", len(r.ByDay), 7},
		{"first day", r.ByDay[0].Day, "2026-11-16"},
		{"2026-11-20", r.ByDay[4], DayRevenue{Day: "2026-11-20", Amount: 6000, Calls: 2}},
		{"2026-11-21", r.ByDay[5], DayRevenue{Day: "2026-11-21", Amount: 3500000, Calls: 1, FreeCalls: 1}},
		{"top route", r.ByRoute[0], RouteRevenue{Route: "proxy.1gb", Amount: 3500000, Calls: 1}},
		{"fr.tva all time", r.ByRoute[1], RouteRevenue{Route: "fr.tva", Amount: 15000, Calls: 3}},
		{"queue", s.Settlement.Queued, Count{1, 5000}},
		{"broadcast", s.Settlement.Broadcast, Count{1, 1000}},
		{"running", s.Settlement.Running, Count{1, 10000}},
		{"failed", s.Settlement.Failed, Count{1, 1000}},
		{"oldest owed", s.Settlement.OldestOwed, day(22, 9)},
		{"gas all time", s.Settlement.GasWei, "18447032073709552616"},
		{"gas today", s.Settlement.GasByDay[6], DayGas{Day: "2026-11-22", Transactions: 2, Wei: "18446774073709551616"}},
		{"calls", s.Routes.Total, RouteCalls{Calls: 19, OK: 5, PaymentAsked: 4, Refused: 4, Failed: 6}},
		{"busiest route", s.Routes.By[0].Route, "fr.tva"},
		{"farm busy", s.Farm.Busy, 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
}

// fleetPayments: exact payments a gateway's boxes served (and one its cache answered).
var fleetPayments = []payment{
	{day(21, 9), "fr.tva", 5000, ledger.Settled, "84000000000000", "line-1"},
	{day(22, 9), "fr.tva", 5000, ledger.Settled, "84000000000000", "line-1"},
	{day(22, 10), "web.screenshot", 10000, ledger.Settled, "84000000000000", "line-2"},
	{day(22, 11), "fr.geocode", 5000, ledger.Settled, "84000000000000", ""},   // a cache hit
	{day(22, 12), "fr.tva", 5000, ledger.Queued, "", "line-2"},                // owed, not revenue yet
	{day(22, 13), "fr.tva", 5000, ledger.Settled, "84000000000000", "line-0"}, // a box since revoked
}

// fleetStates: a live box, a box gone, a box enrolled that never joined; line-9 only earned
// vouchers (seedChannels) and line-0 only exact payments, and neither is known to the gateway.
var fleetStates = []BoxState{
	{Box: "line-2", Live: true, Health: "ok", Routes: []string{"fr_tva", "web_screenshot"}, Country: "FR", ASN: 3215, Load: 1, Slots: 8, LastSeen: now.Add(-time.Second)},
	{Box: "line-1", Health: "ok", Routes: []string{"fr_tva"}, Country: "FR", Slots: 8, LastSeen: now.Add(-3 * time.Minute)},
	{Box: "line-3", Routes: []string{}},
}

// TestFleetFigures states the fleet case's sums per box: exact payments settled by box, the
// vouchers each box served from the channels, what the gateway served itself.
func TestFleetFigures(t *testing.T) {
	s := Build(context.Background(), Sources{Ledger: localLedger{l: seedLedger(t, fleetPayments), ch: seedChannels(t)},
		Now: func() time.Time { return now }, Days: 7, Boxes: func() []BoxState { return fleetStates }})
	if s.Fleet == nil || s.Fleet.Error != "" {
		t.Fatalf("fleet %+v", s.Fleet)
	}
	got := map[string]FleetBox{}
	var names []string
	for _, b := range s.Fleet.Boxes {
		got[b.Box] = b
		names = append(names, b.Box)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"boxes, by name", strings.Join(names, " "), "line-0 line-1 line-2 line-3 line-9"},
		{"line-1", got["line-1"].Earned, Earned{Calls: 32, Amount: 160_000, Settled: Count{2, 10_000}, Vouchers: Count{30, 150_000}}},
		{"line-2 (one payment still owed)", got["line-2"].Earned, Earned{Calls: 1, Amount: 10_000, Settled: Count{1, 10_000}}},
		{"line-2 live", got["line-2"].Live, true},
		{"line-0, revoked", got["line-0"].Earned, Earned{Calls: 1, Amount: 5000, Settled: Count{1, 5000}}},
		{"line-0 unknown to the gateway", !got["line-0"].Known && !got["line-0"].Live, true},
		{"line-3 known", got["line-3"].Known, true},
		{"line-9, vouchers only", got["line-9"].Earned, Earned{Calls: 2, Amount: 10_000, Vouchers: Count{2, 10_000}}},
		{"line-3, never joined", got["line-3"].Earned, Earned{}},
		{"the gateway's own", s.Fleet.Gateway, Earned{Calls: 1, Amount: 5000, Settled: Count{1, 5000}}},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, c.got, c.want)
		}
	}
}
