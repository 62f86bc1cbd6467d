package catalog

import (
	"strconv"
	"testing"
	"time"
)

func TestFrenchFormats(t *testing.T) {
	now := time.Now().UTC().Year()
	tests := []struct {
		format, in string
		ok         bool
	}{
		{"vat_eu", "FR40303265045", true},
		{"vat_eu", "fr 40 303 265 045", true},
		{"vat_eu", "DE123456789", true},
		{"vat_eu", "ATU12345678", true},
		{"vat_eu", "NL123456789B01", true},
		{"vat_eu", "EL094014201", true},
		{"vat_eu", "IE6388047V", true},
		{"vat_eu", "ESX1234567L", true},
		{"vat_eu", "BE0123456789", true},
		{"vat_eu", "SE556703748501", true},
		{"vat_eu", "GR094014201", false},
		{"vat_eu", "DE12345678", false},
		{"vat_eu", "AT12345678", false},
		{"vat_eu", "US123456789", false},
		{"vat_eu", "FRIO303265045", false},
		{"vat_eu", "NL123456789A01", false},
		{"annee_scolaire", "2025-2026", true},
		{"annee_scolaire", "2025-2027", false},
		{"annee_scolaire", "2025", false},
		{"dvf_year", strconv.Itoa(now - 1), true},
		{"dvf_year", strconv.Itoa(now - 5), true},
		{"dvf_year", strconv.Itoa(now - 6), false},
		{"dvf_year", strconv.Itoa(now + 1), false},
		{"dvf_year", "20x4", false},
	}
	for _, tt := range tests {
		err := checkFormat(tt.format, tt.in)
		if (err == nil) != tt.ok {
			t.Errorf("%s(%q) = %v, want ok %v", tt.format, tt.in, err, tt.ok)
		}
	}
}

func TestDepartementFR(t *testing.T) {
	for in, ok := range map[string]bool{"01": true, "2A": true, "2B": true, "19": true, "21": true, "95": true, "971": true, "976": true,
		"20": false, "00": false, "96": false, "977": false, "2C": false, "1": false} {
		if err := checkFormat("departement_fr", in); (err == nil) != ok {
			t.Errorf("departement_fr(%s) = %v, want ok %v", in, err, ok)
		}
	}
}
