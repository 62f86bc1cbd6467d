package extract_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
	"github.com/peage/appliance/browserfarm/extract"
)

func TestParseAmounts(t *testing.T) {
	text := strings.Join([]string{
		"Prix : 1 299,99 €", "Export: $1,349.50", "UK £1,050.00", "CHF 1'420.00", "12,50 EUR",
		"Tokyo ¥12,000", "1.299,00 €", "9€", "US$ 5", "Année 2026, 36 mois, 4,5 étoiles",
	}, "\n")
	want := []string{"1299.99 EUR", "1349.50 USD", "1050.00 GBP", "1420.00 CHF", "12.50 EUR",
		"12000 JPY", "1299.00 EUR", "9 EUR", "5 USD"}
	_, prices := extract.Prices(mustDoc(t, "<html></html>"), text)
	var got []string
	for _, p := range prices {
		got = append(got, string(p.Value)+" "+p.Currency)
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %v\nwant %v", got, want)
	}
}

func TestStructuredOffer(t *testing.T) {
	cases := []struct{ name, html, want string }{
		{"jsonld_offer", `<script type="application/ld+json">{"@type":"Product","offers":{"@type":"Offer","price":"19.90","priceCurrency":"eur"}}</script>`, "19.90 EUR json-ld"},
		{"jsonld_number_in_graph", `<script type="application/ld+json">{"@graph":[{"@type":"Product","offers":[{"@type":"Offer","price":7,"priceCurrency":"USD"}]}]}</script>`, "7 USD json-ld"},
		{"aggregate_offer", `<script type="application/ld+json">{"@type":"Product","offers":{"@type":"AggregateOffer","lowPrice":"3.5","priceCurrency":"GBP"}}</script>`, "3.5 GBP json-ld"},
		{"microdata", `<div itemscope itemtype="https://schema.org/Offer"><span itemprop="price" content="42.00">42 €</span><meta itemprop="priceCurrency" content="EUR"></div>`, "42.00 EUR microdata"},
		{"meta_tags", `<meta property="product:price:amount" content="1 299,00"><meta property="product:price:currency" content="EUR">`, "1299.00 EUR meta"},
		{"none", `<p>no offer</p>`, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o, _ := extract.Prices(mustDoc(t, c.html), "")
			got := ""
			if o != nil {
				got = string(o.Price) + " " + o.Currency + " " + o.Source
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestContacts(t *testing.T) {
	html := `<a href="mailto:Info@Example.fr">mail</a><a href="tel:+33 1 23 45 67 89">tel</a>
<a href="https://twitter.com/example">t</a><a href="https://www.linkedin.com/">home only</a>`
	text := "Appelez le 06 12 34 56 78 ou le 0800 123 456.\nSIRET 123 456 789 00012.\nÉcrire : ventes@example.fr."
	c := extract.FindContacts(mustDoc(t, html), text, "https://example.fr/", "FR")
	b, _ := json.Marshal(c)
	got := string(b)
	for _, want := range []string{`"info@example.fr"`, `"ventes@example.fr"`, `"e164":"+33123456789"`, `"e164":"+33612345678"`,
		`"type":"mobile"`, `"e164":"+33800123456"`, `"type":"toll_free"`, `"network":"x"`} {
		if !strings.Contains(got, want) {
			t.Errorf("missing %s in %s", want, got)
		}
	}
	if strings.Contains(got, "linkedin") {
		t.Error("a network's home page is not a profile")
	}
	if len(c.Phones) != 3 {
		t.Errorf("want 3 phones (the SIRET is not one), got %+v", c.Phones)
	}
}

func TestTablesBodySpans(t *testing.T) {
	doc := mustDoc(t, `<table><tr><th>A</th><th>B</th><th>C</th></tr>
<tr><td colspan="2">wide</td><td>c1</td></tr><tr><td>a2</td><td rowspan="2">tall</td><td>c2</td></tr><tr><td>a3</td><td>c3</td></tr></table>
<table><tr><td>x</td><td>y</td></tr></table>`)
	tb := extract.Tables(doc)
	b, _ := json.Marshal(tb)
	want := `[{"index":0,"headers":["A","B","C"],"row_count":3,"rows":[{"A":"wide","B":"wide","C":"c1"},{"A":"a2","B":"tall","C":"c2"},{"A":"a3","B":"tall","C":"c3"}]},` +
		`{"index":1,"headers":["column_1","column_2"],"row_count":1,"rows":[{"column_1":"x","column_2":"y"}]}]`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestDetectChallenge(t *testing.T) {
	long := strings.Repeat("Real content of a real page. ", 30)
	cases := []struct {
		name   string
		status int
		header map[string]string
		title  string
		html   string
		text   string
		vendor string
	}{
		{"cf_header", 403, map[string]string{"cf-mitigated": "challenge"}, "x", "", "", "cloudflare"},
		{"cf_title", 503, nil, "Just a moment...", "", "", "cloudflare"},
		{"datadome", 403, nil, "", `<script src="https://ct.captcha-delivery.com/c.js">`, "", "datadome"},
		{"recaptcha_wall", 200, nil, "Verify", `<div class="g-recaptcha">`, "Please verify", "recaptcha"},
		{"form_with_captcha_is_fine", 200, nil, "Contact", `<div class="g-recaptcha">`, long, ""},
		{"plain_page", 200, nil, "Home", "<p>hi</p>", "hi", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := extract.DetectChallenge(c.status, c.header, c.title, c.html, c.text)
			got := ""
			if ch != nil {
				got = ch.Vendor
			}
			if got != c.vendor {
				t.Errorf("vendor %q, want %q", got, c.vendor)
			}
		})
	}
}

func TestLinksDedupAbsolute(t *testing.T) {
	doc := mustDoc(t, `<base href="https://example.org/docs/"><a href="a#x"></a><a href="a#y">A</a><a href="/b">B</a>
<a href="https://www.example.org/c">C</a><a href="https://other.net/">O</a><a href="javascript:void(0)">J</a><a href="mailto:x@y.z">M</a>`)
	in, ex := extract.Links(doc, "https://example.org/docs/page")
	b, _ := json.Marshal(map[string]any{"in": in, "ex": ex})
	want := `{"ex":[{"href":"https://other.net/","text":"O"}],"in":[{"href":"https://example.org/docs/a","text":"A"},{"href":"https://example.org/b","text":"B"},{"href":"https://www.example.org/c","text":"C"}]}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func mustDoc(t *testing.T, html string) *goquery.Document {
	t.Helper()
	d, err := extract.Parse(html)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
