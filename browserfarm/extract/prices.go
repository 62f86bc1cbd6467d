package extract

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Offer is a machine-readable price the page declares (schema.org Offer in JSON-LD or
// microdata, or product:price meta tags). Price is decimal text, never a float.
type Offer struct {
	Price    json.Number `json:"price"`
	Currency string      `json:"currency"`
	Source   string      `json:"source"` // json-ld, microdata or meta
}

// Price is a price shown in the visible text.
type Price struct {
	Value    json.Number `json:"value"`
	Currency string      `json:"currency"`
	Context  string      `json:"context"`
}

var currencySymbols = map[string]string{
	"€": "EUR", "eur": "EUR", "euro": "EUR", "euros": "EUR",
	"$": "USD", "us$": "USD", "usd": "USD",
	"£": "GBP", "gbp": "GBP",
	"chf": "CHF", "fr.": "CHF",
	"¥": "JPY", "jpy": "JPY", "yen": "JPY",
	"c$": "CAD", "cad": "CAD", "a$": "AUD", "aud": "AUD",
	"sek": "SEK", "nok": "NOK", "dkk": "DKK", "pln": "PLN", "zł": "PLN", "czk": "CZK", "kč": "CZK",
	"₹": "INR", "inr": "INR", "₩": "KRW", "krw": "KRW", "cny": "CNY", "₽": "RUB", "rub": "RUB",
	"brl": "BRL", "r$": "BRL", "mxn": "MXN", "₺": "TRY", "try": "TRY",
}

const (
	curAlt = `US\$|C\$|A\$|R\$|€|\$|£|¥|₹|₩|₽|₺|zł|Kč|Fr\.|\b(?:EUR|USD|GBP|CHF|JPY|CAD|AUD|SEK|NOK|DKK|PLN|CZK|INR|KRW|CNY|RUB|BRL|MXN|TRY|euros?)\b`
	numAlt = `\d{1,3}(?:[ \x{00a0}\x{202f}.,'’]\d{3})+(?:[.,]\d{1,2})?|\d+(?:[.,]\d{1,2})?`
)

var (
	priceBefore = regexp.MustCompile(`(?i)(` + curAlt + `)\s?(` + numAlt + `)`)
	priceAfter  = regexp.MustCompile(`(?i)(` + numAlt + `)\s?(` + curAlt + `)`)
)

// Prices returns the structured offer (JSON-LD first, then microdata, then meta tags) and
// the prices shown in the visible text with their currency and the line they appear on.
func Prices(doc *goquery.Document, text string) (*Offer, []Price) {
	return structuredOffer(doc), visiblePrices(text)
}

func structuredOffer(doc *goquery.Document) *Offer {
	blocks, _ := JSONLD(doc)
	var found *Offer
	var walk func(v any)
	walk = func(v any) {
		if found != nil {
			return
		}
		switch x := v.(type) {
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			if isType(x["@type"], "Offer", "AggregateOffer") {
				p := x["price"]
				if p == nil {
					p = x["lowPrice"]
				}
				if ps, ok := spec(x["priceSpecification"]); p == nil && ok {
					p, x["priceCurrency"] = ps["price"], ps["priceCurrency"]
				}
				if n, ok := decimal(p); ok {
					cur, _ := x["priceCurrency"].(string)
					found = &Offer{Price: n, Currency: strings.ToUpper(cur), Source: "json-ld"}
					return
				}
			}
			for _, k := range []string{"offers", "@graph", "mainEntity", "itemListElement", "item"} {
				if e, ok := x[k]; ok {
					walk(e)
				}
			}
		}
	}
	walk(blocks)
	if found != nil {
		return found
	}
	if p := doc.Find(`[itemprop="price"]`).First(); p.Length() > 0 {
		raw := p.AttrOr("content", p.Text())
		cur := doc.Find(`[itemprop="priceCurrency"]`).First()
		if n, ok := decimal(raw); ok {
			return &Offer{Price: n, Currency: strings.ToUpper(strings.TrimSpace(cur.AttrOr("content", cur.Text()))), Source: "microdata"}
		}
	}
	for _, pre := range []string{"product:price", "og:price"} {
		amt := doc.Find(`meta[property="`+pre+`:amount"]`).AttrOr("content", "")
		if n, ok := decimal(amt); ok {
			cur := doc.Find(`meta[property="`+pre+`:currency"]`).AttrOr("content", "")
			return &Offer{Price: n, Currency: strings.ToUpper(cur), Source: "meta"}
		}
	}
	return nil
}

func spec(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case []any:
		if len(x) > 0 {
			m, ok := x[0].(map[string]any)
			return m, ok
		}
	}
	return nil, false
}

func isType(v any, names ...string) bool {
	switch t := v.(type) {
	case string:
		for _, n := range names {
			if t == n || strings.HasSuffix(t, "/"+n) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if isType(e, names...) {
				return true
			}
		}
	}
	return false
}

// decimal reads a structured price (a JSON number or text such as "1299.99" or "1 299,99").
func decimal(v any) (json.Number, bool) {
	switch x := v.(type) {
	case float64:
		return json.Number(strings.TrimRight(strings.TrimRight(jsonNum(x), "0"), ".")), true
	case string:
		return parseAmount(strings.TrimSpace(x))
	}
	return "", false
}

func jsonNum(f float64) string {
	b, _ := json.Marshal(f)
	s := string(b)
	if !strings.Contains(s, ".") {
		s += "."
	}
	return s
}

var digitsOnly = regexp.MustCompile(`^\d+(\.\d+)?$`)

// parseAmount reads a written amount in any common locale: "1 299,99", "1,349.50",
// "1'420.00", "1.299,99", "12,50", "45". The last separator followed by one or two digits
// is the decimal mark; other separators group thousands.
func parseAmount(s string) (json.Number, bool) {
	s = strings.NewReplacer(" ", "", "\u00a0", "", "\u202f", "", "'", "", "’", "").Replace(s)
	if s == "" {
		return "", false
	}
	last := strings.LastIndexAny(s, ".,")
	intPart, frac := s, ""
	if last >= 0 && len(s)-last-1 <= 2 && len(s)-last-1 > 0 {
		intPart, frac = s[:last], s[last+1:]
	}
	intPart = strings.NewReplacer(".", "", ",", "").Replace(intPart)
	out := strings.TrimLeft(intPart, "0")
	if out == "" {
		out = "0"
	}
	if frac != "" {
		out += "." + frac
	}
	if !digitsOnly.MatchString(out) {
		return "", false
	}
	return json.Number(out), true
}

func visiblePrices(text string) []Price {
	out := []Price{}
	seen := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		type hit struct {
			at       int
			cur, num string
		}
		var hits []hit
		for _, m := range priceBefore.FindAllStringSubmatchIndex(line, -1) {
			hits = append(hits, hit{m[0], line[m[2]:m[3]], line[m[4]:m[5]]})
		}
		for _, m := range priceAfter.FindAllStringSubmatchIndex(line, -1) {
			overlap := false
			for _, h := range hits {
				if m[0] < h.at+len(h.cur)+len(h.num)+2 && h.at < m[1] {
					overlap = true
				}
			}
			if !overlap {
				hits = append(hits, hit{m[0], line[m[4]:m[5]], line[m[2]:m[3]]})
			}
		}
		for _, h := range hits {
			cur := currencySymbols[strings.ToLower(h.cur)]
			n, ok := parseAmount(h.num)
			if cur == "" || !ok {
				continue
			}
			key := string(n) + cur + line
			if seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, Price{Value: n, Currency: cur, Context: Truncate(line, 160)})
		}
	}
	return out
}
