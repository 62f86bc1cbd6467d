package marketplace

import (
	"net/url"
	"testing"
)

// The inputs are the displays of the recorded pages and their usual spellings elsewhere.
func TestNumbersAsDisplayed(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want float64
	}{
		{"R$ 879,00", 879}, {"R$ 1.199,00", 1199}, {"$1,299.99", 1299.99}, {"1 299,00 €", 1299}, {"¥1,299", 1299},
	} {
		if got, ok := amount(tt.in); !ok || got != tt.want {
			t.Errorf("amount(%q) = %v %v, want %v", tt.in, got, ok, tt.want)
		}
	}
	for _, tt := range []struct {
		in   string
		want int64
	}{{"8.400 Análises", 8400}, {"(8.400)", 8400}, {"4.264 classificações", 4264}, {"12,345 ratings", 12345}} {
		if got, ok := firstCount(tt.in); !ok || got != tt.want {
			t.Errorf("firstCount(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
	for in, want := range map[string]string{"Marca: Amazon": "Amazon", "Visit the Anker Store": "Anker", "Brand: Sony": "Sony"} {
		if got := brand(in); got != want {
			t.Errorf("brand(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"https://www.amazon.com.br/kindle-paperwhite/dp/B0CFPL6CFY/ref=sr_1_1": "B0CFPL6CFY",
		"https://www.amazon.com/gp/product/B08N5WRWNW?th=1":                    "B08N5WRWNW",
		"https://www.amazon.com/dp/B08N5WRWNW":                                 "B08N5WRWNW",
		"https://www.amazon.com/s?k=kindle":                                    "",
	} {
		u, _ := url.Parse(in)
		if got := ASINOf(u); got != want {
			t.Errorf("ASINOf(%s) = %q, want %q", in, got, want)
		}
	}
}
