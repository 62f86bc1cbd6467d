package browserfarm_test

import (
	"testing"

	"github.com/peage/appliance/browserfarm"
)

// TestSiteBase: a configured root wins over the default, its trailing slash goes, and what
// is not an http(s) URL with a host is refused.
func TestSiteBase(t *testing.T) {
	for _, c := range []struct {
		raw, fallback, want string
		bad                 bool
	}{
		{"", "https://www.example.org", "https://www.example.org", false},
		{"http://127.0.0.1:8080/", "https://www.example.org", "http://127.0.0.1:8080", false},
		{"ftp://example.org", "https://www.example.org", "", true},
		{"https://", "https://www.example.org", "", true},
		{"www.example.org", "https://www.example.org", "", true},
	} {
		u, err := browserfarm.SiteBase(c.raw, c.fallback)
		if c.bad {
			if err == nil {
				t.Errorf("SiteBase(%q) = %v, want an error", c.raw, u)
			}
			continue
		}
		if err != nil || u.String() != c.want {
			t.Errorf("SiteBase(%q, %q) = %v, %v; want %s", c.raw, c.fallback, u, err, c.want)
		}
	}
}
