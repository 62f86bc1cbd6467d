package article

import (
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// TestMarkdownOfMovedNodes: a subtree whose children's parent links point elsewhere (as an
// extractor leaves it after moving nodes) is still written, instead of panicking the
// converter's tree walk.
func TestMarkdownOfMovedNodes(t *testing.T) {
	other := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	root := &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div}
	p1 := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
	p1.AppendChild(&html.Node{Type: html.TextNode, Data: "First paragraph."})
	p2 := &html.Node{Type: html.ElementNode, Data: "p", DataAtom: atom.P}
	p2.AppendChild(&html.Node{Type: html.TextNode, Data: "Second paragraph."})
	root.AppendChild(p1)
	root.AppendChild(p2)
	p1.Parent, p2.Parent = other, nil // links left stale by a move
	md, err := toMarkdown(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := "First paragraph.\n\nSecond paragraph."; md != want {
		t.Errorf("markdown %q, want %q", md, want)
	}
}
