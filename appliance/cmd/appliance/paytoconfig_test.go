package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A daemon that would take payments for nobody must not start: the api and settle commands
// stop naming payment.pay_to when it is empty, zero or not an address.
func TestDaemonsRefuseToStartWithoutPayTo(t *testing.T) {
	for _, name := range []string{"api", "settle"} {
		i := slices.IndexFunc(commands, func(c command) bool { return c.name == name })
		if i < 0 {
			t.Fatalf("no %s command", name)
		}
		for _, payTo := range []string{"", "0x0000000000000000000000000000000000000000"} {
			dir := t.TempDir()
			path := filepath.Join(dir, "appliance.toml")
			conf := "state_dir = \"" + dir + "\"\n[payment]\npay_to = \"" + payTo + "\"\n[settle]\nrpc_url = \"http://127.0.0.1:1\"\n"
			if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
				t.Fatal(err)
			}
			err := commands[i].run(context.Background(), []string{"--config", path})
			if err == nil || !strings.Contains(err.Error(), "payment.pay_to") {
				t.Fatalf("%s with pay_to %q: %v, want an error naming payment.pay_to", name, payTo, err)
			}
		}
	}
}
