// Package mailauth reads the mail-authentication policies a domain publishes in TXT records:
// SPF (RFC 7208) and DMARC (RFC 7489). It parses; it does not evaluate a message.
package mailauth

import (
	"fmt"
	"strings"
)

// SPF is what a domain's SPF record says. Error is set when the record cannot be used
// (RFC 7208 calls that a permerror): several records, an unknown mechanism, a bad qualifier.
type SPF struct {
	Present    bool           `json:"present"`
	Record     string         `json:"record,omitempty"`
	Records    []string       `json:"records,omitempty"` // only when several are published
	Mechanisms []SPFMechanism `json:"mechanisms,omitempty"`
	// All is the result of the final "all" mechanism: pass, fail, softfail or neutral; empty
	// when the record has none (then a non-matching sender gets neutral, or the redirect's).
	All      string `json:"all,omitempty"`
	Redirect string `json:"redirect,omitempty"`
	Exp      string `json:"exp,omitempty"`
	// Lookups counts the terms of this record that cost a DNS lookup (include, a, mx, ptr,
	// exists, redirect); RFC 7208 §4.6.4 caps the whole evaluation, includes expanded, at 10.
	Lookups int    `json:"lookups"`
	Error   string `json:"error,omitempty"`
}

// SPFMechanism is one term: its qualifier as a result name and its value (a domain, a network).
type SPFMechanism struct {
	Qualifier string `json:"qualifier"` // pass (+), fail (-), softfail (~), neutral (?)
	Type      string `json:"type"`      // all, include, a, mx, ptr, ip4, ip6, exists
	Value     string `json:"value,omitempty"`
}

var qualifiers = map[byte]string{'+': "pass", '-': "fail", '~': "softfail", '?': "neutral"}

var lookupTerms = map[string]bool{"include": true, "a": true, "mx": true, "ptr": true, "exists": true}

// IsSPF reports whether a TXT string is an SPF record: "v=spf1" alone or followed by a space.
func IsSPF(txt string) bool {
	return strings.EqualFold(txt, "v=spf1") || (len(txt) > 7 && strings.EqualFold(txt[:7], "v=spf1 "))
}

// ParseSPF finds the SPF record among a domain's TXT strings and parses it.
func ParseSPF(txts []string) SPF {
	var recs []string
	for _, t := range txts {
		if IsSPF(t) {
			recs = append(recs, t)
		}
	}
	switch len(recs) {
	case 0:
		return SPF{}
	case 1:
		return parseSPFRecord(recs[0])
	}
	return SPF{Present: true, Records: recs,
		Error: fmt.Sprintf("permerror: %d SPF records are published; RFC 7208 §4.5 requires exactly one", len(recs))}
}

func parseSPFRecord(rec string) SPF {
	s := SPF{Present: true, Record: rec}
	terms := strings.Fields(rec)[1:]
	for _, term := range terms {
		lower := strings.ToLower(term)
		// Modifiers are name=value; a mechanism's value follows ':' or '/'.
		if name, _, ok := strings.Cut(lower, "="); ok && !strings.ContainsAny(name, ":/") {
			switch name {
			case "redirect":
				if s.Redirect != "" {
					return s.fail("permerror: redirect appears twice")
				}
				s.Redirect = term[len(name)+1:]
				s.Lookups++
			case "exp":
				if s.Exp != "" {
					return s.fail("permerror: exp appears twice")
				}
				s.Exp = term[len(name)+1:]
			}
			continue // other modifiers are ignored, as RFC 7208 §6 says
		}
		q := "pass"
		if r, ok := qualifiers[term[0]]; ok {
			q, term, lower = r, term[1:], lower[1:]
		}
		typ, value := lower, ""
		if i := strings.IndexAny(lower, ":/"); i >= 0 {
			typ, value = lower[:i], term[i:]
			value = strings.TrimPrefix(value, ":")
		}
		switch typ {
		case "all", "include", "a", "mx", "ptr", "ip4", "ip6", "exists":
		default:
			return s.fail(fmt.Sprintf("permerror: unknown mechanism %q", term))
		}
		if (typ == "include" || typ == "exists") && value == "" {
			return s.fail(fmt.Sprintf("permerror: %s needs a domain", typ))
		}
		if lookupTerms[typ] {
			s.Lookups++
		}
		s.Mechanisms = append(s.Mechanisms, SPFMechanism{Qualifier: q, Type: typ, Value: value})
		if typ == "all" && s.All == "" {
			s.All = q
		}
	}
	if s.All != "" && s.Redirect != "" {
		s.Redirect = "" // RFC 7208 §6.1: redirect is ignored when the record has an all mechanism
		s.Lookups--
	}
	if s.Lookups > 10 {
		s.Error = fmt.Sprintf("permerror: %d DNS-querying terms in the record itself, more than the 10 allowed", s.Lookups)
	}
	return s
}

func (s SPF) fail(msg string) SPF {
	s.Error = msg
	return s
}
