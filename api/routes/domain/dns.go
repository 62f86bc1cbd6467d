package domain

import (
	"context"
	"strings"

	"golang.org/x/net/publicsuffix"

	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/compute/dnsname"
	"github.com/peage/appliance/api/compute/mailauth"
	"github.com/peage/appliance/api/upstream/resolver"
	"github.com/peage/appliance/internal/fanout"
)

// DNSAnswer is the /v1/dns result. Every record carries its TTL in seconds.
type DNSAnswer struct {
	Domain          string           `json:"domain"`
	DomainUnicode   string           `json:"domain_unicode,omitempty"` // only for international names
	A               []resolver.Addr  `json:"a"`
	AAAA            []resolver.Addr  `json:"aaaa"`
	CNAME           []resolver.Alias `json:"cname"` // the alias chain, in order
	MX              []resolver.MX    `json:"mx"`
	NS              []resolver.Host  `json:"ns"`
	TXT             []resolver.Text  `json:"txt"`
	SOA             *resolver.SOA    `json:"soa"` // null below a zone apex
	CAA             []resolver.CAA   `json:"caa"`
	SPF             mailauth.SPF     `json:"spf"`
	DMARC           mailauth.DMARC   `json:"dmarc"`
	DNSSECValidated bool             `json:"dnssec_validated"` // the resolver set AD on every answer
	Resolver        string           `json:"resolver"`
}

func (r *Routes) dns(ctx context.Context, req *catalog.Request) (any, error) {
	name, err := domainArg(req)
	if err != nil {
		return nil, err
	}
	var (
		recs  *resolver.Records
		dmarc mailauth.DMARC
	)
	errs := fanout.Go(ctx, nil,
		func(ctx context.Context) (err error) {
			recs, err = r.d.Resolver.Records(ctx, name, resolver.AllTypes...)
			return
		},
		func(ctx context.Context) (err error) { dmarc, err = r.lookupDMARC(ctx, name); return })
	if err := firstErr(errs...); err != nil {
		return nil, err
	}
	if !recs.Exists {
		return nil, notFound(name)
	}
	out := DNSAnswer{
		Domain: name, A: orEmpty(recs.A), AAAA: orEmpty(recs.AAAA), CNAME: orEmpty(recs.CNAME),
		MX: orEmpty(recs.MX), NS: orEmpty(recs.NS), TXT: orEmpty(recs.TXT), SOA: recs.SOA, CAA: orEmpty(recs.CAA),
		SPF: mailauth.ParseSPF(texts(recs.TXT)), DMARC: dmarc, DNSSECValidated: recs.AD,
		Resolver: strings.Join(r.d.Resolver.Servers(), ", "),
	}
	if u := dnsname.ToUnicode(name); u != name {
		out.DomainUnicode = u
	}
	return out, nil
}

func texts(ts []resolver.Text) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.Text
	}
	return out
}

// lookupDMARC reads the policy at _dmarc.<name>, or at the organisational domain's when the
// name has none (RFC 7489 §6.6.3; the organisational domain comes from the public suffix list).
func (r *Routes) lookupDMARC(ctx context.Context, name string) (mailauth.DMARC, error) {
	for _, at := range dmarcNames(name) {
		txt, _, err := r.d.Resolver.TXT(ctx, "_dmarc."+at)
		if err != nil {
			return mailauth.DMARC{}, err
		}
		if d := mailauth.ParseDMARC("_dmarc."+at, texts(txt)); d.Present {
			return d, nil
		}
	}
	return mailauth.DMARC{}, nil
}

func dmarcNames(name string) []string {
	org, err := publicsuffix.EffectiveTLDPlusOne(name)
	if err != nil || org == name {
		return []string{name}
	}
	return []string{name, org}
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
