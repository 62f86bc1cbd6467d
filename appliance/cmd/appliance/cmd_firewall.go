package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/peage/appliance/internal/firewall"
)

func init() {
	register("firewall", "sync: write the home LAN's networks (its global IPv6 prefix) into the firewall's sets", runFirewall)
}

func runFirewall(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] != "sync" {
		fmt.Fprintln(os.Stderr, "usage: appliance firewall sync [-nft PATH]")
		return flag.ErrHelp
	}
	fs := flag.NewFlagSet("firewall sync", flag.ContinueOnError)
	nft := fs.String("nft", "nft", "the nft program")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 0 {
		return errors.New("usage: appliance firewall sync [-nft PATH]")
	}
	v4, v6, err := firewall.Sync(ctx, *nft)
	if err != nil {
		return err
	}
	fmt.Printf("lan4 %v\nlan6 %v\n", v4, v6)
	return nil
}
