// Package article finds a rendered page's main content and writes it as markdown. It combines
// what the two open extractors do best with what only a browser knows:
//
//   - go-trafilatura chooses the content on most pages (best on news, blogs, documentation);
//   - readability (the readeck fork) is its fallback candidate, and wins where trafilatura
//     keeps too little;
//   - the browser's layout signals drop what a reader never sees (hidden subtrees) or sees
//     pinned over the page (fixed overlays: cookie banners, bars, modals) before
//     either extractor reads the DOM;
//   - the page's own JSON-LD articleBody arbitrates between the candidates when present, and
//     a lone <article> or <main> landmark is a third candidate.
//
// The chosen subtree is written as markdown with its headings, lists, tables and code
// blocks; its plain text is returned too, for scoring and word counts.
package article

import (
	"errors"
	"regexp"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Methods name the candidate that supplied the content.
const (
	MethodTrafilatura = "trafilatura"
	MethodReadability = "readability"
	MethodLandmark    = "landmark"
	MethodJSONLD      = "json-ld"
	MethodBaseline    = "boilerplate-stripped"
	MethodText        = "text"
)

// Signals are what the browser saw of the page's layout, by element index in document order
// (the <html> element is 0). Elements must equal the number of elements of the serialised
// HTML once parsed, or the signals are ignored: a mismatch means the parser rebuilt the tree
// differently from the browser, and indices would point at the wrong nodes.
type Signals struct {
	Elements int
	// Hidden are the outermost elements not rendered (display:none, visibility:hidden,
	// hidden attribute, zero-size clipped boxes).
	Hidden []int
	// Pinned are the outermost elements positioned fixed (the farm reports no sticky
	// element: it looks only at elements without an offsetParent).
	Pinned []int
}

// Page is a rendered page.
type Page struct {
	HTML        string
	ContentType string
	Text        string // the browser's innerText, used for text/plain documents
	URL         string
	Signals     *Signals
}

// Content is a page's main content.
type Content struct {
	Title    string
	Markdown string
	Text     string
	Method   string
	// Source is the reading of the page the content came from (ExtractBest): SourceRendered
	// or SourceServer; "" from Extract, which reads one document.
	Source string
}

// ErrNoHTML is returned for an empty document.
var ErrNoHTML = errors.New("article: empty document")

// Extract finds the main content of a rendered page.
func Extract(p Page) (Content, error) {
	if p.ContentType == "text/plain" {
		t := strings.TrimSpace(p.Text)
		return Content{Markdown: t, Text: t, Method: MethodText}, nil
	}
	if strings.TrimSpace(p.HTML) == "" {
		return Content{}, ErrNoHTML
	}
	doc, u, err := parse(p.HTML, p.URL)
	if err != nil {
		return Content{}, err
	}
	title := titleOf(doc)
	body := articleBody(doc)
	applySignals(doc, p.Signals)
	preclean(doc)
	c := choose(doc, u, body)
	if c.node != nil {
		restorePre(c.node, doc)
		prune(c.node)
		c = newCandidate(c.method, c.node)
	}
	md, err := toMarkdown(c.node, u)
	if err != nil {
		return Content{}, err
	}
	return Content{Title: title, Markdown: md, Text: c.text, Method: c.method}, nil
}

func titleOf(doc *html.Node) string {
	if t := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Title }); t != nil {
		return collapse(textOf(t))
	}
	return ""
}

var spaces = regexp.MustCompile(`\s+`)

func collapse(s string) string { return strings.TrimSpace(spaces.ReplaceAllString(s, " ")) }

// find is the first node in document order for which ok holds.
func find(n *html.Node, ok func(*html.Node) bool) *html.Node {
	if ok(n) {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, ok); f != nil {
			return f
		}
	}
	return nil
}

// findAll lists the nodes for which ok holds, not descending into a match.
func findAll(n *html.Node, ok func(*html.Node) bool, out []*html.Node) []*html.Node {
	if ok(n) {
		return append(out, n)
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		out = findAll(c, ok, out)
	}
	return out
}

// textOf is the concatenated text of n, skipping scripts and styles.
func textOf(n *html.Node) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style ||
			n.DataAtom == atom.Noscript || n.DataAtom == atom.Template):
			return
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if n.Type == html.ElementNode && blockTags[n.DataAtom] {
			b.WriteByte(' ')
		}
	}
	walk(n)
	return b.String()
}

var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Td: true, atom.Th: true, atom.Tr: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Br: true, atom.Pre: true, atom.Blockquote: true, atom.Section: true, atom.Article: true,
	atom.Dd: true, atom.Dt: true, atom.Figcaption: true, atom.Header: true, atom.Footer: true,
}
