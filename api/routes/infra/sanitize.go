package infra

import (
	"bytes"
	"html"
	"regexp"
	"strings"

	"github.com/microcosm-cc/bluemonday"
	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Page sanitising. A published page is static markup: it may not run code, submit forms, embed
// other documents, or make the browser fetch anything. Three layers:
//
//  1. bluemonday (an allow-list HTML sanitiser) keeps only text, structure, tables, lists,
//     links, images and inline SVG, with an allow-list of attributes; scripts, forms, iframes,
//     objects, meta, link, base and every event-handler attribute go;
//  2. a pass over the parsed result drops every URL that would be fetched (img src, SVG href,
//     srcset, url() in attributes) unless it is a data: image (or a #fragment in SVG), keeps
//     link targets to http, https, mailto and fragments, and filters every style attribute and
//     <style> sheet through sanitizeCSS;
//  3. the page is served with a Content-Security-Policy that forbids scripts, forms, frames and
//     every fetch except data: images and fonts (pageCSP), inside a CSP sandbox.

// pageCSP is the Content-Security-Policy of every published page.
const pageCSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; media-src 'none'; " +
	"script-src 'none'; object-src 'none'; frame-src 'none'; child-src 'none'; worker-src 'none'; connect-src 'none'; " +
	"manifest-src 'none'; form-action 'none'; base-uri 'none'; " +
	"sandbox allow-popups allow-popups-to-escape-sandbox allow-top-navigation-by-user-activation"

var policy = newPolicy()

var (
	textElements = strings.Fields(`h1 h2 h3 h4 h5 h6 p div span br hr b i u s em strong small big sub sup mark
		code pre kbd samp var tt blockquote q cite abbr acronym dfn time address section article header footer nav main
		aside figure figcaption details summary ul ol li dl dt dd table thead tbody tfoot tr th td caption colgroup col
		center del ins strike bdi bdo wbr ruby rt rp data meter progress hgroup search`)
	// SVG elements, as the tokenizer lower-cases them; the browser's parser restores the case.
	svgElements = strings.Fields(`svg g path circle rect line polyline polygon ellipse text tspan textpath defs
		lineargradient radialgradient stop title desc symbol use image clippath mask pattern marker filter
		fegaussianblur feoffset feblend fecolormatrix fecomposite feflood femerge femergenode fedropshadow
		femorphology feturbulence fedisplacementmap fecomponenttransfer fefunca fefuncb fefuncg fefuncr
		switch metadata`)
	svgAttrs = strings.Fields(`viewbox preserveaspectratio xmlns xmlns:xlink version x y x1 x2 y1 y2 cx cy r rx ry
		fx fy fr d points width height transform fill fill-opacity fill-rule stroke stroke-width stroke-opacity
		stroke-linecap stroke-linejoin stroke-dasharray stroke-dashoffset stroke-miterlimit opacity
		font-family font-size font-weight font-style text-anchor dominant-baseline alignment-baseline
		letter-spacing word-spacing text-decoration dx dy rotate textlength lengthadjust offset stop-color stop-opacity
		gradientunits gradienttransform spreadmethod patternunits patterncontentunits patterntransform
		clip-path clip-rule clippathunits mask maskunits maskcontentunits marker-start marker-mid marker-end
		markerwidth markerheight markerunits refx refy orient filter filterunits primitiveunits in in2 result
		stddeviation mode operator k1 k2 k3 k4 values type tablevalues slope intercept amplitude exponent
		basefrequency numoctaves seed stitchtiles scale xchannelselector ychannelselector radius
		flood-color flood-opacity color visibility display overflow vector-effect shape-rendering
		paint-order pathlength startoffset method spacing href xlink:href`)
)

func newPolicy() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements(textElements...)
	p.AllowElements(svgElements...)
	p.AllowElements("a", "img")
	p.AllowAttrs("style", "class", "id", "title", "lang", "dir", "align", "valign", "role", "hidden",
		"width", "height", "colspan", "rowspan", "headers", "scope", "span", "start", "reversed", "type",
		"value", "min", "max", "low", "high", "optimum", "datetime", "open", "cite",
		"bgcolor", "border", "cellpadding", "cellspacing", "color", "face", "size", "nowrap").Globally()
	p.AllowAttrs("aria-label", "aria-hidden", "aria-describedby", "aria-labelledby").Globally()
	p.AllowDataAttributes()
	p.AllowAttrs("href", "name", "target").OnElements("a")
	p.AllowAttrs("src", "alt", "loading", "decoding").OnElements("img")
	p.AllowAttrs(svgAttrs...).OnElements(svgElements...)
	// Links may go anywhere the reader chooses to click; every fetched URL is restricted later.
	p.AllowURLSchemes("http", "https", "mailto")
	p.AllowRelativeURLs(true)
	p.AllowDataURIImages()
	p.RequireNoReferrerOnLinks(true)
	p.RequireNoFollowOnLinks(true)
	return p
}

// maxStyleBytes bounds the style sheets gathered from the input.
const maxStyleBytes = 200 << 10

// SanitizePage turns untrusted HTML (a fragment or a whole document) into a complete, inert
// HTML document with the given title, noindex, and only static content.
func SanitizePage(input, title string) string {
	sheets, body := splitDocument(input)
	clean := policy.Sanitize(body)
	clean = postProcess(clean)
	var css strings.Builder
	for _, s := range sheets {
		if css.Len()+len(s) > maxStyleBytes {
			break
		}
		css.WriteString(sanitizeCSS(s))
		css.WriteByte('\n')
	}
	var b strings.Builder
	b.WriteString("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">\n")
	b.WriteString("<meta name=\"robots\" content=\"noindex, nofollow, noarchive\">\n")
	b.WriteString("<meta name=\"referrer\" content=\"no-referrer\">\n")
	b.WriteString("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	b.WriteString("<title>" + html.EscapeString(title) + "</title>\n")
	if strings.TrimSpace(css.String()) != "" {
		b.WriteString("<style>\n" + css.String() + "</style>\n")
	}
	b.WriteString("</head><body>\n")
	b.WriteString(clean)
	b.WriteString("\n</body></html>\n")
	return b.String()
}

// splitDocument parses the input as a browser would, takes out its <style> sheets (anywhere in
// the document) and returns them with the markup of the body. Everything else in <head>
// (meta, link, base, script, title) is dropped.
func splitDocument(input string) (sheets []string, body string) {
	doc, err := xhtml.Parse(strings.NewReader(input))
	if err != nil {
		return nil, ""
	}
	var bodyNode *xhtml.Node
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if c.Type == xhtml.ElementNode && c.DataAtom == atom.Style && c.Namespace == "" {
				var t strings.Builder
				for tc := c.FirstChild; tc != nil; tc = tc.NextSibling {
					if tc.Type == xhtml.TextNode {
						t.WriteString(tc.Data)
					}
				}
				sheets = append(sheets, t.String())
				n.RemoveChild(c)
			} else {
				if c.Type == xhtml.ElementNode && c.DataAtom == atom.Body && c.Namespace == "" && bodyNode == nil {
					bodyNode = c
				}
				walk(c)
			}
			c = next
		}
	}
	walk(doc)
	if bodyNode == nil {
		return sheets, ""
	}
	var buf bytes.Buffer
	for c := bodyNode.FirstChild; c != nil; c = c.NextSibling {
		_ = xhtml.Render(&buf, c)
	}
	return sheets, buf.String()
}

var fragmentURL = regexp.MustCompile(`^\s*url\(\s*['"]?#[A-Za-z0-9_.:-]+['"]?\s*\)\s*$`)

// postProcess parses the sanitiser's output and enforces the fetch rules on what is left.
func postProcess(clean string) string {
	ctx := &xhtml.Node{Type: xhtml.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := xhtml.ParseFragment(strings.NewReader(clean), ctx)
	if err != nil {
		return ""
	}
	var fix func(n *xhtml.Node) *xhtml.Node
	fix = func(n *xhtml.Node) *xhtml.Node {
		if n.Type == xhtml.ElementNode {
			n.Attr = filterAttrs(n)
			if n.Data == "img" && n.Namespace == "" && attr(n, "src") == "" {
				// An image whose only source was remote: show its alt text, not a broken image.
				return &xhtml.Node{Type: xhtml.TextNode, Data: attr(n, "alt")}
			}
		}
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			if r := fix(c); r != c {
				n.InsertBefore(r, c)
				n.RemoveChild(c)
			}
			c = next
		}
		return n
	}
	var buf bytes.Buffer
	for _, n := range nodes {
		_ = xhtml.Render(&buf, fix(n))
	}
	return buf.String()
}

func filterAttrs(n *xhtml.Node) []xhtml.Attribute {
	out := n.Attr[:0]
	isLink := n.Data == "a"
	for _, a := range n.Attr {
		key := strings.ToLower(a.Key)
		val := a.Val
		switch {
		case strings.HasPrefix(key, "on"):
			continue // never an event handler (bluemonday removed them already)
		case key == "style":
			val = strings.TrimSpace(sanitizeCSS(val))
			if val == "" {
				continue
			}
		case key == "href" && isLink && a.Namespace == "":
			if !allowedLink(val) {
				continue
			}
		case key == "rel" || key == "target":
			if isLink {
				continue // set below
			}
		case key == "href" || key == "src":
			// Fetched: SVG <image>/<use> href, <img> src. data: images or local fragments only.
			l := strings.ToLower(strings.TrimSpace(val))
			if !(strings.HasPrefix(l, "data:image/") || (strings.HasPrefix(l, "#") && n.Data != "image" && n.Data != "img")) {
				continue
			}
		case key == "srcset" || key == "background" || key == "poster" || key == "lowsrc" || key == "dynsrc" || key == "ping":
			continue
		case strings.Contains(strings.ToLower(val), "url("):
			// SVG paint and reference attributes: fill="url(#g)" only.
			if !fragmentURL.MatchString(val) {
				continue
			}
		}
		a.Val = val
		out = append(out, a)
	}
	if isLink {
		kept := out[:0]
		for _, a := range out {
			if a.Key != "rel" && a.Key != "target" {
				kept = append(kept, a)
			}
		}
		out = append(kept, xhtml.Attribute{Key: "rel", Val: "nofollow noreferrer noopener"}, xhtml.Attribute{Key: "target", Val: "_blank"})
	}
	return out
}

func attr(n *xhtml.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func allowedLink(v string) bool {
	l := strings.ToLower(strings.TrimSpace(v))
	if strings.HasPrefix(l, "#") {
		return true
	}
	for _, p := range []string{"http://", "https://", "mailto:"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}
