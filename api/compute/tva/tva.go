// Package tva computes the French intra-community VAT number of a company from its SIREN.
// It is the theoretical number: whether the company is VAT-registered is VIES's answer.
package tva

import (
	"errors"
	"fmt"
)

// ErrSIREN is returned for a SIREN that is not 9 digits passing the Luhn check.
var ErrSIREN = errors.New("not a valid SIREN (9 digits with a Luhn check digit)")

// Key is the two-digit VAT key: (12 + 3 × (SIREN mod 97)) mod 97.
func Key(siren string) (int, error) {
	if !ValidSIREN(siren) {
		return 0, ErrSIREN
	}
	n := 0
	for _, c := range siren {
		n = (n*10 + int(c-'0')) % 97
	}
	return (12 + 3*n) % 97, nil
}

// Number is "FR" + key + SIREN, e.g. 552032534 → FR27552032534.
func Number(siren string) (string, error) {
	k, err := Key(siren)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("FR%02d%s", k, siren), nil
}

// ValidSIREN checks 9 digits and the Luhn check digit.
func ValidSIREN(s string) bool {
	if len(s) != 9 {
		return false
	}
	sum := 0
	for i := range 9 {
		c := s[8-i]
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if i%2 == 1 {
			if d *= 2; d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum%10 == 0
}
