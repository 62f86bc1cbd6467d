package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/peage/appliance/appliance/config"
)

func init() {
	register("config", "print every configuration key with its value (defaults, or --config with the environment)", func(_ context.Context, args []string) error {
		fs := flag.NewFlagSet("config", flag.ContinueOnError)
		path := fs.String("config", "", "configuration file to check and print")
		if err := fs.Parse(args); err != nil {
			return err
		}
		cfg, err := config.Load(*path, os.Environ())
		if err != nil {
			return err
		}
		doc, err := config.Document(cfg)
		if err != nil {
			return err
		}
		fmt.Print(doc)
		return nil
	})
}
