package catalog

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"net/mail"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// format is a named text validator; pattern and jsonFormat are published in the schemas.
type format struct {
	check      func(string) error
	pattern    string
	jsonFormat string
}

// formatSet maps format names to their validators. The package's set (formats) is the
// standard one; each catalog checks against its own copy, which the families bound to that
// catalog refine (RefineFormat, AlsoCheck), so no family changes another catalog's checks.
type formatSet map[string]format

var formats = formatSet{
	"url":         {check: checkURL, jsonFormat: "uri"},
	"public_url":  {check: checkURL, jsonFormat: "uri"}, // see AlsoCheck
	"domain":      {check: checkDomain, jsonFormat: "idn-hostname"},
	"evm_address": {check: re(`^0x[0-9a-fA-F]{40}$`, "must be a 0x-prefixed 20-byte hex address"), pattern: `^0x[0-9a-fA-F]{40}$`},
	"bytes32":     {check: re(`^0x[0-9a-fA-F]{64}$`, "must be a 0x-prefixed 32-byte hex value"), pattern: `^0x[0-9a-fA-F]{64}$`},
	"tx_hash":     {check: re(`^0x[0-9a-fA-F]{64}$`, "must be a 0x-prefixed 32-byte hex hash"), pattern: `^0x[0-9a-fA-F]{64}$`},
	"siren":       {check: checkSIREN, pattern: `^[0-9]{9}$`},
	"siret":       {check: checkSIRET, pattern: `^[0-9]{14}$`},
	"cp":          {check: re(`^(0[1-9]|[1-8][0-9]|9[0-8])[0-9]{3}$`, "must be a 5-digit French postal code"), pattern: `^[0-9]{5}$`},
	"insee":       {check: re(`^(0[1-9]|[1-8][0-9]|9[0-5]|2[AB])[0-9]{3}$|^97[1-8][0-9]{2}$|^98[4-9][0-9]{2}$`, "must be a 5-character INSEE commune code (e.g. 75056, 2A004, 97411)"), pattern: `^[0-9][0-9AB][0-9]{3}$`},
	"departement": {check: re(`^(0[1-9]|[1-8][0-9]|9[0-5]|2[AB]|97[1-8])$`, "must be a French département code (e.g. 33, 2A, 974)")},
	"iban":        {check: re(`^[A-Z]{2}[0-9]{2}[A-Z0-9]{10,30}$`, "must be an IBAN: 2 letters, 2 check digits, then 10 to 30 letters or digits"), pattern: `^[A-Za-z]{2}[0-9]{2}[A-Za-z0-9 ]{10,40}$`},
	"vat":         {check: re(`^[A-Z]{2}[0-9A-Z+*]{2,13}$`, "must be an EU VAT number with its 2-letter country prefix (e.g. FR40303265045)"), pattern: `^[A-Za-z]{2}[0-9A-Za-z+*]{2,13}$`},
	"date":        {check: re(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`, "must be a date YYYY-MM-DD"), jsonFormat: "date"},
	"vin":         {check: re(`^[A-HJ-NPR-Z0-9]{17}$`, "must be 17 characters, letters and digits without I, O or Q"), pattern: `^[A-HJ-NPR-Za-hj-npr-z0-9]{17}$`},
	"ens":         {check: re(`^[a-z0-9-]+(\.[a-z0-9-]+)*\.eth$`, "must be an ENS name ending in .eth")},
	"sha256":      {check: re(`^[0-9a-f]{64}$`, "must be 64 lowercase hex characters"), pattern: `^[0-9a-f]{64}$`},
	"country":     {check: re(`^[A-Za-z]{2}$`, "must be a 2-letter ISO 3166-1 country code (e.g. FR)"), pattern: `^[A-Za-z]{2}$`},
	"lang":        {check: re(`^[a-z]{2}$`, "must be a 2-letter lowercase code"), pattern: `^[a-z]{2}$`},
	"school_year": {check: re(`^20[0-9]{2}-20[0-9]{2}$`, "must be a school year like 2025-2026"), pattern: `^[0-9]{4}-[0-9]{4}$`},
	"id_hex":      {check: re(`^[0-9a-f]{16,64}$`, "must be a hex identifier")},
	"category_id": {check: re(`^[0-9]{1,4}$`, "must be the site's numeric category id (e.g. 9 property sales, 55 bicycles)"), pattern: `^[0-9]{1,4}$`},
}

// init adds text_urls, whose check reads the public_url format at call time (after AlsoCheck).
func init() {
	formats["text_urls"] = format{check: func(s string) error { return checkTextURLs(formats, s) }}
}

// textURL is a URL written in free text, as the router and the agent read one.
var textURL = regexp.MustCompile(`https?://[^\s<>"'\])]+`)

// checkTextURLs checks free text whose URLs a route's paid work may fetch (an agent's
// objective, a router task): each URL in it must pass public_url, so a private or loopback
// address written in a sentence is a 400 before any 402 like one given as a parameter.
func checkTextURLs(fs formatSet, s string) error {
	for _, u := range textURL.FindAllString(s, -1) {
		u = strings.TrimRight(u, ".,;:!?")
		if err := fs.check("public_url", u); err != nil {
			return fmt.Errorf("contains the URL %s, which %s", u, err.Error())
		}
	}
	return nil
}

// register adds a validator to the standard set.
func register(name, pattern string, check func(string) error) {
	formats[name] = format{check: check, pattern: pattern}
}

// email checks its domain through formats, so it joins the map once the map exists.
func init() {
	formats["email"] = format{check: func(s string) error { return checkEmail(formats, s) }, jsonFormat: "idn-email"}
}

// clone copies the set for one catalog; text_urls and email read other formats at call time,
// so in the copy they read the copy's.
func (fs formatSet) clone() formatSet {
	out := maps.Clone(fs)
	out["text_urls"] = format{check: func(s string) error { return checkTextURLs(out, s) }}
	email := out["email"]
	email.check = func(s string) error { return checkEmail(out, s) }
	out["email"] = email
	return out
}

// RefineFormat replaces the check of one of the catalog's formats and keeps what the schemas
// publish. It exists for checks that need a library the catalog may not import: the family
// serving domain names installs the IDNA2008 conversion for "domain" (and so for e-mail
// domains), the chain family the EIP-55 check of addresses. Families call it from Bind.
func (c *Catalog) RefineFormat(name string, check func(string) error) error {
	f, ok := c.formats[name]
	if !ok {
		return fmt.Errorf("catalog: refine format %s: no such format", name)
	}
	f.check = check
	c.formats[name] = f
	return nil
}

// AlsoCheck chains extra after the existing check of one of the catalog's formats. Compose
// chains the egress policy's check of literal addresses to public_url, the URL a route's
// paid work will fetch, so that a loopback, private or metadata address is a 400 before any
// 402; a name is checked when it is dialled.
func (c *Catalog) AlsoCheck(name string, extra func(string) error) error {
	f, ok := c.formats[name]
	if !ok {
		return fmt.Errorf("catalog: also check format %s: no such format", name)
	}
	base := f.check
	f.check = func(s string) error {
		if err := base(s); err != nil {
			return err
		}
		return extra(s)
	}
	c.formats[name] = f
	return nil
}

// checkFormat checks s against the standard set.
func checkFormat(name, s string) error { return formats.check(name, s) }

func (fs formatSet) check(name, s string) error {
	f, ok := fs[name]
	if !ok {
		return nil
	}
	if name == "iban" || name == "vat" || name == "vin" {
		s = strings.ToUpper(strings.ReplaceAll(s, " ", ""))
	}
	return f.check(s)
}

func re(expr, msg string) func(string) error {
	rx := regexp.MustCompile(expr)
	return func(s string) error {
		if !rx.MatchString(s) {
			return errors.New(msg)
		}
		return nil
	}
}

func checkURL(s string) error {
	if len(s) > 2048 {
		return errors.New("must be at most 2048 characters")
	}
	if plainHTTPURL(s) {
		return nil
	}
	return checkParsedURL(s)
}

func checkParsedURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return errors.New("must be an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errors.New("must use the http or https scheme")
	}
	if u.User != nil {
		return errors.New("must not carry credentials")
	}
	return nil
}

// plainHTTPURL reports whether s is an http or https URL that url.Parse accepts with a host,
// the scheme and no credentials, read in one pass: a host of letters, digits, dots and
// hyphens, an optional port, then a path and query of RFC 3986's characters without '%' (an
// escape url.Parse checks) or '#'. Every call with a url parameter is checked before its 402,
// and url.Parse was a sixth of the edge's work on the 402 path; anything else still goes
// through url.Parse, so it decides what it decided.
func plainHTTPURL(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "http://"); !ok {
			return false
		}
	}
	i := 0
	for i < len(rest) && (isAlnum(rest[i]) || rest[i] == '.' || rest[i] == '-') {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(rest) && rest[i] == ':' {
		for i++; i < len(rest) && rest[i] >= '0' && rest[i] <= '9'; i++ {
		}
	}
	if i == len(rest) {
		return true
	}
	if rest[i] != '/' {
		return false
	}
	for ; i < len(rest); i++ {
		if !plainPathByte[rest[i]] {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// plainPathByte are the bytes plainHTTPURL reads in a path and query: RFC 3986's unreserved,
// sub-delims, ':', '@', '/' and '?'.
var plainPathByte = func() (t [256]bool) {
	for c := range 256 {
		t[c] = isAlnum(byte(c)) || strings.IndexByte("-._~!$&'()*+,;=:@/?", byte(c)) >= 0
	}
	return t
}()

var errEmail = errors.New("must be an e-mail address like name@example.com")

// checkEmail accepts one bare address (no display name), a local part of at most 64 bytes
// (RFC 5321 §4.5.3.1.1) and a domain that passes the domain format.
func checkEmail(fs formatSet, s string) error {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 254 {
		return errEmail
	}
	at := strings.LastIndexByte(s, '@')
	if at < 1 || at > 64 {
		return errEmail
	}
	if err := fs.check("domain", s[at+1:]); err != nil {
		return errors.New("must be an e-mail address whose domain is a domain name like example.com")
	}
	return nil
}

var domainRx = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z][a-z0-9-]{0,62}$`)

// checkDomain is the standard-library check: ASCII names by the LDH rule, international
// names by a loose letters-digits-hyphen rule. The family that serves domain names refines it
// with the exact IDNA2008 conversion (RefineFormat).
func checkDomain(s string) error {
	s = strings.ToLower(strings.TrimSuffix(s, "."))
	ok := len(s) <= 253 && domainRx.MatchString(s)
	if !ok && !isASCII(s) {
		ok = looseIDN(s)
	}
	if !ok {
		return errors.New("must be a domain name like example.com")
	}
	return nil
}

func isASCII(s string) bool {
	for i := range len(s) {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func looseIDN(s string) bool {
	labels := strings.Split(s, ".")
	if len(labels) < 2 || utf8.RuneCountInString(s) > 253 {
		return false
	}
	for _, l := range labels {
		if l == "" || strings.HasPrefix(l, "-") || strings.HasSuffix(l, "-") || utf8.RuneCountInString(l) > 63 {
			return false
		}
		for _, r := range l {
			if r != '-' && !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r) {
				return false
			}
		}
	}
	return true
}

// luhn reports whether the digits pass the Luhn check (SIREN and SIRET use it).
func luhn(digits string) bool {
	sum := 0
	for i := range len(digits) {
		d := int(digits[len(digits)-1-i] - '0')
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}

func allDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func checkSIREN(s string) error {
	if len(s) != 9 || !allDigits(s) {
		return errors.New("must be 9 digits")
	}
	if !luhn(s) {
		return errors.New("fails the SIREN check digit (Luhn)")
	}
	return nil
}

// laPosteSIREN is exempt from the SIRET Luhn rule: its establishments' digits sum to a multiple of 5.
const laPosteSIREN = "356000000"

func checkSIRET(s string) error {
	if len(s) != 14 || !allDigits(s) {
		return errors.New("must be 14 digits")
	}
	if strings.HasPrefix(s, laPosteSIREN) {
		sum := 0
		for _, c := range s {
			sum += int(c - '0')
		}
		if sum%5 == 0 {
			return nil
		}
	}
	if !luhn(s) {
		return errors.New("fails the SIRET check digit (Luhn)")
	}
	return nil
}

// checkStops validates 2 to 10 "lat,lon" pairs separated by "|", each in range.
func checkStops(s string) error {
	pairs := strings.Split(s, "|")
	if len(pairs) < 2 || len(pairs) > 10 {
		return errors.New("must hold 2 to 10 lat,lon pairs separated by |")
	}
	for _, p := range pairs {
		lat, lon, ok := strings.Cut(p, ",")
		if !ok {
			return errors.New("must hold lat,lon pairs separated by |")
		}
		la, err1 := strconv.ParseFloat(strings.TrimSpace(lat), 64)
		lo, err2 := strconv.ParseFloat(strings.TrimSpace(lon), 64)
		// NaN passes every comparison, so it is refused by name.
		if err1 != nil || err2 != nil || math.IsNaN(la) || math.IsNaN(lo) || la < -90 || la > 90 || lo < -180 || lo > 180 {
			return errors.New("has a pair that is not a valid lat,lon")
		}
	}
	return nil
}
