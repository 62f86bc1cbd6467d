package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/peage/appliance/appliance/operator"
	"github.com/peage/appliance/internal/journal"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
)

func init() {
	register("ledger", "show revenue by UTC day and route, the recent payments with their status and transaction, the batch-settlement channels and the gas per paid call", runLedger)
}

// devSocket is where `appliance dev` (default state dir) serves its facilitator.
var devSocket = filepath.Join(".state", "dev", "settle.sock")

func runLedger(ctx context.Context, args []string) error { return ledgerTo(ctx, os.Stdout, args) }

// ledgerTo is the ledger command writing to out.
func ledgerTo(ctx context.Context, out io.Writer, args []string) error {
	fs := flag.NewFlagSet("ledger", flag.ContinueOnError)
	addr := fs.String("facilitator", "", "facilitator address (unix:PATH or URL) [the production socket, else the one of appliance dev]")
	stateDir := fs.String("state-dir", "", "state directory of a running appliance dev (its settle.sock)")
	dir := fs.String("dir", "", "read a ledger directory directly (only while the facilitator is stopped)")
	recent := fs.Int("payments", 20, "how many recent payments to list (0: none)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var rows []ledger.RevenueRow
	var pays []ledger.Summary
	var chans ledger.ChannelsReport
	if *dir != "" {
		l, err := ledger.Open(ledger.Options{Dir: *dir, Sync: journal.SyncAlways})
		if err != nil {
			return err
		}
		rows, pays = l.Revenue(), l.Recent(*recent)
		if chans, err = readChannels(*dir, l.Stats()); err != nil {
			_ = l.Close()
			return err
		}
		if err := l.Close(); err != nil {
			return err
		}
	} else {
		where, err := facilitatorAddr(*addr, *stateDir)
		if err != nil {
			return err
		}
		c, err := client.New(where)
		if err != nil {
			return err
		}
		if rows, err = c.Revenue(ctx); err != nil {
			return fmt.Errorf("%w (is the appliance running? name it with -facilitator or -state-dir)", err)
		}
		if *recent > 0 {
			if pays, err = c.Payments(ctx, *recent); err != nil {
				return err
			}
		}
		if chans, err = c.Channels(ctx); err != nil {
			return err
		}
	}
	if err := printLedger(out, rows, pays, chans.ByBox); err != nil {
		return err
	}
	return printChannels(out, chans)
}

// readChannels builds the channel report from a stopped facilitator's ledger directory (its
// claimer has no state then).
func readChannels(dir string, st ledger.Stats) (ledger.ChannelsReport, error) {
	chans, err := ledger.OpenChannels(ledger.ChannelOptions{Dir: dir, Sync: journal.SyncAlways})
	if err != nil {
		return ledger.ChannelsReport{}, err
	}
	spends, err := ledger.OpenSpends(dir, journal.SyncAlways, nil)
	if err != nil {
		_ = chans.Close()
		return ledger.ChannelsReport{}, err
	}
	list := chans.List()
	rep := ledger.Report(len(list) > 0, list, st, spends.ByKind(), ledger.ClaimerView{})
	return rep, errors.Join(spends.Close(), chans.Close())
}

// printChannels adds the batch-settlement channels and the gas per paid call of both schemes.
func printChannels(out io.Writer, rep ledger.ChannelsReport) error {
	fmt.Fprintf(out, "\ngas per paid call: %s\n", operator.GasPerCallText(rep.Gas))
	return operator.WriteChannels(out, operator.Channels{Enabled: rep.Enabled, Totals: rep.Totals, Channels: rep.Channels, Claimer: rep.Claimer}, time.Now())
}

// facilitatorAddr picks the facilitator to read: the one named, the socket of a dev state
// dir, else the production socket when it exists, else the socket of `appliance dev` run from
// this directory.
func facilitatorAddr(addr, stateDir string) (string, error) {
	switch {
	case addr != "":
		return addr, nil
	case stateDir != "":
		return "unix:" + filepath.Join(stateDir, "settle.sock"), nil
	}
	for _, sock := range []string{settle.DefaultConfig().Socket, devSocket} {
		if fi, err := os.Stat(sock); err == nil && fi.Mode()&os.ModeSocket != 0 {
			return "unix:" + sock, nil
		}
	}
	return "", errors.New("no running facilitator found at " + settle.DefaultConfig().Socket + " or " + devSocket + "; name it with -facilitator or -state-dir")
}

func printLedger(out io.Writer, rows []ledger.RevenueRow, pays []ledger.Summary, vouchers map[string]ledger.Served) error {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fleet := len(vouchers) > 0 || slices.ContainsFunc(rows, func(r ledger.RevenueRow) bool { return r.Box != "" })
	if fleet {
		fmt.Fprintln(w, "day\troute\tbox\tcalls\tUSDC")
	} else {
		fmt.Fprintln(w, "day\troute\tcalls\tUSDC")
	}
	var calls int
	var total uint64
	for _, r := range rows {
		if fleet {
			fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", r.Day, r.Route, boxLabel(r.Box), r.Calls, usdc(r.Amount))
		} else {
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", r.Day, r.Route, r.Calls, usdc(r.Amount))
		}
		calls += r.Calls
		total += r.Amount
	}
	if fleet {
		fmt.Fprintf(w, "total\t\t\t%d\t%s\n", calls, usdc(total))
		printPerBox(w, rows, vouchers)
	} else {
		fmt.Fprintf(w, "total\t\t%d\t%s\n", calls, usdc(total))
	}
	if len(pays) > 0 {
		fmt.Fprintln(w, "\nupdated (UTC)\tstatus\troute\tUSDC\tpayer\tnonce\treceipt\ttransaction or reason")
		for _, p := range pays {
			detail := p.Tx
			switch {
			case detail == "" && len(p.TxHashes) > 0:
				detail = p.TxHashes[len(p.TxHashes)-1] + " (sent)"
			case detail == "":
				detail = p.Reason
			}
			if p.Undelivered {
				detail += " [result not delivered: refund]"
			}
			route := p.Route
			if p.Box != "" {
				route += " on " + p.Box
			}
			// The signed receipt kept with the payment, served again at /free/receipt.
			kept := "-"
			if len(p.Receipt) > 0 {
				kept = "kept"
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.Updated.UTC().Format(time.DateTime), p.Status, route, usdc(p.Amount),
				p.Payer, p.Nonce, kept, detail)
		}
	}
	return w.Flush()
}

// printPerBox sums a fleet's paid calls and revenue per box, exact payments settled and
// batch-settlement vouchers charged (the channels'), so the operator can share revenue with
// the lines' owners.
func printPerBox(w io.Writer, rows []ledger.RevenueRow, vouchers map[string]ledger.Served) {
	type sum struct {
		calls  int
		amount uint64
	}
	per := map[string]*sum{}
	at := func(box string) *sum {
		if per[box] == nil {
			per[box] = &sum{}
		}
		return per[box]
	}
	for _, r := range rows {
		s := at(r.Box)
		s.calls += r.Calls
		s.amount += r.Amount
	}
	for box, v := range vouchers {
		s := at(box)
		s.calls += int(v.Calls)
		s.amount += v.Charged
	}
	fmt.Fprintln(w, "\nbox (exact settled and vouchers charged)\tcalls\tUSDC")
	for _, box := range slices.Sorted(maps.Keys(per)) {
		fmt.Fprintf(w, "%s\t%d\t%s\n", boxLabel(box), per[box].calls, usdc(per[box].amount))
	}
}

// boxLabel names the server of a call: a fleet box, or the gateway itself.
func boxLabel(box string) string {
	if box == "" {
		return "(gateway)"
	}
	return box
}

// usdc formats atomic units (6 decimals) without a float.
func usdc(atomic uint64) string { return fmt.Sprintf("%d.%06d", atomic/1_000_000, atomic%1_000_000) }
