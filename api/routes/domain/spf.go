package domain

import (
	"context"
	"fmt"
	"strings"

	"github.com/peage/appliance/api/compute/mailauth"
)

// spfLimit is RFC 7208 §4.6.4's cap on the DNS-querying terms of one SPF evaluation,
// includes and redirects expanded; past it, every receiver's check ends in permerror.
const spfLimit = 10

// SPFExpansion is the result of walking a domain's SPF includes and redirect.
type SPFExpansion struct {
	// Lookups is the number of DNS-querying terms the evaluation needs. The walk stops
	// following includes once the count passes the limit, so a count above 10 may be short
	// of the full one.
	Lookups int    `json:"lookups"`
	Within  bool   `json:"within_limit"`
	Error   string `json:"error,omitempty"`
}

// expandSPF counts the lookups of the whole SPF evaluation of a record as a receiver would
// do it: each include and redirect target's own record is read and counted in turn. Targets
// written with macros (%{...}) depend on the message and are counted, not followed.
func (r *Routes) expandSPF(ctx context.Context, top mailauth.SPF) (SPFExpansion, error) {
	x := SPFExpansion{}
	var walk func(spf mailauth.SPF, depth int) error
	walk = func(spf mailauth.SPF, depth int) error {
		var next []string
		for _, m := range spf.Mechanisms {
			switch m.Type {
			case "include", "a", "mx", "ptr", "exists":
				x.Lookups++
				if m.Type == "include" {
					next = append(next, m.Value)
				}
			}
		}
		if spf.Redirect != "" {
			x.Lookups++
			next = append(next, spf.Redirect)
		}
		for _, target := range next {
			if x.Lookups > spfLimit || x.Error != "" {
				return nil
			}
			if strings.Contains(target, "%{") {
				continue
			}
			if depth >= spfLimit {
				x.Error = "permerror: includes nested too deep (a loop?)"
				return nil
			}
			txt, exists, err := r.d.Resolver.TXT(ctx, target)
			if err != nil {
				return err
			}
			sub := mailauth.ParseSPF(texts(txt))
			switch {
			case !exists || !sub.Present:
				x.Error = fmt.Sprintf("permerror: %s publishes no SPF record", target)
				return nil
			case sub.Error != "":
				x.Error = fmt.Sprintf("%s (in %s)", sub.Error, target)
				return nil
			}
			if err := walk(sub, depth+1); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(top, 0); err != nil {
		return x, err
	}
	if x.Lookups > spfLimit && x.Error == "" {
		x.Error = fmt.Sprintf("permerror: the evaluation needs more than %d DNS lookups", spfLimit)
	}
	x.Within = x.Lookups <= spfLimit && x.Error == ""
	return x, nil
}
