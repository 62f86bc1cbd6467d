package extract

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Parse reads rendered HTML into a document.
func Parse(html string) (*goquery.Document, error) {
	return goquery.NewDocumentFromReader(strings.NewReader(html))
}

// Resolve makes href absolute against base; it returns "" for hrefs that are not web or
// mail/phone links (javascript:, data:, empty fragments).
func Resolve(base *url.URL, href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") && len(href) == 1 {
		return ""
	}
	r, err := url.Parse(href)
	if err != nil {
		return ""
	}
	if base != nil {
		r = base.ResolveReference(r)
	}
	switch r.Scheme {
	case "http", "https", "mailto", "tel":
		return r.String()
	}
	return ""
}

// Link is one hyperlink.
type Link struct {
	Href string `json:"href"`
	Text string `json:"text"`
}

// Links returns the page's http(s) links, absolute, without fragments, deduplicated (the
// first non-empty text wins), split into the page's own host and the others.
func Links(doc *goquery.Document, pageURL string) (internal, external []Link) {
	base := baseURL(doc, pageURL)
	page, _ := url.Parse(pageURL)
	seen := map[string]int{} // href → index+1 in its list (negative for external)
	internal, external = []Link{}, []Link{}
	doc.Find("a[href], area[href]").Each(func(_ int, a *goquery.Selection) {
		href := Resolve(base, a.AttrOr("href", ""))
		u, err := url.Parse(href)
		if href == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			return
		}
		u.Fragment = ""
		href = u.String()
		text := Normalise(a.Text())
		if text == "" {
			text = Normalise(a.AttrOr("aria-label", a.AttrOr("title", a.Find("img").AttrOr("alt", ""))))
		}
		if i, ok := seen[href]; ok {
			switch {
			case i > 0 && internal[i-1].Text == "":
				internal[i-1].Text = text
			case i < 0 && external[-i-1].Text == "":
				external[-i-1].Text = text
			}
			return
		}
		if page != nil && sameHost(u.Host, page.Host) {
			internal = append(internal, Link{Href: href, Text: text})
			seen[href] = len(internal)
		} else {
			external = append(external, Link{Href: href, Text: text})
			seen[href] = -len(external)
		}
	})
	return internal, external
}

// sameHost treats www.example.org and example.org as one site.
func sameHost(a, b string) bool {
	a, b = strings.TrimPrefix(strings.ToLower(a), "www."), strings.TrimPrefix(strings.ToLower(b), "www.")
	return a == b
}

func baseURL(doc *goquery.Document, pageURL string) *url.URL {
	page, err := url.Parse(pageURL)
	if err != nil {
		return nil
	}
	if href, ok := doc.Find("base[href]").First().Attr("href"); ok {
		if b, err := url.Parse(href); err == nil {
			return page.ResolveReference(b)
		}
	}
	return page
}

// Meta is a page's metadata.
type Meta struct {
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Meta        map[string]string `json:"meta"`
	OpenGraph   map[string]string `json:"open_graph"`
	Twitter     map[string]string `json:"twitter"`
	Canonical   string            `json:"canonical"`
	Lang        string            `json:"lang"`
	Favicon     string            `json:"favicon"`
	JSONLD      []any             `json:"jsonLd"`
}

// PageMeta reads title, every named meta tag, Open Graph and Twitter cards, canonical,
// language, favicon and JSON-LD.
func PageMeta(doc *goquery.Document, pageURL string) Meta {
	base := baseURL(doc, pageURL)
	m := Meta{Meta: map[string]string{}, OpenGraph: OpenGraph(doc, base), Twitter: map[string]string{}}
	m.Title = Normalise(doc.Find("title").First().Text())
	doc.Find("meta").Each(func(_ int, s *goquery.Selection) {
		key := strings.ToLower(strings.TrimSpace(s.AttrOr("name", s.AttrOr("property", s.AttrOr("http-equiv", "")))))
		val, ok := s.Attr("content")
		if key == "" || !ok {
			return
		}
		val = strings.TrimSpace(val)
		if _, dup := m.Meta[key]; !dup {
			m.Meta[key] = val
		}
		if strings.HasPrefix(key, "twitter:") {
			m.Twitter[strings.TrimPrefix(key, "twitter:")] = val
		}
	})
	m.Description = m.Meta["description"]
	if m.Description == "" {
		m.Description = m.OpenGraph["description"]
	}
	if href, ok := doc.Find(`link[rel~="canonical"]`).First().Attr("href"); ok {
		m.Canonical = Resolve(base, href)
	}
	m.Lang = strings.TrimSpace(doc.Find("html").AttrOr("lang", ""))
	if m.Lang == "" {
		m.Lang = m.Meta["content-language"]
	}
	doc.Find("link[rel]").EachWithBreak(func(_ int, s *goquery.Selection) bool {
		rels := strings.Fields(strings.ToLower(s.AttrOr("rel", "")))
		if slices.Contains(rels, "icon") || slices.Contains(rels, "apple-touch-icon") {
			m.Favicon = Resolve(base, s.AttrOr("href", ""))
			return m.Favicon == ""
		}
		return true
	})
	if m.Favicon == "" && base != nil {
		// Browsers ask for /favicon.ico when the page declares none.
		m.Favicon = base.ResolveReference(&url.URL{Path: "/favicon.ico"}).String()
	}
	m.JSONLD, _ = JSONLD(doc)
	return m
}

// OpenGraph returns og:* properties (without the prefix), image URLs made absolute.
func OpenGraph(doc *goquery.Document, base *url.URL) map[string]string {
	og := map[string]string{}
	doc.Find(`meta[property^="og:"], meta[name^="og:"]`).Each(func(_ int, s *goquery.Selection) {
		key := strings.TrimPrefix(strings.ToLower(s.AttrOr("property", s.AttrOr("name", ""))), "og:")
		val := strings.TrimSpace(s.AttrOr("content", ""))
		if key == "" || val == "" {
			return
		}
		if key == "image" || key == "image:url" || key == "url" {
			if abs := Resolve(base, val); abs != "" {
				val = abs
			}
		}
		if _, dup := og[key]; !dup {
			og[key] = val
		}
	})
	return og
}

// JSONLD returns every parseable JSON-LD block (arrays flattened) and the sorted set of
// @type values found, including those inside @graph. Unparseable blocks are skipped.
func JSONLD(doc *goquery.Document) (blocks []any, types []string) {
	blocks = []any{}
	seen := map[string]bool{}
	var collect func(v any)
	collect = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			switch t := x["@type"].(type) {
			case string:
				seen[t] = true
			case []any:
				for _, e := range t {
					if s, ok := e.(string); ok {
						seen[s] = true
					}
				}
			}
			if g, ok := x["@graph"]; ok {
				collect(g)
			}
		case []any:
			for _, e := range x {
				collect(e)
			}
		}
	}
	doc.Find(`script[type="application/ld+json"]`).Each(func(_ int, s *goquery.Selection) {
		var v any
		if err := json.Unmarshal([]byte(strings.TrimSpace(s.Text())), &v); err != nil {
			return
		}
		if arr, ok := v.([]any); ok {
			blocks = append(blocks, arr...)
		} else {
			blocks = append(blocks, v)
		}
		collect(v)
	})
	for t := range seen {
		types = append(types, t)
	}
	slices.Sort(types)
	if types == nil {
		types = []string{}
	}
	return blocks, types
}
