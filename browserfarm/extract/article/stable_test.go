package article_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/peage/appliance/browserfarm/extract/article"
	"github.com/peage/appliance/browserfarm/farmtest"
	"golang.org/x/net/html"
)

// TestBoilerplateDoesNotMoveContent: web.changed hashes this markdown, so chrome that
// changes between visits (counters, most-read lists, banners) must not reach it, and the
// same page must give the same bytes every time.
func TestBoilerplateDoesNotMoveContent(t *testing.T) {
	extract := func(b, v string) string {
		t.Helper()
		c, err := article.Extract(article.Page{HTML: fmt.Sprintf(farmtest.Boilerplate, b, v),
			ContentType: "text/html", URL: "https://example.org/works"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Markdown
	}
	base := extract("1", "1")
	cases := []struct {
		name, b, v string
		same       bool
	}{
		{"same_page_again", "1", "1", true},
		{"chrome_changed", "2", "1", true},
		{"text_changed", "1", "2", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := extract(c.b, c.v); (got == base) != c.same {
				t.Errorf("markdown equal = %v, want %v:\n%s\n---\n%s", got == base, c.same, base, got)
			}
		})
	}
	if strings.Contains(base, "Most read") || strings.Contains(base, "cookies") || !strings.Contains(base, "fish market gate") {
		t.Errorf("unexpected content:\n%s", base)
	}
}

// TestSignals: what the browser saw decides what a parser cannot: a modal whose stylesheet
// hides it and a bar pinned over the page are dropped, and indices that do not fit the
// parsed tree are ignored rather than applied to the wrong elements.
func TestSignals(t *testing.T) {
	page := read(t, "hidden-modal")
	modal, bar := indexOf(t, page, "modal"), indexOf(t, page, "promo-bar")
	count := modal
	cases := []struct {
		name      string
		signals   *article.Signals
		kept      []string
		forbidden []string
	}{
		{"none", nil, []string{"tidal turbine", "Join 40,000 readers", "Download our app"}, nil},
		{"hidden_and_pinned", &article.Signals{Elements: count.total, Hidden: []int{modal.at}, Pinned: []int{bar.at}},
			[]string{"tidal turbine", "second blade design"}, []string{"Join 40,000 readers", "Download our app"}},
		{"misaligned", &article.Signals{Elements: count.total + 1, Hidden: []int{modal.at}, Pinned: []int{bar.at}},
			[]string{"Join 40,000 readers", "Download our app"}, nil},
		{"content_never_dropped", &article.Signals{Elements: count.total, Hidden: []int{indexOf(t, page, "").main}},
			[]string{"tidal turbine"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := article.Extract(article.Page{HTML: page, ContentType: "text/html", URL: "https://example.org/t", Signals: c.signals})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range c.kept {
				if !strings.Contains(got.Markdown, s) {
					t.Errorf("missing %q:\n%s", s, got.Markdown)
				}
			}
			for _, s := range c.forbidden {
				if strings.Contains(got.Markdown, s) {
					t.Errorf("kept %q:\n%s", s, got.Markdown)
				}
			}
		})
	}
}

type position struct{ at, total, main int }

// indexOf numbers the elements in document order as the browser does, and finds the
// element with the id (and the <main>).
func indexOf(t *testing.T, page, id string) position {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	p := position{at: -1, main: -1}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if a.Key == "id" && a.Val == id {
					p.at = p.total
				}
			}
			if n.Data == "main" {
				p.main = p.total
			}
			p.total++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return p
}
