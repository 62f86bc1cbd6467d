// Package operator is the operator's view of one box: a snapshot of its figures (revenue from
// the settle ledger, free calls from the state store, calls and errors from the metrics
// registry, the browser farm, the proxy and its exit, the settlement queue and the gas spent),
// served as JSON on the operator listener, drawn by the dashboard page that reads that JSON,
// and printed by `appliance status` from the same JSON, so every view shows one set of figures.
package operator

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/peage/appliance/internal/obs"
	"github.com/peage/appliance/internal/state"
	proxyclient "github.com/peage/appliance/proxyd/client"
	"github.com/peage/appliance/settle/ledger"
)

// Metric names the snapshot reads from the registry (the names /metrics shows).
const (
	MetricRequests = "peage_http_requests_total" // route, status
	MetricFarm     = "peage_browserfarm"         // stat
)

// Ledger is the settle daemon's ledger as its client serves it (settle/client.Client).
type Ledger interface {
	Revenue(ctx context.Context) ([]ledger.RevenueRow, error)
	Stats(ctx context.Context) (ledger.Stats, error)
	Channels(ctx context.Context) (ledger.ChannelsReport, error)
}

// Proxy is proxyd as the API reaches it: its counters and its exit check.
type Proxy interface {
	Stats(ctx context.Context) (*proxyclient.Stats, error)
	Status(ctx context.Context) (*proxyclient.Status, error)
}

// FreeCalls is the state store's record of the free first calls (internal/state.Store).
type FreeCalls interface {
	FreeCalls() []state.FreeCall
}

// Sources are where the figures come from. A nil source leaves its section with a reason
// instead of figures.
type Sources struct {
	Ledger Ledger
	// NoLedger says why there is no ledger (a remote facilitator keeps its records).
	NoLedger string
	Free     FreeCalls
	Metrics  *obs.Registry
	Proxy    Proxy
	// Boxes lists a fleet gateway's boxes as its registry and hub know them; nil on an
	// appliance that is no gateway, whose snapshot then has no fleet section.
	Boxes func() []BoxState
	// Health reports the box's health as /healthz does.
	Health  func() Health
	Version string
	Started time.Time
	// Days is how many UTC days the daily series cover, today included (default 30).
	Days int
	// Timeout bounds each source that is another daemon (default 5 s).
	Timeout time.Duration
	Now     func() time.Time
}

// Health is the box's health as /healthz reports it.
type Health struct {
	Status     string            `json:"status"` // ok or degraded
	Components map[string]string `json:"components"`
	Routes     int               `json:"routes"`
	Available  int               `json:"routes_available"`
}

// Snapshot is every figure of the box at one moment. Amounts are atomic USDC units (6
// decimals); gas is decimal wei (it passes 2^53).
type Snapshot struct {
	GeneratedAt time.Time  `json:"generated_at"`
	Version     string     `json:"version"`
	StartedAt   time.Time  `json:"started_at"`
	Health      Health     `json:"health"`
	Revenue     Revenue    `json:"revenue"`
	Routes      Routes     `json:"routes"`
	Farm        Farm       `json:"browser_farm"`
	Proxy       ProxyView  `json:"proxy"`
	Exit        Exit       `json:"exit"`
	Settlement  Settlement `json:"settlement"`
	Channels    Channels   `json:"channels"`
	Fleet       *Fleet     `json:"fleet,omitempty"` // a gateway's boxes
}

// BoxState is what a gateway knows of one box of its fleet besides the ledger.
type BoxState struct {
	Box string `json:"box"`
	// Live: its last heartbeat is within the registry's TTL and no call found it gone; a box
	// enrolled but not connected, or gone, is listed with Live false.
	Live     bool      `json:"live"`
	Health   string    `json:"health,omitempty"`
	Routes   []string  `json:"routes"`
	Country  string    `json:"country,omitempty"`
	ASN      uint32    `json:"asn,omitempty"`
	Load     int       `json:"load"`
	Slots    int       `json:"slots"`
	LastSeen time.Time `json:"last_seen,omitzero"` // its last heartbeat stored (zero: none since the gateway started)
}

// Fleet is a gateway's boxes, each with what the ledger credits it, so the operator can share
// revenue with the lines' owners.
type Fleet struct {
	Error string     `json:"error,omitempty"` // the ledger could not be read: no box's earnings
	Boxes []FleetBox `json:"boxes"`
	// Gateway is what the gateway served itself: its result cache's hits and the routes it
	// keeps (discovery, free, and the paid ones that create something).
	Gateway Earned `json:"gateway"`
}

// FleetBox is one box: its state and its earnings. A box the ledger credits that the gateway
// no longer knows (revoked, renamed) is listed too.
type FleetBox struct {
	BoxState
	// Known: the gateway lists the box (its registry or its enrolments); a box only the
	// ledger names (revoked since) is not known.
	Known  bool   `json:"known"`
	Earned Earned `json:"earned"`
}

// Earned is the paid calls a box served and their amount (atomic USDC): exact payments
// settled (the ledger) and batch-settlement vouchers charged (the channels, claimed later).
type Earned struct {
	Calls    int    `json:"calls"`
	Amount   uint64 `json:"amount"`
	Settled  Count  `json:"settled"`
	Vouchers Count  `json:"vouchers"`
}

func (e *Earned) add(settled, vouchers Count) {
	e.Settled.Payments += settled.Payments
	e.Settled.Amount += settled.Amount
	e.Vouchers.Payments += vouchers.Payments
	e.Vouchers.Amount += vouchers.Amount
	e.Calls = e.Settled.Payments + e.Vouchers.Payments
	e.Amount = e.Settled.Amount + e.Vouchers.Amount
}

// Revenue is the settled revenue (the ledger counts a payment on the UTC day it settled) and
// the free first calls granted (the state store).
type Revenue struct {
	Error    string         `json:"error,omitempty"`
	Currency string         `json:"currency"`
	Decimals int            `json:"decimals"`
	Total    uint64         `json:"total"`
	Calls    int            `json:"calls"`
	Today    uint64         `json:"today"`
	ByDay    []DayRevenue   `json:"by_day"`   // the last Days UTC days, oldest first, zeros kept
	ByRoute  []RouteRevenue `json:"by_route"` // every route that earned, largest first
}

// DayRevenue is one UTC day.
type DayRevenue struct {
	Day       string `json:"day"`
	Amount    uint64 `json:"amount"`
	Calls     int    `json:"calls"`      // paid calls settled that day
	FreeCalls int    `json:"free_calls"` // free first calls granted that day
}

// RouteRevenue is one route over the ledger's whole history.
type RouteRevenue struct {
	Route  string `json:"route"`
	Amount uint64 `json:"amount"`
	Calls  int    `json:"calls"`
}

// Routes are the API's answers since the daemon started, by route ID (unknown paths count as
// "unknown"), busiest first.
type Routes struct {
	Total RouteCalls   `json:"total"`
	By    []RouteCalls `json:"by_route"`
}

// RouteCalls splits a route's answers: delivered (2xx), payment asked (402), refused (other
// 4xx: bad input, limits) and failed (5xx: upstream down, not ready).
type RouteCalls struct {
	Route        string `json:"route,omitempty"`
	Calls        uint64 `json:"calls"`
	OK           uint64 `json:"ok"`
	PaymentAsked uint64 `json:"payment_required"`
	Refused      uint64 `json:"client_errors"`
	Failed       uint64 `json:"server_errors"`
}

// Farm is the browser pool.
type Farm struct {
	Error       string `json:"error,omitempty"`
	Running     bool   `json:"running"`
	Size        int    `json:"size"`
	BrowsersUp  int    `json:"browsers_up"`
	Busy        int    `json:"busy"`
	Queue       int    `json:"queue"`
	QueueCap    int    `json:"queue_cap"`
	FreeQueued  int    `json:"free_queued"`
	JobsDone    int    `json:"jobs_done"`
	JobsFailed  int    `json:"jobs_failed"`
	Rejected    int    `json:"rejected"`
	PageCrashes int    `json:"page_crashes"`
	Restarts    int    `json:"restarts"`
	MemoryMB    int    `json:"memory_mb"`
}

// ProxyView is the metered proxy's counters since proxyd started.
type ProxyView struct {
	Error          string `json:"error,omitempty"`
	Packages       int    `json:"packages"`
	PackagesActive int    `json:"packages_active"`
	TunnelsOpen    int64  `json:"tunnels_open"`
	TunnelsTotal   int64  `json:"tunnels_total"`
	BytesUp        int64  `json:"bytes_up"`
	BytesDown      int64  `json:"bytes_down"`
	Refused        int64  `json:"refused"`
	DialFailed     int64  `json:"dial_failed"`
}

// Exit is proxyd's last exit check: the proxy is sold only while it is live.
type Exit struct {
	Error     string    `json:"error,omitempty"`
	Live      bool      `json:"live"`
	IP        string    `json:"ip,omitempty"`
	Country   string    `json:"country,omitempty"`
	ASN       string    `json:"asn,omitempty"`
	Carrier   string    `json:"carrier,omitempty"`
	Problem   string    `json:"problem,omitempty"`
	Reachable string    `json:"reachable,omitempty"`
	CheckedAt time.Time `json:"checked_at,omitzero"`
}

// Settlement is the facilitator's queue and the gas its hot key spent.
type Settlement struct {
	Error string `json:"error,omitempty"`
	// Running are payments reserved while their work runs; Queued and Broadcast are owed for
	// delivered results and not yet on chain (the queue); Failed could not be collected.
	Running    Count     `json:"running"`
	Queued     Count     `json:"queued"`
	Broadcast  Count     `json:"broadcast"`
	Settled    Count     `json:"settled"`
	Failed     Count     `json:"failed"`
	OldestOwed time.Time `json:"oldest_owed,omitzero"`
	GasWei     string    `json:"gas_wei"`
	GasByDay   []DayGas  `json:"gas_by_day"` // the last Days UTC days, oldest first, zeros kept
	// GasPerCall is the gas of exact's settlements and of batch-settlement's deposits,
	// claims, sweeps and refunds, divided by the paid calls each scheme served.
	GasPerCall ledger.GasPerCall `json:"gas_per_paid_call"`
}

// Channels are the batch-settlement channels (settle's channel store, as last mirrored from
// the chain), their totals (unclaimed: charged to payers, not yet claimed on chain) and the
// claimer.
type Channels struct {
	Error    string               `json:"error,omitempty"`
	Enabled  bool                 `json:"enabled"`
	Totals   ledger.ChannelTotals `json:"totals"`
	Channels []ledger.ChannelView `json:"channels"`
	Claimer  ledger.ClaimerView   `json:"claimer"`
}

// Count is a number of payments and their amount.
type Count struct {
	Payments int    `json:"payments"`
	Amount   uint64 `json:"amount"`
}

// DayGas is the gas spent on one UTC day.
type DayGas struct {
	Day          string `json:"day"`
	Transactions int    `json:"transactions"`
	Wei          string `json:"wei"`
}

// Build reads every source (the other daemons in parallel, each within Timeout) and returns
// the snapshot; a source that fails fills its section's error and leaves the rest intact.
func Build(ctx context.Context, src Sources) Snapshot {
	now := time.Now
	if src.Now != nil {
		now = src.Now
	}
	days := src.Days
	if days <= 0 {
		days = 30
	}
	timeout := src.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	at := now().UTC()
	s := Snapshot{GeneratedAt: at, Version: src.Version, StartedAt: src.Started.UTC()}
	if src.Health != nil {
		s.Health = src.Health()
	}
	dayList := lastDays(at, days)
	var wg sync.WaitGroup
	run := func(fn func(ctx context.Context)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			fn(cctx)
		}()
	}
	var rows []ledger.RevenueRow
	run(func(ctx context.Context) { s.Revenue, rows = revenue(ctx, src, dayList) })
	var report ledger.ChannelsReport
	run(func(ctx context.Context) { s.Settlement = settlement(ctx, src, dayList) })
	run(func(ctx context.Context) { s.Channels, report = channels(ctx, src) })
	run(func(ctx context.Context) { s.Proxy = proxyView(ctx, src.Proxy) })
	run(func(ctx context.Context) { s.Exit = exit(ctx, src.Proxy) })
	s.Routes = routes(src.Metrics)
	s.Farm = farm(src.Metrics)
	wg.Wait()
	s.Settlement.GasPerCall = ledger.NewGasPerCall(ledger.GasFigures{Wei: "0"}, 0, map[string]ledger.GasFigures{}, 0)
	if s.Settlement.Error == "" && s.Channels.Error == "" {
		s.Settlement.GasPerCall = report.Gas
	}
	if src.Boxes != nil {
		s.Fleet = fleetView(src.Boxes(), s.Revenue.Error, rows, s.Channels.Error, report.ByBox)
	}
	return s
}

// fleetView lists the boxes the gateway knows and those the ledger credits, by name, each
// with its settled exact payments and its charged vouchers.
func fleetView(states []BoxState, revenueErr string, rows []ledger.RevenueRow, channelsErr string, vouchers map[string]ledger.Served) *Fleet {
	f := &Fleet{Boxes: []FleetBox{}, Error: strings.Join(nonEmptyOnly(revenueErr, channelsErr), "; ")}
	index := map[string]int{}
	for _, st := range states {
		if st.Routes == nil {
			st.Routes = []string{}
		}
		index[st.Box] = len(f.Boxes)
		f.Boxes = append(f.Boxes, FleetBox{BoxState: st, Known: true})
	}
	earned := func(box string) *Earned {
		if box == "" {
			return &f.Gateway
		}
		i, ok := index[box]
		if !ok {
			i = len(f.Boxes)
			index[box] = i
			f.Boxes = append(f.Boxes, FleetBox{BoxState: BoxState{Box: box, Routes: []string{}}})
		}
		return &f.Boxes[i].Earned
	}
	for _, r := range rows {
		earned(r.Box).add(Count{Payments: r.Calls, Amount: r.Amount}, Count{})
	}
	for box, v := range vouchers {
		earned(box).add(Count{}, Count{Payments: int(v.Calls), Amount: v.Charged})
	}
	slices.SortFunc(f.Boxes, func(a, b FleetBox) int { return strings.Compare(a.Box, b.Box) })
	return f
}

func nonEmptyOnly(vals ...string) []string {
	var out []string
	for _, v := range vals {
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

func channels(ctx context.Context, src Sources) (Channels, ledger.ChannelsReport) {
	c := Channels{Channels: []ledger.ChannelView{}}
	if src.Ledger == nil {
		c.Error = noLedger(src)
		return c, ledger.ChannelsReport{}
	}
	rep, err := src.Ledger.Channels(ctx)
	if err != nil {
		c.Error = "the settle daemon's channels cannot be read: " + err.Error()
		return c, rep
	}
	c.Enabled, c.Totals, c.Claimer = rep.Enabled, rep.Totals, rep.Claimer
	if rep.Channels != nil {
		c.Channels = rep.Channels
	}
	return c, rep
}

// lastDays are the n UTC days ending with at's, oldest first.
func lastDays(at time.Time, n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = at.AddDate(0, 0, i-n+1).Format(time.DateOnly)
	}
	return out
}

func noLedger(src Sources) string {
	if src.NoLedger != "" {
		return src.NoLedger
	}
	return "no payment ledger on this box"
}

// revenue also returns the ledger's rows, which the fleet view splits by box.
func revenue(ctx context.Context, src Sources, days []string) (Revenue, []ledger.RevenueRow) {
	r := Revenue{Currency: "USDC", Decimals: 6, ByDay: make([]DayRevenue, len(days)), ByRoute: []RouteRevenue{}}
	index := map[string]int{}
	for i, d := range days {
		r.ByDay[i].Day = d
		index[d] = i
	}
	if src.Free != nil {
		for _, f := range src.Free.FreeCalls() {
			if i, ok := index[f.Day]; ok {
				r.ByDay[i].FreeCalls++
			}
		}
	}
	if src.Ledger == nil {
		r.Error = noLedger(src)
		return r, nil
	}
	rows, err := src.Ledger.Revenue(ctx)
	if err != nil {
		r.Error = "the settle daemon's ledger cannot be read: " + err.Error()
		return r, nil
	}
	byRoute := map[string]*RouteRevenue{}
	for _, row := range rows {
		r.Total += row.Amount
		r.Calls += row.Calls
		if i, ok := index[row.Day]; ok {
			r.ByDay[i].Amount += row.Amount
			r.ByDay[i].Calls += row.Calls
		}
		rr := byRoute[row.Route]
		if rr == nil {
			rr = &RouteRevenue{Route: row.Route}
			byRoute[row.Route] = rr
		}
		rr.Amount += row.Amount
		rr.Calls += row.Calls
	}
	r.Today = r.ByDay[len(r.ByDay)-1].Amount
	for _, rr := range byRoute {
		r.ByRoute = append(r.ByRoute, *rr)
	}
	slices.SortFunc(r.ByRoute, func(a, b RouteRevenue) int { return largestFirst(a.Amount, b.Amount, a.Route, b.Route) })
	return r, rows
}

func settlement(ctx context.Context, src Sources, days []string) Settlement {
	s := Settlement{GasWei: "0", GasByDay: make([]DayGas, len(days))}
	index := map[string]int{}
	for i, d := range days {
		s.GasByDay[i] = DayGas{Day: d, Wei: "0"}
		index[d] = i
	}
	if src.Ledger == nil {
		s.Error = noLedger(src)
		return s
	}
	st, err := src.Ledger.Stats(ctx)
	if err != nil {
		s.Error = "the settle daemon's ledger cannot be read: " + err.Error()
		return s
	}
	count := func(status ledger.Status) Count {
		f := st.ByStatus[status]
		return Count{Payments: f.Payments, Amount: f.Amount}
	}
	s.Running, s.Queued, s.Broadcast = count(ledger.Reserved), count(ledger.Queued), count(ledger.Broadcast)
	s.Settled, s.Failed = count(ledger.Settled), count(ledger.Failed)
	s.OldestOwed = st.OldestOwed
	if _, ok := new(big.Int).SetString(st.GasWei, 10); ok {
		s.GasWei = st.GasWei
	}
	for _, g := range st.GasByDay {
		if i, ok := index[g.Day]; ok {
			if _, valid := new(big.Int).SetString(g.Wei, 10); valid {
				s.GasByDay[i] = DayGas{Day: g.Day, Transactions: g.Transactions, Wei: g.Wei}
			}
		}
	}
	return s
}

func proxyView(ctx context.Context, p Proxy) ProxyView {
	if p == nil {
		return ProxyView{Error: "no proxy on this box"}
	}
	st, err := p.Stats(ctx)
	if err != nil {
		return ProxyView{Error: "proxyd cannot be read: " + err.Error()}
	}
	return ProxyView{Packages: st.Packages, PackagesActive: st.PackagesActive, TunnelsOpen: st.TunnelsOpen, TunnelsTotal: st.TunnelsTotal,
		BytesUp: st.BytesUp, BytesDown: st.BytesDown, DialFailed: st.DialFailed,
		Refused: st.RefusedAuth + st.RefusedPolicy + st.RefusedPort + st.RefusedBusy + st.RefusedEnded}
}

func exit(ctx context.Context, p Proxy) Exit {
	if p == nil {
		return Exit{Error: "no proxy on this box"}
	}
	st, err := p.Status(ctx)
	if err != nil {
		return Exit{Error: "proxyd's exit check cannot be read: " + err.Error()}
	}
	e := Exit{Live: st.Live, Problem: st.Problem, Reachable: string(st.Reachable), CheckedAt: st.CheckedAt.UTC()}
	if x := st.Exit; x != nil {
		e.IP, e.Country, e.ASN, e.Carrier = x.IP, x.Country, x.ASN, x.Carrier
	}
	return e
}

func routes(m *obs.Registry) Routes {
	out := Routes{By: []RouteCalls{}}
	if m == nil {
		return out
	}
	by := map[string]*RouteCalls{}
	for _, s := range m.Samples(MetricRequests) {
		route := s.Labels["route"]
		code, err := strconv.Atoi(s.Labels["status"])
		if err != nil {
			continue
		}
		rc := by[route]
		if rc == nil {
			rc = &RouteCalls{Route: route}
			by[route] = rc
		}
		n := uint64(s.Value)
		for _, c := range []*RouteCalls{rc, &out.Total} {
			c.Calls += n
			switch {
			case code/100 == 2:
				c.OK += n
			case code == 402:
				c.PaymentAsked += n
			case code/100 == 4:
				c.Refused += n
			case code/100 == 5:
				c.Failed += n
			}
		}
	}
	for _, rc := range by {
		out.By = append(out.By, *rc)
	}
	slices.SortFunc(out.By, func(a, b RouteCalls) int { return largestFirst(a.Calls, b.Calls, a.Route, b.Route) })
	return out
}

// largestFirst orders routes by a figure, largest first, then by name.
func largestFirst(a, b uint64, nameA, nameB string) int {
	if c := cmp.Compare(b, a); c != 0 {
		return c
	}
	return strings.Compare(nameA, nameB)
}

// farm reads the browser farm's gauge (the peage_browserfarm series of /metrics).
func farm(m *obs.Registry) Farm {
	if m == nil {
		return Farm{Error: "no metrics"}
	}
	g := map[string]int{}
	samples := m.Samples(MetricFarm)
	for _, s := range samples {
		g[s.Labels["stat"]] = int(s.Value)
	}
	if len(samples) == 0 {
		return Farm{Error: "the browser farm is not running (Chromium could not start); the web routes answer 503"}
	}
	return Farm{Running: g["browsers_up"] > 0, Size: g["size"], BrowsersUp: g["browsers_up"], Busy: g["jobs_running"],
		Queue: g["queue_depth"], QueueCap: g["queue_cap"], FreeQueued: g["free_queued"], JobsDone: g["jobs_done"],
		JobsFailed: g["jobs_failed"], Rejected: g["rejected"], PageCrashes: g["page_crashes"], Restarts: g["restarts"],
		MemoryMB: g["memory_mb"]}
}

// ErrNoSnapshot is returned by Fetch when the operator listener does not answer a snapshot.
var ErrNoSnapshot = errors.New("operator: no snapshot")

// usdc formats atomic units (6 decimals) without a float.
func usdc(atomic uint64) string { return fmt.Sprintf("%d.%06d", atomic/1_000_000, atomic%1_000_000) }
