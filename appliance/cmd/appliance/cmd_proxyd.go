package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"

	"github.com/BurntSushi/toml"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/proxyd"
)

func init() {
	register("proxyd", "run the metered residential CONNECT proxy and its admin socket (production: its own unit)", runProxyd)
}

// proxydFile is the part of the configuration file proxyd reads. The other sections belong to
// other daemons and are left alone here (config.Load validates the whole file).
type proxydFile struct {
	StateDir string        `toml:"state_dir"`
	Log      config.Log    `toml:"log"`
	Egress   config.Egress `toml:"egress"`
	Proxyd   proxyd.Config `toml:"proxyd"`
}

func runProxyd(ctx context.Context, args []string) error {
	fset := flag.NewFlagSet("proxyd", flag.ContinueOnError)
	path := fset.String("config", "/etc/peage/appliance.toml", "configuration file")
	if err := fset.Parse(args); err != nil {
		return err
	}
	def := config.Default()
	f := proxydFile{StateDir: def.StateDir, Log: def.Log, Egress: def.Egress, Proxyd: proxyd.DefaultConfig()}
	if _, err := toml.DecodeFile(*path, &f); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("config %s: %w", *path, err)
	}
	f.Proxyd.AllowEgress = append(f.Proxyd.AllowEgress, f.Egress.Allow...)
	f.Proxyd.Self = append(f.Proxyd.Self, f.Egress.Self...)
	return proxyd.RunDaemon(ctx, f.Proxyd, f.StateDir, newLogger(f.Log))
}
