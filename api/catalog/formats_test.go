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

func TestCompanyIdentifierFormats(t *testing.T) {
	tests := []struct {
		format, in string
		ok         bool
	}{
		{"uk_company", "00445790", true},
		{"uk_company", "SC123456", true},
		{"uk_company", "fc040879", true},
		{"uk_company", "R0123456", true},
		{"uk_company", "445790", false},
		{"uk_company", "0044579A", false},
		{"uk_company", "S1234567", false},
		{"uk_company", "00445790 ", false},
		{"ticker", "AAPL", true},
		{"ticker", "brk-b", true},
		{"ticker", "BF.B", true},
		{"ticker", "1AAPL", false},
		{"ticker", "AAPL MSFT", false},
		{"ticker", "ABCDEFGHIJK", false},
		{"cik", "320193", true},
		{"cik", "0000320193", true},
		{"cik", "00003201930", false},
		{"cik", "CIK320193", false},
	}
	for _, tt := range tests {
		if err := checkFormat(tt.format, tt.in); (err == nil) != tt.ok {
			t.Errorf("%s(%q) = %v, want ok %v", tt.format, tt.in, err, tt.ok)
		}
	}
}

// TestTextURLsFollowPublicURL: every URL written in free text passes the public_url check as
// it is at call time (with what AlsoCheck added), trailing punctuation aside.
func TestTextURLsFollowPublicURL(t *testing.T) {
	saved := formats["public_url"]
	t.Cleanup(func() { formats["public_url"] = saved })
	AlsoCheck("public_url", func(s string) error {
		if s == "http://10.0.0.1/admin" {
			return errors.New("is a private address")
		}
		return nil
	})
	for _, tt := range []struct {
		in string
		ok bool
	}{
		{"weather in Amiens tomorrow", true},
		{"What does https://example.com/pricing say?", true},
		{"Compare https://a.example/ and https://b.example/x.", true},
		{"What does http://10.0.0.1/admin say?", false},
		{"read https://a.example/ then http://10.0.0.1/admin.", false},
		{"log in to https://user:secret@example.com/", false},
	} {
		if err := checkFormat("text_urls", tt.in); (err == nil) != tt.ok {
			t.Errorf("text_urls(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}
