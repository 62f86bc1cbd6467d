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

func defaultCatalog(t *testing.T) *Catalog {
	t.Helper()
	c, err := Default(DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRefineFormatReachesEmailDomains(t *testing.T) {
	c := defaultCatalog(t)
	if err := c.RefineFormat("domain", func(s string) error {
		if s == "refused.example" {
			return errors.New("refused")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := c.formats.check("email", "a@refused.example"); err == nil {
		t.Fatal("the refined domain check is not applied to e-mail domains")
	}
	if c.formats["domain"].jsonFormat != "idn-hostname" {
		t.Fatal("RefineFormat lost the published JSON format")
	}
}

// TestRefinementStaysInItsCatalog: a family refining a format changes the checks of the
// catalog it is bound to, not the standard set nor another catalog (formats were package
// state that families changed from init()).
func TestRefinementStaysInItsCatalog(t *testing.T) {
	refined, other := defaultCatalog(t), defaultCatalog(t)
	refuse := func(string) error { return errors.New("refused") }
	if err := refined.RefineFormat("domain", refuse); err != nil {
		t.Fatal(err)
	}
	if err := refined.AlsoCheck("public_url", refuse); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"domain": "example.com"}
	for _, tt := range []struct {
		name string
		c    *Catalog
		ok   bool
	}{{"refined", refined, false}, {"other", other, true}} {
		_, err := tt.c.Entry("dns").Decode(args)
		if (err == nil) != tt.ok {
			t.Errorf("%s catalog: decoding domain=example.com: %v, want ok %v", tt.name, err, tt.ok)
		}
		if err := tt.c.formats.check("text_urls", "read https://example.com/"); (err == nil) != tt.ok {
			t.Errorf("%s catalog: text_urls: %v, want ok %v", tt.name, err, tt.ok)
		}
	}
	if err := checkFormat("domain", "example.com"); err != nil {
		t.Errorf("the standard set was changed: %v", err)
	}
	if err := refined.RefineFormat("no_such_format", refuse); err == nil {
		t.Error("refining an unknown format did not fail")
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
	c := defaultCatalog(t)
	if err := c.AlsoCheck("public_url", func(s string) error {
		if s == "http://10.0.0.1/admin" {
			return errors.New("is a private address")
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
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
		if err := c.formats.check("text_urls", tt.in); (err == nil) != tt.ok {
			t.Errorf("text_urls(%q) = %v, want ok %v", tt.in, err, tt.ok)
		}
	}
}

// plainURLCases are URLs the one-pass check reads (plain) or leaves to url.Parse.
var plainURLCases = []struct {
	url   string
	plain bool
}{
	{"https://example.com/", true},
	{"http://example.com", true},
	{"https://Example.COM:8443/a/b?c=d&e=f+g;h=(i)*~!$'@:", true},
	{"http://127.0.0.1:/x", true},
	{"https://a..b-/", true},
	{"https://example.com/a%20b", false},
	{"https://example.com/#frag", false},
	{"https://user:pw@example.com/", false},
	{"https://example.com@evil.example/", false},
	{"https://[::1]/", false},
	{"HTTPS://example.com/", false},
	{"https://example.com:80x/", false},
	{"https://example.com?q", false},
	{"https:///path", false},
	{"https://exa mple.com/", false},
	{"https://example.com/a b", false},
	{"https://exämple.com/", false},
	{"ftp://example.com/", false},
	{"javascript:alert(1)", false},
}

// TestPlainURLsAreWhatParseAccepts: the one-pass check accepts only URLs that url.Parse
// accepts with a host, an http(s) scheme and no credentials, so checkURL decides as it did.
func TestPlainURLsAreWhatParseAccepts(t *testing.T) {
	for _, c := range plainURLCases {
		if got := plainHTTPURL(c.url); got != c.plain {
			t.Errorf("plainHTTPURL(%q) = %v, want %v", c.url, got, c.plain)
		}
		if c.plain && checkParsedURL(c.url) != nil {
			t.Errorf("%q read as plain, but url.Parse refuses it: %v", c.url, checkParsedURL(c.url))
		}
	}
}

func FuzzPlainURLsAreWhatParseAccepts(f *testing.F) {
	for _, c := range plainURLCases {
		f.Add(c.url)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if plainHTTPURL(s) && checkParsedURL(s) != nil {
			t.Fatalf("%q read as plain, but url.Parse refuses it: %v", s, checkParsedURL(s))
		}
	})
}

// BenchmarkCheckURL: a url parameter's check, which every call with one runs before its 402.
func BenchmarkCheckURL(b *testing.B) {
	for _, s := range []string{"https://example.com/", "https://www.example.org/articles/2026/11/some-long-title-of-a-page?ref=agent&lang=fr"} {
		b.Run(s[8:20], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if checkURL(s) != nil {
					b.Fatal(s)
				}
			}
		})
	}
}
