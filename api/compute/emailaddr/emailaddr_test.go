package emailaddr

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in, local, domain, unicode string
		bad                        bool
	}{
		{in: "contact@example.com", local: "contact", domain: "example.com", unicode: "example.com"},
		{in: "jean@Café.fr", local: "jean", domain: "xn--caf-dma.fr", unicode: "café.fr"},
		{in: `"jean dupont"@example.com`, bad: true}, // quoted local parts are legal but refused: the catalog refuses them too
		{in: "Jean <jean@example.com>", bad: true},
		{in: "jean@localhost", bad: true},
		{in: "jean@-x.com", bad: true},
		{in: "jean@@x.com", bad: true},
		{in: "a@b", bad: true},
	}
	for _, tt := range tests {
		a, err := Parse(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("Parse(%q) = %+v, want an error", tt.in, a)
			}
			continue
		}
		if err != nil || a.Local != tt.local || a.Domain != tt.domain || a.DomainUnicode != tt.unicode {
			t.Errorf("Parse(%q) = %+v, %v", tt.in, a, err)
		}
	}
}

func TestRole(t *testing.T) {
	for local, want := range map[string]bool{"info": true, "Postmaster": true, "support+fr": true, "no-reply": true,
		"jean.dupont": false, "infos.jean": false, "": false} {
		if got := Role(local); got != want {
			t.Errorf("Role(%q) = %v, want %v", local, got, want)
		}
	}
}

func TestSuggest(t *testing.T) {
	for domain, want := range map[string]string{
		"gmial.com":   "gmail.com",   // swap
		"gmai.com":    "gmail.com",   // deletion
		"gmaill.com":  "gmail.com",   // insertion
		"gmail.con":   "gmail.com",   // substitution
		"hotmial.com": "hotmail.com", // swap
		"yahooo.fr":   "yahoo.fr",
		"gmail.com":   "",
		"mail.com":    "", // a provider itself, one edit from gmail.com
		"me.com":      "",
		"mx.com":      "", // one edit from me.com, which is too short to be checked
		"example.com": "",
		"gmx.fr":      "",
	} {
		if got := Suggest(domain); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", domain, got, want)
		}
	}
}
