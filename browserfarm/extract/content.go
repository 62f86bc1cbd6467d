// Package extract turns a rendered page (the HTML and visible text a browser returned) into
// the structured answers of the web routes: main content as markdown, links, metadata,
// JSON-LD, tables, headings, forms, navigation zones, contacts and prices. It is pure Go over
// the DOM (no browser), so every function is tested with golden files.
package extract

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/strikethrough"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/PuerkitoBio/goquery"
	readability "github.com/go-shiori/go-readability"
)

// Method names which extractor produced the markdown.
const (
	MethodReadability = "readability"
	MethodFallback    = "boilerplate-stripped"
	MethodText        = "text"
)

// Content is a page's main content.
type Content struct {
	Title    string
	Markdown string
	Method   string
}

// minReadable is the shortest readability result trusted as the main content; below it the
// extractor probably kept a fragment (a caption, a cookie notice) and the fallback is better.
const minReadable = 140

func newConverter() *converter.Converter {
	return converter.NewConverter(converter.WithPlugins(
		base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(), strikethrough.NewStrikethroughPlugin()))
}

// MainContent extracts the main content with readability and converts it to markdown.
// When readability finds nothing substantial it falls back to the page with its boilerplate
// zones (header, footer, nav, aside, forms, scripts, cookie banners) removed, never to the
// raw whole page. A text/plain document is returned as its text.
func MainContent(html, contentType, text, pageURL string) (Content, error) {
	u, _ := url.Parse(pageURL)
	if contentType == "text/plain" {
		return Content{Markdown: strings.TrimSpace(text), Method: MethodText}, nil
	}
	domain := ""
	if u != nil {
		domain = u.Scheme + "://" + u.Host
	}
	conv := newConverter()
	title := ""
	if doc, err := goquery.NewDocumentFromReader(strings.NewReader(html)); err == nil {
		title = strings.TrimSpace(doc.Find("title").First().Text())
	}
	art, err := readability.FromReader(strings.NewReader(html), u)
	if err == nil && utf8.RuneCountInString(strings.TrimSpace(art.TextContent)) >= minReadable {
		md, err := conv.ConvertString(art.Content, converter.WithDomain(domain))
		if err == nil && strings.TrimSpace(md) != "" {
			if title == "" {
				title = art.Title
			}
			return Content{Title: title, Markdown: tidy(md), Method: MethodReadability}, nil
		}
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		return Content{}, err
	}
	StripBoilerplate(doc.Selection)
	root := doc.Find("main, [role=main]").First()
	if root.Length() == 0 {
		root = doc.Find("article").First()
	}
	if root.Length() == 0 {
		root = doc.Find("body")
	}
	h, err := goquery.OuterHtml(root)
	if err != nil {
		return Content{}, err
	}
	md, err := conv.ConvertString(h, converter.WithDomain(domain))
	if err != nil {
		return Content{}, err
	}
	return Content{Title: title, Markdown: tidy(md), Method: MethodFallback}, nil
}

// boilerplate are the zones that are never main content.
const boilerplate = `script, style, noscript, template, svg, iframe, header, footer, nav, aside, form,
[role=navigation], [role=banner], [role=contentinfo], [role=complementary], [aria-hidden=true],
.cookie, .cookies, #cookie-banner, .cookie-banner, .consent, .newsletter, .advert, .ad, .ads,
.share, .social, .breadcrumb, .breadcrumbs, .sidebar, .menu, .modal, .popup`

// StripBoilerplate removes navigation, chrome and script zones in place.
func StripBoilerplate(s *goquery.Selection) {
	s.Find(boilerplate).Remove()
}

var blankLines = regexp.MustCompile(`\n{3,}`)

func tidy(md string) string {
	md = strings.ReplaceAll(md, "\r\n", "\n")
	return strings.TrimSpace(blankLines.ReplaceAllString(md, "\n\n"))
}

var spaces = regexp.MustCompile(`\s+`)

// Normalise collapses whitespace so that re-rendering the same content hashes the same.
func Normalise(s string) string {
	return strings.TrimSpace(spaces.ReplaceAllString(s, " "))
}

// Hash is the SHA-256 (hex) of the normalised text and its length in characters.
func Hash(s string) (string, int) {
	n := Normalise(s)
	sum := sha256.Sum256([]byte(n))
	return hex.EncodeToString(sum[:]), utf8.RuneCountInString(n)
}

// Words counts whitespace-separated words.
func Words(s string) int { return len(strings.Fields(s)) }

// Truncate cuts s to at most n characters without splitting a rune.
func Truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n])
}
