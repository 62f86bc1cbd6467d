package article

import (
	"unicode/utf8"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// maxDropShare bounds what one layout signal may remove: a hidden or pinned subtree holding
// most of the page's text is the page (an app shell, content revealed by a script that did
// not run), not an overlay.
const maxDropShare = 0.4

// maxHidden is the most text a hidden subtree may hold and still be dropped: modals, menus
// and tooltips are short, while a long hidden block is folded text (a tab, a "read more")
// that belongs to the page.
const maxHidden = 300

// applySignals removes the hidden and pinned subtrees the browser reported, when the
// indices fit the parsed tree.
func applySignals(doc *html.Node, s *Signals) {
	if s == nil || len(s.Hidden)+len(s.Pinned) == 0 {
		return
	}
	var elems []*html.Node
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			elems = append(elems, n)
			if n.DataAtom == atom.Template {
				return // the browser keeps a template's content out of the document
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if len(elems) != s.Elements {
		return
	}
	total := utf8.RuneCountInString(collapse(textOf(doc)))
	var drop []*html.Node
	for k, list := range [][]int{s.Hidden, s.Pinned} {
		for _, i := range list {
			if i <= 0 || i >= len(elems) {
				continue
			}
			n := elems[i]
			size := utf8.RuneCountInString(collapse(textOf(n)))
			if float64(size) > maxDropShare*float64(total) || (k == 0 && size > maxHidden) {
				continue
			}
			drop = append(drop, n)
		}
	}
	for _, n := range drop {
		if n.Parent != nil {
			n.Parent.RemoveChild(n)
		}
	}
}
