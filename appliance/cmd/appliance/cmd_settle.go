package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/BurntSushi/toml"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/settle"
)

func init() {
	register("settle", "run the x402 facilitator (verify, settle, ledger) on its Unix socket", runSettle)
}

// settleFile is the part of the configuration file the settle daemon reads: its own [settle]
// table and the shared log settings; the rest belongs to other daemons.
type settleFile struct {
	Settle   settle.Config `toml:"settle"`
	StateDir string        `toml:"state_dir"`
	Log      config.Log    `toml:"log"`
}

func runSettle(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("settle", flag.ContinueOnError)
	path := fs.String("config", "", "configuration file (its [settle] table)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	file := settleFile{Settle: settle.DefaultConfig(), Log: config.Default().Log}
	if *path != "" {
		if _, err := toml.DecodeFile(*path, &file); err != nil {
			return fmt.Errorf("config %s: %w", *path, err)
		}
	}
	if file.StateDir != "" && file.Settle.StateDir == settle.DefaultConfig().StateDir {
		file.Settle.StateDir = file.StateDir + "/settle"
	}
	if v := os.Getenv("PEAGE_SETTLE_RPC_URL"); v != "" {
		file.Settle.RPCURL = v
	}
	return settle.Run(ctx, file.Settle, newLogger(file.Log))
}
