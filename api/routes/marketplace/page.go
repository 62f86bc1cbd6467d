package marketplace

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/peage/appliance/browserfarm/extract"
)

// Product is what a product page or a search result card shows.
type Product struct {
	ASIN         string   `json:"asin"`
	Title        string   `json:"title"`
	Price        string   `json:"price,omitempty"`      // as displayed, currency symbol included
	PriceValue   *float64 `json:"priceValue,omitempty"` // the same as a number
	Currency     string   `json:"currency,omitempty"`   // ISO code when the page's structured data gives one, else the symbol shown
	Rating       *float64 `json:"rating,omitempty"`     // out of 5
	Reviews      *int64   `json:"reviews,omitempty"`
	Brand        string   `json:"brand,omitempty"`
	Image        string   `json:"image,omitempty"`
	Availability string   `json:"availability,omitempty"`
	URL          string   `json:"url,omitempty"`
	// Sources says where each field was read: the marketplace's own element ids, or the
	// schema.org data (JSON-LD, microdata) the page embeds.
	Sources map[string]string `json:"sources,omitempty"`
}

// asinInPath finds the ASIN of a product URL: /dp/ASIN, /gp/product/ASIN, /gp/aw/d/ASIN.
var asinInPath = regexp.MustCompile(`/(?:dp|gp/product|gp/aw/d|exec/obidos/ASIN)/([A-Z0-9]{10})(?:[/?]|$)`)

// ASINOf returns the ASIN a product URL names, "" when it names none.
func ASINOf(u *url.URL) string {
	m := asinInPath.FindStringSubmatch(u.EscapedPath() + "/")
	if m == nil {
		return ""
	}
	return m[1]
}

func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// ParseProduct reads a product page: the marketplace's stable element ids first
// (#productTitle, the price-to-pay block, #acrPopover, #acrCustomerReviewText, #bylineInfo,
// #landingImage), then the schema.org Product the page may embed.
func ParseProduct(doc *goquery.Document, pageURL string) Product {
	p := Product{Sources: map[string]string{}}
	set := func(field, value, source string, dst *string) {
		if *dst == "" && value != "" {
			*dst = value
			p.Sources[field] = source
		}
	}
	set("asin", strings.TrimSpace(doc.Find("input#ASIN").AttrOr("value", "")), "#ASIN", &p.ASIN)
	set("title", text(doc.Find("#productTitle").First()), "#productTitle", &p.Title)
	for _, sel := range []string{"#corePriceDisplay_desktop_feature_div .priceToPay .a-offscreen", "#corePrice_feature_div .a-offscreen",
		"#apex-pricetopay-accessibility-label", "#corePriceDisplay_desktop_feature_div .a-price:not(.a-text-price) .a-offscreen",
		"#price_inside_buybox", "#priceblock_ourprice", "#priceblock_dealprice"} {
		set("price", text(doc.Find(sel).First()), sel, &p.Price)
	}
	if p.Price == "" {
		// The visible parts of the price-to-pay block: symbol, whole, fraction.
		pp := doc.Find("#corePriceDisplay_desktop_feature_div .priceToPay").First()
		if whole := text(pp.Find(".a-price-whole")); whole != "" {
			set("price", text(pp.Find(".a-price-symbol"))+" "+whole+text(pp.Find(".a-price-fraction")), ".priceToPay", &p.Price)
		}
	}
	rating := doc.Find("#acrPopover").AttrOr("title", "")
	if rating == "" {
		rating = text(doc.Find("#acrPopover .a-icon-alt").First())
	}
	if r, ok := firstNumber(rating); ok && r <= 5 {
		p.Rating, p.Sources["rating"] = &r, "#acrPopover"
	}
	if n, ok := count(doc.Find("#acrCustomerReviewText").First()); ok {
		p.Reviews, p.Sources["reviews"] = &n, "#acrCustomerReviewText"
	}
	set("brand", brand(text(doc.Find("#bylineInfo").First())), "#bylineInfo", &p.Brand)
	img := doc.Find("#landingImage").First()
	set("image", img.AttrOr("data-old-hires", ""), "#landingImage", &p.Image)
	set("image", img.AttrOr("src", ""), "#landingImage", &p.Image)
	set("availability", text(doc.Find("#availability").Children().Not("script").First()), "#availability", &p.Availability)

	schemaProduct(doc, &p, set)
	if p.PriceValue == nil && p.Price != "" {
		if v, ok := amount(p.Price); ok {
			p.PriceValue = &v
		}
		if p.Currency == "" {
			p.Currency = symbol(p.Price)
		}
	}
	p.URL = pageURL
	return p
}

// schemaProduct fills what is still missing from the page's schema.org Product (JSON-LD).
func schemaProduct(doc *goquery.Document, p *Product, set func(field, value, source string, dst *string)) {
	blocks, _ := extract.JSONLD(doc)
	var prod map[string]any
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if prod == nil && isType(x["@type"], "Product") {
				prod = x
			}
			if g, ok := x["@graph"]; ok {
				walk(g)
			}
		}
	}
	walk(blocks)
	if prod != nil {
		str := func(v any) string { s, _ := v.(string); return strings.TrimSpace(s) }
		set("title", str(prod["name"]), "json-ld", &p.Title)
		set("asin", str(prod["sku"]), "json-ld", &p.ASIN)
		switch b := prod["brand"].(type) {
		case string:
			set("brand", b, "json-ld", &p.Brand)
		case map[string]any:
			set("brand", str(b["name"]), "json-ld", &p.Brand)
		}
		switch im := prod["image"].(type) {
		case string:
			set("image", im, "json-ld", &p.Image)
		case []any:
			if len(im) > 0 {
				set("image", str(im[0]), "json-ld", &p.Image)
			}
		}
		if ar, ok := prod["aggregateRating"].(map[string]any); ok {
			if r, ok := num(ar["ratingValue"]); ok && p.Rating == nil {
				p.Rating, p.Sources["rating"] = &r, "json-ld"
			}
			for _, k := range []string{"reviewCount", "ratingCount"} {
				if n, ok := num(ar[k]); ok && p.Reviews == nil {
					c := int64(n)
					p.Reviews, p.Sources["reviews"] = &c, "json-ld"
				}
			}
		}
	}
	// The structured offer (JSON-LD, microdata or price meta tags) when no price was shown.
	if p.Price == "" {
		if o, _ := extract.Prices(doc, ""); o != nil {
			if v, err := o.Price.Float64(); err == nil {
				p.Price, p.PriceValue, p.Currency = strings.TrimSpace(o.Price.String()+" "+o.Currency), &v, o.Currency
				p.Sources["price"] = o.Source
			}
		}
	}
}

func isType(v any, name string) bool {
	switch t := v.(type) {
	case string:
		return t == name
	case []any:
		for _, e := range t {
			if s, _ := e.(string); s == name {
				return true
			}
		}
	}
	return false
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		return firstNumber(x)
	}
	return 0, false
}

// ParseSearch reads the result cards of a search page, sponsored slots without an ASIN
// skipped, at most max.
func ParseSearch(doc *goquery.Document, base *url.URL, max int) []Product {
	out := []Product{}
	doc.Find(`[data-component-type="s-search-result"]`).EachWithBreak(func(_ int, card *goquery.Selection) bool {
		asin := strings.TrimSpace(card.AttrOr("data-asin", ""))
		if asin == "" {
			return true
		}
		p := Product{ASIN: asin}
		h2 := card.Find("h2").First()
		p.Title = h2.AttrOr("aria-label", "")
		if p.Title == "" {
			p.Title = text(h2)
		}
		p.Price = text(card.Find(".a-price:not(.a-text-price) .a-offscreen").First())
		if v, ok := amount(p.Price); ok {
			p.PriceValue, p.Currency = &v, symbol(p.Price)
		}
		if r, ok := firstNumber(text(card.Find(".a-icon-alt").First())); ok && r <= 5 {
			p.Rating = &r
		}
		if n, ok := firstCount(card.Find(`a[href*="#customerReviews"]`).First().AttrOr("aria-label", "")); ok {
			p.Reviews = &n
		}
		p.Image = card.Find("img.s-image").First().AttrOr("src", "")
		if href, ok := card.Find(`a[href*="/dp/"]`).First().Attr("href"); ok && base != nil {
			if u, err := base.Parse(href); err == nil {
				p.URL = u.Scheme + "://" + u.Host + "/dp/" + asin
			}
		}
		out = append(out, p)
		return len(out) < max
	})
	return out
}

// brand takes the name out of the byline: "Marca: Amazon", "Brand: Anker",
// "Visit the Anker Store", "Visite a loja Amazon".
func brand(s string) string {
	if _, after, ok := strings.Cut(s, ":"); ok {
		return strings.TrimSpace(after)
	}
	for _, pre := range []string{"Visit the ", "Visite a loja ", "Besuche den ", "Visitez la boutique ", "Visita la tienda de "} {
		if rest, ok := strings.CutPrefix(s, pre); ok {
			return strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(rest, "-Store"), " Store"))
		}
	}
	return s
}

var numberRe = regexp.MustCompile(`[0-9]+(?:[.,][0-9]+)?`)

// firstNumber reads the first decimal number of s, with a comma or a point as decimal mark
// ("4,8 de 5 estrelas", "4.5 out of 5 stars").
func firstNumber(s string) (float64, bool) {
	m := numberRe.FindString(s)
	if m == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(strings.Replace(m, ",", ".", 1), 64)
	return v, err == nil
}

var countRe = regexp.MustCompile(`[0-9][0-9.,\s\x{a0}\x{202f}]*`)

// firstCount reads the first whole count of s, thousands separators dropped: "8.400 Análises",
// "(8,400)", "1 234 ratings".
func firstCount(s string) (int64, bool) {
	m := countRe.FindString(s)
	if m == "" {
		return 0, false
	}
	digits := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, m)
	n, err := strconv.ParseInt(digits, 10, 64)
	return n, err == nil
}

// count reads a review count from an element's aria-label, else its text.
func count(s *goquery.Selection) (int64, bool) {
	if s.Length() == 0 {
		return 0, false
	}
	if n, ok := firstCount(s.AttrOr("aria-label", "")); ok {
		return n, true
	}
	return firstCount(text(s))
}

// amount reads a displayed price: the last "." or "," followed by exactly two digits at the
// end is the decimal mark, every other separator groups thousands ("R$ 1.199,00", "$1,299.99",
// "1 299,00 €", "¥1,299").
func amount(s string) (float64, bool) {
	var digits strings.Builder
	frac := ""
	raw := strings.TrimSpace(s)
	body := strings.Map(func(r rune) rune {
		if (r >= '0' && r <= '9') || r == '.' || r == ',' {
			return r
		}
		return -1
	}, raw)
	body = strings.Trim(body, ".,")
	if body == "" {
		return 0, false
	}
	if i := strings.LastIndexAny(body, ".,"); i >= 0 && len(body)-i-1 == 2 {
		frac, body = body[i+1:], body[:i]
	}
	for _, r := range body {
		if r >= '0' && r <= '9' {
			digits.WriteRune(r)
		}
	}
	v, err := strconv.ParseFloat(digits.String()+"."+frac+"0", 64)
	return v, err == nil
}

// symbol is the currency sign shown before or after the amount ("R$", "$", "€").
func symbol(s string) string {
	s = strings.TrimSpace(s)
	trimmed := strings.TrimFunc(s, func(r rune) bool {
		return (r >= '0' && r <= '9') || r == '.' || r == ',' || r == ' ' || r == '\u00a0'
	})
	return strings.TrimSpace(trimmed)
}
