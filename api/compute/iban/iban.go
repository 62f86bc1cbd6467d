// Package iban validates IBANs (ISO 13616: the length of each country's format and the
// mod-97 check) and, for French IBANs, the RIB key and the bank behind the bank code.
package iban

import (
	"bufio"
	_ "embed"
	"strings"
)

// lengths are the IBAN lengths of the SWIFT IBAN registry (the countries that publish an
// IBAN format). French overseas departments and collectivities use FR IBANs.
var lengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BI": 27,
	"BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27, "DK": 18, "DO": 28,
	"EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23,
	"GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21,
	"LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28,
	"NL": 18, "NO": 15, "OM": 23, "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22,
	"RU": 33, "SA": 24, "SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

// Length is the IBAN length of country, or 0 when the country has no IBAN format.
func Length(country string) int { return lengths[country] }

// Result is the analysis of one IBAN. Error says why an IBAN is not valid.
type Result struct {
	IBAN    string `json:"iban"`
	Valid   bool   `json:"valid"`
	Country string `json:"pays"`
	Error   string `json:"error,omitempty"`
	// French IBANs (FR, MC) carry a RIB: bank, branch, account and RIB key.
	BankCode    string  `json:"code_banque,omitempty"`
	BranchCode  string  `json:"code_guichet,omitempty"`
	Account     string  `json:"numero_compte,omitempty"`
	RIBKey      string  `json:"cle_rib,omitempty"`
	RIBKeyValid *bool   `json:"cle_rib_valide,omitempty"`
	BankName    *string `json:"banque"`
}

// Normalize strips spaces and upper-cases.
func Normalize(s string) string {
	return strings.ToUpper(strings.Join(strings.Fields(s), ""))
}

// Check analyses s; it never fails, an invalid IBAN is a Result with Valid false.
func Check(s string) Result {
	v := Normalize(s)
	r := Result{IBAN: v}
	if len(v) < 4 {
		r.Error = "too short: an IBAN has a 2-letter country code, 2 check digits and an account part"
		return r
	}
	r.Country = v[:2]
	for i := range len(v) {
		c := v[i]
		switch {
		case i < 2 && (c < 'A' || c > 'Z'):
			r.Error = "must start with a 2-letter country code"
			return r
		case i >= 2 && i < 4 && (c < '0' || c > '9'):
			r.Error = "characters 3 and 4 must be the check digits"
			return r
		case (c < 'A' || c > 'Z') && (c < '0' || c > '9'):
			r.Error = "only letters and digits are allowed"
			return r
		}
	}
	want := lengths[r.Country]
	if want == 0 {
		r.Error = "country " + r.Country + " has no IBAN format"
		return r
	}
	if len(v) != want {
		r.Error = "length " + itoa(len(v)) + ", " + r.Country + " IBANs have " + itoa(want) + " characters"
		return r
	}
	if mod97(v[4:]+v[:4]) != 1 {
		r.Error = "the check digits do not match (mod-97)"
		return r
	}
	r.Valid = true
	if r.Country == "FR" || r.Country == "MC" {
		r.BankCode, r.BranchCode, r.Account, r.RIBKey = v[4:9], v[9:14], v[14:25], v[25:27]
		ok := ribKey(r.BankCode, r.BranchCode, r.Account) == r.RIBKey
		r.RIBKeyValid = &ok
		if !ok {
			r.Valid = false
			r.Error = "the RIB key does not match the bank, branch and account numbers"
		}
		if b, found := frBanks[r.BankCode]; found {
			r.BankName = &b
		}
	}
	return r
}

// mod97 reduces the digits of s (letters count as 10..35) modulo 97, in chunks so that
// the number never overflows.
func mod97(s string) int {
	n := 0
	for i := range len(s) {
		c := s[i]
		if c >= 'A' && c <= 'Z' {
			n = (n*100 + int(c-'A'+10)) % 97
		} else {
			n = (n*10 + int(c-'0')) % 97
		}
	}
	return n
}

// ribKey is 97 − ((89·bank + 15·branch + 3·account) mod 97), letters of the account mapped
// A,J→1 … I,R→9 and S→2 … Z→9 (the French convention).
func ribKey(bank, branch, account string) string {
	digits := func(s string) int {
		n := 0
		for i := range len(s) {
			c := s[i]
			d := int(c - '0')
			if c >= 'A' && c <= 'Z' {
				d = ribLetter(c)
			}
			n = (n*10 + d) % 97
		}
		return n
	}
	k := 97 - (89*digits(bank)+15*digits(branch)+3*digits(account))%97
	return string([]byte{byte('0' + k/10), byte('0' + k%10)})
}

func ribLetter(c byte) int {
	switch {
	case c <= 'I':
		return int(c-'A') + 1
	case c <= 'R':
		return int(c-'J') + 1
	default:
		return int(c-'S') + 2
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

//go:embed banks_fr.tsv
var banksTSV string

var frBanks = parseBanks(banksTSV)

func parseBanks(s string) map[string]string {
	m := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		code, name, ok := strings.Cut(line, "\t")
		if ok && len(code) == 5 {
			m[code] = name
		}
	}
	return m
}
