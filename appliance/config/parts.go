package config

import (
	"fmt"

	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/settle"
)

// Parts are the sections owned by the daemons and families; each declares its own Config
// struct and defaults in its own package, and this is the only place that knows them all.
type Parts struct {
	Upstream upstream.Config    `toml:"upstream"`
	DNS      resolver.Config    `toml:"dns"`
	Proxyd   proxyd.Config      `toml:"proxyd"`
	Browser  browserfarm.Config `toml:"browserfarm"`
	// Settle is the settle daemon's own section; Settlement is how the API uses it.
	Settle     settle.Config  `toml:"settle"`
	Settlement paywall.Policy `toml:"settlement"`
}

// DefaultParts returns every part's defaults.
func DefaultParts() Parts {
	return Parts{Upstream: upstream.DefaultConfig(), DNS: resolver.DefaultConfig(), Proxyd: proxyd.DefaultConfig(), Browser: browserfarm.DefaultConfig(),
		Settle: settle.DefaultConfig(), Settlement: paywall.DefaultPolicy()}
}

func (p *Parts) validate() []error {
	var errs []error
	switch p.Settlement.Settlement {
	case "optimistic", "sync":
	default:
		errs = append(errs, fmt.Errorf("config key settlement.settlement: must be optimistic or sync"))
	}
	if p.DNS.Resolver != "" {
		if _, err := p.DNS.Servers(); err != nil {
			errs = append(errs, fmt.Errorf("config key %w", err))
		}
	}
	if p.DNS.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("config key dns.timeout: must be positive"))
	}
	if _, err := upstream.Resolve(p.Upstream); err != nil {
		errs = append(errs, fmt.Errorf("config key upstream.override: %w", err))
	}
	return errs
}
