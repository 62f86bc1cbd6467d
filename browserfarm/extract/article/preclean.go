package article

import (
	"strings"
	"unicode/utf8"

	"github.com/go-shiori/dom"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// chromeTokens are class or id words that name a zone which is never the text: consent
// banners, comment threads, wiki category and print footers. Both libraries look for some of
// them; removing them before either runs keeps a short page's extractor from settling on
// them, and keeps readers' comments out of an article (trafilatura keeps a thread that is
// marked up like the post).
var chromeTokens = map[string]bool{
	"cookie": true, "cookies": true, "cookie-banner": true, "cookie-consent": true, "consent": true,
	"gdpr": true, "comments": true, "comment-list": true, "commentlist": true, "comments-area": true,
	"comment-respond": true, "disqus_thread": true, "catlinks": true, "printfooter": true,
	// Sharing, liking and related-post widgets of the common publishing platforms (WordPress
	// and Jetpack, Blogger, share-button plugins), author boxes and newsletter boxes.
	"sharedaddy": true, "sd-sharing-enabled": true, "jp-relatedposts": true, "wpl-likebox": true,
	"yarpp-related": true, "related-posts": true, "relatedposts": true, "social-share": true,
	"share-buttons": true, "sharing-buttons": true, "shariff": true, "addtoany_share_save_container": true,
	"author-box": true, "about-author": true, "author-bio": true, "newsletter-signup": true,
	"breadcrumb": true, "breadcrumbs": true,
}

var chromeRoles = map[string]bool{"dialog": true, "alertdialog": true}

// preclean removes the chrome zones from the document, in place.
func preclean(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if c.Type == html.ElementNode && isChrome(c) {
			n.RemoveChild(c)
		} else {
			preclean(c)
		}
		c = next
	}
}

func isChrome(n *html.Node) bool {
	// A ruby annotation (<rt>, and the <rp> parentheses around it) is a reading aid printed
	// over the base text, not text: kept, it splits every annotated word in two.
	if n.DataAtom == atom.Rt || n.DataAtom == atom.Rp {
		return true
	}
	if n.DataAtom == atom.Body || n.DataAtom == atom.Html || n.DataAtom == atom.Main || n.DataAtom == atom.Article {
		return false
	}
	if isCaption(n) {
		return true
	}
	if isAside(n) {
		return true
	}
	if chromeRoles[attr(n, "role")] || attr(n, "aria-modal") == "true" {
		return true
	}
	for _, w := range strings.Fields(names(n)) {
		if chromeTokens[w] {
			return true
		}
	}
	return false
}

// restorePre puts back the original preformatted blocks that an extractor flattened
// (trafilatura writes a <pre> as one line of inline code), so code keeps its lines.
func restorePre(content, doc *html.Node) {
	originals := map[string]*html.Node{}
	for _, p := range findAll(doc, func(n *html.Node) bool { return n.DataAtom == atom.Pre }, nil) {
		originals[collapse(textOf(p))] = p
	}
	if len(originals) == 0 {
		return
	}
	for _, c := range findAll(content, func(n *html.Node) bool {
		return n.DataAtom == atom.Pre || n.DataAtom == atom.Code
	}, nil) {
		if o, ok := originals[collapse(textOf(c))]; ok && c.Parent != nil && o != c {
			c.Parent.InsertBefore(dom.Clone(o, true), c)
			c.Parent.RemoveChild(c)
		}
	}
}

// captionWords name, inside a class or id, the text that goes with an image rather than with
// the article: its caption and its credit line ("wp-caption-text", "image-credit",
// "photo-copyright"). A caption describes a picture the markdown does not carry, and credit
// lines are agency names; trafilatura's evaluation set lists them as text to leave out far
// more often than as text to keep.
var captionWords = []string{"caption", "credit", "copyright"}

// maxCaption is the longest caption dropped: past it the block is text that a template
// happens to mark up as a caption.
const maxCaption = 400

func isCaption(n *html.Node) bool {
	return (n.DataAtom == atom.Figcaption || namedWith(n, captionWords)) && shorterThan(n, maxCaption)
}

// asideWords name, inside a class or id, boxes that templates put inside the article's own
// container, where an extractor takes them for text: the author's box and byline, rating
// widgets, embedded posts from other sites, subscription boxes, affiliate and sponsorship
// disclosures, and WordPress's sidebar widgets ("widget_text", "widget_categories"). Most
// are in trafilatura's own discard list (contains(@class, "author"), "rating", "embed",
// "widget", "newsletter"), which go-trafilatura does not apply to the readability candidate
// it may choose instead of its own.
var asideWords = []string{"author", "rating", "embed", "subscribe", "disclos", "disclaim", "affiliate", "widget_"}

// maxAside is the most text such a box may hold and still be dropped: past it the class
// names a wrapper of the text ("author-content", "post-with-rating").
const maxAside = 1000

func isAside(n *html.Node) bool { return namedWith(n, asideWords) && shorterThan(n, maxAside) }

// names is n's class and id, lower-cased: the chrome tokens are whole words of it, the
// caption and aside words parts of a word.
func names(n *html.Node) string { return strings.ToLower(attr(n, "class") + " " + attr(n, "id")) }

// namedWith reports whether n's class or id contains one of the words.
func namedWith(n *html.Node, words []string) bool {
	all := names(n)
	for _, w := range words {
		if strings.Contains(all, w) {
			return true
		}
	}
	return false
}

func shorterThan(n *html.Node, most int) bool {
	return utf8.RuneCountInString(collapse(textOf(n))) <= most
}
