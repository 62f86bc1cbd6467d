// Command appliance is the péage multi-call binary: one sub-command per daemon (api, settle,
// proxyd, browserfarm), `dev` to run them all in one process on loopback with an embedded
// chain, and tools (pay, ledger, config, version).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"syscall"
)

// defaultConfigPath is where the image puts the production configuration.
const defaultConfigPath = "/etc/peage/appliance.toml"

// command is one sub-command. Each lives in its own cmd_<name>.go file and registers itself.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string) error
}

var commands []command

func register(name, summary string, run func(ctx context.Context, args []string) error) {
	commands = append(commands, command{name, summary, run})
}

func usage() {
	fmt.Fprintf(os.Stderr, "usage: appliance <command> [flags]\n\ncommands:\n")
	slices.SortFunc(commands, func(a, b command) int {
		if a.name < b.name {
			return -1
		}
		return 1
	})
	for _, c := range commands {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(os.Stderr, "\nRun 'appliance <command> -h' for a command's flags.\n")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	name := os.Args[1]
	i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
	if i < 0 {
		fmt.Fprintf(os.Stderr, "appliance: unknown command %q\n\n", name)
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := commands[i].run(ctx, os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		var ex exitCode
		if errors.As(err, &ex) {
			os.Exit(int(ex))
		}
		fmt.Fprintf(os.Stderr, "appliance %s: %v\n", name, err)
		os.Exit(1)
	}
}

// exitCode ends the process with a status and no message (the command already said why).
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit %d", int(e)) }
