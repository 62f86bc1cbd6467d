package browserfarm_test

import (
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm"
)

// TestServerHTML: the server's own document comes from the browser's network layer decoded
// by its bytes, whatever the browser made of it: a UTF-8 page served as bare text/html
// whose first non-ASCII byte comes late is mojibake in the DOM and right in ServerHTML; real
// legacy pages read right in both.
func TestServerHTML(t *testing.T) {
	cases := []struct {
		page, snippet, serverCharset string
		misdecoded                   bool
	}{
		{"katholisch.at-alleinerziehende.html", "kostengünstigen, niederschwelligen und", "utf-8", true},
		{"publimetro.cl-ministra.html", "mayor celeridad posible”, añadió.", "utf-8", true},
		{"landwirt.com.sensortechnik.html", "b) Überwachung der somatischen Zellen", "windows-1252", false},
		{"rp.pl.unijne-fundusze.html", "Ciężar dyskusji przeniesie", "windows-1250", false},
	}
	for _, c := range cases {
		t.Run(c.page, func(t *testing.T) {
			res, err := do(t, browserfarm.Task{URL: env.URL("/recorded/" + c.page), ServerHTML: true})
			if err != nil {
				t.Fatal(err)
			}
			if res.ServerCharset != c.serverCharset || res.Misdecoded() != c.misdecoded {
				t.Errorf("server charset %q, browser's %q, misdecoded %v; want %q, misdecoded %v",
					res.ServerCharset, res.Charset, res.Misdecoded(), c.serverCharset, c.misdecoded)
			}
			if !strings.Contains(strings.Join(strings.Fields(res.ServerHTML), " "), c.snippet) {
				t.Errorf("server HTML lacks %q", c.snippet)
			}
			if strings.Contains(res.ServerHTML, "Ã") {
				t.Errorf("server HTML is mojibake")
			}
		})
	}
	// Only a task that asks for it gets the server's document.
	res, err := do(t, browserfarm.Task{URL: env.URL("/article")})
	if err != nil || res.ServerHTML != "" {
		t.Errorf("server HTML without asking: %v %d bytes", err, len(res.ServerHTML))
	}
}
