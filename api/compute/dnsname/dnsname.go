// Package dnsname turns what a caller typed as a domain name into the ASCII name the DNS
// carries: IDNA2008 with the UTS #46 mapping (the browsers' lookup rules), so "Café.fr" and
// "xn--caf-dma.fr" are the same name, and a name the DNS cannot carry is refused before any
// payment is asked.
package dnsname

import (
	"errors"
	"strings"

	"golang.org/x/net/idna"
)

// lookup is the profile browsers use to resolve what a user typed: case-folded, mapped,
// hyphen and bidi rules checked, STD3 letters-digits-hyphen after conversion.
var lookup = idna.New(
	idna.MapForLookup(),
	idna.BidiRule(),
	idna.ValidateLabels(true),
	idna.StrictDomainName(true),
	idna.VerifyDNSLength(true),
	idna.Transitional(false),
)

// ErrInvalid is returned for any name that is not a registrable-looking host name.
var ErrInvalid = errors.New("must be a domain name like example.com (international names are accepted)")

// ToASCII returns the lower-case ASCII (punycode) form of name, without a trailing dot.
// It refuses IP literals, single-label names and labels the DNS cannot carry.
func ToASCII(name string) (string, error) {
	name = strings.TrimSuffix(strings.TrimSpace(name), ".")
	if name == "" || len(name) > 1024 {
		return "", ErrInvalid
	}
	a, err := lookup.ToASCII(name)
	if err != nil || len(a) > 253 || !strings.Contains(a, ".") {
		return "", ErrInvalid
	}
	a = strings.ToLower(a)
	tld := a[strings.LastIndexByte(a, '.')+1:]
	// A top-level label is never all digits (RFC 3696 §2); this also refuses 192.0.2.1.
	if strings.Trim(tld, "0123456789") == "" {
		return "", ErrInvalid
	}
	return a, nil
}

// ToUnicode returns the display form of an ASCII name ("xn--caf-dma.fr" → "café.fr"), or the
// name itself when it has no IDN label or does not decode.
func ToUnicode(ascii string) string {
	if !strings.Contains(ascii, "xn--") {
		return ascii
	}
	u, err := idna.Display.ToUnicode(ascii)
	if err != nil {
		return ascii
	}
	return u
}

// Check is ToASCII for validators: nil when name is acceptable.
func Check(name string) error {
	_, err := ToASCII(name)
	return err
}
