package mailauth

import (
	"fmt"
	"strconv"
	"strings"
)

// DMARC is a domain's DMARC policy record with the defaults of RFC 7489 §6.3 filled in.
// Error says why the record cannot be used; Policy is then empty.
type DMARC struct {
	Present bool   `json:"present"`
	Record  string `json:"record,omitempty"`
	// Source is the name the record was found at: _dmarc.<domain>, or the organisational
	// domain's when the domain has none (RFC 7489 §6.6.3).
	Source          string   `json:"source,omitempty"`
	Policy          string   `json:"p,omitempty"`   // none, quarantine, reject
	SubdomainPolicy string   `json:"sp,omitempty"`  // defaults to p
	Percent         *int     `json:"pct,omitempty"` // set whenever a record is read: 0 is a real value
	RUA             []string `json:"rua,omitempty"`
	RUF             []string `json:"ruf,omitempty"`
	ADKIM           string   `json:"adkim,omitempty"` // r (relaxed) or s (strict)
	ASPF            string   `json:"aspf,omitempty"`
	FO              string   `json:"fo,omitempty"`
	RI              int      `json:"ri,omitempty"` // report interval, seconds
	Error           string   `json:"error,omitempty"`
}

var policies = map[string]bool{"none": true, "quarantine": true, "reject": true}

// IsDMARC reports whether a TXT string is a DMARC record (it must begin with v=DMARC1).
func IsDMARC(txt string) bool {
	v, _, _ := strings.Cut(txt, ";")
	return strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(v), " ", ""), "v=DMARC1")
}

// ParseDMARC finds the DMARC record among the TXT strings published at source and parses it.
func ParseDMARC(source string, txts []string) DMARC {
	var recs []string
	for _, t := range txts {
		if IsDMARC(t) {
			recs = append(recs, t)
		}
	}
	switch len(recs) {
	case 0:
		return DMARC{}
	case 1:
	default:
		// RFC 7489 §6.6.3: more than one record means no DMARC processing at all.
		return DMARC{Present: true, Source: source, Record: strings.Join(recs, " | "),
			Error: fmt.Sprintf("%d DMARC records are published; receivers apply none of them", len(recs))}
	}
	pct := 100
	d := DMARC{Present: true, Source: source, Record: recs[0], Percent: &pct, ADKIM: "r", ASPF: "r", FO: "0", RI: 86400}
	tags := map[string]string{}
	for _, part := range strings.Split(recs[0], ";") {
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			continue
		}
		tags[strings.ToLower(strings.TrimSpace(k))] = strings.TrimSpace(v)
	}
	if p := strings.ToLower(tags["p"]); policies[p] {
		d.Policy = p
	} else {
		// §6.6.3: a record with a missing or bad p but a valid rua is treated as p=none.
		if len(splitURIs(tags["rua"])) > 0 {
			d.Policy = "none"
		}
		d.Error = fmt.Sprintf("the p tag is missing or invalid (%q)", tags["p"])
	}
	d.SubdomainPolicy = d.Policy
	if sp := strings.ToLower(tags["sp"]); policies[sp] {
		d.SubdomainPolicy = sp
	}
	if v, ok := tags["pct"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 && n <= 100 {
			pct = n
		}
	}
	d.RUA, d.RUF = splitURIs(tags["rua"]), splitURIs(tags["ruf"])
	for _, a := range []struct {
		tag string
		to  *string
	}{{"adkim", &d.ADKIM}, {"aspf", &d.ASPF}} {
		if v := strings.ToLower(tags[a.tag]); v == "r" || v == "s" {
			*a.to = v
		}
	}
	if v := tags["fo"]; v != "" {
		d.FO = v
	}
	if v, err := strconv.Atoi(tags["ri"]); err == nil && v > 0 {
		d.RI = v
	}
	return d
}

func splitURIs(s string) []string {
	var out []string
	for _, u := range strings.Split(s, ",") {
		if u = strings.TrimSpace(u); u != "" {
			out = append(out, u)
		}
	}
	return out
}
