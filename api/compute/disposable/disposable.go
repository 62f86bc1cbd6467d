// Package disposable recognises disposable (temporary, throw-away) e-mail domains from the
// community list embedded at build time (domains.txt; source, commit and date in PROVENANCE;
// refresh.sh regenerates both). Nothing is fetched at run time.
package disposable

import (
	_ "embed"
	"strings"
)

//go:embed domains.txt
var domainsTXT string

var domains = parse(domainsTXT)

func parse(s string) map[string]struct{} {
	m := make(map[string]struct{}, strings.Count(s, "\n")+1)
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			m[line] = struct{}{}
		}
	}
	return m
}

// Len is how many domains the embedded list holds.
func Len() int { return len(domains) }

// Match returns the listed domain that covers domain (the domain itself or one of its parents,
// since such services hand out addresses at any subdomain), or "" when it is not listed.
// domain must be the lower-case ASCII form.
func Match(domain string) string {
	d := strings.TrimSuffix(domain, ".")
	for {
		if _, ok := domains[d]; ok {
			return d
		}
		i := strings.IndexByte(d, '.')
		if i < 0 || !strings.Contains(d[i+1:], ".") {
			return "" // never match a bare top-level label
		}
		d = d[i+1:]
	}
}
