package marketplace

import (
	"net/url"
	"testing"

	"github.com/peage/appliance/api/apierr"
	"github.com/peage/appliance/api/catalog"
)

// TestURLHost: a product URL must be on the marketplace: any of its storefronts when the route
// reads one, only the configured host otherwise.
func TestURLHost(t *testing.T) {
	for _, c := range []struct {
		base, url string
		ok        bool
	}{
		{"https://www.amazon.com", "https://www.amazon.com/dp/B0CFPL6CFY", true},
		{"https://www.amazon.com", "https://www.amazon.fr/Kindle/dp/B0CFPL6CFY/ref=sr_1_1", true},
		{"https://www.amazon.com", "https://WWW.AMAZON.CO.UK/gp/product/B0CFPL6CFY", true},
		{"https://www.amazon.com", "https://www.example.com/dp/B0CFPL6CFY", false},
		{"https://www.amazon.com", "https://amazon.com.evil.example/dp/B0CFPL6CFY", false},
		{"https://www.amazon.com", "https://www.amazon.fr.evil.example/dp/B0CFPL6CFY", false},
		{"http://127.0.0.1:8080", "http://127.0.0.1:9999/dp/B0CFPL6CFY", true},
		{"http://127.0.0.1:8080", "https://www.amazon.com/dp/B0CFPL6CFY", false},
	} {
		base, _ := url.Parse(c.base)
		r := &Routes{base: base}
		err := r.checkURLHost(catalog.Args{"url": c.url})
		if (err == nil) != c.ok {
			t.Errorf("base %s, url %s: %v, want ok %v", c.base, c.url, err, c.ok)
		}
		if err != nil && apierr.From(err).Param != "url" {
			t.Errorf("base %s, url %s: %v does not name url", c.base, c.url, err)
		}
	}
	if err := (&Routes{base: &url.URL{Host: "www.amazon.com"}}).checkURLHost(catalog.Args{"asin": "B0CFPL6CFY"}); err != nil {
		t.Errorf("no url: %v", err)
	}
}
