package article

import (
	"net/url"
	"regexp"
	"strings"

	"codeberg.org/readeck/go-readability/v2/render"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/go-shiori/dom"
	"golang.org/x/net/html"
)

func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// toMarkdown writes the subtree as markdown with links made absolute against u. The
// extractors move nodes between trees and may leave a node whose parent or sibling links do
// not match its place, on which the converter's tree walk panics: the subtree is written from
// a fresh copy, and a converter failure still answers with the text.
func toMarkdown(n *html.Node, u *url.URL) (md string, err error) {
	if n == nil {
		return "", nil
	}
	defer func() {
		if r := recover(); r != nil {
			md, err = collapse(render.InnerText(n)), nil
		}
	}()
	n = dom.Clone(n, true)
	var opts []converter.ConvertOptionFunc
	if u != nil {
		opts = append(opts, converter.WithDomain(u.Scheme+"://"+u.Host))
	}
	out, err := newConverter().ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	s := strings.ReplaceAll(string(out), "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n")), nil
}
