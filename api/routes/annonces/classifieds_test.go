package annonces

import (
	"os"
	"testing"

	"github.com/peage/appliance/browserfarm/extract"
)

// TestCardsWithoutState: a page without the Next.js state is read from its ad cards (the
// recorded card of testdata/card_job.html): id, title, price, place, image and link.
func TestCardsWithoutState(t *testing.T) {
	b, err := os.ReadFile("testdata/card_job.html")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := extract.Parse(string(b))
	if err != nil {
		t.Fatal(err)
	}
	sp, ok, err := readSearch(doc)
	if err != nil || !ok || sp.from != "markup" || len(sp.ads) != 1 {
		t.Fatalf("readSearch = %+v %v %v, want one ad from the markup", sp, ok, err)
	}
	ad := toAd(sp.ads[0], "https://www.leboncoin.fr")
	if ad.ID != "3086374270" || ad.Title != "Mécanicien Automobile (H/F/X)" || ad.Price == nil || *ad.Price != 2400 ||
		ad.City != "Montlhéry" || ad.Zipcode != "91310" || ad.URL != "https://www.leboncoin.fr/ad/offres_d_emploi/3086374270" ||
		len(ad.Images) != 1 || ad.Images[0] != "https://img.leboncoin.fr/api/v1/lbcpb1/images/a2/a7/f2/a2a7f2f8894105e3a6096f3646ffb36e52490bb1.jpg?rule=ad-image" {
		t.Errorf("ad = %+v", ad)
	}
}

// TestEuros: the displayed prices of the site.
func TestEuros(t *testing.T) {
	for in, want := range map[string]float64{"2 400\u00a0€": 2400, "249 000 €": 249000, "1 250,50 €": 1250.5, "1.250 €": 1250, "15 €": 15} {
		if got, ok := euros(in); !ok || got != want {
			t.Errorf("euros(%q) = %v %v, want %v", in, got, ok, want)
		}
	}
	if _, ok := euros("Gratuit"); ok {
		t.Error("euros(Gratuit) read a price")
	}
}
