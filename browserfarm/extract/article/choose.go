package article

import (
	"encoding/json"
	"net/url"
	"strings"
	"unicode/utf8"

	readability "codeberg.org/readeck/go-readability/v2"
	"codeberg.org/readeck/go-readability/v2/render"
	"github.com/go-shiori/dom"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// candidate is one extractor's idea of the main content.
type candidate struct {
	method string
	node   *html.Node
	text   string
}

func newCandidate(method string, n *html.Node) candidate {
	if n == nil {
		return candidate{method: method}
	}
	return candidate{method: method, node: n, text: strings.TrimSpace(render.InnerText(n))}
}

func (c candidate) size() int { return utf8.RuneCountInString(c.text) }

func runReadability(doc *html.Node, u *url.URL) candidate {
	art, err := readability.FromDocument(doc, u)
	if err != nil {
		return candidate{method: MethodReadability}
	}
	return newCandidate(MethodReadability, art.Node)
}

// trafilaturaOptions are the options of both the pipeline and the bench's baseline: tables
// kept, comments left out (as trafilatura's own evaluation does), no date search (the
// content does not need it and it is the slowest part). Links are not kept: with them,
// trafilatura's link-density rules drop more of the text (0.3 point of F-score on its own
// evaluation set); the links of a page are the /v1/links route's job.
func trafilaturaOptions(u *url.URL, fallback *html.Node) trafilatura.Options {
	o := trafilatura.Options{OriginalURL: u, EnableFallback: true, ExcludeComments: true,
		HtmlDateMode: trafilatura.Disabled}
	if fallback != nil {
		o.FallbackCandidates = &trafilatura.FallbackCandidates{Readability: fallback}
	}
	return o
}

func runTrafilatura(doc *html.Node, u *url.URL, fallback *html.Node) candidate {
	res, err := trafilatura.ExtractDocument(doc, trafilaturaOptions(u, fallback))
	if err != nil || res == nil {
		return candidate{method: MethodTrafilatura}
	}
	return newCandidate(MethodTrafilatura, res.ContentNode)
}

// minContent is the least text trusted as a page's main content.
const minContent = 250

// choose runs the candidates on the (signal-cleaned) document and picks one.
func choose(doc *html.Node, u *url.URL, ldBody string) candidate {
	rd := runReadability(doc, u)
	var rdClone *html.Node
	if rd.node != nil {
		rdClone = dom.Clone(rd.node, true)
	}
	tr := runTrafilatura(doc, u, rdClone)
	cands := []candidate{tr, rd}
	if lm := landmark(doc); lm.node != nil {
		cands = append(cands, lm)
	}
	if utf8.RuneCountInString(ldBody) >= minContent {
		return arbitrate(cands, ldBody)
	}
	// trafilatura has already compared itself with readability and DOM distiller. On a
	// short page it falls back to the raw body text, title and chrome included, so the
	// landmark, or else the body without its chrome, is better.
	if tr.size() < minContent {
		if lm := cands[len(cands)-1]; lm.method == MethodLandmark && lm.size() > 0 {
			return lm
		}
		if b := baseline(doc); b.size() > 0 {
			return b
		}
	}
	for _, c := range []candidate{tr, rd} {
		if c.size() > 0 {
			return c
		}
	}
	return baseline(doc)
}

// arbitrate uses the page's own statement of its text (JSON-LD articleBody): trafilatura's
// choice stands unless it covers less than half of that text and another candidate covers
// most of it; when none does, the statement itself is the content.
func arbitrate(cands []candidate, ldBody string) candidate {
	tr := cands[0]
	if coverage(tr.text, ldBody) >= 0.5 {
		return tr
	}
	best, bestC := tr, 0.0
	for _, c := range cands[1:] {
		if cv := coverage(c.text, ldBody); cv > bestC {
			best, bestC = c, cv
		}
	}
	if bestC >= 0.8 {
		return best
	}
	if coverage(tr.text, ldBody) < 0.2 {
		return textCandidate(MethodJSONLD, ldBody)
	}
	return tr
}

// landmark is the page's one <article>, or its <main>, without its boilerplate zones.
func landmark(doc *html.Node) candidate {
	arts := findAll(doc, func(n *html.Node) bool { return n.DataAtom == atom.Article }, nil)
	var n *html.Node
	if len(arts) == 1 {
		n = arts[0]
	} else if m := find(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Main || attr(n, "role") == "main"
	}); m != nil {
		n = m
	}
	if n == nil {
		return candidate{method: MethodLandmark}
	}
	n = dom.Clone(n, true)
	strip(n)
	return newCandidate(MethodLandmark, n)
}

// baseline is the body without its boilerplate zones: never the raw whole page.
func baseline(doc *html.Node) candidate {
	b := find(doc, func(n *html.Node) bool { return n.DataAtom == atom.Body })
	if b == nil {
		return candidate{method: MethodBaseline}
	}
	b = dom.Clone(b, true)
	strip(b)
	return newCandidate(MethodBaseline, b)
}

var boilerTags = map[atom.Atom]bool{atom.Script: true, atom.Style: true, atom.Noscript: true,
	atom.Template: true, atom.Svg: true, atom.Iframe: true, atom.Header: true, atom.Footer: true,
	atom.Nav: true, atom.Aside: true, atom.Form: true, atom.Button: true, atom.Select: true}

var boilerRoles = map[string]bool{"navigation": true, "banner": true, "contentinfo": true,
	"complementary": true, "dialog": true, "alertdialog": true, "search": true}

// strip removes the zones that are never main content, in place.
func strip(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && (boilerTags[c.DataAtom] || boilerRoles[attr(c, "role")] || attr(c, "aria-hidden") == "true") {
			n.RemoveChild(c)
		} else if c.Type == html.CommentNode {
			n.RemoveChild(c)
		} else {
			strip(c)
		}
		c = next
	}
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

// textCandidate makes paragraphs of plain text.
func textCandidate(method, text string) candidate {
	div := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	for _, para := range strings.Split(text, "\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		p := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
		p.AppendChild(&html.Node{Type: html.TextNode, Data: para})
		div.AppendChild(p)
	}
	return newCandidate(method, div)
}

// articleBody is the longest articleBody (or text) of the page's JSON-LD articles.
func articleBody(doc *html.Node) string {
	best := ""
	for _, s := range findAll(doc, func(n *html.Node) bool {
		return n.DataAtom == atom.Script && strings.EqualFold(strings.TrimSpace(attr(n, "type")), "application/ld+json")
	}, nil) {
		var v any
		if s.FirstChild == nil || json.Unmarshal([]byte(s.FirstChild.Data), &v) != nil {
			continue
		}
		walkLD(v, func(body string) {
			if len(body) > len(best) {
				best = body
			}
		})
	}
	return html.UnescapeString(strings.TrimSpace(best))
}

func walkLD(v any, found func(string)) {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			walkLD(e, found)
		}
	case map[string]any:
		if b, ok := t["articleBody"].(string); ok {
			found(b)
		}
		for k, e := range t {
			if k == "@graph" || k == "mainEntity" || k == "mainEntityOfPage" {
				walkLD(e, found)
			}
		}
	}
}

// coverage is the share of the reference's words found in the candidate (as bags).
func coverage(cand, ref string) float64 {
	cw, rw := strings.Fields(strings.ToLower(cand)), strings.Fields(strings.ToLower(ref))
	if len(rw) == 0 {
		return 0
	}
	bag := map[string]int{}
	for _, w := range cw {
		bag[w]++
	}
	found := 0
	for _, w := range rw {
		if bag[w] > 0 {
			bag[w]--
			found++
		}
	}
	return float64(found) / float64(len(rw))
}
