package maps

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/PuerkitoBio/goquery"
)

// A result card of the feed (div[role=feed]) is a div.Nv2PK holding an a.hfpxzc whose
// aria-label is the name and whose href is the place URL; inside it, span.MW4etd is the
// rating, and the first line below the rating (.W4Efsd .W4Efsd) reads
// "category · [price ·] address", its parts in sibling spans.

// In a place URL's data parameter: !1s<feature id>, !3d<latitude>!4d<longitude>,
// !19s<place id>.
var (
	featureInURL = regexp.MustCompile(`!1s(0x[0-9a-fA-F]+:0x[0-9a-fA-F]+)`)
	coordsInURL  = regexp.MustCompile(`!3d(-?[0-9]+(?:\.[0-9]+)?)!4d(-?[0-9]+(?:\.[0-9]+)?)`)
	placeInURL   = regexp.MustCompile(`!19s(ChIJ[0-9A-Za-z_-]+)`)
)

// cardsOf reads the feed's result cards in their order; place URLs are resolved against the
// page's own URL.
func cardsOf(doc *goquery.Document, page *url.URL) []Place {
	links := doc.Find(`div[role="feed"] a.hfpxzc[href]`)
	if links.Length() == 0 {
		links = doc.Find(`div[role="feed"] a[href*="/maps/place/"]`)
	}
	var out []Place
	seen := map[string]bool{}
	links.Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		u, err := page.Parse(strings.TrimSpace(href))
		if err != nil || !strings.Contains(u.Path, "/maps/place/") {
			return
		}
		card := a.Closest("div.Nv2PK")
		if card.Length() == 0 {
			card = a.Parent()
		}
		p := Place{MapURL: u.String(), fromCard: true}
		raw := u.String()
		if m := featureInURL.FindStringSubmatch(raw); m != nil {
			p.dataID = m[1]
		}
		if m := placeInURL.FindStringSubmatch(raw); m != nil {
			p.PlaceID = m[1]
		}
		if m := coordsInURL.FindStringSubmatch(raw); m != nil {
			lat, err1 := strconv.ParseFloat(m[1], 64)
			lon, err2 := strconv.ParseFloat(m[2], 64)
			if err1 == nil && err2 == nil {
				p.Latitude, p.Longitude = &lat, &lon
			}
		}
		key := p.dataID
		if key == "" {
			key = u.Path
		}
		if seen[key] {
			return
		}
		seen[key] = true
		p.Name = strings.TrimSpace(a.AttrOr("aria-label", ""))
		if p.Name == "" {
			p.Name = text(card.Find(".qBF1Pd").First())
		}
		if p.Name == "" {
			return
		}
		if r, ok := ratingOf(card); ok {
			p.Rating = &r
		}
		parts := lineParts(card.Find(".W4Efsd .W4Efsd").First())
		if len(parts) > 0 {
			p.Category = parts[0]
			p.Categories = []string{parts[0]}
		}
		if len(parts) > 1 {
			p.Address = parts[len(parts)-1]
		}
		out = append(out, p)
	})
	return out
}

// ratingOf reads the card's rating: span.MW4etd ("4.3", or "4,3" in French), else the
// first number of the stars' label ("4.3 stars 16 Reviews").
func ratingOf(card *goquery.Selection) (float64, bool) {
	for _, s := range []string{text(card.Find("span.MW4etd").First()), card.Find(`span[role="img"][aria-label]`).First().AttrOr("aria-label", "")} {
		if r, ok := leadingNumber(s); ok && r > 0 && r <= 5 {
			return r, true
		}
	}
	return 0, false
}

// leadingNumber parses the first number of s, a decimal comma read as a point.
func leadingNumber(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	end := 0
	for end < len(s) && (s[end] >= '0' && s[end] <= '9' || s[end] == '.' || s[end] == ',') {
		end++
	}
	f, err := strconv.ParseFloat(strings.ReplaceAll(s[:end], ",", "."), 64)
	return f, err == nil && end > 0
}

// lineParts splits a card line into its parts (its child elements' texts without the "·"
// separators), leaving out the empty ones (icons) and price levels ("€€", "$10–20").
func lineParts(line *goquery.Selection) []string {
	var parts []string
	line.Children().Each(func(_ int, s *goquery.Selection) {
		t := strings.TrimSpace(strings.TrimLeft(text(s), "·⋅ "))
		if t == "" || isPriceLevel(t) {
			return
		}
		parts = append(parts, t)
	})
	return parts
}

// isPriceLevel reports a price level: currency signs, maybe with a range of amounts.
func isPriceLevel(s string) bool {
	sign := false
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Sc, r):
			sign = true
		case unicode.IsDigit(r) || r == '–' || r == '-' || r == ' ' || r == '+' || r == ',' || r == '.':
		default:
			return false
		}
	}
	return sign
}

func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }
