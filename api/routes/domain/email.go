package domain

import (
	"context"

	"github.com/miekg/dns"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/disposable"
	"github.com/peage/appliance/api/compute/emailaddr"
	"github.com/peage/appliance/api/compute/mailauth"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/internal/fanout"
)

// Validation is the /v1/email/validate result: can this address receive mail at all, from
// its syntax and its domain's DNS alone.
type Validation struct {
	Email  string        `json:"email"`
	Valid  bool          `json:"valid"`
	Reason string        `json:"reason"`
	Domain string        `json:"domain"` // ASCII form, as the DNS was asked
	MX     []resolver.MX `json:"mx"`
	// MXFallback is "a" when the domain has no MX but has addresses, which then receive its
	// mail (the implicit MX of RFC 5321 §5.1).
	MXFallback string `json:"mx_fallback,omitempty"`
	NullMX     bool   `json:"null_mx"`
}

// mailDomain is what both e-mail routes learn about the address's domain.
type mailDomain struct {
	addr    emailaddr.Address
	recs    *resolver.Records
	spf     mailauth.SPF
	dmarc   mailauth.DMARC
	receive bool   // the domain can receive mail
	reason  string // why, or why not
}

func (r *Routes) readMailDomain(ctx context.Context, email string, policies bool) (*mailDomain, error) {
	addr, err := emailaddr.Parse(email)
	if err != nil {
		return nil, apierr.BadParam("email", "email %s", err.Error())
	}
	types := []uint16{dns.TypeMX, dns.TypeA, dns.TypeAAAA}
	if policies {
		types = append(types, dns.TypeTXT)
	}
	m := &mailDomain{addr: addr}
	reads := []func(context.Context) error{
		func(ctx context.Context) (err error) {
			m.recs, err = r.d.Resolver.Records(ctx, addr.Domain, types...)
			return
		},
	}
	if policies {
		reads = append(reads, func(ctx context.Context) (err error) { m.dmarc, err = r.lookupDMARC(ctx, addr.Domain); return })
	}
	if err := firstErr(fanout.Go(ctx, nil, reads...)...); err != nil {
		return nil, err
	}
	m.spf = mailauth.ParseSPF(texts(m.recs.TXT))
	switch {
	case !m.recs.Exists:
		m.reason = "the domain does not exist (NXDOMAIN)"
	case m.recs.NullMX():
		m.reason = "the domain publishes a null MX: it accepts no mail (RFC 7505)"
	case len(m.recs.MX) > 0:
		m.receive, m.reason = true, "the domain has MX records"
	case len(m.recs.A)+len(m.recs.AAAA) > 0:
		m.receive, m.reason = true, "the domain has no MX but has addresses, which receive its mail (RFC 5321 §5.1)"
	default:
		m.reason = "the domain has neither MX nor address records"
	}
	return m, nil
}

func (r *Routes) validate(ctx context.Context, req *catalog.Request) (any, error) {
	email := req.Args.Str("email")
	m, err := r.readMailDomain(ctx, email, false)
	if err != nil {
		return nil, err
	}
	out := Validation{Email: email, Valid: m.receive, Reason: m.reason, Domain: m.addr.Domain,
		MX: orEmpty(m.recs.MX), NullMX: m.recs.NullMX()}
	if m.receive && len(m.recs.MX) == 0 {
		out.MXFallback = "a"
	}
	if out.NullMX {
		out.MX = []resolver.MX{} // "." is not an exchanger
	}
	return out, nil
}

// Verdicts of /v1/email/verify.
const (
	No     = "NO"
	Risky  = "RISKY"
	Likely = "LIKELY"
)

// Verification is the /v1/email/verify result. It is read from the DNS and the address only:
// no SMTP session is opened, so a mailbox that does not exist can still be LIKELY.
type Verification struct {
	Email       string   `json:"email"`
	Deliverable string   `json:"deliverable"` // NO, RISKY or LIKELY
	Reasons     []string `json:"reasons"`     // the rules that decided the verdict
	Checks      Checks   `json:"checks"`
	RoleAddress bool     `json:"role_address"`
	// Suggestion is the address with the big provider's domain it probably mistypes.
	Suggestion    string `json:"suggestion,omitempty"`
	MailboxProbed bool   `json:"mailbox_probed"` // always false: no SMTP probe is made
	Domain        string `json:"domain"`
}

// Checks are the inputs of the verdict.
type Checks struct {
	Syntax           bool    `json:"syntax"`
	DomainExists     bool    `json:"domain_exists"`
	MXPresent        bool    `json:"mx_present"`
	NullMX           bool    `json:"null_mx"`
	AFallback        bool    `json:"a_fallback"`
	SPFPresent       bool    `json:"spf_present"`
	SPFError         string  `json:"spf_error,omitempty"`
	DMARCPolicy      *string `json:"dmarc_policy"` // null when no usable DMARC record is published
	DisposableDomain bool    `json:"disposable_domain"`
	DisposableMatch  string  `json:"disposable_match,omitempty"` // the listed domain that matched
	RoleAddress      bool    `json:"role_address"`
	TypoOf           string  `json:"typo_of,omitempty"`
}

// The verdict rules, in the words the answer reports:
//
//	NO     the domain cannot receive mail: it does not exist, publishes a null MX, or has
//	       neither MX nor address records;
//	RISKY  it can, but the address is at a disposable-mail domain, at a likely typo of a big
//	       provider, is a role address, relies on the A-record fallback, or its domain
//	       publishes neither SPF nor DMARC (domains that really handle mail publish them);
//	LIKELY none of the above.
func (r *Routes) verify(ctx context.Context, req *catalog.Request) (any, error) {
	email := req.Args.Str("email")
	m, err := r.readMailDomain(ctx, email, true)
	if err != nil {
		return nil, err
	}
	c := Checks{
		Syntax: true, DomainExists: m.recs.Exists, NullMX: m.recs.NullMX(),
		MXPresent:   len(m.recs.MX) > 0 && !m.recs.NullMX(),
		SPFPresent:  m.spf.Present && m.spf.Error == "",
		SPFError:    m.spf.Error,
		RoleAddress: emailaddr.Role(m.addr.Local),
		TypoOf:      emailaddr.Suggest(m.addr.Domain),
	}
	c.AFallback = m.receive && !c.MXPresent
	if m.dmarc.Policy != "" {
		c.DMARCPolicy = &m.dmarc.Policy
	}
	c.DisposableMatch = disposable.Match(m.addr.Domain)
	c.DisposableDomain = c.DisposableMatch != ""

	out := Verification{Email: email, Checks: c, RoleAddress: c.RoleAddress, Domain: m.addr.Domain, Reasons: []string{}}
	if c.TypoOf != "" {
		out.Suggestion = m.addr.Local + "@" + c.TypoOf
	}
	if !m.receive {
		out.Deliverable = No
		out.Reasons = append(out.Reasons, m.reason)
		return out, nil
	}
	risky := []struct {
		fired bool
		why   string
	}{
		{c.DisposableDomain, "disposable-mail domain (" + c.DisposableMatch + ")"},
		{c.TypoOf != "", "the domain looks like a typo of " + c.TypoOf},
		{c.RoleAddress, "role address (" + m.addr.Local + "), not a person's mailbox"},
		{c.AFallback, "no MX record: mail would go to the domain's address records"},
		{!c.SPFPresent && c.DMARCPolicy == nil, "the domain publishes neither a usable SPF nor a DMARC record"},
	}
	for _, rule := range risky {
		if rule.fired {
			out.Reasons = append(out.Reasons, rule.why)
		}
	}
	if len(out.Reasons) > 0 {
		out.Deliverable = Risky
		return out, nil
	}
	out.Deliverable = Likely
	out.Reasons = append(out.Reasons, m.reason+", no risk rule fired (the mailbox itself is not probed)")
	return out, nil
}
