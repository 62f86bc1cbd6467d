package article_test

import (
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm/extract/article"
)

// TestExtractBest: the choice between the rendered DOM and the server's HTML, on pages
// written for this test (the real cases run through the farm in api/routes/web).
func TestExtractBest(t *testing.T) {
	article1 := `<p>The regional operator will run a sleeper service between the capital and the coast every Friday and Saturday from June, eleven years after the last night train on the line was withdrawn.</p>
<p>The carriages, bought second-hand and refitted in the city's own workshops, have four-berth compartments and a small bar coach; the first tickets go on sale on the first of May.</p>`
	page := func(main string) string {
		return `<!doctype html><html lang="en"><head><title>Night trains</title></head><body><nav><a href="/">Home</a></nav><main><article><h1>Night trains</h1>` +
			main + `</article></main><footer>Legal notice</footer></body></html>`
	}
	shell := `<!doctype html><html><head><title>App</title></head><body><div id="root"></div><script src="/app.js"></script></body></html>`
	mojibake := strings.NewReplacer("'", "â€™").Replace(article1)
	cases := []struct {
		name       string
		rendered   string
		server     string
		misdecoded bool
		source     string
		text       string
	}{
		{"same_article_keeps_the_dom", page(article1 + `<p>Comments loaded by a script: 3</p>`), page(article1), false, article.SourceRendered, "Comments loaded by a script"},
		{"built_by_script_keeps_the_dom", page(article1), shell, false, article.SourceRendered, "four-berth compartments"},
		{"replaced_by_an_error_page", page(`<p>This page is not available right now. Please try again later.</p>`), page(article1), false, article.SourceServer, "four-berth compartments"},
		{"misdecoded_dom", page(mojibake), page(article1), true, article.SourceServer, "city's own workshops"},
		{"no_server_html", page(article1), "", false, article.SourceRendered, "four-berth compartments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := article.ExtractBest(article.Sources{
				Rendered:           article.Page{HTML: c.rendered, ContentType: "text/html", URL: "https://example.org/night-trains"},
				Server:             c.server,
				RenderedMisdecoded: c.misdecoded,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got.Source != c.source || !strings.Contains(got.Text, c.text) {
				t.Errorf("source %q (want %q), text %q lacks %q", got.Source, c.source, got.Text, c.text)
			}
		})
	}
}
