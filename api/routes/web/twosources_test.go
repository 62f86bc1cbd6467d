package web_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/peage/appliance/api/apitest"
	"github.com/peage/appliance/api/catalog"
	"github.com/peage/appliance/api/routes/web"
	"github.com/peage/appliance/browserfarm"
	"github.com/peage/appliance/browserfarm/extract"
	"github.com/peage/appliance/browserfarm/farmtest"
)

// TestExtractChoosesItsSource: /v1/extract reads both the rendered DOM and the server's own
// HTML and keeps the one that holds the page (issue 30). The recorded pages are real pages of
// trafilatura's evaluation set served as bare text/html (browserfarm/farmtest/recorded), with
// snippets of that set's annotations: UTF-8 pages the browser decodes as Windows-1252 are
// read from the server's HTML, without mojibake; real legacy pages still read right from the
// DOM; an article a script replaced by an error page is read from the server's HTML; a page
// built by script from the DOM.
func TestExtractChoosesItsSource(t *testing.T) {
	cases := []struct {
		page, source        string
		required, forbidden []string
	}{
		{"/recorded/katholisch.at-alleinerziehende.html", "server:",
			[]string{"anlässlich des internationalen", "kostengünstigen, niederschwelligen und", "Die Plattform für Alleinerziehende"},
			[]string{"Symposium des Akademikerverbands"}},
		{"/recorded/publimetro.cl-ministra.html", "server:",
			[]string{"a la denuncia que recae en contra", "en declaraciones a T13 Noche.", "mayor celeridad posible”, añadió."},
			[]string{"Síguenos en", "Lo Último"}},
		{"/recorded/landwirt.com.sensortechnik.html", "rendered:",
			[]string{"b) Überwachung der somatischen Zellen", "Wiederkauverhalten und Kotkonsistenz.", "Köllitsch (D)"},
			[]string{"Anzeigentarife", "weiterempfehlen"}},
		{"/recorded/rp.pl.unijne-fundusze.html", "rendered:",
			[]string{"To jest moment fundamentalny", "Ciężar dyskusji przeniesie", "Na lepszą konkurencyjność gospodarki"},
			[]string{"Licencja na publikację"}},
		{"/replaced-by-script", "server:",
			[]string{"four-berth compartments", "between 39 and 89 pounds"},
			[]string{"not available right now", "Legal notice"}},
		{"/js", "rendered:",
			[]string{"Rendered by JavaScript", "inserted by a script"}, nil},
	}
	for _, c := range cases {
		t.Run(strings.TrimPrefix(c.page, "/recorded/"), func(t *testing.T) {
			a, gate := call(t, "/v1/extract", map[string]any{"url": env.URL(c.page)})
			if a.status != 200 {
				t.Fatalf("status %d: %s", a.status, a.body)
			}
			if charged, _ := gate.Counts(); charged != 1 {
				t.Errorf("charged %d times", charged)
			}
			m := a.json(t)
			md, _ := m["markdown"].(string)
			flat := strings.Join(strings.Fields(md), " ")
			if ex, _ := m["extractor"].(string); !strings.HasPrefix(ex, c.source) {
				t.Errorf("extractor %q, want a reading of %q", ex, c.source)
			}
			for _, r := range c.required {
				if !strings.Contains(flat, r) {
					t.Errorf("markdown lacks %q", r)
				}
			}
			for _, f := range c.forbidden {
				if strings.Contains(flat, f) {
					t.Errorf("markdown holds %q", f)
				}
			}
			if strings.Contains(md, "Ã") || strings.Contains(md, "â€") {
				t.Errorf("mojibake in the markdown: %.300s", md)
			}
		})
	}
}

// TestChangedHashFollowsTheChoice: web.changed hashes the same markdown /v1/extract answers,
// from the same source, and the same page gives the same hash call after call.
func TestChangedHashFollowsTheChoice(t *testing.T) {
	for _, page := range []string{"/replaced-by-script", "/recorded/katholisch.at-alleinerziehende.html"} {
		a, _ := call(t, "/v1/extract", map[string]any{"url": env.URL(page)})
		md, _ := a.json(t)["markdown"].(string)
		want, _ := extract.Hash(md)
		for range 2 {
			c, _ := call(t, "/v1/web/changed", map[string]any{"url": env.URL(page)})
			if got := c.json(t)["content_sha256"]; got != want {
				t.Errorf("%s: changed hashes %v, extract's markdown hashes %s", page, got, want)
			}
		}
	}
}

// TestReadAtDeadlineIsChargedAndStruck: a page that rendered its article and never ends is
// answered at the job's deadline and charged (issue 30, item 3), and it is a strike against
// its caller like a page that rendered nothing and failed (docs/farm-sharing.md): both held a
// browser until the deadline.
func TestReadAtDeadlineIsChargedAndStruck(t *testing.T) {
	farm, err := farmtest.StartTuned(1, 0, func(cfg *browserfarm.Config) { cfg.JobTimeout = 4 * time.Second })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(farm.Close)
	cat, err := catalog.Default(catalog.DefaultNames())
	if err != nil {
		t.Fatal(err)
	}
	if err := web.With(farm.Farm, farm.Policy).Bind(cat); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		page    string
		status  int
		charged int
		strikes uint64
		text    string
	}{
		{"/hang-partial", 200, 1, 1, "the ferries will berth at the south quay"},
		{"/hang", 504, 0, 2, ""},
	}
	for _, c := range cases {
		gate := &apitest.RecordingGate{}
		h := apitest.Start(t, cat, apitest.Options{CheckShapes: true, Gate: gate})
		resp, err := h.Client.Post(h.BaseURL+"/v1/extract", "application/json", strings.NewReader(`{"url":"`+farm.URL(c.page)+`"}`))
		if err != nil {
			t.Fatal(err)
		}
		var body strings.Builder
		_, _ = io.Copy(&body, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.status || !strings.Contains(body.String(), c.text) {
			t.Errorf("%s: status %d %s", c.page, resp.StatusCode, body.String())
		}
		if charged, _ := gate.Counts(); charged != c.charged {
			t.Errorf("%s: charged %d times, want %d", c.page, charged, c.charged)
		}
		if s := farm.Farm.Stats(); s.Strikes != c.strikes {
			t.Errorf("%s: %d strikes, want %d", c.page, s.Strikes, c.strikes)
		}
	}
}

// TestPlainFetchDecodes: unblock's plain fetch (render=false) decodes the page's bytes the
// same way (it used to take them as UTF-8 whatever they were), and says its content is the
// server's document.
func TestPlainFetchDecodes(t *testing.T) {
	cases := []struct{ page, snippet string }{
		{"/recorded/landwirt.com.sensortechnik.html", "b) Überwachung der somatischen Zellen"},
		{"/recorded/katholisch.at-alleinerziehende.html", "kostengünstigen, niederschwelligen und"},
	}
	for _, c := range cases {
		a, _ := call(t, "/v1/unblock", map[string]any{"url": env.URL(c.page), "render": false})
		m := a.json(t)
		content, _ := m["content"].(string)
		if a.status != 200 || !strings.Contains(strings.Join(strings.Fields(content), " "), c.snippet) || strings.Contains(content, "\uFFFD") {
			t.Errorf("%s: status %d, content %.300q", c.page, a.status, content)
		}
		if ex, _ := m["extractor"].(string); !strings.HasPrefix(ex, "server:") {
			t.Errorf("%s: extractor %q", c.page, ex)
		}
	}
}
