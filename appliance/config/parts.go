package config

import (
	"fmt"
	"time"

	"github.com/peage/appliance/api/paywall"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/chainrpc"
	"github.com/peage/appliance/api/upstream/llm"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/internal/fleet"
	"github.com/peage/appliance/proxyd"
	"github.com/peage/appliance/settle"
)

// Parts are the sections owned by the daemons and families; each declares its own Config
// struct and defaults in its own package, and this is the only place that knows them all.
type Parts struct {
	Upstream upstream.Config    `toml:"upstream"`
	DNS      resolver.Config    `toml:"dns"`
	Chain    chainrpc.Config    `toml:"chain"`
	Proxyd   proxyd.Config      `toml:"proxyd"`
	Browser  browserfarm.Config `toml:"browserfarm"`
	// Settle is the settle daemon's own section; Settlement is how the API uses it.
	Settle     settle.Config  `toml:"settle"`
	Settlement paywall.Policy `toml:"settlement"`
	// LLM names the models of the language-model routes; the server is upstream.override.llm.
	LLM llm.Config `toml:"llm"`
	// Fleet is a gateway's hub, or a box's credentials (appliance gateway, appliance join).
	Fleet fleet.Config `toml:"fleet"`
}

// DefaultParts returns every part's defaults.
func DefaultParts() Parts {
	return Parts{Upstream: upstream.DefaultConfig(), DNS: resolver.DefaultConfig(), Chain: chainrpc.DefaultConfig(), Proxyd: proxyd.DefaultConfig(), Browser: browserfarm.DefaultConfig(),
		Settle: settle.DefaultConfig(), Settlement: paywall.DefaultPolicy(), LLM: llm.DefaultConfig(), Fleet: fleet.DefaultConfig()}
}

func (p *Parts) validate() []error {
	var errs []error
	switch p.Settlement.Settlement {
	case "optimistic", "sync":
	default:
		errs = append(errs, fmt.Errorf("config key settlement.settlement: must be optimistic or sync"))
	}
	if m := p.Settlement.SettleMarginSeconds; m < 10 || m > int(paywall.MaxSettleMargin/time.Second) {
		errs = append(errs, fmt.Errorf("config key settlement.settle_margin_seconds: must be between 10 and %d", int(paywall.MaxSettleMargin/time.Second)))
	}
	if _, err := p.Settle.ClaimPolicy(); err != nil {
		errs = append(errs, err)
	}
	if err := p.Settle.CheckInFlight(); err != nil {
		errs = append(errs, err)
	}
	if p.Browser.FreeShare <= 0 || p.Browser.FreeShare > 1 {
		errs = append(errs, fmt.Errorf("config key browserfarm.free_share: must be more than 0 and at most 1 (the fraction of browsers free calls may hold)"))
	}
	if p.Browser.FreeQueue < 0 {
		errs = append(errs, fmt.Errorf("config key browserfarm.free_queue: must be 0 (2 per free browser) or more"))
	}
	if p.Browser.PayerBrowsers < 0 || p.Browser.ClientBrowsers < 0 {
		errs = append(errs, fmt.Errorf("config keys browserfarm.payer_browsers, client_browsers: must be 0 (half the browsers) or more"))
	}
	if p.Browser.StrikeLimit < 0 || p.Browser.StrikeHalfLife < 0 {
		errs = append(errs, fmt.Errorf("config keys browserfarm.strike_limit, strike_half_life: must be 0 (the default) or more"))
	}
	if p.DNS.Resolver != "" {
		if _, err := p.DNS.Servers(); err != nil {
			errs = append(errs, fmt.Errorf("config key %w", err))
		}
	}
	if err := p.LLM.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("config key %w", err))
	}
	if p.DNS.Timeout <= 0 {
		errs = append(errs, fmt.Errorf("config key dns.timeout: must be positive"))
	}
	if err := p.Chain.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("config key %w", err))
	}
	if _, err := upstream.Resolve(p.Upstream); err != nil {
		errs = append(errs, fmt.Errorf("config key upstream.override: %w", err))
	}
	return errs
}

// SettlePayment is the [payment] section as the settle daemon takes it: one source of truth
// for what is paid and to whom, shared by the challenges and the facilitator.
func (c *Config) SettlePayment() settle.Payment {
	p := c.Payment
	return settle.Payment{Network: p.Network, Asset: p.Asset, TokenName: p.TokenName, TokenVersion: p.TokenVersion, PayTo: p.PayTo,
		ReceiverAuthorizer: p.ReceiverAuthorizer}
}
