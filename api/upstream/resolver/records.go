package resolver

import (
	"context"
	"strings"
	"sync"

	"github.com/miekg/dns"
)

// Addr is an A or AAAA record.
type Addr struct {
	IP  string `json:"ip"`
	TTL uint32 `json:"ttl"`
}

// Alias is one CNAME step: Name is an alias of Target.
type Alias struct {
	Name   string `json:"name"`
	Target string `json:"target"`
	TTL    uint32 `json:"ttl"`
}

// MX is a mail exchanger. A single MX with exchange "." and preference 0 is a null MX.
type MX struct {
	Preference uint16 `json:"preference"`
	Exchange   string `json:"exchange"`
	TTL        uint32 `json:"ttl"`
}

// Host is an NS record.
type Host struct {
	Host string `json:"host"`
	TTL  uint32 `json:"ttl"`
}

// Text is a TXT record, its character strings joined as RFC 7208 §3.3 reads them.
type Text struct {
	Text string `json:"text"`
	TTL  uint32 `json:"ttl"`
}

// SOA is the start of authority of a zone apex.
type SOA struct {
	MName   string `json:"mname"`
	RName   string `json:"rname"`
	Serial  uint32 `json:"serial"`
	Refresh uint32 `json:"refresh"`
	Retry   uint32 `json:"retry"`
	Expire  uint32 `json:"expire"`
	Minimum uint32 `json:"minimum"`
	TTL     uint32 `json:"ttl"`
}

// CAA names the certificate authorities allowed to issue for the name.
type CAA struct {
	Flag  uint8  `json:"flag"`
	Tag   string `json:"tag"`
	Value string `json:"value"`
	TTL   uint32 `json:"ttl"`
}

// Records is what the resolver said about one name. Exists is false on NXDOMAIN; AD is true
// only when every answer was DNSSEC-validated by the resolver.
type Records struct {
	Name   string
	Exists bool
	AD     bool
	A      []Addr
	AAAA   []Addr
	CNAME  []Alias
	MX     []MX
	NS     []Host
	TXT    []Text
	SOA    *SOA
	CAA    []CAA
}

// NullMX reports a domain that declares it accepts no mail (RFC 7505): one MX, exchange ".".
func (r *Records) NullMX() bool {
	return len(r.MX) == 1 && r.MX[0].Exchange == "."
}

// Every record type the DNS route reports.
var AllTypes = []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeCNAME, dns.TypeMX, dns.TypeNS, dns.TypeTXT, dns.TypeSOA, dns.TypeCAA}

// Records asks for name's records of the given types in parallel. The first failure of any
// query fails the whole lookup, so an answer never silently misses a record set.
func (c *Client) Records(ctx context.Context, name string, types ...uint16) (*Records, error) {
	answers := make([]*Answer, len(types))
	errs := make([]error, len(types))
	var wg sync.WaitGroup
	for i, t := range types {
		wg.Go(func() { answers[i], errs[i] = c.Query(ctx, name, t) })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := &Records{Name: name, Exists: true, AD: true}
	seenAlias := map[string]bool{}
	for _, a := range answers {
		// NXDOMAIN after a CNAME is about the chain's end (RFC 6604): the name itself exists,
		// it is a dangling alias, and the answer says so.
		if a.NXDomain() && !hasCNAME(a.RRs) {
			out.Exists = false
		}
		out.AD = out.AD && a.AD
		for _, rr := range a.RRs {
			out.add(rr, seenAlias)
		}
	}
	if !out.Exists {
		*out = Records{Name: name}
	}
	return out, nil
}

func (r *Records) add(rr dns.RR, seenAlias map[string]bool) {
	h := rr.Header()
	switch v := rr.(type) {
	case *dns.A:
		r.A = append(r.A, Addr{IP: v.A.String(), TTL: h.Ttl})
	case *dns.AAAA:
		r.AAAA = append(r.AAAA, Addr{IP: v.AAAA.String(), TTL: h.Ttl})
	case *dns.CNAME:
		// Every query of an alias repeats the chain; keep each step once, in chain order.
		if key := h.Name + " " + v.Target; !seenAlias[key] {
			seenAlias[key] = true
			r.CNAME = append(r.CNAME, Alias{Name: trimDot(h.Name), Target: trimDot(v.Target), TTL: h.Ttl})
		}
	case *dns.MX:
		ex := trimDot(v.Mx)
		if ex == "" {
			ex = "."
		}
		r.MX = append(r.MX, MX{Preference: v.Preference, Exchange: ex, TTL: h.Ttl})
	case *dns.NS:
		r.NS = append(r.NS, Host{Host: trimDot(v.Ns), TTL: h.Ttl})
	case *dns.TXT:
		r.TXT = append(r.TXT, Text{Text: strings.Join(v.Txt, ""), TTL: h.Ttl})
	case *dns.SOA:
		r.SOA = &SOA{MName: trimDot(v.Ns), RName: trimDot(v.Mbox), Serial: v.Serial, Refresh: v.Refresh,
			Retry: v.Retry, Expire: v.Expire, Minimum: v.Minttl, TTL: h.Ttl}
	case *dns.CAA:
		r.CAA = append(r.CAA, CAA{Flag: v.Flag, Tag: v.Tag, Value: v.Value, TTL: h.Ttl})
	}
}

func hasCNAME(rrs []dns.RR) bool {
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeCNAME {
			return true
		}
	}
	return false
}

func trimDot(s string) string { return strings.TrimSuffix(s, ".") }

// TXT returns the TXT strings of name (nil on NXDOMAIN or none).
func (c *Client) TXT(ctx context.Context, name string) ([]Text, bool, error) {
	r, err := c.Records(ctx, name, dns.TypeTXT)
	if err != nil {
		return nil, false, err
	}
	return r.TXT, r.Exists, nil
}
