package article

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"golang.org/x/net/html"
)

func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
}

var blankLines = regexp.MustCompile(`\n{3,}`)

// toMarkdown writes the subtree as markdown with links made absolute against u.
func toMarkdown(n *html.Node, u *url.URL) (string, error) {
	if n == nil {
		return "", nil
	}
	var opts []converter.ConvertOptionFunc
	if u != nil {
		opts = append(opts, converter.WithDomain(u.Scheme+"://"+u.Host))
	}
	md, err := newConverter().ConvertNode(n, opts...)
	if err != nil {
		return "", err
	}
	s := strings.ReplaceAll(string(md), "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(s, "\n\n")), nil
}
