// Package rss is the connector of the newsrooms' syndication feeds (RSS 2.0 or Atom), one
// registry row per newsroom so that each has its own host, bucket and breaker. Items come back
// in one shape whatever the format.
package rss

import (
	"bytes"
	"context"
	"encoding/xml"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/peage/appliance/api/upstream"
	"github.com/peage/appliance/api/upstream/httpc"
)

// Feed is one newsroom: its registry name (the host is the registry's base URL) and the path
// of its feed.
type Feed struct {
	Source string // short name shown in answers: coindesk, cointelegraph, decrypt, theblock
	Name   string // registry name
	Path   string
	// AuthorPrefix is the newsroom's own name its feed puts before each author
	// (Cointelegraph's dc:creator reads "Cointelegraph by Nate Kostar"), removed from authors.
	AuthorPrefix string
}

// Newsrooms are the four feeds the research names.
var Newsrooms = []Feed{
	{Source: "coindesk", Name: "coindesk-rss", Path: "/arc/outboundfeeds/rss/"},
	{Source: "cointelegraph", Name: "cointelegraph-rss", Path: "/rss", AuthorPrefix: "Cointelegraph by "},
	{Source: "decrypt", Name: "decrypt-rss", Path: "/feed"},
	{Source: "theblock", Name: "theblock-rss", Path: "/rss.xml"},
}

// Item is one article.
type Item struct {
	Title      string
	Link       string
	GUID       string
	Published  time.Time // zero when the feed gives no readable date
	Summary    string    // text, HTML removed
	Authors    []string
	Categories []string
}

type rssDoc struct {
	Channel struct {
		Items []struct {
			// Namespaced elements of the same local name (dc:description, media:title,
			// atom:link) match these too: plain picks the RSS one.
			Title       []nsText `xml:"title"`
			Link        []nsText `xml:"link"`
			GUID        string   `xml:"guid"`
			PubDate     string   `xml:"pubDate"`
			Description []nsText `xml:"description"`
			Creators    []string `xml:"http://purl.org/dc/elements/1.1/ creator"`
			Author      string   `xml:"author"`
			Categories  []string `xml:"category"`
		} `xml:"item"`
	} `xml:"channel"`
}

// nsText is an element's text with its namespace.
type nsText struct {
	XMLName xml.Name
	Text    string `xml:",chardata"`
}

// plain is the text of the first element without a namespace (RSS 2.0's own), else "".
func plain(xs []nsText) string {
	for _, x := range xs {
		if x.XMLName.Space == "" {
			return x.Text
		}
	}
	return ""
}

type atomDoc struct {
	Entries []struct {
		Title string `xml:"title"`
		ID    string `xml:"id"`
		Links []struct {
			Href string `xml:"href,attr"`
			Rel  string `xml:"rel,attr"`
		} `xml:"link"`
		Published string `xml:"published"`
		Updated   string `xml:"updated"`
		Summary   string `xml:"summary"`
		Authors   []struct {
			Name string `xml:"name"`
		} `xml:"author"`
		Categories []struct {
			Term string `xml:"term,attr"`
		} `xml:"category"`
	} `xml:"entry"`
}

// Fetch reads one feed through its client; links lose their utm_* parameters and authors the
// feed's AuthorPrefix.
func Fetch(ctx context.Context, c *httpc.Client, f Feed) ([]Item, error) {
	r, err := c.Do(ctx, http.MethodGet, f.Path, nil, nil)
	if err != nil {
		return nil, err
	}
	items, err := Parse(r.Body)
	if err != nil {
		return nil, upstream.BadAnswer(f.Name, "GET "+f.Path, r.Status, "", err)
	}
	for i := range items {
		items[i].Link = untracked(items[i].Link)
		if f.AuthorPrefix != "" {
			for j, a := range items[i].Authors {
				items[i].Authors[j] = strings.TrimPrefix(a, f.AuthorPrefix)
			}
		}
	}
	return items, nil
}

// untracked is the link without the utm_* campaign parameters feeds add to every link
// (Cointelegraph's ?utm_source=rss_feed&utm_medium=rss&...); other parameters stay.
func untracked(s string) string {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.RawQuery == "" {
		return s
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(k, "utm_") {
			q.Del(k)
		}
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// Parse reads an RSS 2.0 or Atom document.
func Parse(b []byte) ([]Item, error) {
	root, err := rootName(b)
	if err != nil {
		return nil, err
	}
	var out []Item
	switch root {
	case "rss":
		var d rssDoc
		if err := xml.Unmarshal(b, &d); err != nil {
			return nil, err
		}
		for _, it := range d.Channel.Items {
			authors := it.Creators
			if it.Author != "" {
				authors = append(authors, it.Author)
			}
			out = append(out, Item{Title: clean(plain(it.Title)), Link: strings.TrimSpace(plain(it.Link)), GUID: strings.TrimSpace(it.GUID),
				Published: parseTime(it.PubDate), Summary: clean(plain(it.Description)), Authors: trimAll(authors), Categories: trimAll(it.Categories)})
		}
	case "feed":
		var d atomDoc
		if err := xml.Unmarshal(b, &d); err != nil {
			return nil, err
		}
		for _, e := range d.Entries {
			it := Item{Title: clean(e.Title), GUID: strings.TrimSpace(e.ID), Summary: clean(e.Summary), Published: parseTime(e.Published)}
			if it.Published.IsZero() {
				it.Published = parseTime(e.Updated)
			}
			for _, l := range e.Links {
				if l.Rel == "" || l.Rel == "alternate" {
					it.Link = strings.TrimSpace(l.Href)
					break
				}
			}
			for _, a := range e.Authors {
				it.Authors = append(it.Authors, strings.TrimSpace(a.Name))
			}
			for _, c := range e.Categories {
				it.Categories = append(it.Categories, strings.TrimSpace(c.Term))
			}
			out = append(out, it)
		}
	default:
		return nil, fmt.Errorf("root element <%s> is neither rss nor feed", root)
	}
	return out, nil
}

func rootName(b []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.Token()
		if err != nil {
			return "", fmt.Errorf("not an XML feed: %w", err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se.Name.Local, nil
		}
	}
}

var dateLayouts = []string{time.RFC1123Z, time.RFC1123, time.RFC3339, "Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST", "2006-01-02T15:04:05Z0700"}

func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

var tags = regexp.MustCompile(`<[^>]*>`)

// clean turns feed text (often HTML) into plain text on one line.
func clean(s string) string {
	s = html.UnescapeString(tags.ReplaceAllString(s, " "))
	return strings.Join(strings.Fields(s), " ")
}

func trimAll(xs []string) []string {
	var out []string
	for _, x := range xs {
		if x = clean(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
