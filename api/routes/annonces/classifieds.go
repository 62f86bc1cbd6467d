package annonces

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
)

// The classifieds site's search page is a Next.js page: its own JSON state, in
// <script id="__NEXT_DATA__">, holds the result list (props.pageProps.searchData.ads), the
// same ad objects its finder API answers. That is read first; the visible cards only when
// the state is missing.

// Ad is one classified ad as the route answers it.
type Ad struct {
	ID         string      `json:"id"`
	Title      string      `json:"title"`
	Price      *float64    `json:"price"` // euros; null when the ad shows none
	City       string      `json:"city"`
	Zipcode    string      `json:"zipcode,omitempty"`
	Date       string      `json:"date"` // first publication, RFC 3339 in French time
	URL        string      `json:"url"`
	Images     []string    `json:"images"`
	Category   string      `json:"category,omitempty"`
	Attributes []Attribute `json:"attributes"`
	Pro        *bool       `json:"pro,omitempty"` // a professional seller
}

// Attribute is one of the ad's labelled characteristics (surface, rooms, condition, brand…).
type Attribute struct {
	Key   string `json:"key"`
	Label string `json:"label"`
	Value string `json:"value"`
}

// rawAd is the site's ad object (tolerant: numbers and ids as the site sends them).
type rawAd struct {
	ListID       json.Number `json:"list_id"`
	Subject      string      `json:"subject"`
	URL          string      `json:"url"`
	CategoryName string      `json:"category_name"`
	AdType       string      `json:"ad_type"`
	FirstPub     string      `json:"first_publication_date"`
	Price        []float64   `json:"price"`
	PriceCents   *int64      `json:"price_cents"`
	Images       struct {
		Large []string `json:"urls_large"`
		URLs  []string `json:"urls"`
	} `json:"images"`
	Attributes []struct {
		Key        string   `json:"key"`
		KeyLabel   string   `json:"key_label"`
		Value      string   `json:"value"`
		ValueLabel string   `json:"value_label"`
		Values     []string `json:"values_label"`
		Generic    bool     `json:"generic"`
	} `json:"attributes"`
	Location struct {
		City    string `json:"city"`
		Zipcode string `json:"zipcode"`
	} `json:"location"`
	Owner struct {
		Type string `json:"type"`
	} `json:"owner"`
}

type nextData struct {
	Props struct {
		PageProps struct {
			SearchData *struct {
				Total    int     `json:"total"`
				MaxPages int     `json:"max_pages"`
				Ads      []rawAd `json:"ads"`
			} `json:"searchData"`
		} `json:"pageProps"`
	} `json:"props"`
}

// searchPage is what one result page holds.
type searchPage struct {
	ads      []rawAd
	total    int
	maxPages int
	from     string // where the ads were read: __NEXT_DATA__ or markup
}

// readSearch reads a search page: the Next.js state, else the visible ad cards. ok is false
// when the page holds neither (not a result page: its layout changed, or something else).
func readSearch(doc *goquery.Document) (searchPage, bool, error) {
	if raw := strings.TrimSpace(doc.Find("script#__NEXT_DATA__").First().Text()); raw != "" {
		var nd nextData
		if err := json.Unmarshal([]byte(raw), &nd); err != nil {
			return searchPage{}, false, fmt.Errorf("the page's __NEXT_DATA__ is not the JSON expected: %w", err)
		}
		if sd := nd.Props.PageProps.SearchData; sd != nil {
			return searchPage{ads: sd.Ads, total: sd.Total, maxPages: sd.MaxPages, from: "__NEXT_DATA__"}, true, nil
		}
	}
	var ads []rawAd
	doc.Find(`[data-qa-id="aditem_container"]`).Each(func(_ int, card *goquery.Selection) {
		href := card.Find(`a[href*="/ad/"]`).First().AttrOr("href", "")
		if href == "" {
			href = card.Filter(`a[href*="/ad/"]`).AttrOr("href", "")
		}
		id := href[strings.LastIndex(href, "/")+1:]
		if _, err := strconv.ParseInt(id, 10, 64); err != nil {
			return
		}
		a := rawAd{ListID: json.Number(id), URL: href}
		for _, sel := range []string{`[data-test-id="adcard-title"]`, `[data-qa-id="aditem_title"]`, "h3"} {
			if a.Subject == "" {
				a.Subject = clean(card.Find(sel).First().Text())
			}
		}
		if a.Subject == "" {
			a.Subject = card.AttrOr("aria-label", "")
		}
		if v, ok := euros(card.Find(`[data-test-id="price"], [data-qa-id="aditem_price"]`).First().Find("span").First().Text()); ok {
			a.Price = []float64{v}
		}
		// The place is the caption "City 12345".
		card.Find("p.text-caption").EachWithBreak(func(_ int, p *goquery.Selection) bool {
			if m := cityZip.FindStringSubmatch(clean(p.Text())); m != nil {
				a.Location.City, a.Location.Zipcode = m[1], m[2]
				return false
			}
			return true
		})
		if src := card.Find(`img[src*="/images/"]`).First().AttrOr("src", ""); src != "" {
			a.Images.URLs = []string{src}
		}
		ads = append(ads, a)
	})
	if len(ads) > 0 {
		return searchPage{ads: ads, from: "markup"}, true, nil
	}
	return searchPage{}, false, nil
}

var cityZip = regexp.MustCompile(`^(\S.*?)\s+([0-9]{5})$`)

var paris = func() *time.Location {
	if l, err := time.LoadLocation("Europe/Paris"); err == nil {
		return l
	}
	return time.UTC
}()

// toAd is the answer's form of a site ad; base resolves relative links.
func toAd(a rawAd, base string) Ad {
	ad := Ad{ID: a.ListID.String(), Title: clean(a.Subject), City: a.Location.City, Zipcode: a.Location.Zipcode,
		URL: a.URL, Category: a.CategoryName, Images: []string{}, Attributes: []Attribute{}}
	if strings.HasPrefix(ad.URL, "/") {
		ad.URL = strings.TrimRight(base, "/") + ad.URL
	}
	switch {
	case a.PriceCents != nil:
		v := float64(*a.PriceCents) / 100
		ad.Price = &v
	case len(a.Price) > 0:
		v := a.Price[0]
		ad.Price = &v
	}
	// The site writes its dates in French time without a zone.
	if t, err := time.ParseInLocation("2006-01-02 15:04:05", a.FirstPub, paris); err == nil {
		ad.Date = t.Format(time.RFC3339)
	} else {
		ad.Date = a.FirstPub
	}
	ad.Images = append(ad.Images, a.Images.Large...)
	if len(ad.Images) == 0 {
		ad.Images = append(ad.Images, a.Images.URLs...)
	}
	for _, at := range a.Attributes {
		// Attributes without a label are the site's bookkeeping (store ids, import refs).
		if at.KeyLabel == "" {
			continue
		}
		v := at.ValueLabel
		if v == "" {
			v = strings.Join(at.Values, ", ")
		}
		if v == "" {
			continue
		}
		ad.Attributes = append(ad.Attributes, Attribute{Key: at.Key, Label: at.KeyLabel, Value: v})
	}
	if a.Owner.Type != "" {
		pro := a.Owner.Type == "pro"
		ad.Pro = &pro
	}
	return ad
}

// attr is the raw value of an attribute of the ad, "" when absent.
func (a rawAd) attr(key string) string {
	for _, at := range a.Attributes {
		if at.Key == key {
			return at.Value
		}
	}
	return ""
}

func clean(s string) string { return strings.Join(strings.Fields(s), " ") }

// euros reads a displayed price: "249 000 €", "1 250,50 €".
func euros(s string) (float64, bool) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= '0' && r <= '9':
			b.WriteRune(r)
		case r == ',' || r == '.':
			b.WriteRune('.')
		}
	}
	t := strings.TrimRight(b.String(), ".")
	// A point followed by three digits groups thousands ("1.250").
	if i := strings.LastIndex(t, "."); i >= 0 && len(t)-i-1 == 3 {
		t = strings.ReplaceAll(t, ".", "")
	}
	if strings.Count(t, ".") > 1 {
		i := strings.LastIndex(t, ".")
		t = strings.ReplaceAll(t[:i], ".", "") + t[i:]
	}
	v, err := strconv.ParseFloat(t, 64)
	return v, err == nil && t != ""
}
