package operator

import (
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/peage/appliance/settle/ledger"
)

// textRoutes bounds the routes listed in the terminal (the JSON has them all).
const textRoutes = 10

// WriteText prints the snapshot at a glance for a terminal: what `appliance status` shows.
func WriteText(out io.Writer, s Snapshot) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	at := s.GeneratedAt
	fmt.Fprintf(w, "péage %s\thealth %s · up %s · %d of %d routes available · %s UTC\n", s.Version, s.Health.Status,
		age(at.Sub(s.StartedAt)), s.Health.Available, s.Health.Routes, at.Format("2006-01-02 15:04:05"))
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(s.Health.Components)) {
		if v := s.Health.Components[k]; v != "ok" {
			bad = append(bad, k+": "+v)
		}
	}
	if len(bad) > 0 {
		fmt.Fprintf(w, "problems\t%s\n", strings.Join(bad, "; "))
	}
	r := s.Revenue
	if r.Error != "" {
		fmt.Fprintf(w, "revenue\t%s\n", r.Error)
	} else {
		var month uint64
		var free int
		for _, d := range r.ByDay {
			month += d.Amount
			free += d.FreeCalls
		}
		fmt.Fprintf(w, "revenue\ttoday %s · %d days %s · all time %s USDC over %d paid calls · %d free calls in %d days\n",
			usdc(r.Today), len(r.ByDay), usdc(month), usdc(r.Total), r.Calls, free, len(r.ByDay))
		if n := min(7, len(r.ByDay)); n > 0 {
			last := r.ByDay[len(r.ByDay)-n:]
			var max uint64
			for _, d := range last {
				max = maxU(max, d.Amount)
			}
			var days []string
			for _, d := range last {
				days = append(days, d.Day[5:]+" "+spark(d.Amount, max)+" "+usdc(d.Amount))
			}
			fmt.Fprintf(w, "  last %d days\t%s\n", n, strings.Join(days, "  "))
		}
		for i, rr := range r.ByRoute {
			if i == 5 {
				fmt.Fprintf(w, "\t… %d more routes\n", len(r.ByRoute)-5)
				break
			}
			label := ""
			if i == 0 {
				label = "  by route"
			}
			fmt.Fprintf(w, "%s\t%s %s USDC (%s)\n", label, rr.Route, usdc(rr.Amount), plural(rr.Calls, "call"))
		}
	}
	t := s.Routes.Total
	fmt.Fprintf(w, "calls\t%d since start · %d delivered · %d payment asked · %d refused · %d failed\n", t.Calls, t.OK, t.PaymentAsked, t.Refused, t.Failed)
	for i, rc := range s.Routes.By {
		if i == textRoutes {
			fmt.Fprintf(w, "\t… %d more routes\n", len(s.Routes.By)-textRoutes)
			break
		}
		fmt.Fprintf(w, "\t%s %d: %d ok, %d 402, %d 4xx, %d 5xx\n", rc.Route, rc.Calls, rc.OK, rc.PaymentAsked, rc.Refused, rc.Failed)
	}
	f := s.Farm
	if f.Error != "" {
		fmt.Fprintf(w, "browser farm\t%s\n", f.Error)
	} else {
		fmt.Fprintf(w, "browser farm\t%d of %d up · %d busy · queue %d of %d (free %d) · %d done, %d failed, %d turned away · %d page crashes, %d restarts · %d MB\n",
			f.BrowsersUp, f.Size, f.Busy, f.Queue, f.QueueCap, f.FreeQueued, f.JobsDone, f.JobsFailed, f.Rejected, f.PageCrashes, f.Restarts, f.MemoryMB)
	}
	p := s.Proxy
	if p.Error != "" {
		fmt.Fprintf(w, "proxy\t%s\n", p.Error)
	} else {
		fmt.Fprintf(w, "proxy\t%d packages (%d active) · %d tunnels open, %d since start · up %s down %s · %d refused, %d dials failed\n",
			p.Packages, p.PackagesActive, p.TunnelsOpen, p.TunnelsTotal, bytesText(p.BytesUp), bytesText(p.BytesDown), p.Refused, p.DialFailed)
	}
	e := s.Exit
	switch {
	case e.Error != "":
		fmt.Fprintf(w, "exit\t%s\n", e.Error)
	default:
		state := "down"
		if e.Live {
			state = "live"
		}
		if e.Problem != "" {
			state += ": " + e.Problem
		}
		where := strings.Join(nonEmpty(e.IP, e.Country, e.ASN, e.Carrier), " ")
		checked := "never checked"
		if !e.CheckedAt.IsZero() {
			checked = "checked " + age(at.Sub(e.CheckedAt)) + " ago"
		}
		fmt.Fprintf(w, "exit\t%s · %s · reachable %s · %s\n", state, where, e.Reachable, checked)
	}
	st := s.Settlement
	if st.Error != "" {
		fmt.Fprintf(w, "settlement\t%s\n", st.Error)
	} else {
		oldest := "none owed"
		if !st.OldestOwed.IsZero() {
			oldest = "oldest owed " + age(at.Sub(st.OldestOwed))
		}
		fmt.Fprintf(w, "settlement\tqueue %d (%s USDC) · broadcast %d (%s USDC) · running %d · failed %d (%s USDC) · %s\n",
			st.Queued.Payments, usdc(st.Queued.Amount), st.Broadcast.Payments, usdc(st.Broadcast.Amount), st.Running.Payments,
			st.Failed.Payments, usdc(st.Failed.Amount), oldest)
		var txs int
		for _, d := range st.GasByDay {
			txs += d.Transactions
		}
		fmt.Fprintf(w, "gas\t%s spent in all · %s mined in the last %d days\n", ethText(st.GasWei), plural(txs, "transaction"), len(st.GasByDay))
		if s.Channels.Error == "" {
			fmt.Fprintf(w, "gas per paid call\t%s\n", GasPerCallText(st.GasPerCall))
		}
	}
	channelLines(w, s.Channels, at)
	if err := w.Flush(); err != nil {
		return err
	}
	if err := channelTable(out, s.Channels); err != nil {
		return err
	}
	return fleetTable(out, s.Fleet, at)
}

// fleetTable lists a gateway's boxes: state, exit, load, last heartbeat, routes, and the
// paid calls and USDC each served (exact settled plus vouchers charged).
func fleetTable(out io.Writer, f *Fleet, at time.Time) error {
	if f == nil {
		return nil
	}
	live := 0
	for _, b := range f.Boxes {
		if b.Live {
			live++
		}
	}
	fmt.Fprintf(out, "\nfleet: %d boxes, %d live · the gateway itself served %s for %s USDC\n", len(f.Boxes), live,
		plural(f.Gateway.Calls, "paid call"), usdc(f.Gateway.Amount))
	if f.Error != "" {
		fmt.Fprintf(out, "  earnings unknown: %s\n", f.Error)
	}
	if len(f.Boxes) == 0 {
		return nil
	}
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "box\tstate\tload/slots\texit\tlast seen\troutes\tcalls\tUSDC\tsettled\tvouchers")
	for _, b := range f.Boxes {
		state := b.Health
		switch {
		case !b.Known:
			state = "not enrolled"
		case !b.Live && b.LastSeen.IsZero():
			state = "not connected"
		case !b.Live:
			state = "gone"
		}
		exit := b.Country
		if b.ASN != 0 {
			exit = strings.TrimSpace(fmt.Sprintf("%s AS%d", exit, b.ASN))
		}
		if exit == "" {
			exit = "-"
		}
		seen := "never"
		if !b.LastSeen.IsZero() {
			seen = age(at.Sub(b.LastSeen)) + " ago"
		}
		e := b.Earned
		fmt.Fprintf(w, "%s\t%s\t%d/%d\t%s\t%s\t%d\t%d\t%s\t%d %s\t%d %s\n", b.Box, state, b.Load, b.Slots, exit, seen, len(b.Routes),
			e.Calls, usdc(e.Amount), e.Settled.Payments, usdc(e.Settled.Amount), e.Vouchers.Payments, usdc(e.Vouchers.Amount))
	}
	return w.Flush()
}

// GasPerCallText is the gas per paid call of both schemes on one line.
func GasPerCallText(g ledger.GasPerCall) string {
	var kinds []string
	for _, k := range []string{ledger.SpendDeposit, ledger.SpendClaim, ledger.SpendSweep, ledger.SpendRefund} {
		f := g.Batch[k]
		kinds = append(kinds, fmt.Sprintf("%s %d gas in %s", k, f.Gas, plural(f.Transactions, "tx")))
	}
	return fmt.Sprintf("%d gas (%s) over %d calls · exact %d gas over %d · batch-settlement %d gas over %d (%s)",
		g.PerCall.Gas, ethText(g.PerCall.Wei), uint64(g.ExactCalls)+g.BatchCalls, g.ExactPerCall.Gas, g.ExactCalls,
		g.BatchPerCall.Gas, g.BatchCalls, strings.Join(kinds, ", "))
}

// textChannels bounds the channels listed in the terminal (the JSON has them all).
const textChannels = 20

// WriteChannels prints the batch-settlement channels: totals, the claimer, then one line per
// channel, most unclaimed first.
func WriteChannels(out io.Writer, c Channels, at time.Time) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	channelLines(w, c, at)
	if err := w.Flush(); err != nil {
		return err
	}
	return channelTable(out, c)
}

// channelLines are the totals and the claimer, label TAB text.
func channelLines(w io.Writer, c Channels, at time.Time) {
	switch {
	case c.Error != "":
		fmt.Fprintf(w, "channels\t%s\n", c.Error)
		return
	case !c.Enabled && len(c.Channels) == 0:
		fmt.Fprintf(w, "channels\tbatch-settlement is off (no receiver authorizer)\n")
		return
	}
	t := c.Totals
	fmt.Fprintf(w, "channels\t%s · %s · balance %s · charged %s · claimed %s · unclaimed %s USDC · %s pending\n",
		plural(t.Channels, "channel"), plural(int(t.Calls), "paid call"), usdc(t.Balance), usdc(t.Charged), usdc(t.Claimed), usdc(t.Unclaimed),
		plural(t.PendingWithdrawals, "withdrawal"))
	cl := c.Claimer
	every := "not running"
	if cl.IntervalSeconds > 0 {
		every = fmt.Sprintf("every %d s", cl.IntervalSeconds)
	}
	last := "no round yet"
	if !cl.LastRound.IsZero() {
		last = fmt.Sprintf("%s, last %s ago", plural(cl.Rounds, "round"), age(at.Sub(cl.LastRound)))
	}
	if cl.LastClaimTx != "" {
		last += " · last claim " + cl.LastClaimTx
	}
	if cl.LastError != "" {
		last += " · last round failed: " + cl.LastError
	}
	fmt.Fprintf(w, "claimer\t%s · claims from %s USDC unclaimed · a withdrawal is claimed %d s before it can finalize · %s\n",
		every, usdc(cl.MinClaimable), cl.WithdrawMarginSeconds, last)
}

// channelTable lists the channels, most unclaimed first.
func channelTable(out io.Writer, c Channels) error {
	if c.Error != "" || len(c.Channels) == 0 {
		return nil
	}
	list := slices.Clone(c.Channels)
	slices.SortStableFunc(list, func(a, b ledger.ChannelView) int { return largestFirst(a.Unclaimed, b.Unclaimed, a.ID, b.ID) })
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "  channel\tpayer\tbalance\tremaining\tcharged\tclaimed\tunclaimed\tcalls\twithdrawal finalizes (UTC)\t")
	for i, v := range list {
		if i == textChannels {
			fmt.Fprintf(w, "  … %d more channels\t\t\t\t\t\t\t\t\t\n", len(list)-textChannels)
			break
		}
		wd := "none"
		if !v.WithdrawFinalizeAt.IsZero() {
			wd = v.WithdrawFinalizeAt.UTC().Format("2006-01-02 15:04:05")
		}
		fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t\n", v.ID, v.Payer, usdc(v.Balance), usdc(v.Remaining), usdc(v.Charged),
			usdc(v.Claimed), usdc(v.Unclaimed), v.Calls, wd)
	}
	return w.Flush()
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}

// nonEmpty is the exit's parts that are known, or a word saying none is yet.
func nonEmpty(vals ...string) []string {
	out := nonEmptyOnly(vals...)
	if len(out) == 0 {
		return []string{"no address yet"}
	}
	return out
}

// spark is one bar character for v against max.
func spark(v, max uint64) string {
	bars := []rune("▁▂▃▄▅▆▇█")
	if max == 0 || v == 0 {
		return "·"
	}
	return string(bars[int(v*uint64(len(bars)-1)/max)])
}

func bytesText(n int64) string {
	units := []string{"B", "KB", "MB", "GB", "TB"}
	v, i := float64(n), 0
	for v >= 1000 && i < len(units)-1 {
		v /= 1000
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

// ethText writes decimal wei as ETH, exactly.
func ethText(wei string) string {
	w, ok := new(big.Int).SetString(wei, 10)
	if !ok {
		return "? ETH"
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	q, r := new(big.Int).QuoRem(w, unit, new(big.Int))
	frac := strings.TrimRight(fmt.Sprintf("%018s", r.String()), "0")
	if frac == "" {
		return q.String() + " ETH"
	}
	return q.String() + "." + frac + " ETH"
}
