package catalog

import (
	"errors"
	"testing"
)

func TestDomainAndEmailFormats(t *testing.T) {
	tests := []struct {
		format, in string
		ok         bool
	}{
		{"domain", "example.com", true},
		{"domain", "Example.COM.", true},
		{"domain", "café.fr", true},
		{"domain", "пример.рф", true},
		{"domain", "localhost", false},
		{"domain", "-x.com", false},
		{"domain", "a..b", false},
		{"domain", "caf\u00e9 bar.fr", false},
		{"email", "contact@example.com", true},
		{"email", "jean@café.fr", true},
		{"email", "first.last+tag@sub.example.co.uk", true},
		{"email", "Jean <jean@example.com>", false},
		{"email", "jean@localhost", false},
		{"email", "jean@[192.0.2.1]", false},
		{"email", "jean.example.com", false},
		{"email", "@example.com", false},
		{"email", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa@example.com", false}, // 65-byte local part
	}
	for _, tt := range tests {
		if err := checkFormat(tt.format, tt.in); (err == nil) != tt.ok {
			t.Errorf("%s(%q) = %v, want ok %v", tt.format, tt.in, err, tt.ok)
		}
	}
}

func TestRefineFormatReachesEmailDomains(t *testing.T) {
	saved := formats["domain"]
	t.Cleanup(func() { formats["domain"] = saved })
	RefineFormat("domain", func(s string) error {
		if s == "refused.example" {
			return errors.New("refused")
		}
		return nil
	})
	if err := checkFormat("email", "a@refused.example"); err == nil {
		t.Fatal("the refined domain check is not applied to e-mail domains")
	}
	if formats["domain"].jsonFormat != "idn-hostname" {
		t.Fatal("RefineFormat lost the published JSON format")
	}
}
