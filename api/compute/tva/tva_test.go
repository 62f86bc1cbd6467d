package tva

import "testing"

func TestNumber(t *testing.T) {
	tests := []struct{ siren, want string }{
		// Worked examples of shared/research/upstreams-company.md §8.
		{"552032534", "FR27552032534"}, // Danone
		{"130025265", "FR07130025265"},
		{"812345676", "FR19812345676"},
		{"443061841", "FR64443061841"},
		// 303265045 (from the brief): 303265045 mod 97 = 74, (12 + 3×74) mod 97 = 40.
		{"303265045", "FR40303265045"},
		{"542051180", "FR59542051180"}, // TotalEnergies SE, its published number
		{"000000000", "FR12000000000"}, // key of 0 mod 97 is 12, never 00
	}
	for _, tt := range tests {
		got, err := Number(tt.siren)
		if err != nil || got != tt.want {
			t.Errorf("Number(%s) = %q, %v; want %q", tt.siren, got, err, tt.want)
		}
	}
}

func TestNumberRejectsBadSIREN(t *testing.T) {
	for _, s := range []string{"", "55203253", "5520325340", "552032535", "55203253A", "552 032 534"} {
		if _, err := Number(s); err == nil {
			t.Errorf("Number(%q) accepted", s)
		}
	}
}
