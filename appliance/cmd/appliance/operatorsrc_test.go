package main

import (
	"strings"
	"testing"

	"github.com/peage/appliance/appliance/config"
	proxyclient "github.com/peage/appliance/proxyd/client"
	settleclient "github.com/peage/appliance/settle/client"
)

// TestOperatorSourcesOfEachDeployment checks the dashboard is wired to the ledger and proxyd
// in the split deployment (clients over Unix sockets) as in dev, a remote facilitator included
// (the settle daemon keeps the ledger of its payments): a type the wiring does not know would
// silently blank a section.
func TestOperatorSourcesOfEachDeployment(t *testing.T) {
	settleSock, err := settleclient.New("unix:/run/peage/settle.sock")
	if err != nil {
		t.Fatal(err)
	}
	remote := config.Default()
	remote.Settlement.Facilitator = "https://x402.example/facilitator"
	cases := []struct {
		name               string
		cfg                config.Config
		d                  deps
		ledger, proxy      bool
		noLedgerMentioning string
	}{
		{"split daemons over sockets", config.Default(), deps{payments: settleSock,
			proxy: learningProxy{Service: proxyclient.New("/run/peage/proxyd.sock")}}, true, true, ""},
		{"remote facilitator, no proxy", remote, deps{payments: settleSock}, true, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := &app{cfg: c.cfg}
			src := operatorSources(a, c.d)
			if (src.Ledger != nil) != c.ledger || (src.Proxy != nil) != c.proxy {
				t.Fatalf("ledger %v proxy %v, want %v %v", src.Ledger != nil, src.Proxy != nil, c.ledger, c.proxy)
			}
			if c.noLedgerMentioning != "" && !strings.Contains(src.NoLedger, c.noLedgerMentioning) {
				t.Fatalf("no-ledger reason %q does not name %s", src.NoLedger, c.noLedgerMentioning)
			}
		})
	}
}
