// Package emailaddr reads an e-mail address without sending anything: its parts, whether
// the local part names a role rather than a person, and whether the domain looks like a
// mistyped big mailbox provider.
package emailaddr

import (
	"errors"
	"net/mail"
	"strings"

	"github.com/peage/appliance/api/compute/dnsname"
)

// Address is a parsed address. Domain is the ASCII (punycode) form the DNS is asked about.
type Address struct {
	Local         string
	Domain        string
	DomainUnicode string
}

// String is the address with its ASCII domain.
func (a Address) String() string { return a.Local + "@" + a.Domain }

// ErrSyntax is returned for anything that is not one bare address.
var ErrSyntax = errors.New("must be an e-mail address like name@example.com")

// Parse splits a bare address ("name@example.com", no display name) and converts its domain.
func Parse(s string) (Address, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return Address{}, ErrSyntax
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 {
		return Address{}, ErrSyntax
	}
	d, err := dnsname.ToASCII(s[at+1:])
	if err != nil {
		return Address{}, ErrSyntax
	}
	return Address{Local: s[:at], Domain: d, DomainUnicode: dnsname.ToUnicode(d)}, nil
}

// Check is Parse for validators.
func Check(s string) error {
	_, err := Parse(s)
	return err
}

// roles are local parts that name a function, a team or a machine rather than a person
// (RFC 2142 mailbox names and the ones sign-up forms commonly refuse).
var roles = map[string]bool{}

func init() {
	for _, r := range strings.Fields(`abuse admin administrator accounting accounts billing careers compliance contact
		contactus customerservice dev devnull dns enquiries ftp help hello helpdesk hostmaster hr info inquiries it
		jobs legal mail mailer-daemon marketing media newsletter no-reply noc noreply nobody office postmaster press
		privacy recruitment root sales security service spam support sysadmin team usenet uucp webmaster www
		contacto kontakt accueil commercial compta comptabilite direction facturation recrutement secretariat`) {
		roles[r] = true
	}
}

// Role reports whether the local part names a role. "+tag" sub-addresses and case are ignored.
func Role(local string) bool {
	l := strings.ToLower(local)
	if i := strings.IndexByte(l, '+'); i > 0 {
		l = l[:i]
	}
	return roles[l]
}

// providers are the big mailbox providers whose domains people mistype. A domain on this
// list is never a typo of another one on it.
var providers = []string{
	"gmail.com", "googlemail.com", "yahoo.com", "yahoo.fr", "yahoo.co.uk", "ymail.com", "hotmail.com",
	"hotmail.fr", "hotmail.co.uk", "outlook.com", "outlook.fr", "live.com", "live.fr", "msn.com",
	"icloud.com", "me.com", "mac.com", "aol.com", "mail.com", "gmx.com", "gmx.de", "gmx.fr", "web.de",
	"protonmail.com", "proton.me", "yandex.ru", "mail.ru", "orange.fr", "wanadoo.fr", "free.fr",
	"sfr.fr", "laposte.net", "neuf.fr", "bbox.fr", "comcast.net", "verizon.net", "att.net", "qq.com",
	"163.com",
}

var isProvider = map[string]bool{}

func init() {
	for _, p := range providers {
		isProvider[p] = true
	}
}

// minTypoLen keeps short provider names out of the typo check: at one edit, "me.com" or
// "qq.com" would match countless unrelated real domains.
const minTypoLen = 8

// Suggest returns the big provider's domain that domain is most likely a typo of (one
// insertion, deletion, substitution or swap of adjacent letters away: gmial.com → gmail.com),
// or "" when there is none.
func Suggest(domain string) string {
	if isProvider[domain] {
		return ""
	}
	for _, p := range providers {
		if len(p) >= minTypoLen && osaDistance(domain, p) == 1 {
			return p
		}
	}
	return ""
}

// osaDistance is the optimal-string-alignment edit distance (Levenshtein plus adjacent swaps).
func osaDistance(a, b string) int {
	if d := len(a) - len(b); d > 1 || d < -1 {
		return 2 // more than one edit apart: all Suggest needs to know
	}
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range cur {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
