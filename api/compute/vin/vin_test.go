package vin

import (
	"slices"
	"testing"
)

// The check digits are those NHTSA's vPIC reports for the recorded decodes of
// api/upstream/vpic/testdata: 1FTMW1T88MFA00001 "decoded clean. Check Digit (9th position) is
// correct", WBA3A5C51CF256987 "1 - Check Digit (9th position) does not calculate properly";
// 1HGCM82633A004352 is the worked example of the research notes and of many VIN libraries.
func TestCheckDigit(t *testing.T) {
	tests := []struct {
		vin  string
		want byte
	}{
		{"1FTMW1T88MFA00001", '8'},
		{"WBA3A5C51CF256987", '7'}, // position 9 holds 1: vPIC says it does not calculate (sum 381)
		{"1HGCM82633A004352", '3'},
		{"11111111111111111", '1'}, // 1 × the sum of the weights, 89 mod 11
		{"1M8GDM9AXKP042788", 'X'}, // remainder 10 is X (49 CFR 565.15 example)
	}
	for _, tt := range tests {
		if got := CheckDigit(tt.vin); got != tt.want {
			t.Errorf("CheckDigit(%s) = %c, want %c", tt.vin, got, tt.want)
		}
	}
}

func TestModelYear(t *testing.T) {
	tests := []struct {
		vin        string
		year       int
		candidates []int
	}{
		{"1FTMW1T88MFA00001", 2021, []int{1991, 2021}}, // position 7 T: 2010 cycle (vPIC: 2021)
		{"WBA3A5C51CF256987", 2012, []int{1982, 2012}}, // position 7 C (vPIC: 2012)
		{"1HGCM82633A004352", 2003, []int{2003}},       // position 7 2: 1980 cycle
		{"1M8GDM9AXKP042788", 1989, []int{1989, 2019}}, // position 7 9: 1980 cycle
		{"WVWZZZ1JZZW000001", 0, nil},                  // Z is no year code
	}
	for _, tt := range tests {
		y := ModelYear(tt.vin, 2026)
		if y.Year != tt.year || !slices.Equal(y.Candidates, tt.candidates) || y.Rule == "" {
			t.Errorf("ModelYear(%s) = %+v, want %d %v", tt.vin, y, tt.year, tt.candidates)
		}
	}
}

func TestManufacturer(t *testing.T) {
	tests := []struct{ vin, name, prefix string }{
		{"WBA3A5C51CF256987", "BMW", "WBA"},
		{"1FTMW1T88MFA00001", "Ford", "1F"}, // no 1FT row: the 2-character prefix answers
		{"VF1RFB00X56123456", "Renault", "VF1"},
		{"XTA21099043414573", "Lada", "XTA"}, // a brand class of vininfo, by its name
		{"99999999999999999", "", ""},
	}
	for _, tt := range tests {
		if name, prefix := Manufacturer(tt.vin); name != tt.name || prefix != tt.prefix {
			t.Errorf("Manufacturer(%s) = %q %q, want %q %q", tt.vin, name, prefix, tt.name, tt.prefix)
		}
	}
}
