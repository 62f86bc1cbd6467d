package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"

	"github.com/peage/appliance/appliance/journal"
	"github.com/peage/appliance/settle"
	"github.com/peage/appliance/settle/client"
	"github.com/peage/appliance/settle/ledger"
)

func init() {
	register("ledger", "show settled revenue by UTC day and route (from the running facilitator, or -dir offline)", runLedger)
}

func runLedger(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("ledger", flag.ContinueOnError)
	addr := fs.String("facilitator", "unix:"+settle.DefaultConfig().Socket, "facilitator address (unix:PATH or URL)")
	dir := fs.String("dir", "", "read a ledger directory directly (only while the facilitator is stopped)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	var rows []ledger.RevenueRow
	if *dir != "" {
		l, err := ledger.Open(ledger.Options{Dir: *dir, Sync: journal.SyncAlways})
		if err != nil {
			return err
		}
		rows = l.Revenue()
		if err := l.Close(); err != nil {
			return err
		}
	} else {
		c, err := client.New(*addr)
		if err != nil {
			return err
		}
		if rows, err = c.Revenue(ctx); err != nil {
			return err
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "day\troute\tcalls\tUSDC\t")
	var calls int
	var total uint64
	for _, r := range rows {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\t\n", r.Day, r.Route, r.Calls, usdc(r.Amount))
		calls += r.Calls
		total += r.Amount
	}
	fmt.Fprintf(w, "total\t\t%d\t%s\t\n", calls, usdc(total))
	return w.Flush()
}

// usdc formats atomic units (6 decimals) without a float.
func usdc(atomic uint64) string { return fmt.Sprintf("%d.%06d", atomic/1_000_000, atomic%1_000_000) }
