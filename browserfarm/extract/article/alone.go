package article

import (
	"net/url"
	"strings"

	readability "codeberg.org/readeck/go-readability/v2"
	trafilatura "github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"
)

// TrafilaturaAlone is go-trafilatura used the way its own evaluation uses it (fallback
// extractors on, tables kept, comments left out), with its own text output: the baseline the
// pipeline must beat.
func TrafilaturaAlone(page, pageURL string) (Content, error) {
	doc, u, err := parse(page, pageURL)
	if err != nil {
		return Content{}, err
	}
	res, err := trafilatura.ExtractDocument(doc, trafilaturaOptions(u, nil))
	if err != nil {
		return Content{Method: MethodTrafilatura}, err
	}
	md, err := toMarkdown(res.ContentNode, u)
	return Content{Title: res.Metadata.Title, Markdown: md, Text: res.ContentText, Method: MethodTrafilatura}, err
}

// ReadabilityAlone is readability (the readeck fork) by itself, with its own text rendering.
func ReadabilityAlone(page, pageURL string) (Content, error) {
	doc, u, err := parse(page, pageURL)
	if err != nil {
		return Content{}, err
	}
	art, err := readability.FromDocument(doc, u)
	if err != nil {
		return Content{Method: MethodReadability}, err
	}
	var b strings.Builder
	if art.Node != nil {
		if err := art.RenderText(&b); err != nil {
			return Content{}, err
		}
	}
	md, err := toMarkdown(art.Node, u)
	return Content{Title: art.Title(), Markdown: md, Text: b.String(), Method: MethodReadability}, err
}

func parse(page, pageURL string) (*html.Node, *url.URL, error) {
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return nil, nil, err
	}
	u, _ := url.Parse(pageURL)
	if u != nil && u.Host == "" {
		u = nil
	}
	return doc, u, nil
}
