package main

import (
	"context"
	"net/netip"
	"testing"

	"github.com/peage/appliance/appliance/config"
	"github.com/peage/appliance/internal/egress"
	"github.com/peage/appliance/internal/obs"
	proxyclient "github.com/peage/appliance/proxyd/client"
)

// fakeProxy answers like proxyd's admin socket with a fixed exit.
type fakeProxy struct {
	proxyclient.Service
	exit proxyclient.Exit
}

func (f fakeProxy) Sell(context.Context, int) (*proxyclient.Sale, error) {
	return &proxyclient.Sale{Key: "k", Exit: f.exit}, nil
}

func (f fakeProxy) Status(context.Context) (*proxyclient.Status, error) {
	ex := f.exit
	return &proxyclient.Status{Live: true, Exit: &ex}, nil
}

// TestAPILearnsTheExitFromProxyd: in the split deployment the API's policy (browser farm,
// util routes) learns the exit's public address from what proxyd reports.
func TestAPILearnsTheExitFromProxyd(t *testing.T) {
	for _, tc := range []struct {
		name string
		call func(context.Context, learningProxy) error
	}{
		{"status", func(ctx context.Context, p learningProxy) error { _, err := p.Status(ctx); return err }},
		{"sale", func(ctx context.Context, p learningProxy) error { _, err := p.Sell(ctx, 1); return err }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			pol, err := newPolicy(cfg, nil, nil, &egress.Learned{})
			if err != nil {
				t.Fatal(err)
			}
			exit := netip.MustParseAddr("90.12.34.56")
			if r := pol.Check(exit); r != "" {
				t.Fatalf("refused before learning: %s", r)
			}
			p := learningProxy{Service: fakeProxy{exit: proxyclient.Exit{IP: exit.String()}}, pol: pol, log: obs.Discard()}
			if err := tc.call(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			if r := pol.Check(exit); r == "" {
				t.Fatal("the exit's address is still reachable after proxyd reported it")
			}
		})
	}
}
