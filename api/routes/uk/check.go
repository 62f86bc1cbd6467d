package uk

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/companieshouse"
	"github.com/peage/appliance/internal/fanout"
)

// Verdicts, from worst to best.
const (
	Fail    = "FAIL"
	Caution = "CAUTION"
	Pass    = "PASS"
)

// closedStatuses are the company_status values of a company that is gone or in an
// insolvency procedure (Companies House's enumeration of company_status).
var closedStatuses = []string{"dissolved", "liquidation", "receivership", "administration", "voluntary-arrangement",
	"converted-closed", "insolvency-proceedings", "removed", "closed"}

// openStatuses are the statuses of a company trading normally ("open" and "registered" are
// those of overseas entities and other registers).
var openStatuses = []string{"active", "open", "registered"}

// Facts are what the rules read, gathered from the profile, officers and PSC register.
type Facts struct {
	Status              string
	AccountsOverdue     bool
	AccountsNextDue     string
	ConfirmationOverdue bool
	ConfirmationNextDue string
	InsolvencyHistory   bool
	BeenLiquidated      bool
	ActiveOfficers      int
	ActivePSCs          int
	ActivePSCStatements int
	PSCExemption        string // the exemption type that frees the company from naming PSCs
	OfficeInDispute     bool
	OfficeUndeliverable bool
}

// Fired is a rule that fired, with its verdict and the evidence.
type Fired struct {
	Rule     string `json:"rule"`
	Verdict  string `json:"verdict"`
	Evidence string `json:"evidence"`
}

// Rule is one stated rule of the check.
type Rule struct {
	ID, Verdict, Doc string
	fires            func(Facts) (string, bool)
}

// Rules are the check, in the order they are reported. The verdict is FAIL when a FAIL rule
// fires, CAUTION when only CAUTION rules fire, PASS when none does. README.md states the same.
var Rules = []Rule{
	{"status_not_active", Fail, "the company is dissolved, removed, closed or in liquidation, receivership, administration, a voluntary arrangement or insolvency proceedings",
		func(f Facts) (string, bool) {
			return "company_status is " + f.Status, slices.Contains(closedStatuses, f.Status)
		}},
	{"status_unusual", Caution, "the company's status is neither a closed one nor active/open/registered",
		func(f Facts) (string, bool) {
			return "company_status is " + f.Status, !slices.Contains(closedStatuses, f.Status) && !slices.Contains(openStatuses, f.Status)
		}},
	{"accounts_overdue", Caution, "the annual accounts are overdue",
		func(f Facts) (string, bool) { return "accounts were due " + f.AccountsNextDue, f.AccountsOverdue }},
	{"confirmation_statement_overdue", Caution, "the confirmation statement is overdue",
		func(f Facts) (string, bool) {
			return "confirmation statement was due " + f.ConfirmationNextDue, f.ConfirmationOverdue
		}},
	{"insolvency_history", Caution, "the register records an insolvency case or a liquidation in the company's history",
		func(f Facts) (string, bool) {
			return fmt.Sprintf("has_insolvency_history %v, has_been_liquidated %v", f.InsolvencyHistory, f.BeenLiquidated),
				f.InsolvencyHistory || f.BeenLiquidated
		}},
	{"no_active_officers", Caution, "no officer is currently appointed",
		func(f Facts) (string, bool) { return "active officers: 0", f.ActiveOfficers == 0 }},
	{"no_psc_declared", Caution, "no active person with significant control, no active PSC statement and no exemption from the PSC register",
		func(f Facts) (string, bool) {
			return "active PSCs: 0, active statements: 0, no exemption",
				f.ActivePSCs == 0 && f.ActivePSCStatements == 0 && f.PSCExemption == ""
		}},
	{"registered_office_issue", Caution, "the registered office is in dispute or mail to it is undeliverable",
		func(f Facts) (string, bool) {
			return fmt.Sprintf("in dispute %v, undeliverable %v", f.OfficeInDispute, f.OfficeUndeliverable),
				f.OfficeInDispute || f.OfficeUndeliverable
		}},
}

// Verdict applies the rules.
func Verdict(f Facts) (string, []Fired) {
	verdict, fired := Pass, []Fired{}
	for _, r := range Rules {
		ev, ok := r.fires(f)
		if !ok {
			continue
		}
		fired = append(fired, Fired{Rule: r.ID, Verdict: r.Verdict, Evidence: ev})
		if r.Verdict == Fail || verdict == Pass {
			verdict = r.Verdict
		}
	}
	return verdict, fired
}

// method states the rules in the answer itself.
var method = func() string {
	var b strings.Builder
	b.WriteString("Verdict from Companies House data: FAIL if a FAIL rule fires, CAUTION if only CAUTION rules fire, PASS otherwise. Rules: ")
	for i, r := range Rules {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s (%s): %s", r.ID, r.Verdict, r.Doc)
	}
	b.WriteString(". PSCs are read only where the profile links a register, statements or exemptions.")
	return b.String()
}()

// Filing is the filing compliance part of the answer.
type Filing struct {
	AccountsOverdue     bool   `json:"accounts_overdue"`
	AccountsNextDue     string `json:"accounts_next_due"`
	ConfirmationOverdue bool   `json:"confirmation_statement_overdue"`
	ConfirmationNextDue string `json:"confirmation_statement_next_due"`
}

// PSCSummary says how control is declared.
type PSCSummary struct {
	Active     int    `json:"active"`
	Statements int    `json:"active_statements"`
	Exemption  string `json:"exemption,omitempty"`
}

// Check is the /v1/uk/company-check answer.
type Check struct {
	CompanyNumber     string     `json:"company_number"`
	Name              string     `json:"name"`
	Status            string     `json:"status"`
	Verdict           string     `json:"verdict"`
	RulesFired        []Fired    `json:"rules_fired"`
	ActiveOfficers    int        `json:"active_officers"`
	Filing            Filing     `json:"filing_compliance"`
	InsolvencyHistory bool       `json:"insolvency_history"`
	PSC               PSCSummary `json:"psc"`
	Method            string     `json:"method"`
	Matches           []Match    `json:"matches,omitempty"`
	Source            string     `json:"source"`
}

func (r *Routes) check(ctx context.Context, req *catalog.Request) (any, error) {
	number, matches, err := r.resolve(ctx, req)
	if err != nil {
		return nil, err
	}
	p, err := r.ch.Profile(ctx, number)
	if err != nil {
		return nil, notFound(err, number, "company")
	}
	f := Facts{Status: p.CompanyStatus, AccountsOverdue: p.Accounts.Overdue, AccountsNextDue: p.Accounts.NextDue,
		InsolvencyHistory: p.HasInsolvencyHistory, BeenLiquidated: p.HasBeenLiquidated,
		OfficeInDispute: p.OfficeInDispute, OfficeUndeliverable: p.UndeliverableOfficeAddress}
	if cs := p.ConfirmationStatement; cs != nil {
		f.ConfirmationOverdue, f.ConfirmationNextDue = cs.Overdue, cs.NextDue
	}
	if err := r.gather(ctx, p, &f); err != nil {
		return nil, err
	}
	verdict, fired := Verdict(f)
	return Check{
		CompanyNumber: p.CompanyNumber, Name: p.CompanyName, Status: p.CompanyStatus, Verdict: verdict, RulesFired: fired,
		ActiveOfficers: f.ActiveOfficers,
		Filing: Filing{AccountsOverdue: f.AccountsOverdue, AccountsNextDue: f.AccountsNextDue,
			ConfirmationOverdue: f.ConfirmationOverdue, ConfirmationNextDue: f.ConfirmationNextDue},
		InsolvencyHistory: f.InsolvencyHistory || f.BeenLiquidated,
		PSC:               PSCSummary{Active: f.ActivePSCs, Statements: f.ActivePSCStatements, Exemption: f.PSCExemption},
		Method:            method, Matches: matches, Source: source,
	}, nil
}

// gather reads officers and, following the profile's links, the PSC register, statements and
// exemptions, in parallel. The registrar links only what exists, so an absent link is an
// answer (nothing declared) and costs no call against the rate limit.
func (r *Routes) gather(ctx context.Context, p *companieshouse.Profile, f *Facts) error {
	number := p.CompanyNumber
	var reads []func(context.Context) error
	run := func(fn func(ctx context.Context) error) { reads = append(reads, fn) }
	run(func(ctx context.Context) error {
		o, err := r.ch.Officers(ctx, number)
		if upstream.IsNotFound(err) {
			return nil // no officer list: none appointed
		}
		if err == nil {
			f.ActiveOfficers = o.ActiveCount
		}
		return err
	})
	if p.Links.PSC != "" {
		run(func(ctx context.Context) error {
			l, err := r.ch.PSCs(ctx, number)
			if err == nil {
				f.ActivePSCs = l.ActiveCount
			}
			return ignore404(err)
		})
	}
	if p.Links.PSCStatements != "" {
		run(func(ctx context.Context) error {
			s, err := r.ch.Statements(ctx, number)
			if err == nil {
				f.ActivePSCStatements = s.ActiveCount
			}
			return ignore404(err)
		})
	}
	if p.Links.Exemptions != "" {
		run(func(ctx context.Context) error {
			e, err := r.ch.Exemptions(ctx, number)
			if err == nil {
				for _, ex := range e.Exemptions {
					if strings.HasPrefix(ex.ExemptionType, "psc-exempt") && current(ex.Items) {
						f.PSCExemption = ex.ExemptionType
					}
				}
			}
			return ignore404(err)
		})
	}
	for _, err := range fanout.Go(ctx, nil, reads...) {
		if err != nil {
			return err
		}
	}
	return nil
}

// current reports whether an exemption has a period without an end.
func current(items []companieshouse.ExemptionPeriod) bool {
	for _, it := range items {
		if it.ExemptTo == "" {
			return true
		}
	}
	return false
}

func ignore404(err error) error {
	if upstream.IsNotFound(err) {
		return nil
	}
	return err
}
